/* A pecheck attention plugin in plain C, written against ABI revision 2: softmax attention with
 * no position encoding or with RoPE (either pair layout, partial rotary, any base, unscaled or
 * linearly scaled, read from the spec's `rope`), causal or full,
 * grouped-query (kv_heads dividing heads), Mistral's sliding window, and decode calls (fewer
 * queries than keys: the query rows are the last tokens, the causal mask aligned bottom-right),
 * in fp32, bf16 and fp16 storage. Rotations, scores, softmax and sums run in double and each
 * output is rounded once into the storage format. The sinusoid, ALiBi and Shaw are not offered:
 * the descriptor's attention_pes declares none and RoPE, so pecheck draws only those cases (a call
 * with another PE would be refused, PECHECK_UNSUPPORTED).
 *
 * Built as-is it is correct. The test suite also builds it with one planted bug at a time:
 *   PLANT_MASK_TOP_LEFT  query row r of a decode call sees keys 0..r (the causal mask aligned
 *                        top-left, as PyTorch's is_causal; pecheck's mutant-attention-mask-top-left)
 *   PLANT_REVISION=N     declares abi_revision N: at 1 (a plugin built before revision 2) pecheck
 *                        sends it no grouped-query, windowed or decode case
 *   PLANT_UNDECLARED     declares no attention PEs (a plugin built before the field): pecheck
 *                        draws every PE and the plugin declines the ones it lacks, case by case
 *   DECLARE_FORMS=MASK   declares PECHECK_FORMS_DECLARED | MASK: the forms beyond the plain call
 *                        it takes (a plugin without, say, decode calls)
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pecheck/encoder_abi.h"
#include "storage.h"

#ifndef PLANT_REVISION
#define PLANT_REVISION 2 /* the revision it implements: T5 inside attention (3) it does not offer */
#endif

static pecheck_status refuse(const pecheck_host* host, pecheck_status status, const char* why) {
  if (host->set_message) host->set_message(why);
  return status;
}

/* A (rows, heads, d) tensor read into doubles, each token's heads rotated by RoPE at that
 * token's position when rope is set: positions[t] for row t. */
static double* rotated_copy(const pecheck_tensor* x, const pecheck_attention_spec* s, const int64_t* positions,
                            int rope) {
  const int64_t rows = x->shape[0], heads = x->shape[1], d = x->shape[2];
  const int64_t rot = rope ? s->rope->rotary_dim : 0, pairs = rot / 2;
  const double scale = rope && s->rope->scaling == PECHECK_SCALING_LINEAR ? 1.0 / s->rope->factor : 1.0;
  double* out = malloc((size_t)(rows * heads * d) * sizeof(double));
  if (!out) return NULL;
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t h = 0; h < heads; ++h) {
      double* row = out + (t * heads + h) * d;
      for (int64_t c = 0; c < d; ++c) row[c] = load(x, t * x->strides[0] + h * x->strides[1] + c * x->strides[2]);
      if (!rope) continue;
      for (int64_t i = 0; i < pairs; ++i) {
        const int64_t a = s->rope->layout == PECHECK_ROPE_INTERLEAVED ? 2 * i : i;
        const int64_t b = s->rope->layout == PECHECK_ROPE_INTERLEAVED ? 2 * i + 1 : i + pairs;
        const double angle = (double)positions[t] * (pow(s->rope->base, -2.0 * (double)i / (double)rot) * scale);
        const double c = cos(angle), sn = sin(angle), x1 = row[a], x2 = row[b];
        row[a] = x1 * c - x2 * sn;
        row[b] = x1 * sn + x2 * c;
      }
    }
  return out;
}

