// The CUDA backend as an encoder: specs and shapes are checked here, on the host, and the
// frequency tables computed here (long double, split hi + lo) exactly as the host backends do;
// the launcher (the GPU's, or the CPU emulator's) only packs, runs the kernels and checks.
#include "impl/cuda/cuda_encoder.hpp"

#include <fmt/format.h>

#include "impl/alibi_slopes.hpp"
#include "impl/cuda/kernels.hpp"
#include "impl/mrope_by_axes.hpp"
#include "impl/rope2d_by_halves.hpp"
#include "impl/rope_frequencies.hpp"
#include "impl/scalar_only.hpp"

namespace pecheck {

namespace {

/// The sinusoid's d_model / 2 frequencies (fairseq's width where the spec says so).
std::vector<angles::Frequency> sinusoid_frequencies(const SinusoidalSpec& s) {
  std::vector<angles::Frequency> freqs(static_cast<std::size_t>(s.d_model / 2));
  for (int i = 0; i < s.d_model / 2; ++i)
    freqs[static_cast<std::size_t>(i)] = angles::frequency(i, s.frequency_width(), s.base);
  return freqs;
}

cuda::Storage storage(DType dt) { return static_cast<cuda::Storage>(static_cast<int>(dt)); }
static_assert(static_cast<int>(DType::f16) == static_cast<int>(cuda::Storage::f16));
static_assert(static_cast<int>(AttentionPE::alibi) == 3 && static_cast<int>(AttentionPE::shaw) == 4 &&
              static_cast<int>(AttentionPE::t5) == 5);

class CudaEncoder final : public Encoder {
 public:
  CudaEncoder(const cuda::Launcher& launcher, std::string name) : launcher_(launcher), name_(std::move(name)) {}

  std::string name() const override { return name_; }

  Support supports(Op op, DType) const override { return offered_beyond_scalar(op); }
  void run(const RelativeBias2d&) override { decline(*this, Op::relative_bias_2d); }

  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, positions, out] = c;
    s.validate();
    c.check();
    const std::vector<angles::Frequency> freqs = sinusoid_frequencies(s);
    launcher_.sinusoidal_table(storage(dt), s.d_model, s.layout == SinusoidalLayout::interleaved, s.padding_idx,
                               positions.data(), positions.size(), freqs.data(), out.data());
  }

  void run(const LearnedAdd& c) override {
    const auto& [s, dt, table, positions, x] = c;
    s.validate();
    c.check();
    for (const std::int64_t p : positions)  // refused before anything is copied: never a wrap
      if (p < 0 || p >= s.max_len)
        throw std::out_of_range(fmt::format("learned position {} is outside the table [0, {})", p, s.max_len));
    launcher_.learned_add(storage(dt), s.d_model, s.max_len, table.data(), positions.data(), positions.size(),
                          x.data());
  }

  void run(const ShawScores& c) override {
    const auto& [s, dt, q, k, table, positions, out] = c;
    s.validate();
    c.check();
    launcher_.shaw_scores(storage(dt), s.head_dim, s.max_distance, q.data(), k.data(), table.data(), positions.data(),
                          positions.size(), out.data());
  }

  void run(const AlibiBias& c) override {
    const auto& [s, dt, positions, out] = c;
    s.validate();
    c.check();
    std::vector<double> slopes(static_cast<std::size_t>(s.heads));
    for (int h = 0; h < s.heads; ++h) slopes[static_cast<std::size_t>(h)] = alibi::slope(h, s.heads);
    launcher_.alibi_bias(storage(dt), s.heads, s.causal, slopes.data(), positions.data(), positions.size(), out.data());
  }

  void run(const T5Bias& c) override {
    const auto& [s, dt, table, positions, out] = c;
    s.validate();
    c.check();
    const cuda::T5Launch launch{.heads = s.heads,
                                .num_buckets = s.num_buckets,
                                .max_distance = s.max_distance,
                                .bidirectional = s.bidirectional};
    launcher_.t5_bias(storage(dt), launch, table.data(), positions.data(), positions.size(), out.data());
  }

