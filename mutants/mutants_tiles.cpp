// Mutants of attention computed over key tiles, as flash kernels compute it: the running max moved
// without rescaling what was accumulated (at tiles of 16, 64 and 256 keys), a ragged last tile read
// past the buffer unmasked, a causal tile taken whole from its first key. Each is exact on a row
// that stays inside one tile, so only cases across tile edges can see it (attention.tile_edges).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "mutants/hand_written_softmax.hpp"
#include "mutants/mutants.hpp"

namespace pecheck::mutants {

namespace {

/// The running max moved at a tile edge, acc and sum left relative to the old one.
struct TileNoRescale : TiledOnlineSoftmax {
  TileNoRescale(std::string name, std::size_t tile) : TiledOnlineSoftmax(std::move(name), tile) {}
  bool rescales() const override { return false; }
};
template <std::size_t Tile>
struct TileNoRescaleAt : TileNoRescale {
  TileNoRescaleAt()
      : TileNoRescale(
            Tile == 64 ? "mutant-attention-tile-no-rescale" : fmt::format("mutant-attention-tile{}-no-rescale", Tile),
            Tile) {}
};

/// The last tile taken whole: its keys past the buffer's end (n) read as zero-filled rows, so
/// each adds exp(0 - m) to the sum and nothing to acc.
struct TileTailUnmasked : TiledOnlineSoftmax {
  TileTailUnmasked() : TiledOnlineSoftmax("mutant-attention-tile-tail-unmasked", 64) {}
  std::size_t tile_end(std::size_t start, const SoftmaxRow& r) const override {
    return r.visible == r.stored ? start + tile_ : std::min(start + tile_, r.visible);
  }
};

/// A causal key tile judged from its first key alone: a tile that starts at or before the query
/// is taken whole, so the keys after the query inside it (and up to n) enter the softmax.
struct TileCausalTakenWhole : TiledOnlineSoftmax {
  TileCausalTakenWhole() : TiledOnlineSoftmax("mutant-attention-tile-causal-taken-whole", 32) {}
  std::size_t tile_end(std::size_t start, const SoftmaxRow& r) const override {
    return std::min(start + tile_, r.stored);
  }
};

}  // namespace

std::vector<Mutant> tile_mutants() {
  const std::string rescale_source =
      "FlashAttention-2 Algorithm 1 without its diag(exp(m_old - m_new)) rescale of O and l; a tutorial flash "
      "kernel's wrong running sum passed its own self-test (PaddleJitLab/CUDATutorial issue 69)";
  return {
      // Only a case longer than one 64-key tile reaches the missing rescale: the long cases of
      // attention.agrees_with_reference (n up to 2049) are there for it.
      {"online softmax not rescaled at a tile edge", rescale_source, "attention.agrees_with_reference",
       make_mutant<TileNoRescaleAt<64>>},
      {"online softmax over 16-key tiles not rescaled", rescale_source + ", at the 16-key tiles of an MMA fragment",
       "attention.tile_edges", make_mutant<TileNoRescaleAt<16>>},
      {"online softmax over 256-key tiles not rescaled", rescale_source + ", at 256-key tiles (a decode split)",
       "attention.tile_edges", make_mutant<TileNoRescaleAt<256>>},
      {"ragged last key tile read unmasked",
       "the keys past n in the last tile zero-filled, not masked to -inf: score 0, weight exp(0) (flashinfer PR "
       "5090: SM100 blk64 output wrong when seqlen_k % 64 != 0; jax issue 27224: the Pallas GPU flash attention "
       "right only at multiples of the block size)",
       "attention.tile_edges", make_mutant<TileTailUnmasked>},
      {"causal key tile taken whole from its first key",
       "a key tile's mask decided from its start offset alone, so a tile straddling the query's edge enters "
       "unmasked (flash-linear-attention PR 1105: DeltaFormer's key tiles across a chunk boundary)",
       "attention.tile_edges", make_mutant<TileCausalTakenWhole>},
  };
}

}  // namespace pecheck::mutants
