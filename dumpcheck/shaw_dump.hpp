// Shaw relative-position score dumps (Shaw et al. 2018, the seeds' relative attention): q and k
// (n, head_dim), the relative table r (2K + 1, head_dim), whose row count gives K, and the scores
// (n, n) = scale (q_i . k_j + q_i . r[clamp(p_j - p_i, -K, K) + K]), scale 1 unless stated.
#pragma once

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/dump_read.hpp"

namespace pecheck::dumpcheck {

/// Reads family "shaw": arrays "q", "k" ((n, head_dim) or (1, n, head_dim)), "table"
/// ((2K + 1, head_dim)), "scores" ((n, n) or (1, n, n)), "positions" (n); convention {"scale":
/// number}, optional (1: the catalogue's unscaled scores; an attention layer's 1/sqrt(head_dim)).
void load_shaw(const read::Json& manifest, read::ArrayReader& r, Dump& d);

/// shaw.agrees_with_reference: every score within one fp32 dot product of length 2 head_dim and
/// one rounding of the exact value, relative to scale sum_c |q_c| (|k_c| + |r_c|), filed by
/// distance |p_j - p_i|. `reversed` reads the table at p_i - p_j instead (a sign bug's reading).
Measurement shaw_agreement(const Dump& d, bool reversed = false);

}  // namespace pecheck::dumpcheck
