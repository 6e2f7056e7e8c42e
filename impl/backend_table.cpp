#include "impl/backend_table.hpp"

#include "impl/scalar/scalar_encoder.hpp"

namespace pecheck {

const std::vector<Backend>& backend_table() {
  static const std::vector<Backend> table = {
      {"scalar", "portable C++: fp32 arithmetic, accurate double angles",
       [] {
         return Availability{true, ""};
       },
       [] { return make_scalar_encoder(); }},
  };
  return table;
}

}  // namespace pecheck