  void run(const Attention& c) override {
    const auto& [s, dt, positions, q, k, v, pe_table, out] = c;
    s.validate();
    c.check();
    if (s.head_dim > cuda::kMaxAttentionHeadDim)
      throw Unsupported(
          fmt::format("CUDA attention takes head_dim <= {}, got {}", cuda::kMaxAttentionHeadDim, s.head_dim));
    std::vector<double> slopes(static_cast<std::size_t>(s.heads));
    for (int h = 0; h < s.heads; ++h) slopes[static_cast<std::size_t>(h)] = alibi::slope(h, s.heads);
    std::vector<angles::Frequency> freqs;
    if (s.pe == AttentionPE::sinusoidal) freqs = sinusoid_frequencies(s.sinusoidal());
    if (s.pe == AttentionPE::rope) freqs = angles::rope_frequencies(s.rope());
    const cuda::AttentionLaunch launch{.heads = s.heads,
                                       .head_dim = s.head_dim,
                                       .causal = s.causal,
                                       .scale = s.effective_scale(),
                                       .pe = static_cast<int>(s.pe),
                                       .rope_interleaved = s.rope_layout == RopeLayout::interleaved,
                                       .shaw_max_distance = s.shaw_max_distance,
                                       .kv_heads = s.kv_heads,
                                       .window = s.window,
                                       .queries = s.queries,
                                       .rotary_dim = s.rope().rotary_dim,
                                       .magnitude = s.rope().magnitude(),
                                       .t5 = {.heads = s.heads,
                                              .num_buckets = s.t5_buckets,
                                              .max_distance = s.t5_max_distance,
                                              .bidirectional = s.t5_bidirectional}};
    const bool tabled = s.pe == AttentionPE::shaw || s.pe == AttentionPE::t5;
    launcher_.attention(storage(dt), launch, positions.data(), positions.size(), q.data(), k.data(), v.data(),
                        pe_table.data(), tabled ? pe_table.size() : 0, slopes.data(), freqs.data(), freqs.size(),
                        out.data());
  }

  void run(const RopeApply& c) override {
    const auto& [s, dt, heads, positions, x] = c;
    s.validate();
    c.check();
    const cuda::RopeLaunch launch{.heads = heads,
                                  .head_dim = s.head_dim,
                                  .rotary_dim = s.rotary_dim,
                                  .interleaved = s.layout == RopeLayout::interleaved,
                                  .magnitude = s.magnitude()};
    const std::vector<angles::Frequency> freqs = angles::rope_frequencies(s);
    launcher_.rope_apply(storage(dt), launch, positions.data(), positions.size(), freqs.data(), x.data());
  }

  void run(const Sinusoidal2dTable& c) override {
    const auto& [s, dt, rows, cols, out] = c;
    s.validate();
    c.check();
    const std::vector<angles::Frequency> freqs = sinusoid_frequencies(s.axis());
    launcher_.sinusoidal2d_table(storage(dt), s.d_model, s.layout == SinusoidalLayout::interleaved, rows.data(),
                                 cols.data(), rows.size(), freqs.data(), out.data());
  }

  void run(const Rope2dApply& c) override {
    rope2d_by_halves(c, [&](const Rope2dSpec& s, std::span<float> x) {
      // Pixtral's split frequencies give the axes different ones: each half through the 1-D kernel.
      if (s.frequencies == Rope2dFrequencies::split)
        return rope2d_as_two_ropes(s, c.dtype, c.heads, c.rows, c.cols, x, [&](const RopeApply& r) { run(r); });
      const std::vector<angles::Frequency> freqs = angles::rope_frequencies(s.axis());
      launcher_.rope2d_apply(storage(c.dtype), c.heads, s.head_dim, s.layout == RopeLayout::interleaved, c.rows.data(),
                             c.cols.data(), c.rows.size(), freqs.data(), x.data());
    });
  }
  void run(const MropeApply& c) override {
    mrope_by_axes(c, [&](const RopeSpec& s, std::span<const std::int64_t> positions, std::span<float> x) {
      run(RopeApply{s, c.dtype, c.heads, positions, x});
    });
  }

 private:
  const cuda::Launcher& launcher_;
  std::string name_;
};

}  // namespace

#ifdef PECHECK_HAVE_CUDA
std::unique_ptr<Encoder> make_cuda_encoder() { return std::make_unique<CudaEncoder>(cuda::device(), "cuda"); }
#endif

std::unique_ptr<Encoder> make_cuda_emulated_encoder() {
  return std::make_unique<CudaEncoder>(cuda::emulator(), "cuda-emulated");
}

}  // namespace pecheck
