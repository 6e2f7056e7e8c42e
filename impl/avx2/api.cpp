// The public AVX2 API (impl/avx2/kernels.hpp), built without -mavx2: CPU detection, shape and spec
// checks, frequency tables in long double, scratch buffers; then one call into the vector units.
#include <cpuid.h>
#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "impl/alibi_slopes.hpp"
#include "impl/angles.hpp"
#include "impl/avx2/checked_calls.hpp"
#include "impl/avx2/detail.hpp"
#include "impl/avx2/kernels.hpp"
#include "impl/avx2/storage.hpp"
#include "impl/parallel.hpp"
#include "impl/rope_frequencies.hpp"
#include "interface/encoder.hpp"

namespace pecheck::avx2 {

namespace {

/// Positions the double angle scheme covers; beyond |p| = 2^24 accuracy degrades gracefully, and
/// past 2^48 the quadrant and distance tricks (exact below 2^51) would not hold.
constexpr std::int64_t kMaxAbsPosition = std::int64_t{1} << 48;

void check_positions(std::span<const std::int64_t> positions) {
  for (const std::int64_t p : positions)
    if (p > kMaxAbsPosition || p < -kMaxAbsPosition)
      throw std::invalid_argument(fmt::format("position {} is outside the AVX2 kernels' range |p| <= 2^48", p));
}

template <class T>
void check_rows(const Rows<T>& r, std::string_view what, std::size_t rows, std::size_t cols) {
  if (r.rows != rows || r.cols != cols)
    throw std::invalid_argument(fmt::format("{} is {}x{}, expected {}x{}", what, r.rows, r.cols, rows, cols));
  if (r.stride < static_cast<std::ptrdiff_t>(cols))
    throw std::invalid_argument(fmt::format("{} row stride {} is below its {} columns", what, r.stride, cols));
  if (rows > 0 && r.data == nullptr) throw std::invalid_argument(fmt::format("{} is null", what));
}

/// Frequencies split hi + lo, zero-padded to a multiple of 8 entries.
struct FrequencyTable {
  std::vector<double> hi, lo;
  std::size_t count = 0;
  explicit FrequencyTable(const std::vector<angles::Frequency>& f)
      : hi(detail::padded8(f.size())), lo(detail::padded8(f.size())), count(f.size()) {
    for (std::size_t i = 0; i < f.size(); ++i) {
      hi[i] = f[i].hi;
      lo[i] = f[i].lo;
    }
  }
  detail::Frequencies view() const { return {hi.data(), lo.data(), count}; }
};

/// The table for `key`, rebuilt only when the key changes: a long-double pow per frequency costs
/// ~0.2 us, which would dominate a decode step (one token) if paid on every call.
template <class Key, class Make>
const FrequencyTable& cached(const Key& key, Make make) {
  thread_local std::optional<Key> last;
  thread_local std::optional<FrequencyTable> table;
  if (!last || !(*last == key)) {
    table.emplace(make());
    last = key;
  }
  return *table;
}

const FrequencyTable& sinusoidal_frequencies(const SinusoidalSpec& s) {
  return cached(std::tuple(s.d_model, s.frequency_width(), s.base), [&] {
    std::vector<angles::Frequency> f(static_cast<std::size_t>(s.d_model / 2));
    for (std::size_t i = 0; i < f.size(); ++i)
      f[i] = angles::frequency(static_cast<int>(i), s.frequency_width(), s.base);
    return FrequencyTable(f);
  });
}

const FrequencyTable& rope_frequencies(const RopeSpec& s) {
  return cached(s, [&] { return FrequencyTable(angles::rope_frequencies(s)); });
}

/// This thread's scratch of at least n doubles, grown and never shrunk: a call allocates only when
/// it needs more than every earlier call on the thread did, so a decode loop (one token per call,
/// the same head_dim) allocates on its first call only. The kernels write every element they read.
/// 64-byte aligned, so that no 512-bit load of the coefficients straddles two cache lines.
double* thread_scratch(std::size_t n) {
  thread_local std::vector<double> buffer;
  if (buffer.size() < n + 8) buffer.resize(n + 8);
  const auto address = reinterpret_cast<std::uintptr_t>(buffer.data());
  return buffer.data() + (64 - address % 64) % 64 / sizeof(double);
}

/// This thread's fp32 working memory for attention (the copies of Q, K and V, the Shaw table),
/// grown and never shrunk like thread_scratch: a call in a loop neither allocates nor
/// touches fresh pages (the page faults were 3% of a 1024-token call).
float* attention_work(std::size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

/// This thread's attention kernel scratch (attention_scratch_floats), apart from attention_work:
/// the thread that made the working copies may run a range of heads too.
float* kernel_scratch(std::size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

std::vector<double> slopes(int heads) {
  std::vector<double> m(static_cast<std::size_t>(heads));
  for (int h = 0; h < heads; ++h) m[static_cast<std::size_t>(h)] = alibi::slope(h, heads);
  return m;
}

/// The least distance whose T5 log bucket reaches each of max_exact+1 .. half-1, by bisection on
/// the same double formula the scalar backend evaluates (monotone in the distance).
std::vector<std::int64_t> t5_boundaries(const T5Spec& s) {
  const int half = s.half(), max_exact = s.max_exact();
  const double log_range = std::log(static_cast<double>(s.max_distance) / max_exact);
  const auto bucket = [&](std::int64_t dist) {
    const double t = (half - max_exact) * std::log(static_cast<double>(dist) / max_exact) / log_range;
    return std::min<double>(max_exact + std::floor(t), half - 1);
  };
  std::vector<std::int64_t> b;
  for (int target = max_exact + 1; target < half; ++target) {
    std::int64_t lo = max_exact, hi = std::int64_t{1} << 52;  // bucket(lo) < target <= bucket(hi)
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (bucket(mid) >= target ? hi : lo) = mid;
    }
    b.push_back(hi);
  }
  return b;
}

}  // namespace

namespace detail {

const VectorUnits& avx2_units() {
  static const VectorUnits units{&rope, &sinusoidal_rows, &attention};
  return units;
}

template <class T>
void checked_rope(const VectorUnits& units, const RopeSpec& s, std::span<const std::int64_t> positions,
                  std::span<const Heads<T>> tensors) {
  s.validate();
  check_positions(positions);
  // The views live on the stack up to kInline tensors (Q and K, or a fused QKV, in practice): no
  // allocation per call, which a decode step would pay once per generated token.
  constexpr std::size_t kInline = 8;
  std::array<RopeTensor, kInline> inline_views;
  std::vector<RopeTensor> many;
  if (tensors.size() > kInline) many.resize(tensors.size());
  RopeTensor* views = tensors.size() > kInline ? many.data() : inline_views.data();
  std::size_t count = 0;
  for (const Heads<T>& x : tensors) {
    if (x.tokens != positions.size())
      throw std::invalid_argument(
          fmt::format("RoPE tensor has {} tokens for {} positions", x.tokens, positions.size()));
    if (x.heads <= 0) throw std::invalid_argument(fmt::format("RoPE tensor needs heads > 0, got {}", x.heads));
    if (x.head_stride < s.head_dim || x.token_stride < (x.heads - 1) * x.head_stride + s.head_dim)
      throw std::invalid_argument(fmt::format("RoPE strides (token {}, head {}) overlap heads of dim {}",
                                              x.token_stride, x.head_stride, s.head_dim));
    if (x.tokens > 0 && x.data == nullptr) throw std::invalid_argument("RoPE tensor is null");
    views[count++] = {x.data, x.heads, x.token_stride, x.head_stride};
  }
  const FrequencyTable& f = rope_frequencies(s);
  std::size_t heads = 0;
  for (std::size_t i = 0; i < count; ++i) heads += static_cast<std::size_t>(views[i].heads);
  // A token's work: its rotations and its cos/sin (a sin/cos in double costs some 16 multiplies).
  const std::size_t token_work = heads * static_cast<std::size_t>(s.rotary_dim) + 16 * f.count;
  parallel::for_ranges(positions.size(), token_work, [&](std::size_t t0, std::size_t t1) {
    std::array<RopeTensor, kInline> inline_range;
    std::vector<RopeTensor> many_range;
    RopeTensor* range = views;
    if (t0 > 0) {  // the views moved to token t0
      if (count > kInline) many_range.resize(count);
      range = count > kInline ? many_range.data() : inline_range.data();
      for (std::size_t i = 0; i < count; ++i) {
        range[i] = views[i];
        range[i].data = static_cast<T*>(views[i].data) + static_cast<std::ptrdiff_t>(t0) * views[i].token_stride;
      }
    }
    units.rope(storage_of<T>(), {f.view(), s.magnitude(), s.layout == RopeLayout::interleaved, positions.data() + t0,
                                 t1 - t0, range, count, thread_scratch(rope_scratch_doubles(f.count))});
  });
}

template <class T>
void checked_sinusoidal(const VectorUnits& units, const SinusoidalSpec& s, std::span<const std::int64_t> positions,
                        Rows<T> x, bool add) {
  s.validate();
  check_rows(x, add ? "x" : "out", positions.size(), static_cast<std::size_t>(s.d_model));
  check_positions(positions);
  const FrequencyTable& f = sinusoidal_frequencies(s);
  // A row's work: a sin/cos in double per frequency (some 16 multiplies) and its stores.
  const std::size_t row_work = 16 * f.count + static_cast<std::size_t>(s.d_model);
  parallel::for_ranges(positions.size(), row_work, [&](std::size_t r0, std::size_t r1) {
    units.sinusoidal_rows(storage_of<T>(),
                          {f.view(), s.layout == SinusoidalLayout::interleaved, s.padding_idx, positions.data() + r0,
                           r1 - r0, x.data + static_cast<std::ptrdiff_t>(r0) * x.stride, x.stride, add,
                           thread_scratch(sinusoidal_scratch_doubles(f.count))});
  });
}

template <class T>
void checked_attention(const VectorUnits& units, const AttentionSpec& s, std::span<const std::int64_t> positions,
                       const T* q, const T* k, const T* v, const T* pe_table, T* out) {
  s.validate();
  check_positions(positions);
  const std::size_t n = positions.size(), nq = s.query_count(n), H = static_cast<std::size_t>(s.heads),
                    KV = static_cast<std::size_t>(s.kv_count()), d = static_cast<std::size_t>(s.head_dim),
                    size = nq * H * d, kv_size = n * KV * d;
  // Q holds the last nq tokens: encoded at their own positions.
  const std::span<const std::int64_t> q_positions = positions.subspan(n - nq);
  const int K = s.pe == AttentionPE::shaw ? s.shaw_max_distance : 0;
  const std::size_t table_size = s.pe == AttentionPE::shaw ? static_cast<std::size_t>(s.shaw().table_rows()) * d
                                 : s.pe == AttentionPE::t5 ? static_cast<std::size_t>(s.t5_buckets) * H
                                                           : 0;
  // fp32 working copies with the position transform applied (sums and rotations in double) and
  // the Shaw or T5 table, in the thread's working memory; each range of heads takes its own thread's
  // kernel scratch.
  float* const qf = attention_work(size + 2 * kv_size + table_size);
  float *const kf = qf + size, *const vf = kf + kv_size, *const table = vf + kv_size;
  to_float(storage_of<T>(), q, size, qf);
  to_float(storage_of<T>(), k, kv_size, kf);
  to_float(storage_of<T>(), v, kv_size, vf);
  const auto td = static_cast<std::ptrdiff_t>(H * d), kd = static_cast<std::ptrdiff_t>(KV * d);
  if (s.pe == AttentionPE::sinusoidal) {
    checked_sinusoidal<float>(units, s.sinusoidal(), q_positions, {qf, nq, H * d, td}, true);
    for (float* x : {kf, vf}) checked_sinusoidal<float>(units, s.sinusoidal(), positions, {x, n, H * d, td}, true);
  }
  if (s.pe == AttentionPE::rope) {
    const auto hd = static_cast<std::ptrdiff_t>(d);
    const Heads<float> qk[] = {{qf, nq, s.heads, td, hd}, {kf, n, s.kv_count(), kd, hd}};
    if (nq == n) {  // one call: each token's cos and sin serve Q and K
      checked_rope<float>(units, s.rope(), positions, qk);
    } else {
      checked_rope<float>(units, s.rope(), q_positions, std::span(qk).first(1));
      checked_rope<float>(units, s.rope(), positions, std::span(qk).last(1));
    }
  }
  if (table_size) to_float(storage_of<T>(), pe_table, table_size, table);
  const std::vector<double> m = slopes(s.heads);
  const Bias bias = s.pe == AttentionPE::alibi  ? Bias::alibi
                    : s.pe == AttentionPE::shaw ? Bias::shaw
                    : s.pe == AttentionPE::t5   ? Bias::t5
                                                : Bias::none;
  AttentionCall call{qf,
                     kf,
                     vf,
                     n,
                     s.heads,
                     s.head_dim,
                     s.causal,
                     static_cast<float>(s.effective_scale()),
                     bias,
                     m.data(),
                     table_size ? table : nullptr,
                     K,
                     positions.data(),
                     out,
                     nullptr,
                     s.kv_count(),
                     s.window,
                     nq};
  call.buckets = t5::buckets_of(s.t5());
  // Query heads are independent: a range of them is the same computation on any thread.
  parallel::for_ranges(H, nq * n * d, [&](std::size_t h0, std::size_t h1) {
    AttentionCall range = call;
    range.head_begin = h0;
    range.head_end = h1;
    range.scratch = kernel_scratch(attention_scratch_floats(n, s.head_dim, K));
    units.attention(storage_of<T>(), range);
  });
}

#define PECHECK_CHECKED_INSTANTIATE(T)                                                                          \
  template void checked_rope<T>(const VectorUnits&, const RopeSpec&, std::span<const std::int64_t>,             \
                                std::span<const Heads<T>>);                                                     \
  template void checked_sinusoidal<T>(const VectorUnits&, const SinusoidalSpec&, std::span<const std::int64_t>, \
                                      Rows<T>, bool);                                                           \
  template void checked_attention<T>(const VectorUnits&, const AttentionSpec&, std::span<const std::int64_t>,   \
                                     const T*, const T*, const T*, const T*, T*);

PECHECK_CHECKED_INSTANTIATE(float)
PECHECK_CHECKED_INSTANTIATE(bf16)
PECHECK_CHECKED_INSTANTIATE(f16)

}  // namespace detail

Cpu availability() {
  if (const char* off = std::getenv("PECHECK_DISABLE_AVX2"); off && *off && std::string_view(off) != "0")
    return {false, "disabled by PECHECK_DISABLE_AVX2"};
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return {false, "CPUID leaf 1 unavailable"};
  const bool fma = c & bit_FMA, f16c = c & bit_F16C, osxsave = c & bit_OSXSAVE, avx = c & bit_AVX;
  if (!avx || !osxsave) return {false, "CPU or OS lacks AVX"};
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 6) != 6) return {false, "OS does not save YMM registers (XCR0)"};
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX2)) return {false, "CPU lacks AVX2"};
  if (!fma) return {false, "CPU lacks FMA"};
  if (!f16c) return {false, "CPU lacks F16C"};
  return {true, ""};
}

