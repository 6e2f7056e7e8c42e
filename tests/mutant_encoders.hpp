// Deliberately wrong encoders, each a real bug seen in the wild, kept so that the catalogue is
// proven to catch them. Each wraps the scalar backend and breaks one thing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "impl/encoder.hpp"

namespace pecheck::testing {

struct Mutant {
  std::string name;       ///< what is wrong, in a few words
  std::string caught_by;  ///< the property that must fail on it
  std::unique_ptr<Encoder> (*make)();
};

/// The catalogue of mutants (tests/mutant_encoders.cpp), the relational ones included.
const std::vector<Mutant>& mutants();

/// Mutants that only the relational properties (inverse, offset, NaN parity, determinism, the
/// causal mask, translation) are there to catch (tests/mutant_encoders_relational.cpp).
std::vector<Mutant> relational_mutants();

/// The scalar backend behind a forwarding wrapper, for mutants to override one operation.
std::unique_ptr<Encoder> make_forwarding_scalar(std::string name);

}  // namespace pecheck::testing
