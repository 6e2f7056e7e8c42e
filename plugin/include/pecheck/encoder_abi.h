/* pecheck encoder plugin ABI, version 1 (C99; no C++ types).
 *
 * A shared library becomes an encoder under test for `pecheck validate --plugin lib.so` by
 * exporting one function,
 *
 *     const pecheck_plugin* pecheck_plugin_v1(void);
 *
 * that returns a static descriptor: the ABI version it was built against, its name, the dtypes
 * it stores, and one entry point per operation it offers (NULL: not offered). pecheck calls the
 * entry points from a child process, so a crash, an abort or a hang is reported as such and the
 * run goes on; outputs sit between guard pages and sentinels, so a write outside them is caught.
 *
 * Conventions: every tensor is a pecheck_tensor (pointer, dtype, shape and strides in elements,
 * outermost dimension first). Storage: PECHECK_F32 is IEEE binary32 (float), PECHECK_BF16 the
 * upper 16 bits of a binary32 (uint16_t), PECHECK_F16 IEEE binary16 (uint16_t). Positions are
 * int64_t, one per token. Every entry point returns a pecheck_status:
 *   PECHECK_OK           done; every element of the output was written
 *   PECHECK_UNSUPPORTED  this call (dtype, layout, scaling rule, shape...) is not offered: the case
 *                        is skipped, never counted as a failure
 *   PECHECK_INVALID      the arguments are invalid (e.g. a learned position outside the table)
 *   PECHECK_ERROR        anything else; the case fails with the plugin's message
 * and may leave a one-line message with the host's set_message (may be NULL-checked).
 *
 * Convention of each operation (pecheck_plugin.conventions, one bit per PECHECK_OP_*):
 *   bit set    the entry point honours every field of the spec it is given (layout, base,
 *              rotary_dim, scaling, ...), returning PECHECK_UNSUPPORTED for what it does not
 *              implement; pecheck runs the family properties and the agreement properties.
 *   bit clear  opaque: the plugin applies its own, unstated convention and reads from the spec
 *              only the sizes (d_model, head_dim, heads); pecheck runs only the family properties
 *              that hold for every convention, and reports the agreement properties as skipped.
 */
#ifndef PECHECK_ENCODER_ABI_H
#define PECHECK_ENCODER_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PECHECK_ABI_VERSION 1u
#define PECHECK_ABI_REVISION 3u /* additions within version 1 that a plugin opts into (pecheck_plugin) */
#define PECHECK_MAX_RANK 4

typedef int32_t pecheck_status;
#define PECHECK_OK 0
#define PECHECK_UNSUPPORTED 1
#define PECHECK_INVALID 2
#define PECHECK_ERROR 3

/* Storage dtypes; pecheck_plugin.dtypes is a mask of (1u << dtype). */
#define PECHECK_F32 0
#define PECHECK_BF16 1
#define PECHECK_F16 2

/* Operations; pecheck_plugin.conventions is a mask of (1u << op). */
#define PECHECK_OP_SINUSOIDAL_TABLE 0
#define PECHECK_OP_LEARNED_ADD 1
#define PECHECK_OP_ROPE_APPLY 2
#define PECHECK_OP_ALIBI_BIAS 3
#define PECHECK_OP_SHAW_SCORES 4
#define PECHECK_OP_T5_BIAS 5
#define PECHECK_OP_ATTENTION 6
#define PECHECK_OP_MROPE_APPLY 7 /* appended to ABI 1: read only from a descriptor whose struct_size holds it */

/* Platform flags; pecheck_plugin.flags is a mask of them. PECHECK_FLAG_FTZ: the plugin runs where
 * subnormals are flushed to zero (DAZ and FTZ: CUDA or Triton built with fast math, XLA on CPU);
 * pecheck judges it as `validate --ftz` does, drawing no input below FLT_MIN, every law otherwise
 * the same. */
#define PECHECK_FLAG_FTZ 1u

