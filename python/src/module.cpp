// pecheck._core: the catalogue against a Python callable. check() in pecheck/__init__.py prepares
// the arguments; run() here selects the properties of one operation, runs each property x dtype in
// a forked child (harness/isolation.hpp, with CPython's fork hooks) or in this process, and
// returns the results as Python objects in the fields of docs/json-schema.md (to_python.hpp).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cos_sin.hpp"
#include "dumpcheck/convention_hint.hpp"
#include "harness/contract_ladder.hpp"
#include "harness/isolation.hpp"
#include "harness/result_json.hpp"
#include "harness/tolerance.hpp"
#include "pins.hpp"
#include "properties/coverage.hpp"
#include "properties/registry.hpp"
#include "python_encoder.hpp"
#include "to_python.hpp"

namespace nb = nanobind;

namespace pecheck::python {

namespace {

using Json = nlohmann::json;

Op op_named(const std::string& name) {
  for (std::size_t i = 0; i < kOperationCount; ++i)
    if (op_name(static_cast<Op>(i)) == name) return static_cast<Op>(i);
  throw std::invalid_argument("op: unknown operation '" + name + "'");
}

DType dtype_named(const std::string& name) {
  for (DType dt : kAllDTypes)
    if (dtype_name(dt) == name) return dt;
  throw std::invalid_argument("dtypes: unknown dtype '" + name + "' (f32, bf16, f16)");
}

/// The attention forms named by check()'s forms=.
AttentionForms forms_named(const std::vector<std::string>& names) {
  AttentionForms forms;
  for (const std::string& n : names) {
    const auto f = form_named(n);
    if (!f) {
      std::string known;
      for (AttentionForm k : kAttentionForms) known += (known.empty() ? "" : ", ") + std::string(form_name(k));
      throw std::invalid_argument("forms: unknown form '" + n + "' (known: " + known + ")");
    }
    forms.add(*f);
  }
  return forms;
}

/// How the function relates to the conventions of its operation.
enum class Mode { opaque, pinned, spec };

Mode mode_named(const std::string& name) {
  if (name == "opaque") return Mode::opaque;
  if (name == "pinned") return Mode::pinned;
  if (name == "spec") return Mode::spec;
  throw std::invalid_argument("mode: '" + name + "' is not opaque, pinned or spec");
}

/// Why p cannot check a function in this mode, or nothing.
std::optional<std::string> skip_reason(const Property& p, Mode mode, const Pins* pins, const std::string& name) {
  if (mode == Mode::opaque && !p.convention_free)
    return name + " states no convention (convention=None): only convention-free properties apply";
  if (mode == Mode::pinned && pins)
    if (auto why = pinned_skip(p, *pins)) return *why + "; " + name + " is pinned to one convention";
  return std::nullopt;
}

/// CPython's own fork protocol (what os.fork() does): its locks, thread states and at-fork hooks.
ForkHooks python_fork_hooks() {
  return {.before = [] { PyOS_BeforeFork(); },
          .after_in_parent = [] { PyOS_AfterFork_Parent(); },
          .after_in_child = [] { PyOS_AfterFork_Child(); }};
}

/// The catalogue of `op` against a Python function: {"results": [...], "contracts": [...]}, the
/// rows in the fields of docs/json-schema.md, as Python objects.
/// contract: a name, or empty: where a contract governs op (contract_agreement_id) and a convention
/// is stated, the ladder finds the strongest met per dtype (harness/contract_ladder.hpp).
nb::object run(nb::object invoke, std::string name, const std::string& op_text, const std::string& mode_text,
               const std::string& convention, const std::vector<std::string>& dtype_names, int cases,
               std::uint64_t seed, const std::string& glob, bool isolate, double timeout_s, std::int64_t max_position,
               const std::string& contract, const std::vector<std::string>& form_names, bool ftz, int batch) {
  const Op op = op_named(op_text);
  const Mode mode = mode_named(mode_text);
  std::vector<DType> dtypes;
  for (const auto& d : dtype_names) dtypes.push_back(dtype_named(d));
  if (dtypes.empty()) throw std::invalid_argument("dtypes: empty");
  if (cases < 1) throw std::invalid_argument("cases: must be >= 1");
  if (!(timeout_s > 0)) throw std::invalid_argument("timeout: must be > 0");
  if (max_position != 0 && (max_position < 1 || max_position > tol::kMaxPosition))
    throw std::invalid_argument("max_position: must be in [1, 2^24 - 1] (or None)");
  const std::optional<tol::Contract> asked =
      contract.empty() ? std::nullopt : std::optional(pecheck::contract_named(contract));
  RunParams params{.seed = seed, .cases = cases, .per_rule = true, .max_position = max_position};
  params.ftz = ftz;
  params.explain_failure = dumpcheck::convention_hint;  // a failing agreement names what fn's output fits
  params.contract = asked.value_or(tol::Contract::exact);
  if (mode == Mode::pinned) {
    Json c;
    try {
      c = Json::parse(convention);
    } catch (const Json::exception& e) {
      throw std::invalid_argument(std::string("convention: not JSON: ") + e.what());
    }
    params.pins = pins_from_convention(op, c);
  }
  if (batch < 0) throw std::invalid_argument("batch: must be >= 0 (0: each call as it comes)");
  // transformers' dynamic NTK takes its base from max(position_ids) + 1 over the whole call: the
  // rows of a batched call would share one length, and each case is drawn for its own.
  if (batch > 0 && params.pins && params.pins->rope_length_per_call)
    throw std::invalid_argument(
        "batch: rope_type 'dynamic' takes its scaling from the longest position of the whole call, which the "
        "cases of a batched call would share: check it unbatched");
  Subject subject{invoke, name, op, dtypes, mode == Mode::spec};
  subject.batch = batch;
  if (op == Op::attention) {
    // Every attention case is drawn within the forms the function declares (harness/pins.hpp).
    auto pins = std::make_shared<Pins>(params.pins ? *params.pins : Pins{});
    pins->attention_forms = forms_named(form_names);
    subject.forms = pins->attention_forms_taken();
    params.pins = std::move(pins);
  } else if (!form_names.empty()) {
    throw std::invalid_argument("forms: only attention takes forms (" + op_text + " has one call form)");
  }
  const Backend backend{name, "a Python function",
                        [] {
                          return Availability{true, ""};
                        },
                        [subject] { return std::make_unique<PythonEncoder>(subject); }};
  auto run_one = [&](const Property& p, DType dt, const RunParams& rp) {
    PropertyResult r;
    const auto start = std::chrono::steady_clock::now();
    if (isolate) {
      r = run_isolated(p, backend, dt, rp, {.timeout_s = timeout_s, .hooks = python_fork_hooks()});
    } else {
      PythonEncoder encoder(subject);
      r = p.run(encoder, dt, rp);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  std::vector<const Property*> selected;
  const Property* agreement = nullptr;
  for (const Property& p : property_registry()) {
    if (p.op != op) continue;
    if (p.id == contract_agreement_id(op) && mode != Mode::opaque) agreement = &p;
    if (p.matches(glob)) selected.push_back(&p);
  }
  if (selected.empty()) throw std::invalid_argument("properties: '" + glob + "' matches no property of " + op_text);
  Json results = Json::array(), verdicts = Json::array();
  std::vector<PropertyResult> judged;  // every row, for what the run exercised (properties/coverage.hpp)
  for (DType dt : dtypes) {
    // The contract ladder first (its agreement result is the row, where the glob selects it).
    std::optional<ContractVerdict> verdict;
    PropertyResult decided;
    if (agreement && agreement->applies(dt)) {
      verdict = climb_contracts(
          op, dt, asked, [&](tol::Contract c) { return run_one(*agreement, dt, under_contract(op, c, params)); },
          decided);
      verdict->calls_compared = !(params.pins && params.pins->rope_length_per_call);
    }
    struct Row {
      const Property* property;
      PropertyResult result;
      std::optional<RunParams> params;  // always set; optional as JudgedLaw (settle_contract) takes it
    };
    std::vector<Row> rows;
    for (const Property* p : selected) {
      if (!p->applies(dt)) continue;
      PropertyResult r;
      const RunParams rp = verdict ? params_under(*p, *verdict, params) : params;
      if (p == agreement && verdict) {
        r = decided;
      } else if (auto skip = skip_reason(*p, mode, params.pins.get(), name)) {
        r = skipped_result(*p, name, dt, seed, *skip);
      } else {
        r = run_one(*p, dt, rp);
      }
      rows.push_back({p, std::move(r), rp});
    }
    if (verdict) {                  // a law failing under the contract agreement met may hold under a weaker one
      std::vector<JudgedLaw> laws;  // a row settle_contract re-runs states the contract it ran under
      for (Row& row : rows) laws.push_back({row.property, &row.result, &row.params});
      settle_contract(*verdict, laws, params,
                      [&](const Property& p, const RunParams& rp) { return run_one(p, dt, rp); });
      verdicts.push_back(verdict->json());
    }
    for (const Row& row : rows) {
      Json j = result_json(row.result, row.property->direction);
      j.update({{"statement", row.property->statement},
                {"doc", row.property->doc},
                {"seconds", row.result.seconds},
                {"contract", tol::contract_name(row.params->contract)},
                {"max_position", row.params->max_position}});
      results.push_back(std::move(j));
      judged.push_back(row.result);
    }
  }
  // One encoder, one operation: one gap at most (none when no case ran).
  Json coverage = Json::object();
  for (const CoverageGap& g : coverage_gaps(judged, mode == Mode::pinned))
    coverage = {{"line", coverage_lines({g}).front()}, {"never_exercised", g.never}};
  return to_python(Json{{"results", results}, {"contracts", verdicts}, {"coverage", coverage}});
}

/// For python/bench/overhead.py: `repeats` RoPE calls of (tokens, heads, head_dim) through the
/// encoder (marshalling, the invoker, the copy back), in this process; returns their wall time.
double time_rope_calls(nb::object invoke, const std::string& dtype, int tokens, int heads, int head_dim, int repeats) {
  if (tokens < 1 || heads < 1 || head_dim < 2 || head_dim % 2 || repeats < 1)
    throw std::invalid_argument("time_rope_calls: sizes and repeats must be positive, head_dim even");
  const DType dt = dtype_named(dtype);
  PythonEncoder encoder({invoke, "bench", Op::rope_apply, {dt}, false});
  const RopeSpec spec{.head_dim = head_dim, .rotary_dim = head_dim, .layout = RopeLayout::half_split};
  std::vector<std::int64_t> positions(static_cast<std::size_t>(tokens));
  for (std::size_t t = 0; t < positions.size(); ++t) positions[t] = static_cast<std::int64_t>(t);
  const std::vector<float> x0(positions.size() * static_cast<std::size_t>(heads * head_dim), 0.5f);
  std::vector<float> x;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    x = x0;
    encoder.run(RopeApply{spec, dt, heads, positions, x});
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

nb::object catalogue() {
  Json out = Json::array();
  for (const Property& p : property_registry()) {
    Json dts = Json::array();
    for (DType dt : p.dtypes) dts.push_back(dtype_name(dt));
    out.push_back({{"id", p.id},
                   {"op", op_name(p.op)},
                   {"statement", p.statement},
                   {"doc", p.doc},
                   {"convention_free", p.convention_free},
                   {"pinnable", p.pinnable},
                   {"calls_at_case_positions", p.calls_at_case_positions},
                   {"dtypes", dts}});
  }
  return to_python(out);
}

}  // namespace

}  // namespace pecheck::python

NB_MODULE(_core, m) {
  m.doc() = "pecheck's catalogue against a Python callable (use pecheck.check)";
  m.def("run", &pecheck::python::run, nb::arg("invoke"), nb::arg("name"), nb::arg("op"), nb::arg("mode"),
        nb::arg("convention"), nb::arg("dtypes"), nb::arg("cases"), nb::arg("seed"), nb::arg("properties"),
        nb::arg("isolate"), nb::arg("timeout_s"), nb::arg("max_position"), nb::arg("contract"), nb::arg("forms"),
        nb::arg("ftz"), nb::arg("batch"),
        nb::sig("def run(invoke: object, name: str, op: str, mode: str, convention: str, dtypes: "
                "collections.abc.Sequence[str], cases: int, seed: int, properties: str, isolate: bool, timeout_s: "
                "float, max_position: int, contract: str, forms: collections.abc.Sequence[str], ftz: bool, batch: int) "
                "-> dict[str, typing.Any]"));
  m.def("catalogue", &pecheck::python::catalogue, nb::sig("def catalogue() -> list[dict[str, typing.Any]]"));
  pecheck::python::bind_cos_sin(m);
  m.def("time_rope_calls", &pecheck::python::time_rope_calls, nb::arg("invoke"), nb::arg("dtype"), nb::arg("tokens"),
        nb::arg("heads"), nb::arg("head_dim"), nb::arg("repeats"));
}
