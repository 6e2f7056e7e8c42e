// Runs one property against one encoder with RapidCheck: draws cases from the property's
// generator, records every measurement, and shrinks a failure to a minimal counterexample.
//
// Theorem files build their generators with RapidCheck's public API (rc::gen) and hand them to
// make_property. The case type is erased there (AnyCase), so the runner itself, RapidCheck's
// property and shrinking machinery, is compiled once in runner.cpp instead of once per theorem
// file; that file is also the only one that reaches into rc::detail (see the note there).
#pragma once

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/generators.hpp"
#include "harness/property.hpp"

namespace pecheck {

/// A case of any family: shared, immutable, and able to render and classify itself.
class AnyCase {
 public:
  template <class Case>
  static AnyCase of(Case c) {
    auto value = std::make_shared<const Case>(std::move(c));
    const void* raw = value.get();
    return AnyCase(
        std::move(value), raw, [](const void* v) { return static_cast<const Case*>(v)->describe(); },
        [](const void* v) { return static_cast<const Case*>(v)->tags(); });
  }
  template <class Case>
  const Case& as() const {
    return *static_cast<const Case*>(raw_);
  }
  std::string describe() const { return describe_(raw_); }
  std::vector<std::string> tags() const { return tags_(raw_); }

 private:
  using Describe = std::string (*)(const void*);
  using Tags = std::vector<std::string> (*)(const void*);
  AnyCase(std::shared_ptr<const void> keep, const void* raw, Describe d, Tags t)
      : keep_(std::move(keep)), raw_(raw), describe_(d), tags_(t) {}
  std::shared_ptr<const void> keep_;
  const void* raw_;
  Describe describe_;
  Tags tags_;
};

/// RapidCheck prints a counterexample through showValue, found by ADL.
inline void showValue(const AnyCase& c, std::ostream& os) { os << c.describe(); }

/// g with its case type erased. A case header used by several theorem files declares the
/// instantiation for its case type extern and its .cpp instantiates it, so that RapidCheck's
/// mapping and shrinking code for that type is compiled once, not once per theorem file.
template <class Case>
rc::Gen<AnyCase> erased(rc::Gen<Case> g) {
  return rc::gen::map(std::move(g), [](Case c) { return AnyCase::of(std::move(c)); });
}

/// The check of one case, its case type erased; it sees the run's parameters.
using AnyCheck = std::function<Outcome(Encoder&, DType, const AnyCase&, const RunParams&)>;

/// Runs the property p (its generator for dt, its check) against enc: a skip when enc does not
/// offer p.op in dt, else RapidCheck over params.cases cases with p's derived seed.
PropertyResult run_property(const Property& p, const rc::Gen<AnyCase>& gen, const AnyCheck& check, Encoder& enc,
                            DType dt, const RunParams& params);

/// Why a drawn case is not one to send to the encoder (outside what it declares), or nothing: the
/// rest of "its cases ...", e.g. "need a sliding window (form 'window'), which ...".
using CaseFilter = std::function<std::optional<std::string>(const AnyCase&)>;

/// run_property over the cases of gen that `refuses` lets through, drawn again until one does (the
/// encoder is sent none of the others). A property none of whose probe cases gets through is a
/// skip that says "not applicable" and why (the reason most of them were refused).
PropertyResult run_property_within(const Property& p, rc::Gen<AnyCase> gen, const CaseFilter& refuses,
                                   const AnyCheck& check, Encoder& enc, DType dt, const RunParams& params);

/// What a theorem file states about itself; the doc page and source path follow from the id.
struct PropertyInfo {
  std::string id, statement;
  Family family;
  Op op;
  std::vector<DType> dtypes = {DType::f32, DType::bf16, DType::f16};
  Direction direction = Direction::at_most;
  bool convention_free = false;           ///< see Property::convention_free
  bool pinnable = false;                  ///< see Property::pinnable
  bool calls_at_case_positions = false;   ///< see Property::calls_at_case_positions
  std::vector<std::string> aliases = {};  ///< see Property::aliases
};

/// The path of a source file from the tree's root: the compiler's path from its last
/// "properties/" on (a theorem file lives in properties/<family>/), or as given.
inline std::string source_path(std::string_view file) {
  const std::size_t at = file.rfind("properties/");
  return std::string(at == std::string_view::npos ? file : file.substr(at));
}

/// A registered property from its info, its case generator and its check; its source is the file
/// that calls this (each theorem file registers its own property). __builtin_FILE, not
/// std::source_location: clang 14 with libstdc++ 12 has no std::source_location.
template <class Case, class GenFn, class CheckFn>
Property make_property(PropertyInfo info, GenFn gen_fn, CheckFn check, const char* caller = __builtin_FILE()) {
  Property p{.id = info.id,
             .statement = std::move(info.statement),
             .doc = "docs/properties/" + info.id + ".md",
             .source = source_path(caller),
             .family = info.family,
             .op = info.op,
             .dtypes = std::move(info.dtypes),
             .direction = info.direction,
             .convention_free = info.convention_free,
             .pinnable = info.pinnable,
             .calls_at_case_positions = info.calls_at_case_positions,
             .aliases = std::move(info.aliases)};
  // A check may take the run's parameters too (a contract it judges by).
  AnyCheck any_check;
  if constexpr (std::is_invocable_v<CheckFn, Encoder&, DType, const Case&, const RunParams&>)
    any_check = [check](Encoder& e, DType dt, const AnyCase& c, const RunParams& rp) {
      return check(e, dt, c.as<Case>(), rp);
    };
  else
    any_check = [check](Encoder& e, DType dt, const AnyCase& c, const RunParams&) {
      return check(e, dt, c.as<Case>());
    };
  p.run = [p, gen_fn, any_check](Encoder& e, DType dt, const RunParams& rp) {
    // Generators are built and run within the ceiling's scope (it lowers gen::position()).
    std::optional<gen::PositionCeiling> ceiling;
    if (rp.max_position > 0) ceiling.emplace(rp.max_position);
    std::optional<gen::FlushSubnormals> flush;  // and the data drawn, for a stated flush-to-zero platform
    if (rp.ftz) flush.emplace();
    if (!rp.pins || !rp.pins->pins(p.op)) return run_property(p, erased<Case>(gen_fn(dt)), any_check, e, dt, rp);
    if constexpr (requires(Case c) { rp.pins->apply(c.spec); }) {
      if (!pinned_skip(p, *rp.pins)) {
        const auto pin = [pins = rp.pins](Case c) {
          if constexpr (requires { pins->apply(c.spec, c.positions); })
            pins->apply(c.spec, c.positions);
          else
            pins->apply(c.spec);
          return c;
        };
        auto pinned = erased<Case>(rc::gen::map(gen_fn(dt), pin));
        // A pin that also bounds what is drawn (an attention function's PE and forms).
        if constexpr (requires(const Case& c) { rp.pins->refuses(c.spec); })
          return run_property_within(
              p, std::move(pinned), [pins = rp.pins](const AnyCase& c) { return pins->refuses(c.as<Case>().spec); },
              any_check, e, dt, rp);
        return run_property(p, std::move(pinned), any_check, e, dt, rp);
      }
    }
    throw std::logic_error(p.id + " cannot check this pinned encoder: " + pinned_skip(p, *rp.pins).value_or(""));
  };
  return p;
}

}  // namespace pecheck
