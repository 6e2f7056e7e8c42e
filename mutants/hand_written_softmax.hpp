// Attention with its softmax written out, for the mutants that break how one query row's weights
// meet the values: a plain loop (mutants_numeric.cpp) or a flash-style online softmax over key
// tiles (mutants_tiles.cpp), each mutant breaking one step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "mutants/forwarding_encoder.hpp"

namespace pecheck::mutants {

/// One query row as a kernel sees it: `visible` keys (the causal or the whole set), `stored` keys
/// in the buffers (n), each key's scaled logit and value row.
struct SoftmaxRow {
  std::size_t visible, stored;
  DType dtype;  ///< the call's storage dtype
  std::function<float(std::size_t)> logit;
  std::function<const float*(std::size_t)> value;
};

/// Plain multi-head attention (no PE, no grouping, no window; any number of queries, the last
/// tokens) with the softmax written out: each mutant replaces how one query row's weights meet
/// the values (`row`); every other case goes to the correct kernel.
struct HandWrittenSoftmax : Forwarding {
  using Forwarding::Forwarding;
  using Forwarding::run;
  /// acc (head_dim) and the sum of the weights of one query row.
  virtual void row(const SoftmaxRow& r, std::vector<float>& acc, float& sum) const = 0;
  void run(const Attention& c) override {
    const auto& [s, dt, p, q, k, v, t, o] = c;
    if (s.pe != AttentionPE::none || s.kv_count() != s.heads || s.window > 0) return inner_->run(c);
    c.check();
    const std::size_t n = p.size(), H = static_cast<std::size_t>(s.heads), d = static_cast<std::size_t>(s.head_dim),
                      off = s.query_offset(n);
    const float scale = static_cast<float>(s.effective_scale());
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < s.query_count(n); ++i) {  // query row i: token off + i
        const auto logit = [&, &q = q, &k = k](std::size_t j) {
          float dot = 0;
          for (std::size_t e = 0; e < d; ++e) dot += q[(i * H + h) * d + e] * k[(j * H + h) * d + e];
          return scale * dot;
        };
        const auto value = [&, &v = v](std::size_t j) { return v.data() + (j * H + h) * d; };
        std::vector<float> acc(d, 0.0f);
        float sum = 0;
        row({s.causal ? off + i + 1 : n, n, dt, logit, value}, acc, sum);
        for (std::size_t e = 0; e < d; ++e) o[(i * H + h) * d + e] = round_to(dt, acc[e] / sum);
      }
  }
};

/// FlashAttention-2's forward loop (its Algorithm 1) for one row, over key tiles of `tile_`: each
/// tile's logits, the running max m moved to cover them, acc and sum rescaled by exp(m_old - m),
/// the tile's weights exp(l - m) added. Correct as written; a mutant overrides one hook.
struct TiledOnlineSoftmax : HandWrittenSoftmax {
  TiledOnlineSoftmax(std::string name, std::size_t tile) : HandWrittenSoftmax(std::move(name)), tile_(tile) {}
  void row(const SoftmaxRow& r, std::vector<float>& acc, float& sum) const override {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t start = 0; start < r.visible; start += tile_) {
      const std::size_t end = tile_end(start, r);
      std::vector<float> l(end - start);
      std::vector<const float*> vals(end - start);
      for (std::size_t j = start; j < end; ++j) {
        // Past the buffer a kernel that does not mask reads zero-filled rows: logit 0, value 0.
        l[j - start] = j < r.stored ? r.logit(j) : 0.0f;
        vals[j - start] = j < r.stored ? r.value(j) : nullptr;
      }
      const float m_new = std::max(m, *std::max_element(l.begin(), l.end()));
      if (rescales()) {
        const float factor = std::exp(m - m_new);  // exp(-inf) = 0 before the first tile
        sum *= factor;
        for (float& a : acc) a *= factor;
      }
      m = m_new;
      for (std::size_t j = 0; j < l.size(); ++j) {
        const float w = std::exp(l[j] - m), p = p_at_v(w, r.dtype);
        sum += w;  // the running sum from the unrounded weights, as FlashAttention-2 keeps it
        if (vals[j])
          for (std::size_t e = 0; e < acc.size(); ++e) acc[e] += p * vals[j][e];
      }
    }
  }

 protected:
  /// One past the last key of the tile that starts at `start`: the visible keys' edge.
  virtual std::size_t tile_end(std::size_t start, const SoftmaxRow& r) const {
    return std::min(start + tile_, r.visible);
  }
  virtual bool rescales() const { return true; }
  /// A weight as it meets V (P of P.V): fp32 here, the exact contract's; a kernel that rounds P
  /// before the product (the rounded-P contract's, or a bug) says how.
  virtual float p_at_v(float w, DType) const { return w; }
  std::size_t tile_;
};

}  // namespace pecheck::mutants
