// An encoder pinned to one convention: a Python function or a model's module implements one spec
// (HF's rope_theta, rope_scaling, partial_rotary_factor; a sinusoid's layout and base), not every
// spec a generator draws. A pin rewrites each drawn spec to the pinned one, keeping what the pin
// leaves free (the sizes, usually), and only the properties that call the encoder with a case's
// spec as drawn (Property::pinnable) can check a pinned encoder: the others vary the convention
// within a case (layout conjugacy, linear scaling, NTK base) and are skipped with that reason.
// A pin may also read each case's positions (rope_length_per_call: transformers' dynamic NTK);
// then only the properties that call the encoder at the case's positions alone
// (Property::calls_at_case_positions) can judge it.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "interface/operations.hpp"
#include "spec/attention_forms.hpp"

namespace pecheck {

struct Pins {
  /// Each rewrites a drawn spec in place to the pinned convention; empty: that operation is not
  /// pinned. A pin must leave a valid spec (it may change the sizes, e.g. a stated head_dim).
  std::function<void(RopeSpec&)> rope;
  std::function<void(SinusoidalSpec&)> sinusoidal;
  std::function<void(AlibiSpec&)> alibi;
  std::function<void(ShawSpec&)> shaw;
  std::function<void(T5Spec&)> t5;
  std::function<void(MropeSpec&)> mrope;
  std::function<void(Rope2dSpec&)> rope2d;
  std::function<void(RelativeBias2dSpec&)> relative_bias_2d;
  /// The pinned RoPE rule's length L is each call's own, max(position) + 1 (at least 1), not one
  /// stated value: transformers' dynamic NTK recomputes its base from each call's position_ids.
  /// The laws that compare calls at different positions do not hold for such an encoder.
  bool rope_length_per_call = false;
  /// An attention function pinned to the one position encoding it applies: a case drawn with
  /// another PE is drawn again (never sent), and `attention` writes that PE's convention (RoPE's
  /// base, layout and rule; the sinusoid's base; Shaw's K) into each case of it.
  std::optional<AttentionPE> attention_pe;
  std::function<void(AttentionSpec&)> attention;
  /// The attention forms the encoder takes (spec/attention_forms.hpp), nothing meaning all: a case
  /// that needs another is drawn again. Under a pinned PE its RoPE rule is the pin's, not a form.
  std::optional<AttentionForms> attention_forms;
  /// The position encodings an attention encoder applies (a plugin's declaration), nothing meaning
  /// all: a case drawn with another is drawn again.
  std::optional<std::vector<AttentionPE>> attention_pes;

  bool pins(Op op) const {
    switch (op) {
      case Op::rope_apply:
        return static_cast<bool>(rope);
      case Op::sinusoidal_table:
        return static_cast<bool>(sinusoidal);
      case Op::alibi_bias:
        return static_cast<bool>(alibi);
      case Op::shaw_scores:
        return static_cast<bool>(shaw);
      case Op::t5_bias:
        return static_cast<bool>(t5);
      case Op::mrope_apply:
        return static_cast<bool>(mrope);
      case Op::rope2d_apply:
        return static_cast<bool>(rope2d);
      case Op::relative_bias_2d:
        return static_cast<bool>(relative_bias_2d);
      case Op::attention:
        return attention_pe.has_value() || attention_forms.has_value() || attention_pes.has_value();
      default:
        return false;
    }
  }
  void apply(RopeSpec& s) const {
    if (rope) rope(s);
  }
  /// A RoPE case's spec, its length taken from the case's positions where the pin says so.
  void apply(RopeSpec& s, std::span<const std::int64_t> positions) const {
    apply(s);
    if (rope_length_per_call && !positions.empty())
      s.scaling.seq_len = std::max<std::int64_t>(1, *std::max_element(positions.begin(), positions.end()) + 1);
  }
  void apply(SinusoidalSpec& s) const {
    if (sinusoidal) sinusoidal(s);
  }
  void apply(AlibiSpec& s) const {
    if (alibi) alibi(s);
  }
  void apply(ShawSpec& s) const {
    if (shaw) shaw(s);
  }
  void apply(T5Spec& s) const {
    if (t5) t5(s);
  }
  void apply(MropeSpec& s) const {
    if (mrope) mrope(s);
  }
  void apply(Rope2dSpec& s) const {
    if (rope2d) rope2d(s);
  }
  void apply(RelativeBias2dSpec& s) const {
    if (relative_bias_2d) relative_bias_2d(s);
  }
  void apply(AttentionSpec& s) const {
    if (attention && attention_pe && s.pe == *attention_pe) attention(s);
  }
  /// The forms an attention encoder is sent: those it declares, and under a pinned PE its own RoPE
  /// rule (the pin writes it into every case; all forms when nothing is declared).
  AttentionForms attention_forms_taken() const {
    AttentionForms taken = attention_forms.value_or(AttentionForms::all());
    if (attention_pe) taken.add(AttentionForm::rope_rules);
    return taken;
  }
  /// Why a drawn attention case (after apply) is not one to send ("cases that ..."), or nothing.
  std::optional<std::string> refuses(const AttentionSpec& s) const {
    if (attention_pe && s.pe != *attention_pe)
      return fmt::format("apply the PE {}, and the encoder states {}", pe_name(s.pe), pe_name(*attention_pe));
    if (attention_pes && std::find(attention_pes->begin(), attention_pes->end(), s.pe) == attention_pes->end())
      return fmt::format("apply the PE {}, which the encoder does not declare", pe_name(s.pe));
    if (!attention_forms) return std::nullopt;
    if (const auto f = attention_forms_taken().lacking(s))
      return fmt::format("need {} (form '{}'), which the encoder does not declare", form_meaning(*f), form_name(*f));
    return std::nullopt;
  }
};

}  // namespace pecheck
