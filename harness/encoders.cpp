#include "harness/encoders.hpp"

#include "harness/reference_encoder.hpp"
#include "impl/backend_table.hpp"
#include "impl/cuda/cuda_encoder.hpp"

namespace pecheck {

const std::vector<Backend>& encoders_under_test() {
  static const std::vector<Backend> all = [] {
    std::vector<Backend> v = backend_table();
    v.push_back({"reference-double", "reference/ instantiated with Real = double",
                 [] {
                   return Availability{true, ""};
                 },
                 [] { return make_reference_double_encoder(); }});
    v.push_back({"cuda-emulated",
                 "the cuda backend's kernels run thread by thread on the CPU: its code checked without a GPU",
                 [] {
                   return Availability{true, ""};
                 },
                 [] { return make_cuda_emulated_encoder(); }});
    return v;
  }();
  return all;
}

std::unique_ptr<Encoder> make_encoder(std::string_view name) {
  for (const Backend& b : encoders_under_test())
    if (b.name == name) return b.make();
  return nullptr;
}

}  // namespace pecheck
