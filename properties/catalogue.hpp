// One constructor per theorem file; registry.cpp lists them in catalogue order.
#pragma once

#include "properties/property.hpp"

namespace pecheck::props {

Property sinusoidal_agrees_with_reference();
Property sinusoidal_shift_linearity();
Property sinusoidal_offset_inner_product();
Property sinusoidal_bounds();
Property learned_agrees_with_reference();
Property relative_agrees_with_reference();
Property rope_agrees_with_reference();
Property rope_relative();
Property rope_composition();
Property rope_orthogonal();
Property alibi_agrees_with_reference();
Property attention_agrees_with_reference();
Property attention_permutation_equivariance();
Property attention_order_sensitivity();

}  // namespace pecheck::props
