// The AVX2 score kernels and both kernel sets' attention write exactly their dense outputs
// (sentinel guards around, sizes 1 .. two vectors + 1, misaligned) and agree with the scalar backend; bad calls throw
// before writing anything; the backend is reported unavailable, with its reason, when disabled.
#include <cstdlib>

#include "impl/backend_table.hpp"
#include "impl/scalar/kernels.hpp"
#include "tests/avx2_test_support.hpp"

namespace pecheck {
namespace {

using namespace avx2_test;

template <class T>
class Avx2ScoreGuard : public Avx2Fixture<T> {};
TYPED_TEST_SUITE(Avx2ScoreGuard, StorageTypes);

const auto all = [](std::size_t) { return true; };

std::vector<std::int64_t> positions(std::size_t n) {
  std::vector<std::int64_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::int64_t>(3 * i * i) + (i % 2 ? 1000 : 0);
  return p;
}

TYPED_TEST(Avx2ScoreGuard, AlibiAndT5WriteExactlyTheirBias) {
  const DType dt = TestFixture::dt;
  for (std::size_t n = 1; n <= kMaxSize; ++n)
    for (std::size_t offset = 0; offset < 4; ++offset) {
      const auto pos = positions(n);
      for (const bool causal : {true, false}) {
        const AlibiSpec s{3, causal};
        std::vector<float> want(3 * n * n);
        scalar::alibi_bias(s, dt, pos, want);
        Guarded<TypeParam> out(want.size(), offset);
        avx2::alibi_bias<TypeParam>(s, pos, out.data());
        ASSERT_TRUE(out.untouched(all)) << s.describe() << " n " << n;
        expect_close(out.read(want.size()), want, dt, 2, 0x1p-20, s.describe());
      }
      const T5Spec t5{2, 8, 20, n % 2 == 0};
      const auto table = values(static_cast<std::size_t>(t5.num_buckets * t5.heads), dt, 4);
      std::vector<float> want(2 * n * n);
      scalar::t5_bias(t5, dt, table, pos, want);
      Guarded<TypeParam> tb(table.size(), offset), out(want.size(), offset);
      tb.fill(table);
      avx2::t5_bias<TypeParam>(t5, tb.data(), pos, out.data());
      ASSERT_TRUE(out.untouched(all)) << t5.describe() << " n " << n;
      expect_close(out.read(want.size()), want, dt, 0, 0, t5.describe());  // a gather: bit for bit
    }
}

TYPED_TEST(Avx2ScoreGuard, ShawScoresWriteExactlyTheMatrix) {
  const DType dt = TestFixture::dt;
  for (std::size_t n = 1; n <= kMaxSize; ++n)
    for (int d = 1; d <= static_cast<int>(kMaxSize); ++d) {
      const ShawSpec s{2, d};
      const auto pos = positions(n);
      const std::size_t dd = static_cast<std::size_t>(d);
      const auto q = values(n * dd, dt, 5), k = values(n * dd, dt, 6), table = values(5 * dd, dt, 7);
      std::vector<float> want(n * n);
      scalar::shaw_scores(s, dt, q, k, table, pos, want);
      Guarded<TypeParam> qb(q.size(), 1), kb(k.size(), 2), tb(table.size(), 3), out(want.size(), n % 4);
      qb.fill(q);
      kb.fill(k);
      tb.fill(table);
      avx2::shaw_scores<TypeParam>(s, qb.data(), kb.data(), tb.data(), pos, out.data());
      ASSERT_TRUE(out.untouched(all)) << s.describe() << " n " << n;
      // Scores near zero after cancellation: compare against the scale of the terms, 4 d^2.
      expect_close(out.read(want.size()), want, dt, 2 * d + 2, 4.0 * d * d, s.describe());
    }
}

template <class P>
class VectorAttentionGuard : public SetFixture<P> {};
TYPED_TEST_SUITE(VectorAttentionGuard, SetsAndStorage, SetNames);

TYPED_TEST(VectorAttentionGuard, AttentionWritesExactlyItsOutput) {
  using Set = typename TypeParam::Set;
  using T = typename TypeParam::Type;
  const DType dt = TestFixture::dt;
  for (std::size_t n = 1; n <= Set::max_size; ++n)
    for (const auto pe : {AttentionPE::none, AttentionPE::rope, AttentionPE::alibi, AttentionPE::shaw})
      for (const bool causal : {true, false}) {
        AttentionSpec s;
        s.heads = 2;
        s.head_dim = static_cast<int>(n % 2 ? 2 * n : n + 9);  // even for RoPE; also odd widths
        s.head_dim += s.head_dim % 2;
        s.causal = causal;
        s.pe = pe;
        const std::size_t size = n * 2 * static_cast<std::size_t>(s.head_dim);
        const auto pos = positions(n);
        const auto q = values(size, dt, 8), k = values(size, dt, 9), v = values(size, dt, 10);
        const auto table = values(static_cast<std::size_t>(s.shaw().table_rows() * s.head_dim), dt, 11);
        std::vector<float> want(size);
        scalar::attention(s, dt, pos, q, k, v, table, want);
        Guarded<T> qb(size, 0), kb(size, 1), vb(size, 2), tb(table.size(), 3), out(size, n % 4);
        qb.fill(q);
        kb.fill(k);
        vb.fill(v);
        tb.fill(table);
        Set::template attention<T>(s, pos, qb.data(), kb.data(), vb.data(), tb.data(), out.data());
        ASSERT_TRUE(out.untouched(all)) << s.describe() << " n " << n;
        // Within a few fp32 units of the scalar backend's result, plus one dtype rounding each.
        expect_close(out.read(size), want, dt, 2 + 64 * 0x1p-24 / unit_roundoff(dt) * n, 2, s.describe());
      }
}

TEST(Avx2Errors, BadCallsThrowBeforeWritingAnything) {
  if (!avx2::availability().ok) GTEST_SKIP() << "avx2 unavailable: " << avx2::availability().reason;
  std::vector<float> out(8, 42.0f);
  const std::vector<std::int64_t> pos = {0, 1};
  // Odd head_dim for RoPE, a table too small for the rows, a position past the table.
  const avx2::Heads<float> x[] = {{out.data(), 2, 1, 3, 3}};
  EXPECT_THROW(avx2::rope_apply<float>(RopeSpec{3, 2}, pos, x), std::invalid_argument);
  EXPECT_THROW(avx2::sinusoidal_table<float>(SinusoidalSpec{4}, pos, {out.data(), 2, 4, 3}), std::invalid_argument);
  EXPECT_THROW(avx2::learned_add<float>(LearnedSpec{2, 4}, {out.data(), 2, 4, 4}, std::vector<std::int64_t>{0, 2},
                                        {out.data(), 2, 4, 4}),
               std::out_of_range);
  const avx2::Heads<float> overlapping[] = {{out.data(), 2, 2, 4, 1}};
  EXPECT_THROW(avx2::rope_apply<float>(RopeSpec{2, 2}, pos, overlapping), std::invalid_argument);
  EXPECT_THROW(avx2::alibi_bias<float>(AlibiSpec{2}, std::vector<std::int64_t>{0, std::int64_t{1} << 50}, out.data()),
               std::invalid_argument);
  for (const float v : out) EXPECT_EQ(v, 42.0f);
}

TEST(Avx2Availability, DisabledBackendIsListedWithItsReason) {
  ASSERT_EQ(setenv("PECHECK_DISABLE_AVX2", "1", 1), 0);
  const avx2::Cpu cpu = avx2::availability();
  unsetenv("PECHECK_DISABLE_AVX2");
  EXPECT_FALSE(cpu.ok);
  EXPECT_EQ(cpu.reason, "disabled by PECHECK_DISABLE_AVX2");
  bool listed = false;
  for (const Backend& b : backend_table()) listed |= b.name == "avx2";
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace pecheck
