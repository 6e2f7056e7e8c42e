#include "dumpcheck/convention_hint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "dumpcheck/attention_dump.hpp"
#include "dumpcheck/convention_fit.hpp"
#include "harness/contract_ladder.hpp"
#include "harness/generators.hpp"
#include "reference/rope_scaling.hpp"
#include "reference/sinusoidal.hpp"

namespace pecheck::dumpcheck {

namespace {

/// Two readings of one frequency or magnitude agree: a fitted base is snapped to 2 significant
/// digits only within 3e-3 (convention_fit.hpp), and a wrong convention is off by far more (a
/// base of 5e5 for 1e4 moves the slowest pair of 64 dims by a factor of 45).
constexpr double kSameReading = 1e-2;
constexpr int kHeads = 2;

bool same_reading(double a, double b) {
  return std::fabs(a - b) <= kSameReading * std::max(std::fabs(a), std::fabs(b));
}

/// What a dump of an arange holds: positions 0..40 (the fit needs 1 or 2), every power of two
/// from 64 to 2^23 (slow pairs turn measurably only far out) and 2^24 - 1; none past `top` (a
/// pinned encoder's largest position) when it is set.
std::vector<std::int64_t> probe_positions(std::int64_t top) {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i <= 40; ++i) p.push_back(i);
  for (int k = 6; k <= 23; ++k) p.push_back(std::int64_t{1} << k);
  p.push_back((std::int64_t{1} << 24) - 1);
  if (top > 0) std::erase_if(p, [top](std::int64_t q) { return q > top; });
  return p;
}

/// The RoPE pairing and frequencies of `fit` are those of `called` (the rule may be named
/// otherwise: NTK at base b turns every pair as no scaling at a larger base does).
bool fits_called(const RopeSpec& fit, const RopeSpec& called) {
  if (fit.layout != called.layout || fit.rotary_dim != called.rotary_dim) return false;
  if (!same_reading(ref::rope_magnitude<double>(fit), ref::rope_magnitude<double>(called))) return false;
  for (int p = 0; p < called.rotary_dim / 2; ++p)
    if (!same_reading(ref::rope_inv_freq<double>(fit, p), ref::rope_inv_freq<double>(called, p))) return false;
  return true;
}

bool fits_called(const SinusoidalSpec& fit, const SinusoidalSpec& called) {
  if (fit.layout != called.layout) return false;
  for (int i = 0; i < called.d_model / 2; ++i)
    if (!same_reading(ref::frequency<double>(i, fit.frequency_width(), fit.base),
                      ref::frequency<double>(i, called.frequency_width(), called.base)))
      return false;
  return true;
}

/// The clause for one probe's output in d: empty when it fits `called` (or is not finite: a NaN
/// is agreement's own finding), else the convention it fits or that none of `family` does.
template <class Spec, class Fit>
std::string named_fit(const Dump& d, const Spec& called, Fit fit, std::string_view family) {
  if (!std::all_of(d.y.begin(), d.y.end(), [](double v) { return std::isfinite(v); })) return "";
  try {
    const auto f = fit(d);
    if (fits_called(f.spec, called)) return "";
    return fmt::format("its output fits {} (called as {})", f.text, called.describe());
  } catch (const FitError& err) {
    return fmt::format("no {} fits its output (called as {}: {})", family, called.describe(), err.what());
  }
}

/// The clause for one probe: empty when the output fits `called`.
std::string rope_probe(Encoder& e, DType dt, const RopeSpec& called, std::int64_t top) {
  Dump d;
  d.dir = "the failing encoder";
  d.kind = Kind::rope;
  d.dtype = dt;
  d.heads = kHeads;
  d.width = called.head_dim;
  d.positions = probe_positions(top);
  const std::size_t n = d.tokens() * static_cast<std::size_t>(kHeads * called.head_dim);
  std::vector<float> x = gen::values(0x9e3779b9u, 0x68696e74u, n, dt);  // "hint"
  d.x.assign(x.begin(), x.end());
  e.run(RopeApply{called, dt, kHeads, d.positions, x});
  d.y.assign(x.begin(), x.end());
  return named_fit(d, called, fit_rope, "RoPE convention");
}

std::string sinusoid_probe(Encoder& e, DType dt, const SinusoidalSpec& called, std::int64_t top) {
  Dump d;
  d.dir = "the failing encoder";
  d.kind = Kind::sinusoidal;
  d.dtype = dt;
  d.width = called.d_model;
  d.positions = probe_positions(top);
  std::erase_if(d.positions, [&](std::int64_t q) { return called.is_padding(q); });
  std::vector<float> out(d.tokens() * static_cast<std::size_t>(called.d_model));
  e.run(SinusoidalTable{called, dt, d.positions, out});
  d.y.assign(out.begin(), out.end());
  const std::string clause = named_fit(d, called, fit_sinusoidal, "sinusoid");
  if (clause.empty()) return clause;
  // sin where cos belongs (and cos where sin): each pair's angle then reads pi/2 - w p, which no
  // sinusoid fits; read with each pair's two slots exchanged, it is the convention called.
  Dump swapped = d;
  for (std::size_t row = 0; row < d.tokens(); ++row)
    for (int i = 0; i < called.d_model / 2; ++i) {
      const auto [sin_slot, cos_slot] = ref::sinusoidal_slots(called, i);
      const std::size_t at = row * static_cast<std::size_t>(called.d_model);
      std::swap(swapped.y[at + static_cast<std::size_t>(sin_slot)], swapped.y[at + static_cast<std::size_t>(cos_slot)]);
    }
  if (named_fit(swapped, called, fit_sinusoidal, "sinusoid").empty())
    return fmt::format("its output is {} with sin and cos swapped in every pair", called.describe());
  return clause;
}

/// The conventions an encoder is probed at: its pinned one, or three that differ in every field a
/// kernel is known to ignore (layout, rotary_dim, base, the scaling rule).
std::vector<RopeSpec> rope_probes(const RunParams& rp) {
  if (rp.pins && rp.pins->pins(Op::rope_apply)) {
    if (rp.pins->rope_length_per_call) return {};  // its frequencies follow each call's length
    RopeSpec s{.head_dim = 64, .rotary_dim = 64};
    rp.pins->apply(s);
    if (s.scaling.kind == RopeScalingKind::longrope) return {};  // per-pair factors: never fitted
    return {s};
  }
  return {RopeSpec{.head_dim = 64, .rotary_dim = 64, .base = 10000, .layout = RopeLayout::half_split},
          RopeSpec{.head_dim = 64, .rotary_dim = 32, .base = 500000, .layout = RopeLayout::interleaved},
          RopeSpec{.head_dim = 64,
                   .rotary_dim = 64,
                   .base = 10000,
                   .layout = RopeLayout::half_split,
                   .scaling = {.kind = RopeScalingKind::linear, .factor = 4}}};
}

std::vector<SinusoidalSpec> sinusoid_probes(const RunParams& rp) {
  if (rp.pins && rp.pins->pins(Op::sinusoidal_table)) {
    SinusoidalSpec s;
    rp.pins->apply(s);
    return {s};
  }
  return {SinusoidalSpec{.d_model = 64, .base = 10000, .layout = SinusoidalLayout::interleaved},
          SinusoidalSpec{.d_model = 64, .base = 500000, .layout = SinusoidalLayout::concatenated}};
}

/// The clause for one attention probe: the encoder called on 24 tokens 997 positions apart from
/// 1000 (the keys' relative positions then turn even RoPE's slowest pairs measurably, so a layout,
/// a rotary_dim or a scaling rule ignored shows), its output read as an attention dump; empty when
/// it meets some contract under `called`, else what it fits (attention_hint).
std::string attention_probe(Encoder& e, DType dt, const AttentionSpec& called) {
  Dump d;
  d.dir = "the failing encoder";
  d.kind = Kind::attention;
  d.dtype = dt;
  d.attention = called;
  d.heads = called.heads;
  d.width = called.head_dim;
  for (std::int64_t t = 0; t < 24; ++t) d.positions.push_back(1000 + 997 * t);
  const std::size_t n = d.tokens(), q_size = called.query_count(n) * static_cast<std::size_t>(called.width()),
                    kv_size = n * static_cast<std::size_t>(called.kv_width());
  const std::vector<float> q = gen::values(0x9e3779b9u, 1, q_size, dt), k = gen::values(0x9e3779b9u, 2, kv_size, dt),
                           v = gen::values(0x9e3779b9u, 3, kv_size, dt);
  std::vector<float> out(q_size);
  e.run(Attention{called, dt, d.positions, q, k, v, {}, out});
  d.x.assign(q.begin(), q.end());
  d.k.assign(k.begin(), k.end());
  d.v.assign(v.begin(), v.end());
  d.y.assign(out.begin(), out.end());
  if (!std::all_of(d.y.begin(), d.y.end(), [](double x) { return std::isfinite(x); })) return "";
  if (attention_meets_some_contract(d)) return "";
  const std::string hint = attention_hint(d);
  return hint.empty() ? "" : fmt::format("called as {}, {}", called.describe(), hint);
}

/// The attention conventions an encoder is probed at: its pinned PE's (a Python function's), or
/// three that between them expose each confusion attention_hint reads: grouped-query heads with a
/// decode chunk, partial RoPE with linear scaling inside, a window with a stated scale.
std::vector<AttentionSpec> attention_probes(const RunParams& rp) {
  AttentionSpec chunk{.heads = 4, .head_dim = 32, .kv_heads = 2, .queries = 3, .causal = true};
  AttentionSpec rope{.heads = 2,
                     .head_dim = 32,
                     .causal = true,
                     .pe = AttentionPE::rope,
                     .rotary_dim = 16,
                     .rope_scaling = {.kind = RopeScalingKind::linear, .factor = 4}};
  AttentionSpec window{.heads = 2, .head_dim = 32, .window = 5, .causal = true, .scale = 0.125};
  std::vector<AttentionSpec> probes{chunk, rope, window};
  if (rp.pins && rp.pins->pins(Op::attention)) {
    std::erase_if(probes, [&](const AttentionSpec& s) { return rp.pins->refuses(s).has_value(); });
    for (AttentionSpec& s : probes) rp.pins->apply(s);
  }
  return probes;
}

template <class Spec, class Probe>
std::string first_mismatch(const std::vector<Spec>& probes, Probe&& probe) {
  for (const Spec& s : probes) {
    try {
      if (std::string clause = probe(s); !clause.empty()) return clause;
    } catch (const std::exception&) {  // declined or refused: this probe says nothing
    }
  }
  return "";
}

/// Whether the encoder flushes subnormal inputs to zero, asked at position 0, where R_0 = I keeps
/// every value as it is in any arithmetic: a head alternating values below FLT_MIN (powers of two,
/// both signs, exact in f32 and bf16) with normal ones, and a flush is every subnormal returned as
/// a zero and every normal value bitwise as it went in. f16 holds nothing below FLT_MIN.
std::string ftz_probe(Encoder& e, DType dt, const RopeSpec& called) {
  if (dt == DType::f16) return "";
  const std::size_t n = static_cast<std::size_t>(kHeads * called.head_dim);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = i % 2 == 0 ? std::ldexp(i % 4 == 0 ? FLT_MIN : -FLT_MIN, -1 - static_cast<int>(i % 7))
                      : round_to(dt, 0.25 + static_cast<double>(i % 13) / 16);
  const std::vector<float> in = x;
  const std::int64_t zero = 0;
  e.run(RopeApply{called, dt, kHeads, std::span(&zero, 1), x});
  for (std::size_t i = 0; i < n; ++i) {
    const bool subnormal = std::fabs(in[i]) < FLT_MIN;
    if (subnormal ? x[i] != 0 : std::bit_cast<std::uint32_t>(x[i]) != std::bit_cast<std::uint32_t>(in[i])) return "";
  }
  return "it flushes subnormal inputs to zero (at position 0, where R_0 = I, each input below FLT_MIN came back 0 "
         "and every other unchanged): where its platform does (XLA on CPU; CUDA or Triton built with fast math), "
         "state it (--ftz, ftz=True, a plugin's PECHECK_FLAG_FTZ)";
}

/// Both clauses, where both have something to say.
std::string joined(std::string a, const std::string& b) {
  if (a.empty()) return b;
  if (!b.empty()) a += "; " + b;
  return a;
}

}  // namespace

std::string convention_hint(const Property& p, Encoder& e, DType dt, const RunParams& rp) {
  std::string fit;
  const bool agreement = p.id == contract_agreement_id(p.op);
  if (agreement && p.op == Op::rope_apply)
    fit = first_mismatch(rope_probes(rp), [&](const RopeSpec& s) { return rope_probe(e, dt, s, rp.max_position); });
  if (agreement && p.op == Op::sinusoidal_table)
    fit = first_mismatch(sinusoid_probes(rp),
                         [&](const SinusoidalSpec& s) { return sinusoid_probe(e, dt, s, rp.max_position); });
  if (agreement && p.op == Op::attention)
    fit = first_mismatch(attention_probes(rp), [&](const AttentionSpec& s) { return attention_probe(e, dt, s); });
  std::string flush;
  if (p.op == Op::rope_apply && !rp.ftz)
    if (const auto probes = rope_probes(rp); !probes.empty())
      flush = first_mismatch(std::vector{probes.front()}, [&](const RopeSpec& s) { return ftz_probe(e, dt, s); });
  return joined(std::move(fit), flush);
}

}  // namespace pecheck::dumpcheck
