// The AVX2 and AVX-512 kernels never touch memory outside their tensors: every output sits inside
// sentinel guards (and strided rows have sentinel gaps), at every size 1 .. two vectors + 1 (17 for
// AVX2, 33 for AVX-512) and every misalignment 0..3 elements, and what they write agrees with the
// scalar backend.
#include "impl/scalar/kernels.hpp"
#include "tests/avx2_test_support.hpp"

namespace pecheck {
namespace {

using namespace avx2_test;
using avx2::Heads;

template <class T>
class Avx2Guard : public Avx2Fixture<T> {};
TYPED_TEST_SUITE(Avx2Guard, StorageTypes);

/// The RoPE and sinusoid calls, on each kernel set.
template <class P>
class VectorGuard : public SetFixture<P> {};
TYPED_TEST_SUITE(VectorGuard, SetsAndStorage, SetNames);

TYPED_TEST(VectorGuard, SinusoidalTableAndAddStayInsideStridedRows) {
  using Set = typename TypeParam::Set;
  using T = typename TypeParam::Type;
  const DType dt = TestFixture::dt;
  const std::vector<std::int64_t> pos = {0, 7, 4093, (1 << 24) - 1};
  for (int d = 2; d <= static_cast<int>(2 * Set::max_size); d += 2)
    for (const auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated})
      for (std::size_t offset = 0; offset < 4; ++offset) {
        const SinusoidalSpec s{d, 10000.0, layout};
        const std::size_t cols = static_cast<std::size_t>(d), stride = cols + 3, size = stride * pos.size();
        const auto in_row = [&](std::size_t i) { return i % stride < cols; };
        std::vector<float> want(pos.size() * cols);
        scalar::sinusoidal_table(s, dt, pos, want);
        Guarded<T> out(size, offset);
        Set::template sinusoidal_table<T>(s, pos, {out.data(), pos.size(), cols, static_cast<std::ptrdiff_t>(stride)});
        ASSERT_TRUE(out.untouched(in_row)) << s.describe() << " offset " << offset;
        std::vector<float> got;
        for (std::size_t t = 0; t < pos.size(); ++t) {
          const auto row = out.read(size);
          got.insert(got.end(), row.begin() + static_cast<std::ptrdiff_t>(t * stride),
                     row.begin() + static_cast<std::ptrdiff_t>(t * stride + cols));
        }
        expect_close(got, want, dt, 2, 1, s.describe());
        Set::template sinusoidal_add<T>(s, pos, {out.data(), pos.size(), cols, static_cast<std::ptrdiff_t>(stride)});
        ASSERT_TRUE(out.untouched(in_row)) << "add " << s.describe() << " offset " << offset;
      }
}

TYPED_TEST(Avx2Guard, LearnedAddStaysInsideRows) {
  const DType dt = TestFixture::dt;
  const std::vector<std::int64_t> pos = {2, 0, 1};
  for (std::size_t d = 1; d <= kMaxSize; ++d)
    for (std::size_t offset = 0; offset < 4; ++offset) {
      const LearnedSpec s{3, static_cast<int>(d)};
      const auto table = values(3 * d, dt, 1), x = values(3 * d, dt, 2);
      std::vector<float> want = x;
      scalar::learned_add(s, dt, table, pos, want);
      Guarded<TypeParam> t(3 * d, offset), out(3 * d, offset);
      t.fill(table);
      out.fill(x);
      avx2::learned_add<TypeParam>(s, {t.data(), 3, d, static_cast<std::ptrdiff_t>(d)}, pos,
                                   {out.data(), 3, d, static_cast<std::ptrdiff_t>(d)});
      ASSERT_TRUE(out.untouched([](std::size_t) { return true; })) << "d " << d << " offset " << offset;
      ASSERT_TRUE(t.untouched([](std::size_t) { return true; }));
      expect_close(out.read(3 * d), want, dt, 2, 0x1p-20, "learned d " + std::to_string(d));
    }
}

TYPED_TEST(VectorGuard, RopeOnFusedQkvTouchesOnlyTheRotaryPartOfQAndK) {
  using Set = typename TypeParam::Set;
  using T = typename TypeParam::Type;
  const DType dt = TestFixture::dt;
  const std::vector<std::int64_t> pos = {0, 1, 65535, -(1 << 20)};
  const int heads = 2;
  for (int hd = 2; hd <= static_cast<int>(2 * Set::max_size); hd += 2)
    for (const int rot : {hd, std::max(2, hd / 2 / 2 * 2)})
      for (const auto layout : {RopeLayout::interleaved, RopeLayout::half_split})
        for (std::size_t offset = 0; offset < 4; offset += 3) {
          const RopeSpec s{hd, rot, 500000.0, layout};
          // One token: [Q heads | K heads | V heads | 1 pad], so V and the pad must stay untouched.
          const std::size_t width = static_cast<std::size_t>(heads * hd), stride = 3 * width + 1;
          const std::size_t size = stride * pos.size();
          const auto x = values(size, dt, 3);
          Guarded<T> buf(size, offset);
          buf.fill(x);
          const auto ts = static_cast<std::ptrdiff_t>(stride);
          const Heads<T> qk[] = {{buf.data(), pos.size(), heads, ts, hd},
                                 {buf.data() + width, pos.size(), heads, ts, hd}};
          Set::template rope_apply<T>(s, pos, qk);
          ASSERT_TRUE(buf.untouched([](std::size_t) { return true; })) << s.describe();
          const auto got = buf.read(size);
          for (std::size_t t = 0; t < pos.size(); ++t)
            for (std::size_t part = 0; part < 2; ++part) {  // Q then K, against the scalar backend
              const std::size_t at = t * stride + part * width;
              std::vector<float> want(x.begin() + static_cast<std::ptrdiff_t>(at),
                                      x.begin() + static_cast<std::ptrdiff_t>(at + width));
              scalar::rope_apply(s, dt, heads, std::span(pos).subspan(t, 1), want);
              expect_close({got.begin() + static_cast<std::ptrdiff_t>(at),
                            got.begin() + static_cast<std::ptrdiff_t>(at + width)},
                           want, dt, 4, 2, s.describe());
            }
          for (std::size_t i = 0; i < size; ++i) {
            const std::size_t in_token = i % stride, in_head = in_token % static_cast<std::size_t>(hd);
            if (in_token >= 2 * width || in_head >= static_cast<std::size_t>(rot)) {
              ASSERT_EQ(got[i], x[i]) << s.describe() << ": element " << i << " is outside the rotary part";
            }
          }
        }
}

}  // namespace
}  // namespace pecheck
