// Compiled by tests/interface_compile.sh: an adapter that offers RoPE and implements it compiles
// and declines the rest by name; with FORGET, one that offers RoPE and does not implement it must
// not compile (the operation table's promise: no silent default).
#include <memory>

#include "interface/encoder.hpp"

struct Implements final : pecheck::Offering<pecheck::RopeApply> {
  using Offering::run;  // the declined operations' run(), which clang's -Woverloaded-virtual wants kept in view
  std::string name() const override { return "implements"; }
  void run(const pecheck::RopeApply&) override {}
};

#ifdef FORGET
struct Forgets final : pecheck::Offering<pecheck::RopeApply> {
  std::string name() const override { return "forgets"; }
};
#endif

int main() {
  std::unique_ptr<pecheck::Encoder> e = std::make_unique<Implements>();
#ifdef FORGET
  e = std::make_unique<Forgets>();
#endif
  return e->supports(pecheck::Op::rope_apply, pecheck::DType::f32).ok &&
                 !e->supports(pecheck::Op::alibi_bias, pecheck::DType::f32).ok
             ? 0
             : 1;
}
