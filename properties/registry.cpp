#include "properties/registry.hpp"

#include <stdexcept>

#include "properties/catalogue.hpp"

namespace pecheck {

const std::vector<Property>& opt_in_registry() {
  static const std::vector<Property> opt_in = [] {
    std::vector<Property> v{props::attention_batch_invariance()};
    for (Property& p : v) p.opt_in = true;
    return v;
  }();
  return opt_in;
}

const std::vector<Property>& property_registry() {
  static const std::vector<Property> registry = {
      props::sinusoidal_agrees_with_reference(),
      props::sinusoidal_shift_linearity(),
      props::sinusoidal_offset_inner_product(),
      props::sinusoidal_bounds(),
      props::sinusoidal_call_sequence(),
      props::sinusoidal_layout_permutation(),
      props::sinusoidal_injectivity(),
      props::sinusoidal2d_agrees_with_reference(),
      props::learned_agrees_with_reference(),
      props::shaw_agrees_with_reference(),
      props::t5_agrees_with_reference(),
      props::t5_bucket_laws(),
      props::rope_agrees_with_reference(),
      props::rope_relative(),
      props::rope_composition(),
      props::rope_orthogonal(),
      props::rope_inverse(),
      props::rope_layout_conjugacy(),
      props::rope_offset_invariance(),
      props::rope_nan_parity(),
      props::rope_linear_scaling(),
      props::rope_ntk_base(),
      props::rope_scaled_frequency_bounds(),
      props::rope_stateless(),
      props::rope_call_sequence(),
      props::rope_inf_parity(),
      props::rope2d_agrees_with_reference(),
      props::rope2d_relative(),
      props::relative_bias_2d_agrees_with_reference(),
      props::relative_bias_2d_translation_invariance(),
      props::relative_bias_2d_offset_injectivity(),
      props::mrope_agrees_with_reference(),
      props::mrope_relative(),
      props::alibi_agrees_with_reference(),
      props::alibi_slopes(),
      props::alibi_causal_shift_equivalence(),
      props::attention_agrees_with_reference(),
      props::attention_tile_edges(),
      props::attention_permutation_equivariance(),
      props::attention_order_sensitivity(),
      props::attention_translation_invariance(),
      props::attention_causal_future_independence(),
      props::attention_convex_combination(),
      props::attention_determinism(),
      props::attention_call_sequence(),
      props::attention_kv_permutation_invariance(),
      props::attention_gqa_repeat_equivalence(),
      props::attention_window_limits(),
      props::attention_decode_equivalence(),
      props::attention_nan_parity(),
      props::attention_inf_parity(),
  };
  return registry;
}

const Property& registered_property(const std::string& id) {
  for (const auto* all : {&property_registry(), &opt_in_registry()})
    for (const Property& p : *all)
      if (p.id == id) return p;
  throw std::invalid_argument("no property " + id);
}

}  // namespace pecheck
