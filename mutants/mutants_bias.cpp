// Mutants of position tables and score biases: positions carried in fp16, T5's buckets, the 2-D
// relative bias table's index.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

/// candle PR 1312: the log-spaced bucket max_exact + log(n/max_exact)/log(max_distance/max_exact)
/// * (half - max_exact) without HF's min(..., half - 1), so distances past max_distance run into
/// the other direction's buckets (or past the table, read here as its last row).
struct T5NoClamp : Forwarding {
  using Forwarding::run;
  T5NoClamp() : Forwarding("mutant-t5-no-clamp") {}
  void run(const T5Bias& c) override {
    const auto& [s, dt, table, positions, out] = c;
    const std::size_t n = positions.size(), H = static_cast<std::size_t>(s.heads);
    c.check();
    const int half = s.half(), me = s.max_exact();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::int64_t rel = positions[j] - positions[i];
        const int offset = s.bidirectional && rel > 0 ? half : 0;
        const std::int64_t dist = s.bidirectional ? std::abs(rel) : std::max<std::int64_t>(-rel, 0);
        int b = offset + static_cast<int>(dist);
        if (dist >= me)
          b = offset + me +
              static_cast<int>(std::floor((half - me) * std::log(static_cast<double>(dist) / me) /
                                          std::log(static_cast<double>(s.max_distance) / me)));
        const auto row = static_cast<std::size_t>(std::min(b, s.num_buckets - 1));
        for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = round_to(dt, table[row * H + h]);
      }
  }
};

/// Megatron-LM issue 535: the position ids become fp16 with the model (seq.type_as(inv_freq)), so
/// above 2048 neighbouring positions round to the same value and their rows collide.
struct SinusoidalFp16Positions : Forwarding {
  SinusoidalFp16Positions() : Forwarding("mutant-sinusoidal-fp16-positions") {}
  void run(const SinusoidalTable& c) override {
    const auto& [s, dt, p, o] = c;
    std::vector<std::int64_t> rounded(p.begin(), p.end());
    for (auto& q : rounded) q = static_cast<std::int64_t>(round_to(DType::f16, static_cast<double>(q)));
    inner_->run(SinusoidalTable{s, dt, rounded, o});
  }
};

/// A 2-D relative bias kernel that reads the table at a row of its own: `row` plants the bug (the
/// class token's rows and the table are read as the correct kernel reads them otherwise).
struct ReadsRelativeBias2dRow : Forwarding {
  using Forwarding::Forwarding;
  using Forwarding::run;
  void run(const RelativeBias2d& c) override {
    const auto& [s, dt, table, rows, cols, out] = c;
    c.check();
    const std::vector<float> t = effective_table(s, table);
    const std::size_t n = rows.size(), H = static_cast<std::size_t>(s.heads), first = s.class_token ? 1 : 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        auto r = static_cast<std::size_t>(i < first || j < first ? class_row(s, i < first, j < first)
                                                                 : offset_row(s, rows, cols, i, j));
        r = std::min(r, static_cast<std::size_t>(s.table_rows()) - 1);  // past the table: its last row
        for (std::size_t h = 0; h < H; ++h) out[(h * n + i) * n + j] = round_to(dt, t[r * H + h]);
      }
  }

 protected:
  virtual std::int64_t offset_row(const RelativeBias2dSpec& s, std::span<const std::int64_t> rows,
                                  std::span<const std::int64_t> cols, std::size_t i, std::size_t j) const {
    return s.offset_row(rows[i] - rows[j], cols[i] - cols[j]);
  }
  virtual std::int64_t class_row(const RelativeBias2dSpec& s, bool query_is_class, bool key_is_class) const {
    return s.class_row(query_is_class, key_is_class);
  }
  virtual std::vector<float> effective_table(const RelativeBias2dSpec&, std::span<const float> table) const {
    return {table.begin(), table.end()};
  }
};

/// The offset read key minus query (T5's direction, p_j - p_i) where Swin's is query minus key:
/// every bias mirrored through the origin.
struct RelativeBias2dOffsetReversed : ReadsRelativeBias2dRow {
  RelativeBias2dOffsetReversed() : ReadsRelativeBias2dRow("mutant-relative-bias-2d-offset-reversed") {}
  std::int64_t offset_row(const RelativeBias2dSpec& s, std::span<const std::int64_t> rows,
                          std::span<const std::int64_t> cols, std::size_t i, std::size_t j) const override {
    return s.offset_row(rows[j] - rows[i], cols[j] - cols[i]);
  }
};

/// mindcv's RelativePositionBiasWithCLS: the row offset's stride taken from the window's rows,
/// (2 Wh - 1), not its columns. The same index for a square window; a non-square one aliases
/// offsets (or reads past the table).
struct RelativeBias2dStrideFromRows : ReadsRelativeBias2dRow {
  RelativeBias2dStrideFromRows() : ReadsRelativeBias2dRow("mutant-relative-bias-2d-stride-from-rows") {}
  std::int64_t offset_row(const RelativeBias2dSpec& s, std::span<const std::int64_t> rows,
                          std::span<const std::int64_t> cols, std::size_t i, std::size_t j) const override {
    return (rows[i] - rows[j] + s.window_rows - 1) * (2 * s.window_rows - 1) + cols[i] - cols[j] + s.window_cols - 1;
  }
};

