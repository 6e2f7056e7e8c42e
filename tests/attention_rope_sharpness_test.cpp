// Attention's bound with RoPE inside, under each contract that governs that RoPE, is near the worst
// error the contract allows: the RoPE's per-pair budget pointed the worst way (aligned) passes every
// law at k = 1 and fails at a small power of two K, K/2 passing, at seed 5; the contract's own model
// amplified, whose errors point every way and mostly cancel, fails only far past it.
// docs/error-model.md "relational.sharpness" holds the table and what each K says.
#include <gtest/gtest.h>

#include "tests/contract_models.hpp"

namespace pecheck::sharpness {
namespace {

constexpr Contract X = Contract::exact, F = Contract::fp32_angles, T = Contract::dtype_trig;
constexpr DType f32 = DType::f32, bf16 = DType::bf16, f16 = DType::f16;

// Measured at seed 5, 100 cases.
constexpr Row kRows[] = {
    {"attention.agrees_with_reference", X, f32, 64, true},
    {"attention.agrees_with_reference", X, bf16, 4, true},
    {"attention.agrees_with_reference", X, f16, 4, true},
    {"attention.agrees_with_reference", F, f32, 8, true},
    {"attention.agrees_with_reference", F, bf16, 8, true},
    {"attention.agrees_with_reference", F, f16, 4, true},
    {"attention.agrees_with_reference", T, f32, 32, true},
    {"attention.agrees_with_reference", T, bf16, 4, true},
    {"attention.agrees_with_reference", T, f16, 4, true},
    {"attention.translation_invariance", X, f32, 32, true},
    {"attention.translation_invariance", X, bf16, 4, true},
    {"attention.translation_invariance", F, f32, 4, true},
    {"attention.translation_invariance", F, bf16, 4, true},
    {"attention.translation_invariance", F, f16, 4, true},
    {"attention.translation_invariance", T, f32, 16, true},
    {"attention.translation_invariance", T, bf16, 4, true},
    {"attention.translation_invariance", T, f16, 4, true},
    // Laws comparing calls at the same positions: the aligned model's target (row, dim) moves with
    // the data a law permutes, splits or regroups, so its two calls err differently.
    {"attention.permutation_equivariance", F, bf16, 4, true},
    {"attention.permutation_equivariance", T, f32, 16, true},
    {"attention.causal_future_independence", F, bf16, 16, true},
    {"attention.causal_future_independence", T, f32, 32, true},
    {"attention.gqa_repeat_equivalence", F, bf16, 8, true},
    {"attention.gqa_repeat_equivalence", T, f32, 32, true},
    {"attention.decode_equivalence", F, bf16, 8, true},
    {"attention.decode_equivalence", T, f32, 32, true},
    {"attention.tile_edges", X, f32, 256, true},
    {"attention.tile_edges", F, f32, 16, true},
    {"attention.tile_edges", T, f32, 64, true},
    {"attention.tile_edges", F, bf16, 4, true},
    {"attention.tile_edges", T, bf16, 4, true},
    {"attention.tile_edges", X, bf16, 4, true},
    {"attention.tile_edges", F, f16, 8, true},
    {"attention.tile_edges", T, f16, 8, true},
    // Attention with RoPE inside under the contracts that govern its RoPE: the RoPE amplified, the
    // attention exact. Judged through the output, whose bound takes each rotated q and k's worst
    // case over every dim, so the RoPE may err 100 to 1000 times its contract's model before a law
    // sees it (docs/error-model.md, relational.sharpness). The laws comparing calls that rotate the
    // same positions alike (permutations, GQA, decode, causal future, window, batch, convex hull)
    // pass it at every k up to 4096, as every tile_edges case in f32 does.
    {"attention.translation_invariance", F, f32, 512},
    {"attention.translation_invariance", F, bf16, 256},
    {"attention.translation_invariance", F, f16, 256},
    {"attention.translation_invariance", T, f32, 1024},
    {"attention.translation_invariance", T, bf16, 128},
    {"attention.translation_invariance", T, f16, 256},
    {"attention.tile_edges", F, bf16, 256},
    {"attention.tile_edges", F, f16, 256},
    {"attention.tile_edges", T, bf16, 256},
    {"attention.tile_edges", T, f16, 256},
    {"attention.agrees_with_reference", F, f32, 128},
    {"attention.agrees_with_reference", F, bf16, 256},
    {"attention.agrees_with_reference", F, f16, 128},
    {"attention.agrees_with_reference", T, f32, 512},
    {"attention.agrees_with_reference", T, bf16, 256},
    {"attention.agrees_with_reference", T, f16, 128},
};

TEST(AttentionRopeSharpness, TheBudgetHoldsEveryLaw) { expect_the_model_holds(kRows); }

TEST(AttentionRopeSharpness, EachLawFailsJustPastItsBound) { expect_each_fails_just_past(kRows); }

// build/tests/attention_rope_sharpness_test --gtest_also_run_disabled_tests --gtest_filter='*Measure*'
TEST(AttentionRopeSharpness, DISABLED_MeasureTheTable) { measure_the_table(kRows); }

}  // namespace
}  // namespace pecheck::sharpness
