// RoPE's scaling rules, named and parameterised as in Hugging Face's RoPE dict (transformers 5's
// rope_parameters, 4.x's rope_scaling): the frequencies' rule and the magnitude it gives cos and
// sin. reference/rope_scaling.hpp evaluates them exactly, impl/rope_frequencies.hpp for the kernels.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pecheck {

/// Shortest text that reads back as the same double ("10000", "5e+05", "0.5").
inline std::string short_number(double x) { return fmt::format("{}", x); }

/// How a RoPE model stretches its frequencies past the context it was trained on.
enum class RopeScalingKind {
  none,         ///< inv_freq_i = base^(-2i/d)
  linear,       ///< position interpolation: inv_freq_i / factor (R^lin_m = R_(m/factor))
  ntk,          ///< "NTK-aware": base' = base * factor^(d/(d-2))
  dynamic_ntk,  ///< base' = base * (factor L / L0 - (factor - 1))^(d/(d-2)) when L > L0 (HF "dynamic")
  yarn,         ///< per-pair ramp between inv_freq and inv_freq/factor, outputs times the attention factor
  llama3,       ///< Llama 3.1: inv_freq/factor for long wavelengths, unchanged for short, smooth between
  longrope,     ///< LongRoPE (Phi-3): inv_freq_i / ext_i, ext the short or long per-pair factors, outputs times
                ///< the attention factor
};

inline std::string_view scaling_name(RopeScalingKind k) {
  switch (k) {
    case RopeScalingKind::none:
      return "none";
    case RopeScalingKind::linear:
      return "linear";
    case RopeScalingKind::ntk:
      return "ntk";
    case RopeScalingKind::dynamic_ntk:
      return "dynamic_ntk";
    case RopeScalingKind::yarn:
      return "yarn";
    case RopeScalingKind::llama3:
      return "llama3";
    case RopeScalingKind::longrope:
      return "longrope";
  }
  return "?";
}

/// HF's get_mscale(s, m) of YaRN: 0.1 m ln s + 1 for s > 1, else 1.
inline double yarn_get_mscale(double factor, double m) {
  return factor <= 1.0 ? 1.0 : 0.1 * m * std::log(factor) + 1.0;
}

