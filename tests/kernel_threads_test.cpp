// The vector kernels give bitwise the same output at every thread count (impl/parallel.hpp splits a
// call into ranges of tokens or query heads, each computed alone): RapidCheck draws RoPE, sinusoid
// and attention calls, runs each on one thread and on 2-7, with every call split (a range's least
// work set to 1, so ragged ranges of a few tokens or one head are met), and compares the bytes. The
// pool itself: every item once, ranges really concurrent, nested calls, exceptions, fork.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "impl/parallel.hpp"
#include "tests/avx2_test_support.hpp"

namespace pecheck {
namespace {

using namespace avx2_test;

/// Sets the thread count and a range's least work for one scope.
class Threads {
 public:
  Threads(int n, std::size_t min_work) {
    parallel::set_threads(n);
    parallel::set_min_range_work(min_work);
  }
  ~Threads() {
    parallel::set_threads(0);
    parallel::set_min_range_work(parallel::kDefaultMinRangeWork);
  }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;
};

/// f() on one thread, then on `threads`, every call split: the two outputs, as bytes.
template <class Out, class F>
std::pair<Out, Out> one_and_many(int threads, F f) {
  Out one, many;
  {
    const Threads t(1, 1);
    one = f();
  }
  {
    const Threads t(threads, 1);
    many = f();
  }
  return {one, many};
}

template <class T>
std::vector<unsigned char> bytes(const std::vector<T>& x) {
  std::vector<unsigned char> b(x.size() * sizeof(T));
  std::memcpy(b.data(), x.data(), b.size());
  return b;
}

template <class T>
std::vector<T> native(std::size_t n, DType dt, unsigned salt) {
  std::vector<T> out(n);
  const std::vector<float> x = values(n, dt, salt);
  avx2::detail::from_float(storage_of<T>(), x.data(), n, out.data());
  return out;
}

std::vector<std::int64_t> drawn_positions(std::size_t n) {
  const auto start = *rc::gen::inRange<std::int64_t>(-100, 1 << 20);
  std::vector<std::int64_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = start + static_cast<std::int64_t>(i);
  return p;
}

template <class Set, class T>
void rope_is_the_same_at_any_thread_count() {
  const DType dt = dtype_of<T>();
  const int half = *rc::gen::inRange(1, 49);
  RopeSpec s{2 * half, 2 * *rc::gen::inRange(1, half + 1), *rc::gen::element(1e4, 5e5),
             *rc::gen::element(RopeLayout::half_split, RopeLayout::interleaved)};
  const int heads = *rc::gen::inRange(1, 9), kv_heads = *rc::gen::inRange(1, 5);
  const auto n = *rc::gen::inRange<std::size_t>(1, 160);
  const int threads = *rc::gen::inRange(2, 8);
  const std::vector<std::int64_t> pos = drawn_positions(n);
  // Q and K as views into one fused buffer (token stride over both), as serving kernels hold them.
  const auto token_stride = static_cast<std::ptrdiff_t>((heads + kv_heads) * s.head_dim);
  const auto [one, many] = one_and_many<std::vector<unsigned char>>(threads, [&] {
    std::vector<T> qk = native<T>(n * static_cast<std::size_t>(token_stride), dt, 3);
    const avx2::Heads<T> views[] = {{qk.data(), n, heads, token_stride, s.head_dim},
                                    {qk.data() + heads * s.head_dim, n, kv_heads, token_stride, s.head_dim}};
    Set::template rope_apply<T>(s, pos, views);
    return bytes(qk);
  });
  RC_ASSERT(one == many);
}

template <class Set, class T>
void sinusoid_is_the_same_at_any_thread_count() {
  const DType dt = dtype_of<T>();
  SinusoidalSpec s{2 * *rc::gen::inRange(1, 65), 10000.0,
                   *rc::gen::element(SinusoidalLayout::interleaved, SinusoidalLayout::concatenated)};
  const auto n = *rc::gen::inRange<std::size_t>(1, 200);
  const bool add = *rc::gen::arbitrary<bool>();
  const int threads = *rc::gen::inRange(2, 8);
  const std::vector<std::int64_t> pos = drawn_positions(n);
  const auto cols = static_cast<std::size_t>(s.d_model), stride = cols + 3;  // rows apart: a strided view
  const auto [one, many] = one_and_many<std::vector<unsigned char>>(threads, [&] {
    std::vector<T> x = native<T>(n * stride, dt, 5);
    const avx2::Rows<T> rows{x.data(), n, cols, static_cast<std::ptrdiff_t>(stride)};
    add ? Set::template sinusoidal_add<T>(s, pos, rows) : Set::template sinusoidal_table<T>(s, pos, rows);
    return bytes(x);
  });
  RC_ASSERT(one == many);
}

template <class Set, class T>
void attention_is_the_same_at_any_thread_count() {
  const DType dt = dtype_of<T>();
  AttentionSpec s;
  s.kv_heads = *rc::gen::inRange(1, 4);
  s.heads = s.kv_heads * *rc::gen::inRange(1, 4);
  s.head_dim = 2 * *rc::gen::inRange(1, 40);
  s.pe = *rc::gen::element(AttentionPE::none, AttentionPE::rope, AttentionPE::alibi, AttentionPE::sinusoidal,
                           AttentionPE::shaw);
  if (s.pe == AttentionPE::sinusoidal) s.kv_heads = s.heads;  // one PE added to Q, K and V alike
  s.causal = *rc::gen::arbitrary<bool>();
  const auto n = *rc::gen::inRange<std::size_t>(1, 90);
  if (s.causal) {
    s.window = *rc::gen::element(0, 1, 7, 40);
    s.queries = *rc::gen::element(0, 1, 3) % static_cast<int>(n + 1);
  }
  const int threads = *rc::gen::inRange(2, 8);
  const std::vector<std::int64_t> pos = drawn_positions(n);
  const std::size_t d = static_cast<std::size_t>(s.head_dim), nq = s.query_count(n);
  const auto q = native<T>(nq * static_cast<std::size_t>(s.heads) * d, dt, 7);
  const auto k = native<T>(n * static_cast<std::size_t>(s.kv_count()) * d, dt, 8);
  const auto v = native<T>(n * static_cast<std::size_t>(s.kv_count()) * d, dt, 9);
  const auto table = native<T>(static_cast<std::size_t>(s.shaw().table_rows()) * d, dt, 10);
  const auto [one, many] = one_and_many<std::vector<unsigned char>>(threads, [&] {
    std::vector<T> out(q.size());
    Set::template attention<T>(s, pos, q.data(), k.data(), v.data(), table.data(), out.data());
    return bytes(out);
  });
  RC_ASSERT(one == many);
}

template <class P>
class KernelThreads : public SetFixture<P> {};
TYPED_TEST_SUITE(KernelThreads, SetsAndStorage, SetNames);

TYPED_TEST(KernelThreads, RopeIsBitwiseTheSameAtAnyThreadCount) {
  EXPECT_TRUE(
      rc::check("rope", &rope_is_the_same_at_any_thread_count<typename TypeParam::Set, typename TypeParam::Type>));
}

TYPED_TEST(KernelThreads, SinusoidIsBitwiseTheSameAtAnyThreadCount) {
  EXPECT_TRUE(rc::check("sinusoid",
                        &sinusoid_is_the_same_at_any_thread_count<typename TypeParam::Set, typename TypeParam::Type>));
}

TYPED_TEST(KernelThreads, AttentionIsBitwiseTheSameAtAnyThreadCount) {
  EXPECT_TRUE(rc::check("attention",
                        &attention_is_the_same_at_any_thread_count<typename TypeParam::Set, typename TypeParam::Type>));
}

TEST(ParallelRanges, EveryItemOnceAndRangesRunConcurrently) {
  const Threads t(4, 1);
  std::vector<std::atomic<int>> seen(37);
  std::atomic<int> running{0}, most{0};
  parallel::for_ranges(seen.size(), 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) ++seen[i];
    // Wait (up to 10 s) for a second range to be running at once: proof the pool ran them apart.
    const int now = ++running;
    int prev = most.load();
    while (prev < now && !most.compare_exchange_weak(prev, now)) {
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (most.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    --running;
  });
  for (const auto& c : seen) EXPECT_EQ(c.load(), 1);
  EXPECT_GE(most.load(), 2);
}

TEST(ParallelRanges, NestedCallsStayOnTheirThreadAndExceptionsReachTheCaller) {
  const Threads t(3, 1);
  std::atomic<int> inner{0};
  parallel::for_ranges(6, 1, [&](std::size_t, std::size_t) {
    const auto self = std::this_thread::get_id();
    parallel::for_ranges(5, 1, [&](std::size_t b, std::size_t e) {
      EXPECT_EQ(std::this_thread::get_id(), self);
      inner += static_cast<int>(e - b);
    });
  });
  EXPECT_EQ(inner.load(), 3 * 5);
  EXPECT_THROW(parallel::for_ranges(9, 1,
                                    [](std::size_t b, std::size_t) {
                                      if (b > 0) throw std::runtime_error("range failed");
                                    }),
               std::runtime_error);
  EXPECT_THROW(parallel::set_threads(-1), std::invalid_argument);
  EXPECT_THROW(parallel::set_threads(parallel::kMaxThreads + 1), std::invalid_argument);
}

TEST(ParallelRanges, ForkedChildBuildsItsOwnPool) {
  const Threads t(3, 1);
  std::atomic<int> items{0};
  parallel::for_ranges(8, 1, [&](std::size_t b, std::size_t e) { items += static_cast<int>(e - b); });
  ASSERT_EQ(items.load(), 8);  // the parent's pool exists, with its workers
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(20);  // a child waiting on its parent's (absent) workers would hang: fail it instead
    std::atomic<int> child_items{0};
    parallel::for_ranges(8, 1, [&](std::size_t b, std::size_t e) { child_items += static_cast<int>(e - b); });
    ::_exit(child_items.load() == 8 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace pecheck
