// What a failing encoder's output does fit: after rope.agrees_with_reference or
// sinusoidal.agrees_with_reference fails (attention.agrees_with_reference: below), the encoder is called once more on an arange-like set
// of positions and its output fitted as a dump's would be (dumpcheck/convention_fit.hpp), with
// nothing stated. A layout stated wrong, a rotary_dim or base ignored, a scaling rule missing or
// applied twice all fail agreement at position 1 or 2; this says which convention the output
// follows instead, so the user sees the likely cause beside the counterexample.
#pragma once

#include <string>

#include "harness/property.hpp"

namespace pecheck::dumpcheck {

/// For a failed agreement property of RoPE or the sinusoid, one clause naming the convention the
/// encoder's output fits where it is not the one it was called with ("its output fits RoPE
/// interleaved, rotary_dim 64 of 64, base 10000, no scaling; called as rope(layout=half_split,...)"),
/// or that none fits; empty when the output fits the convention called with (the failure is
/// numeric, not a convention), for other properties, and when the encoder declines the probe.
/// A pinned encoder (RunParams::pins) is probed at its one convention; one that honours every
/// spec at three (half-split at base 10000, interleaved with half the dims rotated at base 5e5,
/// linear scaling by 4), and the first whose fit differs is named. Runs the encoder: call it
/// where the failure was found (in the property's child under isolation).
///
/// For a failed attention.agrees_with_reference, the encoder is called at three attention specs
/// (its pinned PE's where pinned; those it declares: a decode chunk with grouped-query heads,
/// partial and linearly scaled RoPE inside, a window with a stated scale), each output read as an
/// attention dump, and the first that meets no contract under the spec it was called with but
/// fits one of the conventions kernels confuse is named (attention_hint: "called as
/// attention(...), the output fits the causal mask aligned top-left ...").
///
/// Any failing RoPE property, where flush-to-zero is not stated (RunParams::ftz) and the dtype
/// holds values below FLT_MIN (f32, bf16), also asks whether the encoder flushes subnormal inputs
/// to zero, and where it does says so and how to state it: a flush is the platform's convention
/// to state, never one pecheck assumes (a kernel that flushes on a platform that does not fails).
std::string convention_hint(const Property& p, Encoder& e, DType dt, const RunParams& rp);

}  // namespace pecheck::dumpcheck
