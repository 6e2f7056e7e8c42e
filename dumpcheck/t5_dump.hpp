// T5 relative-bias dumps: the bucket table (num_buckets, heads), as HF's relative_attention_bias
// weight, and the bias it gave (heads, n, n), as HF's compute_bias. The bucketing (bidirectional
// or causal, max_distance) is read from the data unless stated: every setting models use is
// tried, and one is named only when it alone explains every entry.
#pragma once

#include <optional>
#include <string>

#include "dumpcheck/agreement.hpp"
#include "dumpcheck/dump_read.hpp"

namespace pecheck::dumpcheck {

/// Reads family "t5": arrays "table", "bias" ((heads, n, n) or (1, heads, n, n)), "positions"
/// (n); convention {"bidirectional": bool, "max_distance": int}, each optional.
void load_t5(const read::Json& manifest, read::ArrayReader& r, Dump& d);

struct T5Reading {
  std::optional<T5Spec> spec;  ///< the bucketing that explains every entry, if exactly one does
  std::string text;            ///< "T5 bidirectional, 32 buckets, max_distance 128 (read)", or why not
};
T5Reading read_t5(const Dump& d);

/// t5.agrees_with_reference: every entry is table[bucket(p_j - p_i), h] bit for bit (the
/// neighbouring bucket accepted where fp32's log may land there), filed by distance.
Measurement t5_agreement(const Dump& d, const T5Spec& s);

}  // namespace pecheck::dumpcheck
