// The accuracy contracts an encoder meets, strongest first (exact, dtype-trig, fp32-angles for a
// position encoding; exact, rounded-p, dtype-trig, fp32-angles for attention), and the ladder a
// run climbs down when none is asked for: per dtype, agreement under each contract until one
// holds; every other law is then
// judged under that one (each has a bound derived under every contract), the laws comparing calls
// below the contract's ceiling. One ladder for Python functions (python/src/module.cpp) and
// plugins (cli/validate.cpp); docs/python.md "Verdicts" and docs/plugins.md say what a user reads.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/property.hpp"
#include "harness/tolerance.hpp"

namespace pecheck {

/// The agreement property whose contract governs `op` (rope, mrope, 2-D RoPE, the sinusoid,
/// attention), else empty.
std::string_view contract_agreement_id(Op op);

/// The contracts that govern `op`, strongest first: exact, dtype-trig, fp32-angles for a position
/// encoding; exact, rounded-p, dtype-trig, fp32-angles for attention (each allowing what the ones
/// before it do: P rounded to the dtype, then its RoPE by the position contracts); none for an
/// operation without an agreement law.
std::span<const tol::Contract> contract_ladder(Op op);
/// Whether `c` is on op's ladder: rounded-p governs attention only, the others every laddered one.
bool governs(tol::Contract c, Op op);

/// A contract's name ("exact", "dtype-trig", "fp32-angles", "rounded-p") read back;
/// std::invalid_argument otherwise.
tol::Contract contract_named(const std::string& name);

/// Where a stricter contract than the one met first failed: agreement's shrunk counterexample.
struct ContractMiss {
  tol::Contract contract;
  PropertyResult result;                 ///< agreement's failing result under it
  std::optional<std::int64_t> position;  ///< the position of its worst pair or entry (pos=N in its message)
};

/// One dtype's verdict on the contracts.
struct ContractVerdict {
  Op op = Op::rope_apply;
  DType dtype = DType::f32;
  std::optional<tol::Contract> asked;  ///< the contract the caller named (none: the ladder ran)
  std::optional<tol::Contract> met;    ///< the strongest that agreement holds under
  std::vector<ContractMiss> misses;    ///< the stricter contracts tried, each with where it failed
  std::string note;                    ///< why no contract was judged (agreement did not run)
  bool crashed = false;                ///< agreement crashed: no contract judged, the laws run as exact
  /// False where the laws comparing calls cannot judge the encoder at all (a pin whose rule follows
  /// each call's length, Pins::rope_length_per_call): describe() says so instead of a ceiling.
  bool calls_compared = true;

  /// What every other law is judged under: the one met, else the one asked, else the weakest (exact
  /// after a crash: a crash is no accuracy verdict, and the other laws then report theirs as such).
  tol::Contract judged() const;
  /// The ceiling of the laws comparing calls under judged() (tol::rope_law_ceiling), or of every
  /// attention case (tol::attention_rope_ceiling); 0 for none (or where op has no such law judged
  /// under a contract).
  std::int64_t laws_below() const;
  /// "meets fp32-angles; exact fails at position 7 (rope.agrees_with_reference, 3.1 u > 2 u); ...;
  /// the laws comparing calls judged below position 524288"
  std::string describe() const;
  nlohmann::json json() const;
};

/// `base` under contract c for op: its contract, and for attention under fp32-angles the position
/// ceiling below which its cases are drawn (tol::attention_rope_ceiling). What agreement runs with
/// on the ladder.
RunParams under_contract(Op op, tol::Contract c, RunParams base);

/// Climbs op's ladder for one dtype: `run_agreement(c)` runs agreement under contract c. The
/// agreement result that decided it (the last one run) is left in `decided`. An asked contract
/// that does not govern op is std::invalid_argument.
ContractVerdict climb_contracts(Op op, DType dt, std::optional<tol::Contract> asked,
                                const std::function<PropertyResult(tol::Contract)>& run_agreement,
                                PropertyResult& decided);

/// A law judged under a verdict: the property and its result, which settle_contract may replace,
/// and (where the caller keeps them) the params it ran with, replaced with the result.
struct JudgedLaw {
  const Property* property;
  PropertyResult* result;
  std::optional<RunParams>* params = nullptr;
};

/// After the other laws ran under the contract agreement met: one that failed there may hold under
/// a weaker contract, the sample of agreement having met a stricter one than the encoder does (a
/// bf16 RoPE with fp32 angles, whose storage rounding hides the angle's error in most cases). Steps
/// `v` down the ladder to the strongest contract under which every failed law holds (or is not
/// judged), re-running only those (`rerun`); the first failure under each stricter contract becomes
/// one of its misses. Nothing changes where the contract was asked for, agreement crashed, or no
/// weaker contract makes them hold (a law failing under every contract is the encoder's).
/// Returns whether `v` moved.
bool settle_contract(ContractVerdict& v, const std::vector<JudgedLaw>& laws, RunParams base,
                     const std::function<PropertyResult(const Property&, const RunParams&)>& rerun);

/// The run parameters property `p` is judged with under `v`: its contract, and, for a law that
/// compares calls under a contract whose bounds grow with the position, its ceiling.
RunParams params_under(const Property& p, const ContractVerdict& v, RunParams base);

}  // namespace pecheck