/// The parameters of a RoPE scaling rule, named as in HF's RoPE dict (d is rotary_dim).
struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::none;
  double factor = 1.0;
  std::int64_t original_max_position = 4096;  ///< L0: dynamic_ntk, yarn, llama3, longrope
  std::int64_t seq_len = 1;  ///< L: the length the call stands for (HF: max(position_ids) + 1); dynamic_ntk, longrope
  double beta_fast = 32.0, beta_slow = 1.0;              ///< yarn correction range, in rotations
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  ///< llama3
  /// longrope: per-pair divisors of inv_freq, rotary_dim / 2 each; the long ones apply when L > L0.
  /// `factor` is HF's max_position_embeddings / original_max_position_embeddings.
  std::vector<double> short_factor{}, long_factor{};
  double attention_factor = 0;  ///< yarn, longrope: multiplies cos and sin; 0 = HF's default (see magnitude())
  /// yarn, when attention_factor is 0: with both non-zero the attention factor is HF's
  /// get_mscale(s, mscale) / get_mscale(s, mscale_all_dim) (DeepSeek's); 0 = not stated.
  double mscale = 0, mscale_all_dim = 0;
  /// yarn: HF's `truncate`, floor and ceil of the correction range (its default); false keeps the
  /// range's real ends, so the ramp starts and stops between pairs.
  bool truncate = true;
  /// HF's proportional rope_type (with the none or linear rule): pairs [rotated_pairs,
  /// rotary_dim / 2) turn at frequency 0, the others as the rule says; 0 = every pair turns.
  int rotated_pairs = 0;

  void validate(int rotary_dim) const {
    if (rotated_pairs != 0) validate_proportional(rotary_dim);
    if (kind == RopeScalingKind::none) return;
    if (!(std::isfinite(factor) && factor >= 1.0))
      throw std::invalid_argument(
          fmt::format("RoPE {} scaling needs a finite factor >= 1, got {}", scaling_name(kind), factor));
    if (original_max_position <= 0)
      throw std::invalid_argument(fmt::format("RoPE original_max_position must be > 0, got {}", original_max_position));
    if ((kind == RopeScalingKind::ntk || kind == RopeScalingKind::dynamic_ntk) && rotary_dim < 4)
      throw std::invalid_argument(fmt::format("NTK scaling needs rotary_dim >= 4 (d/(d-2)), got {}", rotary_dim));
    if (kind == RopeScalingKind::dynamic_ntk && seq_len <= 0)
      throw std::invalid_argument(fmt::format("dynamic NTK needs seq_len > 0, got {}", seq_len));
    if (kind == RopeScalingKind::yarn) validate_yarn();
    if (kind == RopeScalingKind::llama3 && !(high_freq_factor > low_freq_factor && low_freq_factor > 0))
      throw std::invalid_argument(
          fmt::format("Llama 3 scaling needs high_freq_factor > low_freq_factor > 0, got {} and {}", high_freq_factor,
                      low_freq_factor));
    if (kind == RopeScalingKind::longrope) validate_longrope(rotary_dim);
  }
  /// The per-pair divisors LongRoPE applies to this call: long_factor when L > L0, else short_factor.
  const std::vector<double>& longrope_factors() const {
    return seq_len > original_max_position ? long_factor : short_factor;
  }
  /// Whether YaRN's attention factor is HF's default, 0.1 ln s + 1 (neither attention_factor nor
  /// an effective mscale pair stated).
  bool yarn_default_attention() const { return attention_factor == 0 && (mscale == 0 || mscale_all_dim == 0); }
  /// The attention factor that multiplies cos and sin (HF `attention_scaling`): YaRN's stated
  /// one, else get_mscale(s, mscale) / get_mscale(s, mscale_all_dim) when both are stated, else
  /// 0.1 ln s + 1 (s > 1); LongRoPE's stated one, else sqrt(1 + ln s / ln L0) (s > 1); 1 for the
  /// other rules.
  double magnitude() const {
    if (kind == RopeScalingKind::yarn) {
      if (attention_factor > 0) return attention_factor;
      if (!yarn_default_attention()) return yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim);
      return yarn_get_mscale(factor, 1.0);
    }
    if (kind == RopeScalingKind::longrope) {
      if (attention_factor > 0) return attention_factor;
      if (factor > 1.0) return std::sqrt(1.0 + std::log(factor) / std::log(static_cast<double>(original_max_position)));
    }
    return 1.0;
  }
  bool operator==(const RopeScaling&) const = default;
  std::string describe() const {
    if (rotated_pairs != 0)  // HF's proportional: the none or linear rule on the first pairs
      return fmt::format(",proportional({}rotated={})",
                         kind == RopeScalingKind::linear ? fmt::format("s={},", short_number(factor)) : "",
                         rotated_pairs);
    switch (kind) {
      case RopeScalingKind::none:
        return "";
      case RopeScalingKind::linear:
      case RopeScalingKind::ntk:
        return fmt::format(",{}(s={})", scaling_name(kind), short_number(factor));
      case RopeScalingKind::dynamic_ntk:
        return fmt::format(",dynamic_ntk(s={},L0={},L={})", short_number(factor), original_max_position, seq_len);
      case RopeScalingKind::yarn:
        return fmt::format(",yarn(s={},L0={},beta={}/{}{}{})", short_number(factor), original_max_position,
                           short_number(beta_fast), short_number(beta_slow), truncate ? "" : ",truncate=false",
                           yarn_attention_text());
      case RopeScalingKind::llama3:
        return fmt::format(",llama3(s={},L0={},lo={},hi={})", short_number(factor), original_max_position,
                           short_number(low_freq_factor), short_number(high_freq_factor));
      case RopeScalingKind::longrope: {
        const std::vector<double>& ext = longrope_factors();
        double lo = ext.empty() ? 0 : ext.front(), hi = lo;
        for (double e : ext) lo = std::min(lo, e), hi = std::max(hi, e);
        return fmt::format(",longrope(s={},L0={},L={},{}=[{}..{}],a={:.6g})", short_number(factor),
                           original_max_position, seq_len, seq_len > original_max_position ? "long" : "short",
                           short_number(lo), short_number(hi), magnitude());
      }
    }
    return "";
  }

 private:
  /// ",a=1.2" (attention_factor) or ",mscale=0.707/1,a=0.969", empty at HF's default.
  std::string yarn_attention_text() const {
    if (attention_factor > 0) return fmt::format(",a={}", short_number(attention_factor));
    if (yarn_default_attention()) return "";
    return fmt::format(",mscale={}/{},a={:.6g}", short_number(mscale), short_number(mscale_all_dim), magnitude());
  }
  void validate_yarn() const {
    if (!(beta_fast > beta_slow && beta_slow > 0))
      throw std::invalid_argument(
          fmt::format("YaRN needs beta_fast > beta_slow > 0, got {} and {}", beta_fast, beta_slow));
    if (!(std::isfinite(attention_factor) && attention_factor >= 0))
      throw std::invalid_argument(
          fmt::format("YaRN attention_factor must be finite and >= 0 (0: HF's default), got {}", attention_factor));
    const double m = magnitude();
    if (!(std::isfinite(m) && m > 0))
      throw std::invalid_argument(fmt::format(
          "YaRN attention factor must be finite and > 0, got {} (mscale {} / mscale_all_dim {} at factor {})", m,
          mscale, mscale_all_dim, factor));
  }
  void validate_proportional(int rotary_dim) const {
    if (kind != RopeScalingKind::none && kind != RopeScalingKind::linear)
      throw std::invalid_argument(
          fmt::format("RoPE rotated_pairs (HF's proportional rope_type) goes with the none or linear rule, not {}",
                      scaling_name(kind)));
    if (rotated_pairs < 0 || rotated_pairs > rotary_dim / 2)
      throw std::invalid_argument(
          fmt::format("RoPE rotated_pairs must be in [1, rotary_dim / 2 = {}] (0: every pair), got {}", rotary_dim / 2,
                      rotated_pairs));
  }
  void validate_longrope(int rotary_dim) const {
    if (original_max_position < 2)
      throw std::invalid_argument(
          fmt::format("LongRoPE needs original_max_position >= 2, got {}", original_max_position));
    if (seq_len <= 0) throw std::invalid_argument(fmt::format("LongRoPE needs seq_len > 0, got {}", seq_len));
    if (!(std::isfinite(attention_factor) && attention_factor >= 0))
      throw std::invalid_argument(
          fmt::format("LongRoPE attention_factor must be finite and >= 0, got {}", attention_factor));
    for (const auto* list : {&short_factor, &long_factor}) {
      const char* name = list == &short_factor ? "short_factor" : "long_factor";
      if (list->size() != static_cast<std::size_t>(rotary_dim / 2))
        throw std::invalid_argument(
            fmt::format("LongRoPE {} needs rotary_dim / 2 = {} entries, got {}", name, rotary_dim / 2, list->size()));
      for (double e : *list)
        if (!(std::isfinite(e) && e > 0))
          throw std::invalid_argument(fmt::format("LongRoPE {} entries must be finite and > 0, got {}", name, e));
    }
  }
};

}  // namespace pecheck