/* The attention forms a plugin may declare (pecheck_plugin.attention_forms), one bit each, as
 * spec/attention_forms.hpp orders them: grouped-query heads (kv_heads < heads), a causal sliding
 * window, fewer queries than keys (a decode step), a scale the case states, RoPE with a partial
 * rotary_dim or a scaling rule. PECHECK_FORMS_DECLARED marks the mask as a declaration: without
 * it (0, or a descriptor that ends before the field) the plugin takes every form. */
#define PECHECK_FORM_GROUPED_QUERY (1u << 0)
#define PECHECK_FORM_WINDOW (1u << 1)
#define PECHECK_FORM_DECODE (1u << 2)
#define PECHECK_FORM_SCALE (1u << 3)
#define PECHECK_FORM_ROPE_RULES (1u << 4)
#define PECHECK_FORMS_DECLARED (1u << 31)

/* Element (i0, ..., i_{rank-1}) lives at data + sum(i_k * strides[k]) elements. */
typedef struct pecheck_tensor {
  void* data;
  int32_t dtype;
  int32_t rank;
  int64_t shape[PECHECK_MAX_RANK];
  int64_t strides[PECHECK_MAX_RANK];
} pecheck_tensor;

/* Lets a plugin explain a status in one line; the text is copied. */
typedef struct pecheck_host {
  void (*set_message)(const char* message);
} pecheck_host;

#define PECHECK_SINUSOIDAL_INTERLEAVED 0  /* pe[2i] = sin, pe[2i+1] = cos (Vaswani 2017) */
#define PECHECK_SINUSOIDAL_CONCATENATED 1 /* pe[i] = sin, pe[d/2+i] = cos (tensor2tensor, fairseq) */
#define PECHECK_FREQUENCIES_VASWANI 0     /* w_i = base^(-2i/d) */
#define PECHECK_FREQUENCIES_FAIRSEQ 1     /* w_i = base^(-i/(d/2-1)) */

/* out (n, d_model) = PE(positions); padding_idx >= 0 names a position whose row is all zeros. */
typedef struct pecheck_sinusoidal_spec {
  int32_t d_model;
  int32_t layout;
  int32_t frequencies;
  int32_t reserved;
  double base;
  int64_t padding_idx;
} pecheck_sinusoidal_spec;

/* x (n, d_model) += table[positions]; table (max_len, d_model); a position outside is INVALID. */
typedef struct pecheck_learned_spec {
  int32_t max_len;
  int32_t d_model;
} pecheck_learned_spec;

#define PECHECK_ROPE_INTERLEAVED 0 /* pairs (2i, 2i+1): GPT-J */
#define PECHECK_ROPE_HALF_SPLIT 1  /* pairs (i, i + rotary_dim/2): GPT-NeoX, HF rotate_half */
#define PECHECK_SCALING_NONE 0
#define PECHECK_SCALING_LINEAR 1
#define PECHECK_SCALING_NTK 2
#define PECHECK_SCALING_DYNAMIC_NTK 3
#define PECHECK_SCALING_YARN 4
#define PECHECK_SCALING_LLAMA3 5
#define PECHECK_SCALING_LONGROPE 6 /* sent only to plugins of ABI revision >= 1 (pecheck_plugin) */