template <class T>
void sinusoidal_table(const SinusoidalSpec& s, std::span<const std::int64_t> positions, Rows<T> out) {
  detail::checked_sinusoidal(detail::avx2_units(), s, positions, out, false);
}

template <class T>
void sinusoidal_add(const SinusoidalSpec& s, std::span<const std::int64_t> positions, Rows<T> x) {
  detail::checked_sinusoidal(detail::avx2_units(), s, positions, x, true);
}

template <class T>
void learned_add(const LearnedSpec& s, Rows<const T> table, std::span<const std::int64_t> positions, Rows<T> x) {
  s.validate();
  const auto d = static_cast<std::size_t>(s.d_model);
  check_rows(table, "table", static_cast<std::size_t>(s.max_len), d);
  check_rows(x, "x", positions.size(), d);
  for (const std::int64_t p : positions)
    if (p < 0 || p >= s.max_len)
      throw std::out_of_range(fmt::format("learned position {} is outside the table [0, {})", p, s.max_len));
  detail::learned_add(storage_of<T>(),
                      {table.data, table.stride, positions.data(), positions.size(), d, x.data, x.stride});
}

template <class T>
void rope_apply(const RopeSpec& s, std::span<const std::int64_t> positions, std::span<const Heads<T>> tensors) {
  detail::checked_rope(detail::avx2_units(), s, positions, tensors);
}

