/* A pecheck plugin in plain C: RoPE (interleaved or half-split, partial rotary, any base, linear
 * scaling), M-RoPE (Qwen2-VL sections or Qwen3-VL interleaved, either pair layout) and the
 * sinusoidal table (both layouts, Vaswani or fairseq frequencies, a padding row),
 * in fp32, bf16 and fp16 storage. Angles, sines and rotations are computed in double and rounded
 * once into the storage format, so outputs stay within pecheck's 2u bounds at every position
 * below 2^24.
 *
 * Built as-is it is correct. The test suite also builds it with one planted bug at a time:
 *   PLANT_IGNORE_ROTARY_DIM  rotates all head_dim dims (pecheck's mutant-rope-ignores-rotary-dim)
 *   PLANT_OOB_WRITE          the sinusoidal table writes one element past the end of out
 *   PLANT_ABI_VERSION=N      declares another ABI version
 *   PLANT_NO_ENTRY           exports no pecheck_plugin_v1 symbol
 *   PLANT_UNWRITTEN          the sinusoidal table leaves its last element unwritten
 *   PLANT_ABORT_ON_LOAD      aborts in a library constructor, before pecheck sees a descriptor
 *   PLANT_FP32_ANGLES        forms RoPE's inv_freq and pos * inv_freq in fp32 (the tutorials' way)
 *   PLANT_FLUSH_SUBNORMALS   reads subnormal inputs of RoPE and M-RoPE as zero and writes subnormal
 *                            results as zero, as a fast-math build does (DAZ and FTZ), unstated
 * and two variants that are not bugs:
 *   DECLARE_FTZ              with PLANT_FLUSH_SUBNORMALS: states it (PECHECK_FLAG_FTZ), a platform
 *                            convention pecheck then judges it by
 *   V1_FIRST_DESCRIPTOR      declares the struct_size of ABI 1's first descriptor, which ended
 *                            before mrope_apply: it must load, and offer no M-RoPE
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pecheck/encoder_abi.h"
#include "storage.h"

#ifndef PLANT_ABI_VERSION
#define PLANT_ABI_VERSION PECHECK_ABI_VERSION
#endif

/* ---- the sinusoidal table ---- */

static pecheck_status sinusoidal_table(const pecheck_host* host, const pecheck_sinusoidal_spec* s,
                                       const int64_t* positions, pecheck_tensor out) {
  const int64_t n = out.shape[0], d = s->d_model, half = d / 2;
  if (out.rank != 2 || out.shape[1] != d || d % 2 != 0) {
    if (host->set_message) host->set_message("out must be (n, d_model) with d_model even");
    return PECHECK_INVALID;
  }
  const double width = s->frequencies == PECHECK_FREQUENCIES_FAIRSEQ ? (double)(d - 2) : (double)d;
  for (int64_t t = 0; t < n; ++t) {
    const int padding = s->padding_idx >= 0 && positions[t] == s->padding_idx;
    for (int64_t i = 0; i < half; ++i) {
      const double angle = (double)positions[t] * pow(s->base, -2.0 * (double)i / width);
      const int64_t sin_at = s->layout == PECHECK_SINUSOIDAL_INTERLEAVED ? 2 * i : i;
      const int64_t cos_at = s->layout == PECHECK_SINUSOIDAL_INTERLEAVED ? 2 * i + 1 : half + i;
      store(&out, t * out.strides[0] + sin_at * out.strides[1], padding ? 0.0 : sin(angle));
#ifdef PLANT_UNWRITTEN
      if (t == n - 1 && i == half - 1) continue;
#endif
      store(&out, t * out.strides[0] + cos_at * out.strides[1], padding ? 0.0 : cos(angle));
    }
  }
#ifdef PLANT_OOB_WRITE
  store(&out, n * out.strides[0], 1.0); /* one element past the last row */
#endif
  return PECHECK_OK;
}

/* ---- RoPE ---- */

/* A value as the platform sees it: below FLT_MIN, zero where subnormals are flushed. */
static double platform(double v) {
#ifdef PLANT_FLUSH_SUBNORMALS
  if (fabs(v) < FLT_MIN) return copysign(0.0, v);
#endif
  return v;
}

/* Rotates pair i of head h of token t by angle; the layout places the pair's two dims. */
static void rotate(const pecheck_tensor* x, int64_t t, int64_t h, int32_t layout, int64_t i, int64_t pairs,
                   double angle) {
  const int64_t a = layout == PECHECK_ROPE_INTERLEAVED ? 2 * i : i;
  const int64_t b = layout == PECHECK_ROPE_INTERLEAVED ? 2 * i + 1 : i + pairs;
  const int64_t row = t * x->strides[0] + h * x->strides[1];
  const double x1 = platform(load(x, row + a * x->strides[2])), x2 = platform(load(x, row + b * x->strides[2]));
  const double c = cos(angle), sn = sin(angle);
  store(x, row + a * x->strides[2], platform(x1 * c - x2 * sn));
  store(x, row + b * x->strides[2], platform(x1 * sn + x2 * c));
}