static pecheck_status attention(const pecheck_host* host, const pecheck_attention_spec* s, const int64_t* positions,
                                pecheck_tensor q, pecheck_tensor k, pecheck_tensor v, pecheck_tensor shaw_table,
                                pecheck_tensor out) {
  (void)shaw_table;
  if (s->pe != PECHECK_PE_NONE && s->pe != PECHECK_PE_ROPE)
    return refuse(host, PECHECK_UNSUPPORTED, "only attention without a PE or with RoPE is implemented");
  if (s->pe == PECHECK_PE_ROPE && s->rope->scaling != PECHECK_SCALING_NONE &&
      s->rope->scaling != PECHECK_SCALING_LINEAR)
    return refuse(host, PECHECK_UNSUPPORTED, "only unscaled and linearly scaled RoPE are implemented");
  const int64_t n = k.shape[0], nq = s->queries, H = s->heads, KV = s->kv_heads, d = s->head_dim;
  if (q.rank != 3 || k.rank != 3 || v.rank != 3 || out.rank != 3 || q.shape[0] != nq || out.shape[0] != nq ||
      v.shape[0] != n || nq > n || KV <= 0 || H % KV != 0 || q.shape[1] != H || k.shape[1] != KV || q.shape[2] != d ||
      k.shape[2] != d || (s->pe == PECHECK_PE_ROPE && (s->rope->rotary_dim % 2 != 0 || s->rope->rotary_dim > d)))
    return refuse(host, PECHECK_INVALID, "q, out must be (queries, heads, head_dim), k, v (n, kv_heads, head_dim)");
  const int64_t off = n - nq; /* query row r is token off + r */
  double* qr = rotated_copy(&q, s, positions + off, s->pe == PECHECK_PE_ROPE);
  double* kr = rotated_copy(&k, s, positions, s->pe == PECHECK_PE_ROPE);
  double* w = malloc((size_t)n * sizeof(double));
  if (!qr || !kr || !w) {
    free(qr), free(kr), free(w);
    return refuse(host, PECHECK_ERROR, "out of memory");
  }
  for (int64_t h = 0; h < H; ++h) {
    const int64_t g = h / (H / KV); /* the K/V head of query head h */
    for (int64_t r = 0; r < nq; ++r) {
#ifdef PLANT_MASK_TOP_LEFT
      const int64_t t = r; /* the bug: the mask reads the row's index, not its token */
#else
      const int64_t t = off + r;
#endif
      const int64_t last = s->causal ? t : n - 1;
      const int64_t first = s->window > 0 && t + 1 > s->window ? t + 1 - s->window : 0;
      double m = -INFINITY, sum = 0;
      for (int64_t j = first; j <= last; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += qr[(r * H + h) * d + c] * kr[(j * KV + g) * d + c];
        w[j] = s->scale * dot;
        if (w[j] > m) m = w[j];
      }
      for (int64_t j = first; j <= last; ++j) sum += w[j] = exp(w[j] - m);
      for (int64_t c = 0; c < d; ++c) {
        double acc = 0;
        for (int64_t j = first; j <= last; ++j) /* masked keys never weighed: a NaN there stays out */
          acc += w[j] * load(&v, j * v.strides[0] + g * v.strides[1] + c * v.strides[2]);
        store(&out, r * out.strides[0] + h * out.strides[1] + c * out.strides[2], acc / sum);
      }
    }
  }
  free(qr), free(kr), free(w);
  return PECHECK_OK;
}

static const pecheck_plugin kPlugin = {
    .abi_version = PECHECK_ABI_VERSION,
    .struct_size = sizeof(pecheck_plugin),
    .name = "example-c-attention",
    .dtypes = (1u << PECHECK_F32) | (1u << PECHECK_BF16) | (1u << PECHECK_F16),
    .conventions = 1u << PECHECK_OP_ATTENTION,
    .attention = attention,
    .abi_revision = PLANT_REVISION,
#ifndef PLANT_UNDECLARED
    .attention_pes = (1u << PECHECK_PE_NONE) | (1u << PECHECK_PE_ROPE),
#endif
#ifdef DECLARE_FORMS
    .attention_forms = PECHECK_FORMS_DECLARED | (DECLARE_FORMS),
#endif
};

__attribute__((visibility("default"))) const pecheck_plugin* pecheck_plugin_v1(void) { return &kPlugin; }