/* x (n, heads, head_dim) rotated in place: the first rotary_dim dims of each head by angles
 * positions[t] * inv_freq_i, dims [rotary_dim, head_dim) untouched. Fields are named as in HF's
 * rope_scaling. With d = rotary_dim, i in [0, d/2), theta_i = base^(-2i/d), s = factor,
 * L0 = original_max_position:
 *   NONE         inv_freq_i = theta_i
 *   LINEAR       theta_i / s
 *   NTK          (base s^(d/(d-2)))^(-2i/d)                            (d >= 4)
 *   DYNAMIC_NTK  theta_i when seq_len <= L0, else (base S^(d/(d-2)))^(-2i/d) with
 *                S = s seq_len / L0 - (s - 1); seq_len is the length the call stands for (HF:
 *                max(position_ids) + 1), given, never derived from `positions`
 *   YARN         theta_i ((1 - w_i) / s + w_i), w_i = 1 - clamp((i - lo) / (hi - lo), 0, 1),
 *                lo = max(floor(c(beta_fast)), 0), hi = min(ceil(c(beta_slow)), d - 1),
 *                hi = lo + 0.001 when they are equal (an empty range: a step at lo),
 *                c(b) = d ln(L0 / (2 pi b)) / (2 ln base); cos and sin (so every rotated pair)
 *                carry the attention factor 0.1 ln s + 1 when s > 1 (HF attention_scaling)
 *   LLAMA3       wavelength l_i = 2 pi / theta_i: theta_i when l_i < L0 / high_freq_factor,
 *                theta_i / s when l_i > L0 / low_freq_factor, else (1 - m) theta_i / s + m theta_i
 *                with m = (L0 / l_i - low_freq_factor) / (high_freq_factor - low_freq_factor)
 *   LONGROPE     theta_i / e_i, e = long_factor when seq_len > L0, else short_factor (d/2 entries
 *                each, > 0); s is HF's max_position_embeddings / original_max_position_embeddings.
 *                cos and sin carry the attention factor: attention_factor when > 0, else
 *                sqrt(1 + ln s / ln L0) when s > 1, else 1 (HF _compute_longrope_parameters)
 * Positions are signed 64-bit: the catalogue draws them in [0, 2^24) and rope.inverse also calls
 * with their negatives (R_-m undoes R_m); an encoder that refuses negative positions returns
 * PECHECK_UNSUPPORTED for those calls. reference/rope_scaling.hpp is the same definition in code. */
typedef struct pecheck_rope_spec {
  int32_t head_dim;
  int32_t rotary_dim;
  int32_t layout;
  int32_t scaling;
  double base;
  double factor;
  int64_t original_max_position;
  int64_t seq_len;
  double beta_fast, beta_slow;
  double low_freq_factor, high_freq_factor;
  /* Appended with ABI revision 1, read only for LONGROPE (null otherwise): */
  const double* short_factor; /* rotary_dim / 2 entries */
  const double* long_factor;  /* rotary_dim / 2 entries */
  double attention_factor;    /* 0: the default above */
} pecheck_rope_spec;

/* out (heads, n, n) = -m_h |p_i - p_j| (causal: -m_h (p_i - p_j), -inf for j > i). */
typedef struct pecheck_alibi_spec {
  int32_t heads;
  int32_t causal;
} pecheck_alibi_spec;

/* out (n, n) = q_i.k_j + q_i.r[clamp(p_j - p_i, -K, K) + K]; q, k (n, head_dim), r (2K+1, head_dim). */
typedef struct pecheck_shaw_spec {
  int32_t max_distance;
  int32_t head_dim;
} pecheck_shaw_spec;

/* out (heads, n, n) = table[bucket(p_j - p_i), h]; table (num_buckets, heads); T5's buckets. */
typedef struct pecheck_t5_spec {
  int32_t heads;
  int32_t num_buckets;
  int32_t max_distance;
  int32_t bidirectional;
} pecheck_t5_spec;

#define PECHECK_PE_NONE 0
#define PECHECK_PE_SINUSOIDAL 1 /* PE (width heads*head_dim, interleaved, pe_base) added to Q, K, V */
#define PECHECK_PE_ROPE 2       /* RoPE (full rotary, rope_layout, pe_base) on Q and K */
#define PECHECK_PE_ALIBI 3      /* ALiBi slopes added to the scores */
#define PECHECK_PE_SHAW 4       /* q_i . r(p_j - p_i) added to the scores before scaling */
#define PECHECK_PE_T5 5         /* revision 3: T5's table[bucket(p_j - p_i), h] added to the scaled scores */

