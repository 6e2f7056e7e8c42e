// RoPE's relational laws under a weaker accuracy contract (properties/rope_contract_laws.hpp,
// docs/error-model.md "The relational laws under a contract"): an encoder with fp32 angles, which
// the exact contract's bounds fail, holds rope.relative, rope.composition and
// rope.offset_invariance under the fp32-angles contract below its ceiling, in every dtype, on
// non-trivial cases; the bugs those laws catch are still caught under it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "harness/runner.hpp"
#include "harness/tolerance.hpp"
#include "properties/registry.hpp"
#include "selftest/mutants.hpp"

namespace pecheck {
namespace {

const Property& property(const std::string& id) {
  for (const Property& p : property_registry())
    if (p.id == id) return p;
  throw std::logic_error("no property " + id);
}

std::unique_ptr<Encoder> mutant(const std::string& name) {
  for (const auto& m : selftest::mutants())
    if (m.name == name) return m.make();
  throw std::logic_error("no mutant " + name);
}

RunParams under_fp32_angles(DType dt) {
  RunParams params{.seed = 5, .cases = 100};
  params.rope_contract = tol::RopeContract::fp32_angles;
  params.max_position = tol::rope_law_ceiling(params.rope_contract, dt);
  return params;
}

constexpr const char* kLaws[] = {"rope.relative", "rope.composition", "rope.offset_invariance"};

TEST(RopeContractLaws, OnlyTheFp32AnglesContractHasACeiling) {
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    EXPECT_EQ(tol::rope_law_ceiling(tol::RopeContract::exact, dt), 0);
    EXPECT_EQ(tol::rope_law_ceiling(tol::RopeContract::dtype_trig, dt), 0);
    const std::int64_t top = tol::rope_law_ceiling(tol::RopeContract::fp32_angles, dt);
    // Four calls' bounds on the fastest pair within 1/u at the ceiling, and past it at twice that.
    EXPECT_LE(4 * tol::rope_pair_fp32_angles(dt, static_cast<double>(top), 0), 1 / unit_roundoff(dt));
    EXPECT_GT(4 * tol::rope_pair_fp32_angles(dt, 2.0 * static_cast<double>(top), 0), 1 / unit_roundoff(dt));
    EXPECT_GE(top, std::int64_t{1} << 16);  // far past the positions where fp32 angles leave exact
  }
}

TEST(RopeContractLaws, Fp32AnglesHoldEveryLawUnderTheirContract) {
  const auto enc = mutant("RoPE angles in fp32 (the PyTorch formula)");
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (const char* id : kLaws) {
      const PropertyResult r = property(id).run(*enc, dt, under_fp32_angles(dt));
      EXPECT_EQ(r.verdict, Verdict::pass) << id << " " << dtype_name(dt) << ": " << r.message;
      EXPECT_GE(r.nontrivial_cases, 90) << id << " " << dtype_name(dt);
    }
}

TEST(RopeContractLaws, TheExactContractsBoundsFailFp32Angles) {
  // What the contract-aware bounds are for: judged by the exact constants, a correct fp32-angle
  // encoder fails a law that compares calls.
  const auto enc = mutant("RoPE angles in fp32 (the PyTorch formula)");
  const PropertyResult r = property("rope.relative").run(*enc, DType::f32, RunParams{.seed = 5, .cases = 100});
  EXPECT_EQ(r.verdict, Verdict::fail);
}

TEST(RopeContractLaws, TheLawsStillCatchTheirBugsUnderFp32Angles) {
  // bf16 angles are far outside what fp32 angles allow; a cache clamped at 8192 positions breaks
  // offset invariance well below the ceiling.
  EXPECT_EQ(
      property("rope.relative").run(*mutant("RoPE angles in bf16"), DType::f32, under_fp32_angles(DType::f32)).verdict,
      Verdict::fail);
  EXPECT_EQ(property("rope.offset_invariance")
                .run(*mutant("RoPE cache clamped at 8192 positions"), DType::f32, under_fp32_angles(DType::f32))
                .verdict,
            Verdict::fail);
}

}  // namespace
}  // namespace pecheck
