// One constructor per theorem file; registry.cpp lists them in catalogue order.
#pragma once

#include "harness/property.hpp"

namespace pecheck::props {

Property sinusoidal_agrees_with_reference();
Property sinusoidal_shift_linearity();
Property sinusoidal_offset_inner_product();
Property sinusoidal_bounds();
Property sinusoidal_layout_permutation();
Property sinusoidal_injectivity();
Property sinusoidal2d_agrees_with_reference();
Property learned_agrees_with_reference();
Property shaw_agrees_with_reference();
Property t5_agrees_with_reference();
Property t5_bucket_laws();
Property rope_agrees_with_reference();
Property rope_relative();
Property mrope_agrees_with_reference();
Property mrope_relative();
Property rope_composition();
Property rope_orthogonal();
Property rope_inverse();
Property rope_layout_conjugacy();
Property rope_offset_invariance();
Property rope_nan_parity();
Property rope_linear_scaling();
Property rope_ntk_base();
Property rope_scaled_frequency_bounds();
Property rope_stateless();
Property rope_inf_parity();
Property rope2d_agrees_with_reference();
Property rope2d_relative();
Property relative_bias_2d_agrees_with_reference();
Property relative_bias_2d_translation_invariance();
Property relative_bias_2d_offset_injectivity();
Property alibi_agrees_with_reference();
Property alibi_slopes();
Property alibi_causal_shift_equivalence();
Property attention_agrees_with_reference();
Property attention_permutation_equivariance();
Property attention_order_sensitivity();
Property attention_translation_invariance();
Property attention_causal_future_independence();
Property attention_convex_combination();
Property attention_determinism();
Property attention_kv_permutation_invariance();
Property attention_gqa_repeat_equivalence();
Property attention_window_limits();
Property attention_tile_edges();
Property attention_call_sequence();
Property rope_call_sequence();
Property sinusoidal_call_sequence();
Property attention_decode_equivalence();
Property attention_batch_invariance();
Property attention_nan_parity();
Property attention_inf_parity();

}  // namespace pecheck::props