static pecheck_status rope_apply(const pecheck_host* host, const pecheck_rope_spec* s, const int64_t* positions,
                                 pecheck_tensor x) {
  if (s->scaling != PECHECK_SCALING_NONE && s->scaling != PECHECK_SCALING_LINEAR) {
    if (host->set_message) host->set_message("only unscaled and linearly scaled RoPE are implemented");
    return PECHECK_UNSUPPORTED;
  }
  if (x.rank != 3 || x.shape[2] != s->head_dim) {
    if (host->set_message) host->set_message("x must be (n, heads, head_dim)");
    return PECHECK_INVALID;
  }
#ifdef PLANT_IGNORE_ROTARY_DIM
  const int64_t rot = s->head_dim;
#else
  const int64_t rot = s->rotary_dim;
#endif
  const int64_t pairs = rot / 2;
  const double scale = s->scaling == PECHECK_SCALING_LINEAR ? 1.0 / s->factor : 1.0;
  for (int64_t t = 0; t < x.shape[0]; ++t)
    for (int64_t h = 0; h < x.shape[1]; ++h)
      for (int64_t i = 0; i < pairs; ++i) {
#ifdef PLANT_FP32_ANGLES /* as the PyTorch tutorials and HF form them: inv_freq and pos * inv_freq in fp32 */
        const float inv_freq = (float)(pow(s->base, -2.0 * (double)i / (double)rot) * scale);
        const double angle = (double)((float)positions[t] * inv_freq);
#else
        const double angle = (double)positions[t] * (pow(s->base, -2.0 * (double)i / (double)rot) * scale);
#endif
        rotate(&x, t, h, s->layout, i, pairs, angle);
      }
  return PECHECK_OK;
}

/* ---- M-RoPE (Qwen2-VL sections, Qwen3-VL interleaved) ---- */

/* The axis (0 temporal, 1 height, 2 width) whose position turns pair i. */
static int mrope_axis(const pecheck_mrope_spec* s, int64_t i) {
  if (s->assignment == PECHECK_MROPE_SECTIONED) {
    if (i < s->mrope_section[0]) return 0;
    return i < s->mrope_section[0] + s->mrope_section[1] ? 1 : 2;
  }
  if (i % 3 == 1 && i < 3 * (int64_t)s->mrope_section[1]) return 1;
  if (i % 3 == 2 && i < 3 * (int64_t)s->mrope_section[2]) return 2;
  return 0;
}

static pecheck_status mrope_apply(const pecheck_host* host, const pecheck_mrope_spec* s, const int64_t* positions,
                                  pecheck_tensor x) {
  if (x.rank != 3 || x.shape[2] != s->head_dim) {
    if (host->set_message) host->set_message("x must be (n, heads, head_dim)");
    return PECHECK_INVALID;
  }
  const int64_t n = x.shape[0], pairs = s->head_dim / 2;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < x.shape[1]; ++h)
      for (int64_t i = 0; i < pairs; ++i) {
        const int64_t pos = positions[mrope_axis(s, i) * n + t]; /* position_ids (3, n) */
        const double angle = (double)pos * pow(s->base, -2.0 * (double)i / (double)s->head_dim);
        rotate(&x, t, h, s->layout, i, pairs, angle);
      }
  return PECHECK_OK;
}

/* ---- the descriptor ---- */

static const pecheck_plugin kPlugin = {
    .abi_version = PLANT_ABI_VERSION,
#ifdef V1_FIRST_DESCRIPTOR
    .struct_size = PECHECK_PLUGIN_V1_MIN_SIZE,
#else
    .struct_size = sizeof(pecheck_plugin),
#endif
    .name = "example-c-rope-sinusoidal",
    .dtypes = (1u << PECHECK_F32) | (1u << PECHECK_BF16) | (1u << PECHECK_F16),
    .conventions = (1u << PECHECK_OP_ROPE_APPLY) | (1u << PECHECK_OP_SINUSOIDAL_TABLE) | (1u << PECHECK_OP_MROPE_APPLY),
    .sinusoidal_table = sinusoidal_table,
    .rope_apply = rope_apply,
    .mrope_apply = mrope_apply,
#ifdef DECLARE_FTZ
    .flags = PECHECK_FLAG_FTZ,
#endif
};

#ifdef PLANT_ABORT_ON_LOAD
__attribute__((constructor)) static void abort_on_load(void) { abort(); }
#endif

#ifndef PLANT_NO_ENTRY
__attribute__((visibility("default"))) const pecheck_plugin* pecheck_plugin_v1(void) { return &kPlugin; }
#else
__attribute__((visibility("default"))) const pecheck_plugin* not_a_pecheck_entry(void) { return &kPlugin; }
#endif