/* out = softmax(scale * S + B) V per head, over n tokens (one position each): q and out
 * (queries, heads, head_dim), k and v (n, kv_heads, head_dim).
 * Revision 2 appends kv_heads, window, queries and rope; pecheck sets them for every plugin but
 * sends the cases that need them (kv_heads < heads, window > 0, queries < n, RoPE with
 * rotary_dim < head_dim or a scaling rule) only to plugins of abi_revision >= 2, so a plugin
 * built before reads a spec whose new fields are heads, 0 and n, and full unscaled RoPE at
 * pe_base in rope_layout.
 *   kv_heads  K/V heads, dividing heads: query head h reads K/V head h / (heads / kv_heads), each
 *             K/V head serving a consecutive group (HF's repeat_kv); 1 is MQA
 *   window    0, or a causal sliding window (Mistral's): token i sees the keys i - window < j <= i
 *   queries   rows of q and out: the last `queries` of the n tokens, a KV-cache decode step (1)
 *             or a chunk; query row r is token n - queries + r, encoded at that token's position,
 *             and under the causal mask sees keys j <= n - queries + r (aligned bottom-right, as
 *             flash-attn >= 2.1; not PyTorch's top-left is_causal)
 *   rope      with PECHECK_PE_ROPE, RoPE's whole spec (rotary_dim, scaling rule, as rope_apply
 *             reads it; its head_dim, base and layout repeat the fields above), applied to Q at
 *             the query tokens' positions and to K at every token's; NULL for other PEs
 * Revision 3 appends t5: with PECHECK_PE_T5, T5's bucketing (its heads repeat the field above), the
 * bias table[bucket(p_j - p_i) * heads + h] added to the scaled score of query token i and key j,
 * the table (num_buckets, heads) passed as the entry point's table tensor; NULL for other PEs.
 * pecheck sends T5 cases only to plugins of abi_revision >= 3. */
typedef struct pecheck_attention_spec {
  int32_t heads;
  int32_t head_dim;
  int32_t causal;
  int32_t pe;
  double scale; /* already resolved: 1/sqrt(head_dim) unless the case sets another */
  double pe_base;
  int32_t rope_layout;
  int32_t shaw_max_distance;
  int32_t kv_heads; /* revision 2 */
  int32_t window;   /* revision 2 */
  int32_t queries;  /* revision 2 */
  int32_t reserved;
  const pecheck_rope_spec* rope; /* revision 2: RoPE's own spec when pe is PECHECK_PE_ROPE (else NULL) */
  const pecheck_t5_spec* t5;     /* revision 3: T5's bucketing when pe is PECHECK_PE_T5 (else NULL) */
} pecheck_attention_spec;

#define PECHECK_MROPE_SECTIONED 0   /* pairs [0,s0) temporal, [s0,s0+s1) height, the rest width: Qwen2-VL */
#define PECHECK_MROPE_INTERLEAVED 1 /* pair j height if j%3==1 && j<3 s1, width if j%3==2 && j<3 s2: Qwen3-VL */

/* Multimodal RoPE: x (n, heads, head_dim) rotated in place over the whole head, pair i (placed by
 * layout, as for RoPE) by the angle pos_a[t] * base^(-2i/head_dim), where a is the pair's axis
 * under the assignment and mrope_section (HF's names; the section sums to head_dim/2). positions
 * holds 3n values, HF's position_ids (3, n): temporal [0, n), height [n, 2n), width [2n, 3n). */
typedef struct pecheck_mrope_spec {
  int32_t head_dim;
  int32_t layout;
  int32_t assignment;
  int32_t mrope_section[3];
  double base;
} pecheck_mrope_spec;

