// The AVX2 and AVX-512 backends behind the encoder-under-test interface. fp32 tensors are handed
// to the kernels as they are; bf16 and fp16 ones (values carried by floats) are packed into real
// 16-bit storage first and unpacked after, so the kernels under test are the ones a caller would
// use. The 2-D encodings are the 1-D kernels on strided views (each axis owns half of a row or
// head). The `avx512` encoder differs in its RoPE, sinusoid and attention kernels (impl/avx512/);
// its other operations are the AVX2 kernels.
#include "impl/avx2/avx2_encoder.hpp"

#include <type_traits>
#include <vector>

#include "impl/avx2/detail.hpp"
#include "impl/avx2/kernels.hpp"
#include "impl/avx2/storage.hpp"
#include "impl/avx512/kernels.hpp"
#include "impl/mrope_by_axes.hpp"
#include "impl/rope2d_by_halves.hpp"
#include "impl/scalar_only.hpp"

namespace pecheck {

namespace {

using avx2::Heads;
using avx2::Rows;

using avx2::storage_of;

/// A tensor in native storage T: fp32 is the caller's buffer itself, 16-bit formats a packed copy.
template <class T>
class Native {
 public:
  explicit Native(std::span<float> x) : view_(x) {
    if constexpr (!std::is_same_v<T, float>) {
      packed_.resize(x.size());
      avx2::detail::from_float(storage_of<T>(), x.data(), x.size(), packed_.data());
    }
  }
  explicit Native(std::span<const float> x) : Native(std::span<float>(const_cast<float*>(x.data()), x.size())) {}
  T* data() {
    if constexpr (std::is_same_v<T, float>)
      return view_.data();
    else
      return packed_.data();
  }
  /// Writes the (possibly modified) native values back to the caller's floats.
  void write_back() {
    if constexpr (!std::is_same_v<T, float>)
      avx2::detail::to_float(storage_of<T>(), packed_.data(), packed_.size(), view_.data());
  }

 private:
  std::span<float> view_;
  std::vector<T> packed_;
};

/// Calls f(T{}) with T the native type of the dtype.
template <class F>
void with_type(DType dt, F&& f) {
  switch (dt) {
    case DType::f32:
      return f(float{});
    case DType::bf16:
      return f(avx2::bf16{});
    case DType::f16:
      return f(avx2::f16{});
  }
}

std::size_t size(int x) { return static_cast<std::size_t>(x); }

/// The kernel set an encoder runs: AVX2's, or AVX-512's RoPE, sinusoid and attention kernels.
enum class Isa { avx2, avx512 };

template <Isa I, class T>
void sinusoidal_table(const SinusoidalSpec& s, std::span<const std::int64_t> pos, Rows<T> out) {
  if constexpr (I == Isa::avx512)
    avx512::sinusoidal_table<T>(s, pos, out);
  else
    avx2::sinusoidal_table<T>(s, pos, out);
}

template <Isa I, class T>
void rope_apply(const RopeSpec& s, std::span<const std::int64_t> pos, std::span<const Heads<T>> x) {
  if constexpr (I == Isa::avx512)
    avx512::rope_apply<T>(s, pos, x);
  else
    avx2::rope_apply<T>(s, pos, x);
}

template <Isa I, class T>
void attention(const AttentionSpec& s, std::span<const std::int64_t> pos, const T* q, const T* k, const T* v,
               const T* table, T* out) {
  if constexpr (I == Isa::avx512)
    avx512::attention<T>(s, pos, q, k, v, table, out);
  else
    avx2::attention<T>(s, pos, q, k, v, table, out);
}

template <Isa I>
class VectorEncoder final : public Encoder {
 public:
  std::string name() const override { return I == Isa::avx512 ? "avx512" : "avx2"; }
  Support supports(Op op, DType) const override { return offered_beyond_scalar(op); }
  void run(const RelativeBias2d&) override { decline(*this, Op::relative_bias_2d); }

