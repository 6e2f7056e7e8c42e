// ALiBi dumps: what an encoder's linear position bias was, read and measured. Two forms are
// accepted: the catalogue's bias tensor (heads, n, n) = -m_h |p_i - p_j|, -inf where causally
// masked; and BLOOM's key bias (heads, n) = m_h p_j (build_alibi_tensor, added to every query's
// scores, which softmax makes the same as the causal form). The slopes are read from the data
// head by head and compared with the paper's rule for that many heads.
#pragma once

#include <string>
#include <vector>

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/dump_read.hpp"

namespace pecheck::dumpcheck {

/// Reads family "alibi": arrays "bias" ((heads, n, n) or (1, heads, n, n)) or "key_bias"
/// ((heads, n), (heads, 1, n) or (batch x heads, 1, n) with batch 1), and "positions" (n).
void load_alibi(const read::Json& manifest, read::ArrayReader& r, Dump& d);

/// Each head's slope, by least squares over its entries (the masked ones left out).
std::vector<double> read_alibi_slopes(const Dump& d);

/// alibi.agrees_with_reference: every entry against the paper's slopes, per octave of distance.
Measurement alibi_agreement(const Dump& d);
/// alibi.slopes: each head's slope as read (read_alibi_slopes) against the paper's rule (one
/// line per wrong head).
Measurement alibi_slopes_check(const Dump& d, const std::vector<double>& read);

}  // namespace pecheck::dumpcheck