typedef struct pecheck_plugin {
  uint32_t abi_version; /* PECHECK_ABI_VERSION the plugin was built against */
  uint32_t struct_size; /* sizeof(pecheck_plugin) */
  const char* name;     /* shown in reports, e.g. "my-rope-kernel" */
  uint32_t dtypes;      /* mask of (1u << PECHECK_F32 | ...) */
  uint32_t conventions; /* mask of (1u << PECHECK_OP_*): ops that honour the spec (see above) */

  pecheck_status (*sinusoidal_table)(const pecheck_host*, const pecheck_sinusoidal_spec*, const int64_t* positions,
                                     pecheck_tensor out);
  pecheck_status (*learned_add)(const pecheck_host*, const pecheck_learned_spec*, pecheck_tensor table,
                                const int64_t* positions, pecheck_tensor x);
  pecheck_status (*rope_apply)(const pecheck_host*, const pecheck_rope_spec*, const int64_t* positions,
                               pecheck_tensor x);
  pecheck_status (*alibi_bias)(const pecheck_host*, const pecheck_alibi_spec*, const int64_t* positions,
                               pecheck_tensor out);
  pecheck_status (*shaw_scores)(const pecheck_host*, const pecheck_shaw_spec*, pecheck_tensor q, pecheck_tensor k,
                                pecheck_tensor table, const int64_t* positions, pecheck_tensor out);
  pecheck_status (*t5_bias)(const pecheck_host*, const pecheck_t5_spec*, pecheck_tensor table, const int64_t* positions,
                            pecheck_tensor out);
  pecheck_status (*attention)(
      const pecheck_host*, const pecheck_attention_spec*, const int64_t* positions, pecheck_tensor q, pecheck_tensor k,
      pecheck_tensor v, pecheck_tensor table /* Shaw's (2K+1, head_dim), T5's (num_buckets, heads), else 0 rows */,
      pecheck_tensor out);
  /* Appended after ABI 1's first release: a descriptor whose struct_size ends before it (built
   * against the earlier header) offers no M-RoPE, and loads as before. */
  pecheck_status (*mrope_apply)(const pecheck_host*, const pecheck_mrope_spec*, const int64_t* positions,
                                pecheck_tensor x);
  /* Appended with LongRoPE: PECHECK_ABI_REVISION when the plugin implements what that revision
   * adds, else 0 (or a descriptor that ends before it). Revision 1: PECHECK_SCALING_LONGROPE and
   * the rope spec's factor lists; pecheck sends LongRoPE calls to no plugin below it. Revision 2:
   * the attention spec's kv_heads, window and queries (grouped-query, sliding-window and decode
   * attention) and its rope field (RoPE's whole spec inside attention); pecheck sends such cases to
   * no plugin below it. Revision 3: T5's bias inside attention (PECHECK_PE_T5, the spec's t5 field);
   * below it, attention_pes 0 means every PE but T5's. */
  uint32_t abi_revision;
  /* Appended after revision 2: a mask of PECHECK_FLAG_*, the conventions of the platform the
   * plugin runs on; a descriptor that ends before it (built against an older header) states none. */
  uint32_t flags;
  /* Appended after the flags: what the attention entry point takes, so that pecheck draws only
   * cases inside it (every property that applies runs its whole case count; one whose cases all
   * lie outside is "not applicable", naming what is missing). attention_pes: a mask of
   * 1u << PECHECK_PE_*, the position encodings it applies, 0 meaning every one. attention_forms:
   * PECHECK_FORMS_DECLARED with the PECHECK_FORM_* it takes, 0 meaning every form. A descriptor
   * that ends before them (built against an older header) declares nothing: its cases outside
   * what it does are drawn, and declined (PECHECK_UNSUPPORTED) one by one, as before. */
  uint32_t attention_pes;
  uint32_t attention_forms;
} pecheck_plugin;

/* The size of ABI 1's first descriptor, the smallest struct_size pecheck accepts. */
#define PECHECK_PLUGIN_V1_MIN_SIZE (offsetof(pecheck_plugin, mrope_apply))

/* The one symbol a plugin exports. */
typedef const pecheck_plugin* (*pecheck_plugin_entry)(void);
#define PECHECK_PLUGIN_SYMBOL "pecheck_plugin_v1"

#ifdef __cplusplus
}
#endif

#endif /* PECHECK_ENCODER_ABI_H */