/// The class token's query row and key column exchanged (cls-to-token read at table_rows - 2,
/// token-to-cls at table_rows - 3).
struct RelativeBias2dClassRowsSwapped : ReadsRelativeBias2dRow {
  RelativeBias2dClassRowsSwapped() : ReadsRelativeBias2dRow("mutant-relative-bias-2d-class-rows-swapped") {}
  std::int64_t class_row(const RelativeBias2dSpec& s, bool query_is_class, bool key_is_class) const override {
    return s.class_row(key_is_class, query_is_class);  // each role reads the other's row
  }
};

/// Window coordinates reduced modulo the window before the offset is taken (a kernel that keeps
/// window-local coordinates): right for a window placed at a multiple of its size, wrong wherever
/// a window straddles one.
struct RelativeBias2dModuloWindow : ReadsRelativeBias2dRow {
  RelativeBias2dModuloWindow() : ReadsRelativeBias2dRow("mutant-relative-bias-2d-modulo-window") {}
  std::int64_t offset_row(const RelativeBias2dSpec& s, std::span<const std::int64_t> rows,
                          std::span<const std::int64_t> cols, std::size_t i, std::size_t j) const override {
    return s.offset_row(rows[i] % s.window_rows - rows[j] % s.window_rows,
                        cols[i] % s.window_cols - cols[j] % s.window_cols);
  }
};

/// transformers 5.24's BeitRelativePositionBias.forward: the offsets' rows reshaped as
/// (2 Ww - 1, 2 Wh - 1), the window's sides exchanged, then resized bilinearly (align_corners
/// False, as torch's interpolate) to (2 Wh - 1, 2 Ww - 1) and read back row-major. A square
/// window resizes to itself exactly; a non-square one reads resampled, misplaced entries.
struct RelativeBias2dBeitResampled : ReadsRelativeBias2dRow {
  RelativeBias2dBeitResampled() : ReadsRelativeBias2dRow("mutant-relative-bias-2d-beit-resampled") {}
  std::vector<float> effective_table(const RelativeBias2dSpec& s, std::span<const float> table) const override {
    std::vector<float> t(table.begin(), table.end());
    const std::size_t H = static_cast<std::size_t>(s.heads), out_h = static_cast<std::size_t>(2 * s.window_rows - 1),
                      out_w = static_cast<std::size_t>(2 * s.window_cols - 1), in_h = out_w, in_w = out_h;
    // torch's source coordinate for an output index, align_corners False: (o + 0.5) in / out - 0.5,
    // at least 0; its two neighbours and the weight of the second.
    const auto source = [](std::size_t o, std::size_t in, std::size_t out) {
      const float x =
          std::max(0.0f, (static_cast<float>(o) + 0.5f) * static_cast<float>(in) / static_cast<float>(out) - 0.5f);
      const auto lo = static_cast<std::size_t>(x);
      return std::tuple{lo, std::min(lo + 1, in - 1), x - static_cast<float>(lo)};
    };
    for (std::size_t y = 0; y < out_h; ++y)
      for (std::size_t x = 0; x < out_w; ++x) {
        const auto [y0, y1, ly] = source(y, in_h, out_h);
        const auto [x0, x1, lx] = source(x, in_w, out_w);
        for (std::size_t h = 0; h < H; ++h) {
          const auto at = [&](std::size_t r, std::size_t c) { return table[(r * in_w + c) * H + h]; };
          t[(y * out_w + x) * H + h] =
              (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) + ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1));
        }
      }
    return t;
  }
};

}  // namespace

std::vector<Mutant> bias_mutants() {
  return {
      {"sinusoid of positions rounded to fp16",
       "Megatron-LM issue 535: positions cast to fp16 with the model; rows above 2048 collide",
       "sinusoidal.injectivity", make_mutant<SinusoidalFp16Positions>},
      {"T5 bucket without the clamp", "candle PR 1312: no min(..., num_buckets - 1) on the log-spaced bucket",
       "t5.bucket_laws", make_mutant<T5NoClamp>},
      {"2-D relative bias offset read key minus query",
       "T5's direction (p_j - p_i) carried over to Swin's index, which is query minus key",
       "relative_bias_2d.agrees_with_reference", make_mutant<RelativeBias2dOffsetReversed>},
      {"2-D relative bias row stride from the window's rows",
       "mindcv's RelativePositionBiasWithCLS (mindcv/models/layers/pos_embed.py): relative_coords[:, :, 0] *= 2 * "
       "window_size[0] - 1 where HF's takes window_size[1]: aliases a non-square window",
       "relative_bias_2d.offset_injectivity", make_mutant<RelativeBias2dStrideFromRows>},
      {"2-D relative bias class-token rows exchanged",
       "BEiT's cls-to-token (rows - 3) and token-to-cls (rows - 2) read the other way round",
       "relative_bias_2d.agrees_with_reference", make_mutant<RelativeBias2dClassRowsSwapped>},
      {"2-D relative bias coordinates modulo the window",
       "window-local coordinates (p mod window) where a window straddles a multiple of its size",
       "relative_bias_2d.translation_invariance", make_mutant<RelativeBias2dModuloWindow>},
      {"2-D relative bias table resampled with its sides exchanged",
       "transformers 5.24 BeitRelativePositionBias.forward: reshape(1, old_width, old_height) before interpolate",
       "relative_bias_2d.agrees_with_reference", make_mutant<RelativeBias2dBeitResampled>},
  };
}

}  // namespace pecheck::mutants
