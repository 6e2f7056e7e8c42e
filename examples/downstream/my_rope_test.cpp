// The whole applicable catalogue (every rope.* property, and whatever else applies, in fp32)
// against my::rope, in a few lines: an adapter to pecheck::Encoder and one macro.
#include "my_rope.hpp"

#include <downstream/gtest.hpp>
#include <impl/rope_frequencies.hpp>
#include <vector>

namespace {

class MyRopeEncoder final : public pecheck::Encoder {
 public:
  std::string name() const override { return "my_rope"; }
  pecheck::Support supports(pecheck::Op op, pecheck::DType dt) const override {
    if (op != pecheck::Op::rope_apply) return {false, "my_rope offers RoPE only"};
    if (dt != pecheck::DType::f32) return {false, "my_rope is fp32 only"};
    return {};
  }
  void rope_apply(const pecheck::RopeSpec& s, pecheck::DType, int heads, std::span<const std::int64_t> pos,
                  std::span<float> x) override {
    pecheck::shapes::rope(s, heads, pos.size(), x.size());
    std::vector<double> inv_freq(static_cast<std::size_t>(s.rotary_dim / 2));
    for (std::size_t p = 0; p < inv_freq.size(); ++p)  // the model's job: pecheck's tables will do
      inv_freq[p] = static_cast<double>(pecheck::angles::scaled_inv_freq(s, static_cast<int>(p)));
    my::rope(
        x.data(), pos.data(), pos.size(),
        {heads, s.head_dim, s.rotary_dim, s.layout == pecheck::RopeLayout::half_split, inv_freq.data(), s.magnitude()});
  }
};

}  // namespace

PECHECK_CATALOGUE(MyRope, std::make_unique<MyRopeEncoder>());
