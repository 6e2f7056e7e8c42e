// An attention encoder that states its PE and its call forms (harness/pins.hpp,
// spec/attention_forms.hpp) is sent only cases inside them: every attention property either runs
// its full case count on such cases or is "not applicable", naming the form or PE its cases need;
// a case outside the declaration never reaches the encoder. Checked on the scalar backend, whose
// every call is recorded.
#include <gtest/gtest.h>

#include <memory>
#include <type_traits>
#include <vector>

#include "harness/encoders.hpp"
#include "harness/runner.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

std::unique_ptr<Encoder> scalar_encoder() { return make_encoder("scalar"); }

/// Forwards to the scalar backend and records every attention call's spec; declines a call of a
/// form it does not declare, as a Python function's encoder does (a property's second call, say).
class Recording final : public HandledBy<Recording> {
 public:
  explicit Recording(std::unique_ptr<Encoder> inner, AttentionForms declared = AttentionForms::all())
      : inner_(std::move(inner)), declared_(declared) {}
  std::string name() const override { return "recording"; }
  Support supports(Op op, DType dt) const override { return inner_->supports(op, dt); }
  template <class Call>
  void handle(const Call& call) {
    if constexpr (std::is_same_v<Call, Attention>) {
      if (const auto f = declared_.lacking(call.spec))
        throw Unsupported(std::string("needs ") + form_meaning(*f).data());
      specs.push_back(call.spec);
    }
    inner_->run(call);
  }
  std::vector<AttentionSpec> specs;

 private:
  std::unique_ptr<Encoder> inner_;
  AttentionForms declared_;
};

std::shared_ptr<Pins> pinned(AttentionPE pe, AttentionForms forms) {
  auto pins = std::make_shared<Pins>();
  pins->attention_pe = pe;
  pins->attention_forms = forms;
  return pins;
}

const std::vector<const Property*> attention_properties() {
  std::vector<const Property*> out;
  for (const Property& p : property_registry())
    if (p.op == Op::attention) out.push_back(&p);
  return out;
}

TEST(AttentionPins, APlainFunctionIsSentPlainCasesOfItsPeOnly) {
  Recording enc(scalar_encoder(), AttentionForms{});
  const auto pins = pinned(AttentionPE::alibi, AttentionForms{});
  const RunParams params{.seed = 5, .cases = 20, .pins = pins};
  int ran = 0;
  for (const Property* p : attention_properties()) {
    const std::size_t before = enc.specs.size();
    const PropertyResult r = p->run(enc, DType::f32, params);
    if (r.verdict == Verdict::skip) {
      EXPECT_TRUE(r.message.starts_with("not applicable") || r.message.starts_with("needs "))
          << p->id << ": " << r.message;
      continue;
    }
    ++ran;
    EXPECT_EQ(r.verdict, Verdict::pass) << p->id << ": " << r.message;
    EXPECT_GT(enc.specs.size(), before) << p->id;
  }
  EXPECT_GE(ran, 6);
  ASSERT_FALSE(enc.specs.empty());
  for (const AttentionSpec& s : enc.specs) EXPECT_EQ(s.pe, AttentionPE::alibi) << s.describe();
}

TEST(AttentionPins, APropertyWhoseCasesNeedAnUndeclaredFormIsNotApplicableAndSaysWhich) {
  auto enc = scalar_encoder();
  const RunParams params{.seed = 5, .cases = 10, .pins = pinned(AttentionPE::none, AttentionForms{})};
  for (const Property* p : attention_properties()) {
    if (p->id != "attention.gqa_repeat_equivalence") continue;
    const PropertyResult r = p->run(*enc, DType::f32, params);
    EXPECT_EQ(r.verdict, Verdict::skip);
    EXPECT_TRUE(r.message.starts_with("not applicable")) << r.message;
    EXPECT_NE(r.message.find("grouped_query"), std::string::npos) << r.message;
  }
  // A property that draws no case of the pinned PE says so.
  for (const Property* p : attention_properties()) {
    if (p->id != "attention.kv_permutation_invariance") continue;
    const PropertyResult r =
        p->run(*enc, DType::f32, RunParams{.seed = 5, .cases = 10, .pins = pinned(AttentionPE::rope, {})});
    EXPECT_EQ(r.verdict, Verdict::skip);
    EXPECT_NE(r.message.find("the encoder states rope"), std::string::npos) << r.message;
  }
}

TEST(AttentionPins, EveryFormDeclaredReachesEveryAttentionProperty) {
  Recording enc(scalar_encoder());
  const RunParams params{.seed = 7, .cases = 15, .pins = pinned(AttentionPE::rope, AttentionForms::all())};
  for (const Property* p : attention_properties()) {
    if (p->opt_in) continue;
    const PropertyResult r = p->run(enc, DType::f32, params);
    // kv_permutation_invariance holds without a PE only, ALiBi's law with ALiBi only: under RoPE
    // they are not applicable.
    if (p->id == "attention.kv_permutation_invariance" || p->id == "alibi.causal_shift_equivalence") {
      EXPECT_EQ(r.verdict, Verdict::skip) << r.message;
      EXPECT_NE(r.message.find("not applicable: its cases apply the PE"), std::string::npos) << r.message;
      continue;
    }
    EXPECT_EQ(r.verdict, Verdict::pass) << p->id << ": " << r.message;
  }
  bool gqa = false, window = false, decode = false, scale = false;
  for (const AttentionSpec& s : enc.specs) {
    EXPECT_EQ(s.pe, AttentionPE::rope);
    gqa |= needs(s, AttentionForm::grouped_query), window |= needs(s, AttentionForm::window);
    decode |= needs(s, AttentionForm::decode), scale |= needs(s, AttentionForm::scale);
  }
  EXPECT_TRUE(gqa && window && decode && scale);
}

TEST(AttentionPins, APinWritesThePesConventionIntoEachCase) {
  Recording enc(scalar_encoder());
  auto pins = pinned(AttentionPE::rope, AttentionForms{});
  pins->attention = [](AttentionSpec& s) {
    // A pinned PE's convention is whole, its rule included (harness/pins.hpp): a drawn LongRoPE
    // rule's lists, sized for the drawn rotary_dim, would not fit the pinned one.
    s.head_dim = 32, s.pe_base = 500000.0, s.rope_layout = RopeLayout::interleaved, s.rotary_dim = 16;
    s.rope_scaling = {};
  };
  const RunParams params{.seed = 9, .cases = 20, .pins = pins};
  for (const Property* p : attention_properties()) {
    if (p->id != "attention.agrees_with_reference") continue;
    const PropertyResult r = p->run(enc, DType::f32, params);
    EXPECT_EQ(r.verdict, Verdict::pass) << r.message << "; " << r.counterexample;
  }
  ASSERT_FALSE(enc.specs.empty());
  for (const AttentionSpec& s : enc.specs) {
    EXPECT_EQ(s.head_dim, 32);
    EXPECT_EQ(s.pe_base, 500000.0);
    EXPECT_EQ(s.rope_layout, RopeLayout::interleaved);
    EXPECT_EQ(s.rotary_dim, 16);
    EXPECT_EQ(s.kv_count(), s.heads);
    EXPECT_EQ(s.queries, 0);
    EXPECT_FALSE(s.scale.has_value());
  }
}

}  // namespace
}  // namespace pecheck
