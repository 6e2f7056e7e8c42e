// The spec of a call as JSON, for functions checked with convention="spec": the keys are the
// fields of spec/conventions.hpp, enumerations by name ("interleaved", "half_split", "yarn").
#pragma once

#include <nlohmann/json.hpp>

#include "interface/operations.hpp"

namespace pecheck::python {

nlohmann::json spec_json(const SinusoidalSpec&);
nlohmann::json spec_json(const LearnedSpec&);
nlohmann::json spec_json(const RopeSpec&);
nlohmann::json spec_json(const AlibiSpec&);
nlohmann::json spec_json(const ShawSpec&);
nlohmann::json spec_json(const T5Spec&);
nlohmann::json spec_json(const AttentionSpec&);
nlohmann::json spec_json(const Sinusoidal2dSpec&);
nlohmann::json spec_json(const Rope2dSpec&);
nlohmann::json spec_json(const MropeSpec&);
nlohmann::json spec_json(const RelativeBias2dSpec&);

}  // namespace pecheck::python
