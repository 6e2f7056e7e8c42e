// Mutants of multimodal RoPE (M-RoPE): each a bug found in a public implementation of Qwen2-VL's
// sectioned or Qwen3-VL's interleaved rotary embedding (docs/notes/mrope-bugs.md has the reports).
#include "mutants/forwarding_encoder.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

/// alibaba/MNN PR 4133, vllm-gaudi PR 1437, mlx-node PR 80 (and mlx-vlm PR 576 the other way):
/// the sectioned rule run for an interleaved model, and the reverse.
struct MropeAssignmentSwapped : Forwarding {
  using Forwarding::run;
  MropeAssignmentSwapped() : Forwarding("mutant-mrope-assignment-swapped") {}
  void run(const MropeApply& c) override {
    MropeApply wrong = c;
    wrong.spec.assignment =
        c.spec.assignment == MropeAssignment::sectioned ? MropeAssignment::interleaved : MropeAssignment::sectioned;
    inner_->run(wrong);
  }
};

/// candle PR 3551, mlx-lm PR 1768: mrope_section ignored, every pair turned by the temporal
/// position as 1-D RoPE (height and width never reach the rotation).
struct MropeTemporalOnly : Forwarding {
  using Forwarding::run;
  MropeTemporalOnly() : Forwarding("mutant-mrope-temporal-only") {}
  void run(const MropeApply& c) override {
    c.check();
    inner_->run(RopeApply{c.spec.rope(), c.dtype, c.heads, c.temporal, c.x});
  }
};

/// vLLM PR 42765 (issue 42016), vllm-ascend PR 12820: the M-RoPE kernel pairs (i, i + d/2)
/// whatever the model's layout, so GPT-J-paired models (GLM-4.1V) rotate the wrong dims.
struct MropeAlwaysHalfSplit : Forwarding {
  using Forwarding::run;
  MropeAlwaysHalfSplit() : Forwarding("mutant-mrope-always-half-split") {}
  void run(const MropeApply& c) override {
    MropeApply wrong = c;
    wrong.spec.layout = RopeLayout::half_split;
    inner_->run(wrong);
  }
};

}  // namespace

std::vector<Mutant> mrope_mutants() {
  return {
      {"M-RoPE with the other assignment (sections for an interleaved model, or the reverse)",
       "alibaba/MNN PR 4133, vllm-gaudi PR 1437: Qwen3-VL run with Qwen2.5-VL's sectioned M-RoPE",
       "mrope.agrees_with_reference", make_mutant<MropeAssignmentSwapped>},
      {"M-RoPE as 1-D RoPE on the temporal position", "candle PR 3551, mlx-lm PR 1768: mrope_section ignored",
       "mrope.agrees_with_reference", make_mutant<MropeTemporalOnly>},
      {"M-RoPE pairs always half-split", "vLLM PR 42765: the Triton M-RoPE kernel hard-codes NeoX pairs",
       "mrope.agrees_with_reference", make_mutant<MropeAlwaysHalfSplit>},
  };
}

}  // namespace pecheck::mutants
