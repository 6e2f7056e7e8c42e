// pecheck._core.rope_cos_sin: a RoPE convention's exact cos and sin at given positions, which
// pecheck/cos_sin.py hands to a function that takes a precomputed cos/sin cache (transformers'
// apply_rotary_pos_emb, flash-attention's apply_rotary_emb, Liger's, vLLM's cos_sin_cache) in
// the layout it expects, so that the function's rotation is checked as a RoPE.
#pragma once

#include <nanobind/nanobind.h>

namespace pecheck::python {

namespace nb = nanobind;

void bind_cos_sin(nb::module_& m);

}  // namespace pecheck::python
