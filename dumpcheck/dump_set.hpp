// A framework's dump, as `pecheck validate --dump` reads it: a directory with manifest.json naming
// the family, the storage dtype, the arrays (NPY or safetensors tensors) and, optionally, the
// convention. Anything malformed is a tensorfiles::FormatError (one line, exit status 2).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/conventions.hpp"
#include "spec/conventions_2d.hpp"
#include "spec/dtype.hpp"
#include "spec/mrope.hpp"

namespace pecheck::dumpcheck {

enum class Kind { rope, sinusoidal, learned, alibi, t5, mrope, shaw, attention, rope2d };

/// What the manifest states of the convention; each absent field is fitted from the data.
struct StatedRope {
  std::optional<RopeLayout> layout;
  std::optional<int> rotary_dim;
  std::optional<double> base;  ///< "base" or HF's "rope_theta"
  /// The scaling rule and its parameters (HF's rope_parameters or rope_scaling, or pecheck's
  /// "linear_factor"): each only when stated; the rest are fitted. HF's proportional rope_type is
  /// the none or linear rule with rotated_pairs.
  std::optional<RopeScalingKind> rule;
  std::optional<double> factor;
  std::optional<std::int64_t> original_max_position;
  std::optional<double> low_freq_factor, high_freq_factor;       ///< Llama 3
  std::optional<double> beta_fast, beta_slow;                    ///< YaRN
  std::optional<bool> truncate;                                  ///< YaRN
  std::optional<double> mscale, mscale_all_dim;                  ///< YaRN
  std::optional<std::vector<double>> short_factor, long_factor;  ///< LongRoPE: never fitted, only stated
  std::optional<double> attention_factor;                        ///< YaRN's or LongRoPE's, when stated
  std::optional<int> rotated_pairs;  ///< proportional: int(partial_rotary_factor head_dim // 2)
};
struct StatedSinusoidal {
  std::optional<SinusoidalLayout> layout;
  std::optional<SinusoidalFrequencies> frequencies;
  std::optional<double> base;
};

/// What an M-RoPE manifest states beyond StatedRope's layout, rotary_dim and base: HF's
/// mrope_section and mrope_interleaved (Qwen3-VL's round-robin); each fitted when absent.
struct StatedMrope {
  std::optional<std::array<int, 3>> section;
  std::optional<MropeAssignment> assignment;
};

struct Dump {
  std::string dir, encoder;
  Kind kind = Kind::rope;
  DType dtype = DType::f32;
  std::vector<std::int64_t> positions;  ///< one per token (M-RoPE: the temporal stream)
  /// M-RoPE: the temporal, height and width positions of every token (HF's position_ids (3, n)).
  /// 2-D RoPE: the rows in axes[0] and the columns in axes[1].
  std::array<std::vector<std::int64_t>, 3> axes;
  int heads = 1;              ///< RoPE: heads per token
  int width = 0;              ///< RoPE head_dim, or d_model
  std::vector<double> x;      ///< (M-)RoPE input (tokens, heads, head_dim); learned (tokens, d_model)
  std::vector<double> y;      ///< the output, same shape; or the sinusoid's table (tokens, d_model)
  std::vector<double> table;  ///< learned: the embedding table (max_len, d_model)
  int max_len = 0;            ///< learned: the table's rows
  /// learned: what the encoder did when asked for a position at or past max_len, as the dump's
  /// maker recorded it: refused (an error, with its message) or not.
  std::optional<bool> refused_past_table;
  std::string refusal;
  StatedRope rope;  ///< RoPE and M-RoPE
  StatedMrope mrope;
  std::optional<Rope2dPairing> rope2d_pairing;          ///< 2-D RoPE: as stated (layout and base in `rope`)
  std::optional<Rope2dFrequencies> rope2d_frequencies;  ///< 2-D RoPE: as stated
  StatedSinusoidal sinusoidal;
  /// The manifest's "ftz": true: the encoder ran where subnormals are flushed to zero (XLA on CPU,
  /// CUDA or Triton built with fast math), a platform convention. Every input below FLT_MIN is read
  /// as the zero of its sign that platform read (x flushed at load); all else is judged as always.
  bool ftz = false;
  /// ALiBi: the bias as dumped, (heads, n, n) in the catalogue's form (-m |p_i - p_j|, -inf where
  /// causally masked), or (heads, n) in BLOOM's key form (m p_j, added to every query's scores).
  std::vector<double> bias;
  bool key_bias = false;
  /// T5: the bucket table (num_buckets, heads) in `table`, the bias (heads, n, n) in `bias`, and
  /// what the manifest states of the bucketing (the rest is read from the data).
  std::optional<bool> t5_bidirectional;
  std::optional<int> t5_max_distance;
  /// Shaw: q in `x`, k in `y` ((n, head_dim), width head_dim), the relative table (2K + 1,
  /// head_dim) in `table` (max_len its rows), the scores (n, n) in `bias`, times `shaw_scale`.
  double shaw_scale = 1;
  /// Attention: q in `x` (batch, queries, heads, head_dim), the output in `y` (the same shape), K
  /// and V in `k` and `v` (batch, n, kv_heads, head_dim), `positions` the keys' (batch x n: each
  /// sequence's own, or the shared ones repeated); the spec as the manifest states it (nothing is
  /// fitted: every field has a default that real kernels take).
  std::optional<AttentionSpec> attention;
  std::vector<double> k, v;
  int batch = 1;
  std::size_t tokens() const { return positions.size(); }
};

/// The dump directories under dir: dir itself when it holds manifest.json, else its immediate
/// subdirectories that do, sorted. FormatError when there is none.
std::vector<std::string> find_dumps(const std::string& dir);

/// Reads and checks one dump directory.
Dump load_dump(const std::string& dir);

}  // namespace pecheck::dumpcheck
