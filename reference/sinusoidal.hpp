// Exact sinusoidal positional encoding (Vaswani 2017), both layouts, any base and even width.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "spec/conventions.hpp"

namespace pecheck::ref {

/// Angular frequency of pair i of a width-`dim` encoding: base^(-2i/dim).
template <class Real>
Real frequency(int i, int dim, double base) {
  using std::exp;
  using std::log;
  return exp(-(Real(2 * i) / Real(dim)) * log(Real(base)));
}

/// Index in the row of the sin (first) and cos (second) of pair i.
inline std::pair<int, int> sinusoidal_slots(const SinusoidalSpec& s, int i) {
  if (s.layout == SinusoidalLayout::interleaved) return {2 * i, 2 * i + 1};
  return {i, s.d_model / 2 + i};
}

/// The d_model / 2 frequencies of s (fairseq's width where it says so): formed once for many rows.
template <class Real>
std::vector<Real> sinusoidal_frequencies(const SinusoidalSpec& s) {
  std::vector<Real> f;
  for (int i = 0; i < s.d_model / 2; ++i) f.push_back(frequency<Real>(i, s.frequency_width(), s.base));
  return f;
}

/// PE(pos) from s's frequencies (sinusoidal_frequencies): d_model values, sin and cos of
/// pos * frequency(i) placed by the layout; zeros at the padding position.
template <class Real>
std::vector<Real> sinusoidal_row(const SinusoidalSpec& s, std::int64_t pos, const std::vector<Real>& freqs) {
  using std::cos;
  using std::sin;
  s.validate();
  std::vector<Real> row(static_cast<std::size_t>(s.d_model));
  if (s.is_padding(pos)) return row;  // fairseq's padding row: all zeros
  for (int i = 0; i < s.d_model / 2; ++i) {
    const Real angle = Real(pos) * freqs[static_cast<std::size_t>(i)];
    const auto [si, ci] = sinusoidal_slots(s, i);
    row[static_cast<std::size_t>(si)] = sin(angle);
    row[static_cast<std::size_t>(ci)] = cos(angle);
  }
  return row;
}

/// PE(pos): d_model values, sin and cos of pos * frequency(i) placed by the layout (frequency
/// base^(-2i/d), or base^(-i/(d/2 - 1)) for fairseq); zeros at the padding position.
template <class Real>
std::vector<Real> sinusoidal_row(const SinusoidalSpec& s, std::int64_t pos) {
  return sinusoidal_row<Real>(s, pos, sinusoidal_frequencies<Real>(s));
}

}  // namespace pecheck::ref
