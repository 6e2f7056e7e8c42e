// The whole applicable catalogue (every rope.* property, and whatever else applies, in fp32)
// against my::rope, in a few lines: an adapter to pecheck::Encoder and one macro. Offering<...>
// names the operations the adapter implements and declines every other one of the table.
#include "my_rope.hpp"

#include <downstream/gtest.hpp>
#include <impl/rope_frequencies.hpp>
#include <vector>

namespace {

class MyRopeEncoder final : public pecheck::Offering<pecheck::RopeApply> {
 public:
  using Offering::run;  // the declined operations' overloads, kept in view (clang's -Woverloaded-virtual)
  std::string name() const override { return "my_rope"; }
  pecheck::Support supports(pecheck::Op op, pecheck::DType dt) const override {
    if (op != pecheck::Op::rope_apply) return {false, "my_rope offers RoPE only"};
    if (dt != pecheck::DType::f32) return {false, "my_rope is fp32 only"};
    return {};
  }
  void run(const pecheck::RopeApply& c) override {
    c.check();
    const pecheck::RopeSpec& s = c.spec;
    std::vector<double> inv_freq(static_cast<std::size_t>(s.rotary_dim / 2));
    for (std::size_t p = 0; p < inv_freq.size(); ++p)  // the model's job: pecheck's tables will do
      inv_freq[p] = static_cast<double>(pecheck::angles::scaled_inv_freq(s, static_cast<int>(p)));
    my::rope(c.x.data(), c.positions.data(), c.positions.size(),
             {c.heads, s.head_dim, s.rotary_dim, s.layout == pecheck::RopeLayout::half_split, inv_freq.data(),
              s.magnitude()});
  }
};

}  // namespace

PECHECK_CATALOGUE(MyRope, std::make_unique<MyRopeEncoder>());
