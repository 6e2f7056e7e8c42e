// Each relational law's bound under a weaker contract is near what that contract allows: an encoder
// whose errors are the contract's own model, amplified k times, passes the law at k = 1 and fails it
// at a small power of two K (the mutant just past the bound), K/2 still passing, at seed 5. RoPE, the
// sinusoid and attention under rounded-P here; attention with RoPE inside in
// attention_rope_sharpness_test.cpp. docs/error-model.md "relational.sharpness" holds the table.
#include <gtest/gtest.h>

#include "tests/contract_models.hpp"

namespace pecheck::sharpness {
namespace {

constexpr Contract F = Contract::fp32_angles, T = Contract::dtype_trig, P = Contract::rounded_p;
constexpr DType f32 = DType::f32, bf16 = DType::bf16, f16 = DType::f16;

// Measured at seed 5, 100 cases (docs/error-model.md "Sharpness under a contract" quotes it).
constexpr Row kRows[] = {
    {"rope.relative", F, f32, 16},
    {"rope.relative", F, bf16, 32},
    {"rope.relative", F, f16, 32},
    {"rope.relative", T, f32, 32},
    {"rope.relative", T, bf16, 16},
    {"rope.relative", T, f16, 16},
    {"rope.offset_invariance", F, f32, 32},
    {"rope.offset_invariance", F, bf16, 8},
    {"rope.offset_invariance", F, f16, 16},
    {"rope.offset_invariance", T, f32, 32},
    {"rope.offset_invariance", T, bf16, 16},
    {"rope.offset_invariance", T, f16, 8},
    {"rope.composition", F, f32, 8},
    {"rope.composition", F, bf16, 16},
    {"rope.composition", F, f16, 8},
    {"rope.composition", T, f32, 16},
    {"rope.composition", T, bf16, 8},
    {"rope.composition", T, f16, 8},
    {"rope.linear_scaling", F, f32, 8},
    {"rope.linear_scaling", F, bf16, 16},
    {"rope.linear_scaling", F, f16, 16},
    {"rope.linear_scaling", T, f32, 32},
    {"rope.linear_scaling", T, bf16, 16},
    {"rope.linear_scaling", T, f16, 16},
    {"rope.ntk_base", F, f32, 16},
    {"rope.ntk_base", F, bf16, 16},
    {"rope.ntk_base", F, f16, 16},
    {"rope.ntk_base", T, f32, 32},
    {"rope.ntk_base", T, bf16, 16},
    {"rope.ntk_base", T, f16, 16},
    {"rope.scaled_frequency_bounds", F, f32, 8},
    {"rope.scaled_frequency_bounds", F, bf16, 8},
    {"rope.scaled_frequency_bounds", F, f16, 8},
    {"rope.scaled_frequency_bounds", T, f32, 16},
    {"rope.scaled_frequency_bounds", T, bf16, 8},
    {"rope.scaled_frequency_bounds", T, f16, 8},
    {"rope2d.relative", F, f32, 16},
    {"rope2d.relative", F, bf16, 32},
    {"rope2d.relative", F, f16, 32},
    {"rope2d.relative", T, f32, 64},
    {"rope2d.relative", T, bf16, 32},
    {"rope2d.relative", T, f16, 32},
    {"mrope.relative", F, f32, 32},
    {"mrope.relative", F, bf16, 64},
    {"mrope.relative", F, f16, 64},
    {"mrope.relative", T, f32, 32},
    {"mrope.relative", T, bf16, 32},
    {"mrope.relative", T, f16, 64},
    {"sinusoidal.shift_linearity", F, f32, 16},
    {"sinusoidal.shift_linearity", F, bf16, 8},
    {"sinusoidal.shift_linearity", F, f16, 8},
    {"sinusoidal.shift_linearity", T, bf16, 8},
    {"sinusoidal.shift_linearity", T, f16, 8},
    {"sinusoidal.shift_linearity", T, f32, 16},
    {"sinusoidal.offset_inner_product", F, f32, 32},
    {"sinusoidal.offset_inner_product", F, bf16, 16},
    {"sinusoidal.offset_inner_product", F, f16, 32},
    {"sinusoidal.offset_inner_product", T, bf16, 16},
    {"sinusoidal.offset_inner_product", T, f16, 16},
    {"sinusoidal.offset_inner_product", T, f32, 32},
    {"sinusoidal.injectivity", F, f32, 64},
    {"sinusoidal.injectivity", F, bf16, 16},
    {"sinusoidal.injectivity", F, f16, 32},
    {"sinusoidal.injectivity", T, bf16, 16},
    {"sinusoidal.injectivity", T, f16, 16},
    {"sinusoidal.injectivity", T, f32, 32},
    // Attention under rounded-P, in the dtypes where P's rounding is one (in f32 P is fp32 already).
    // Laws comparing two calls that form the same P (translation, permutation of queries or keys,
    // causal future independence, decode against prefill) see the amplified rounding alike in both
    // and pass at every k: no error that is a function of the call's scores alone can fail them.
    {"attention.tile_edges", P, bf16, 8},
    {"attention.tile_edges", P, f16, 8},
    {"attention.convex_combination", P, bf16, 8},
    {"attention.convex_combination", P, f16, 8},
    {"attention.gqa_repeat_equivalence", P, bf16, 16},
    {"attention.gqa_repeat_equivalence", P, f16, 16},
    {"attention.window_limits", P, bf16, 32},
    {"attention.window_limits", P, f16, 16},
    // Agreement itself under the same model, for comparison: not relational, the contract's own check.
    {"rope.agrees_with_reference", F, f32, 4},
    {"rope.agrees_with_reference", F, bf16, 8},
    {"rope.agrees_with_reference", F, f16, 8},
    {"rope.agrees_with_reference", T, f32, 8},
    {"rope.agrees_with_reference", T, bf16, 8},
    {"rope.agrees_with_reference", T, f16, 8},
    {"sinusoidal.agrees_with_reference", F, f32, 8},
    {"sinusoidal.agrees_with_reference", F, bf16, 4},
    {"sinusoidal.agrees_with_reference", F, f16, 4},
    {"sinusoidal.agrees_with_reference", T, f32, 8},
    {"sinusoidal.agrees_with_reference", T, bf16, 4},
    {"sinusoidal.agrees_with_reference", T, f16, 4},
    {"attention.agrees_with_reference", P, bf16, 8},
    {"attention.agrees_with_reference", P, f16, 16},
};

TEST(ContractSharpness, TheContractsOwnModelHoldsEveryLaw) { expect_the_model_holds(kRows); }

TEST(ContractSharpness, EachLawFailsTheModelJustPastItsBound) { expect_each_fails_just_past(kRows); }

// The table's K measured afresh, for when a bound changes: build/tests/contract_sharpness_test
// --gtest_also_run_disabled_tests --gtest_filter='*Measure*' prints each row's smallest failing k.
TEST(ContractSharpness, DISABLED_MeasureTheTable) { measure_the_table(kRows); }

}  // namespace
}  // namespace pecheck::sharpness
