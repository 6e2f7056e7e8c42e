// Attention dumps: what a fused attention kernel (PyTorch's SDPA, flash-attention, a serving
// engine's paged kernel) read and wrote, checked against the 50-digit reference (the double
// oracle past 32 tokens) within attention.agrees_with_reference's derived bound, under each
// contract of attention's ladder. Q, K, V and the output, with grouped-query heads and fewer
// queries than keys (a decode step) read from the shapes; the mask, window, scale and the position
// encoding inside (none, RoPE, ALiBi) stated by the manifest, never fitted.
#pragma once

#include <string>

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/dump_read.hpp"

namespace pecheck::dumpcheck {

/// Reads family "attention": arrays "q", "k", "v", "out" in the manifest's "axes" (default "nhd";
/// SDPA's (b, h, n, d) is "bhnd"), q and out (queries, heads, head_dim), k and v (n, kv_heads,
/// head_dim) with queries <= n (the last tokens) and kv_heads dividing heads; "positions" (n) or
/// (b, n), optional (0..n-1). Convention: "causal" (false), "window" (Mistral's sliding_window:
/// keys i - window < j <= i) or flash-attention's "window_size" [left, 0], "scale"
/// (1/sqrt(head_dim)), "pe" ("none", "rope", "alibi") and, for RoPE, "rope": the RoPE convention
/// object of a RoPE dump with layout and base stated.
void load_attention(const read::Json& manifest, read::ArrayReader& r, Dump& d);

/// attention.agrees_with_reference on the dump: every output within the derived bound of the exact
/// one, in u max|V'|, filed by the query's position; judged under `judged`, and the strongest
/// contract on attention's ladder every output meets read beside it.
Measurement attention_agreement(const Dump& d, tol::Contract judged);

/// A failing dump read again under the conventions kernels confuse: the default scale or none,
/// PyTorch's top-left causal mask with fewer queries than keys, causal the other way, the window
/// one key wider or narrower, the RoPE inside in the other layout, over every dim (rotary_dim
/// ignored) or without its scaling rule, grouped-query heads mapped round-robin (h % kv_heads)
/// rather than in blocks. The first that the output meets under the weakest contract of the
/// ladder, in words ("the output fits ..."), or "".
std::string attention_hint(const Dump& d);

/// The spec in the report's words: "causal, window 4096, scale 0.125 (stated), RoPE half_split
/// base 10000, 8 query heads over 2 K/V heads".
std::string attention_text(const Dump& d);

/// Whether the dump meets the weakest contract of attention's ladder under its own spec: a
/// failure that does is numeric, not a convention (attention_hint has nothing to add).
bool attention_meets_some_contract(const Dump& d);

}  // namespace pecheck::dumpcheck
