#include "properties/catalogue.hpp"

namespace pecheck {

const std::vector<Property>& property_registry() {
  static const std::vector<Property> registry = {
      props::sinusoidal_agrees_with_reference(),
      props::sinusoidal_shift_linearity(),
      props::sinusoidal_offset_inner_product(),
      props::sinusoidal_bounds(),
      props::learned_agrees_with_reference(),
      props::relative_agrees_with_reference(),
      props::rope_agrees_with_reference(),
      props::rope_relative(),
      props::rope_composition(),
      props::rope_orthogonal(),
      props::alibi_agrees_with_reference(),
      props::attention_agrees_with_reference(),
      props::attention_permutation_equivariance(),
      props::attention_order_sensitivity(),
  };
  return registry;
}

}  // namespace pecheck