template <class T>
void alibi_bias(const AlibiSpec& s, std::span<const std::int64_t> positions, T* out) {
  s.validate();
  check_positions(positions);
  const std::vector<double> m = slopes(s.heads);
  detail::alibi(storage_of<T>(), m.data(), s.heads, s.causal, positions.data(), positions.size(), out);
}

template <class T>
void shaw_scores(const ShawSpec& s, const T* q, const T* k, const T* table, std::span<const std::int64_t> positions,
                 T* out) {
  s.validate();
  check_positions(positions);
  std::vector<float> scratch(static_cast<std::size_t>(s.table_rows()));
  detail::shaw(storage_of<T>(),
               {q, k, table, positions.data(), positions.size(), s.head_dim, s.max_distance, out, scratch.data()});
}

template <class T>
void t5_bias(const T5Spec& s, const T* table, std::span<const std::int64_t> positions, T* out) {
  s.validate();
  check_positions(positions);
  const std::vector<std::int64_t> b = t5_boundaries(s);
  std::vector<std::int32_t> scratch(positions.size());
  detail::t5(storage_of<T>(), {table, s.heads, s.bidirectional, s.half(), s.max_exact(), b.data(),
                               static_cast<int>(b.size()), positions.data(), positions.size(), out, scratch.data()});
}