  // Each call's fields as plain references, not a structured binding: clang 14 cannot capture a
  // structured binding in the lambdas below (C++20's P1091, from clang 16).
  void run(const SinusoidalTable& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& pos = c.positions;
    const auto& out = c.out;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> o(out);
      sinusoidal_table<I, T>(s, pos, {o.data(), pos.size(), size(s.d_model), s.d_model});
      o.write_back();
    });
  }
  void run(const LearnedAdd& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& table = c.table;
    const auto& pos = c.positions;
    const auto& x = c.x;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> t(table), xs(x);
      const std::size_t d = size(s.d_model);
      avx2::learned_add<T>(s, {t.data(), size(s.max_len), d, s.d_model}, pos, {xs.data(), pos.size(), d, s.d_model});
      xs.write_back();
    });
  }
  void run(const RopeApply& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& heads = c.heads;
    const auto& pos = c.positions;
    const auto& x = c.x;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> xs(x);
      const Heads<T> view[] = {{xs.data(), pos.size(), heads, heads * s.head_dim, s.head_dim}};
      rope_apply<I, T>(s, pos, view);
      xs.write_back();
    });
  }
  void run(const AlibiBias& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& pos = c.positions;
    const auto& out = c.out;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> o(out);
      avx2::alibi_bias<T>(s, pos, o.data());
      o.write_back();
    });
  }
  void run(const ShawScores& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& q = c.q;
    const auto& k = c.k;
    const auto& table = c.table;
    const auto& pos = c.positions;
    const auto& out = c.out;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> qs(q), ks(k), ts(table), o(out);
      avx2::shaw_scores<T>(s, qs.data(), ks.data(), ts.data(), pos, o.data());
      o.write_back();
    });
  }
  void run(const T5Bias& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& table = c.table;
    const auto& pos = c.positions;
    const auto& out = c.out;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> ts(table), o(out);
      avx2::t5_bias<T>(s, ts.data(), pos, o.data());
      o.write_back();
    });
  }
  void run(const Sinusoidal2dTable& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& rows = c.rows;
    const auto& cols = c.cols;
    const auto& out = c.out;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> o(out);
      const std::size_t half = size(s.d_model / 2);
      sinusoidal_table<I, T>(s.axis(), rows, {o.data(), rows.size(), half, s.d_model});
      sinusoidal_table<I, T>(s.axis(), cols, {o.data() + half, cols.size(), half, s.d_model});
      o.write_back();
    });
  }
  void run(const Rope2dApply& c) override {
    rope2d_by_halves(c, [&](const Rope2dSpec& s, std::span<float> x) {
      with_type(c.dtype, [&]<class T>(T) {
        Native<T> xs(x);
        const int hd = s.head_dim, td = c.heads * hd;
        const Heads<T> row_half[] = {{xs.data(), c.rows.size(), c.heads, td, hd}};
        const Heads<T> col_half[] = {{xs.data() + hd / 2, c.cols.size(), c.heads, td, hd}};
        rope_apply<I, T>(s.axis(false), c.rows, row_half);
        rope_apply<I, T>(s.axis(true), c.cols, col_half);
        xs.write_back();
      });
    });
  }
  void run(const MropeApply& c) override {
    mrope_by_axes(c, [&](const RopeSpec& s, std::span<const std::int64_t> positions, std::span<float> x) {
      run(RopeApply{s, c.dtype, c.heads, positions, x});
    });
  }
  void run(const Attention& c) override {
    const auto& s = c.spec;
    const auto& dt = c.dtype;
    const auto& pos = c.positions;
    const auto& q = c.q;
    const auto& k = c.k;
    const auto& v = c.v;
    const auto& table = c.pe_table;
    const auto& out = c.out;
    c.check();
    with_type(dt, [&]<class T>(T) {
      Native<T> qs(q), ks(k), vs(v), ts(table), o(out);
      attention<I, T>(s, pos, qs.data(), ks.data(), vs.data(), ts.data(), o.data());
      o.write_back();
    });
  }
};

}  // namespace

std::unique_ptr<Encoder> make_avx2_encoder() { return std::make_unique<VectorEncoder<Isa::avx2>>(); }
std::unique_ptr<Encoder> make_avx512_encoder() { return std::make_unique<VectorEncoder<Isa::avx512>>(); }

}  // namespace pecheck
