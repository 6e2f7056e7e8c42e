// The sinusoid accuracy contracts (harness/tolerance.hpp sinusoidal_entry_contract,
// docs/error-model.md sinusoidal.entry.*), judged by sinusoidal.agrees_with_reference: a table built
// as transformers' fairseq modules build it (frequencies, angles, sin and cos all in fp32) fails the
// exact contract and meets the fp32-angles one; the same table with the wrong base fails even that.
// The laws comparing rows (shift_linearity, offset_inner_product, injectivity) hold under
// fp32-angles too, and still catch angles rounded to bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/encoders.hpp"
#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "interface/encoder.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

/// HF's M2M100SinusoidalPositionalEmbedding.get_embedding, in fp32 (fairseq frequencies, the
/// concatenated layout, a zero padding row), for any spec of that form; base_scale scales the base,
/// bf16_angles rounds each angle to bf16 (position ids kept in a bf16 model).
class Fp32FairseqTable final : public Offering<SinusoidalTable> {
 public:
  using Offering<SinusoidalTable>::run;
  explicit Fp32FairseqTable(double base_scale = 1.0, bool bf16_angles = false)
      : base_scale_(base_scale), bf16_angles_(bf16_angles) {}
  std::string name() const override { return "fp32-fairseq-table"; }
  Support supports(Op op, DType dt) const override {
    if (op != Op::sinusoidal_table || dt != DType::f32) return {false, "f32 sinusoid tables only"};
    return {};
  }
  void run(const SinusoidalTable& c) override {
    const int half = c.spec.d_model / 2;
    const float step = std::log(static_cast<float>(c.spec.base * base_scale_)) /
                       static_cast<float>(c.spec.frequencies == SinusoidalFrequencies::fairseq ? half - 1 : half);
    for (std::size_t r = 0; r < c.positions.size(); ++r)
      for (int i = 0; i < half; ++i) {
        const float freq = std::exp(static_cast<float>(i) * -step);
        float angle = static_cast<float>(c.positions[r]) * freq;
        if (bf16_angles_) angle = round_to(DType::bf16, angle);
        const bool pad = c.spec.is_padding(c.positions[r]);
        const std::size_t row = r * static_cast<std::size_t>(c.spec.d_model);
        const int sin_at = c.spec.layout == SinusoidalLayout::interleaved ? 2 * i : i;
        const int cos_at = c.spec.layout == SinusoidalLayout::interleaved ? 2 * i + 1 : half + i;
        c.out[row + static_cast<std::size_t>(sin_at)] = pad ? 0.0f : std::sin(angle);
        c.out[row + static_cast<std::size_t>(cos_at)] = pad ? 0.0f : std::cos(angle);
      }
  }

 private:
  double base_scale_;
  bool bf16_angles_;
};

const Property& property(const std::string& id) { return registered_property(id); }
const Property& agrees() { return property("sinusoidal.agrees_with_reference"); }

/// Pinned to fairseq's convention (the drawn specs vary the layout and base otherwise); without
/// its padding row for the laws comparing rows, which a zero row breaks by definition.
std::shared_ptr<const Pins> fairseq(std::int64_t padding_idx = 1) {
  auto pins = std::make_shared<Pins>();
  pins->sinusoidal = [padding_idx](SinusoidalSpec& s) {
    s.d_model = 64, s.base = 10000, s.layout = SinusoidalLayout::concatenated;
    s.frequencies = SinusoidalFrequencies::fairseq, s.padding_idx = padding_idx;
  };
  return pins;
}

TEST(SinusoidContracts, Fp32TablesFailExactAndMeetFp32Angles) {
  Fp32FairseqTable table;
  RunParams params{.seed = 7, .cases = 100, .pins = fairseq()};
  const PropertyResult exact = agrees().run(table, DType::f32, params);
  EXPECT_EQ(exact.verdict, Verdict::fail);
  params.contract = tol::Contract::fp32_angles;
  const PropertyResult r = agrees().run(table, DType::f32, params);
  EXPECT_EQ(r.verdict, Verdict::pass) << r.counterexample << " " << r.message;
  EXPECT_GT(r.max_error_u, 2);  // what exact refused, fp32 angles allow
}

TEST(SinusoidContracts, TheWeakestContractStillRefusesAWrongBase) {
  Fp32FairseqTable table(1.0001);
  const RunParams params{.seed = 7, .cases = 100, .pins = fairseq(), .contract = tol::Contract::fp32_angles};
  EXPECT_EQ(agrees().run(table, DType::f32, params).verdict, Verdict::fail);
}

TEST(SinusoidContracts, TheContractsAreOrdered) {
  for (const DType dt : {DType::f32, DType::bf16, DType::f16})
    for (const double angle : {0.0, 1.0, 1e3, 1e6}) {
      const double exact = tol::sinusoidal_entry_contract(tol::Contract::exact, dt, angle, 9.2);
      const double trig = tol::sinusoidal_entry_contract(tol::Contract::dtype_trig, dt, angle, 9.2);
      const double fp32 = tol::sinusoidal_entry_contract(tol::Contract::fp32_angles, dt, angle, 9.2);
      EXPECT_LE(exact, trig);
      EXPECT_LE(trig, fp32);
    }
}

TEST(SinusoidContracts, TheLawsComparingRowsHoldUnderFp32AnglesAndCatchBf16Angles) {
  Fp32FairseqTable table;
  RunParams exact{.seed = 7, .cases = 100, .pins = fairseq(-1)};
  RunParams params = exact;
  params.contract = tol::Contract::fp32_angles;
  params.max_position = tol::rope_law_ceiling(params.contract, DType::f32);
  for (const char* id : {"sinusoidal.shift_linearity", "sinusoidal.offset_inner_product", "sinusoidal.injectivity"}) {
    const PropertyResult r = property(id).run(table, DType::f32, params);
    EXPECT_EQ(r.verdict, Verdict::pass) << id << ": " << r.counterexample << " " << r.message;
    EXPECT_GE(r.nontrivial_cases, 90) << id;
    Fp32FairseqTable bf16_angles(1.0, true);
    EXPECT_EQ(property(id).run(bf16_angles, DType::f32, params).verdict, Verdict::fail) << id;
  }
  // What the contract's bounds are for: the exact constants refuse the correct fp32 table.
  EXPECT_EQ(property("sinusoidal.shift_linearity").run(table, DType::f32, exact).verdict, Verdict::fail);
}

TEST(SinusoidContracts, InjectivityUnderFp32AnglesJudgesMostCasesInEveryDtype) {
  // The bound grows with the position: below the ceiling most windows still have a margin the rows
  // could fail to keep (drawn specs, the scalar backend, which meets every contract).
  const auto scalar = make_encoder("scalar");
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    RunParams params{.seed = 7, .cases = 100};
    params.contract = tol::Contract::fp32_angles;
    params.max_position = tol::rope_law_ceiling(params.contract, dt);
    const PropertyResult r = property("sinusoidal.injectivity").run(*scalar, dt, params);
    EXPECT_EQ(r.verdict, Verdict::pass) << dtype_name(dt) << ": " << r.message;
    EXPECT_GE(r.nontrivial_cases, 90) << dtype_name(dt);
  }
}

}  // namespace
}  // namespace pecheck