template <class T>
void attention(const AttentionSpec& s, std::span<const std::int64_t> positions, const T* q, const T* k, const T* v,
               const T* pe_table, T* out) {
  detail::checked_attention(detail::avx2_units(), s, positions, q, k, v, pe_table, out);
}

#define PECHECK_AVX2_INSTANTIATE(T)                                                                               \
  template void sinusoidal_table<T>(const SinusoidalSpec&, std::span<const std::int64_t>, Rows<T>);               \
  template void sinusoidal_add<T>(const SinusoidalSpec&, std::span<const std::int64_t>, Rows<T>);                 \
  template void learned_add<T>(const LearnedSpec&, Rows<const T>, std::span<const std::int64_t>, Rows<T>);        \
  template void rope_apply<T>(const RopeSpec&, std::span<const std::int64_t>, std::span<const Heads<T>>);         \
  template void alibi_bias<T>(const AlibiSpec&, std::span<const std::int64_t>, T*);                               \
  template void shaw_scores<T>(const ShawSpec&, const T*, const T*, const T*, std::span<const std::int64_t>, T*); \
  template void t5_bias<T>(const T5Spec&, const T*, std::span<const std::int64_t>, T*);                           \
  template void attention<T>(const AttentionSpec&, std::span<const std::int64_t>, const T*, const T*, const T*,   \
                             const T*, T*);

PECHECK_AVX2_INSTANTIATE(float)
PECHECK_AVX2_INSTANTIATE(bf16)
PECHECK_AVX2_INSTANTIATE(f16)

}  // namespace pecheck::avx2
