// pecheck._core: the catalogue against a Python callable. check() in pecheck/__init__.py prepares
// the arguments; run() here selects the properties of one operation, runs each property x dtype in
// a forked child (harness/isolation.hpp, with CPython's fork hooks) or in this process, and
// returns the results as JSON in the fields of docs/json-schema.md.
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

#include "harness/isolation.hpp"
#include "harness/result_json.hpp"
#include "harness/tolerance.hpp"
#include "pins.hpp"
#include "properties/registry.hpp"
#include "python_encoder.hpp"

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

tol::RopeContract contract_named(const std::string& name) {
  for (auto c : {tol::RopeContract::exact, tol::RopeContract::dtype_trig, tol::RopeContract::fp32_angles})
    if (tol::contract_name(c) == name) return c;
  throw std::invalid_argument("contract: '" + name + "' is not exact, dtype-trig or fp32-angles");
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
  if (mode == Mode::pinned && pins && pins->pins(p.op) && !p.pinnable)
    return p.id + " calls the encoder with specs a pin cannot rewrite (it varies the convention within a case); " +
           name + " is pinned to one";
  return std::nullopt;
}

/// CPython's own fork protocol (what os.fork() does): its locks, thread states and at-fork hooks.
ForkHooks python_fork_hooks() {
  return {.before = [] { PyOS_BeforeFork(); },
          .after_in_parent = [] { PyOS_AfterFork_Parent(); },
          .after_in_child = [] { PyOS_AfterFork_Child(); }};
}

std::string run(nb::object invoke, std::string name, const std::string& op_text, const std::string& mode_text,
                const std::string& convention, const std::vector<std::string>& dtype_names, int cases,
                std::uint64_t seed, const std::string& glob, bool isolate, double timeout_s, std::int64_t max_position,
                const std::string& contract, const std::vector<std::string>& skip_ids) {
  const Op op = op_named(op_text);
  const Mode mode = mode_named(mode_text);
  std::vector<DType> dtypes;
  for (const auto& d : dtype_names) dtypes.push_back(dtype_named(d));
  if (dtypes.empty()) throw std::invalid_argument("dtypes: empty");
  if (cases < 1) throw std::invalid_argument("cases: must be >= 1");
  if (!(timeout_s > 0)) throw std::invalid_argument("timeout: must be > 0");
  if (max_position != 0 && (max_position < 1 || max_position > tol::kMaxPosition))
    throw std::invalid_argument("max_position: must be in [1, 2^24 - 1] (or None)");
  RunParams params{.seed = seed, .cases = cases, .per_rule = true, .max_position = max_position};
  params.rope_contract = contract_named(contract);
  if (mode == Mode::pinned) {
    Json c;
    try {
      c = Json::parse(convention);
    } catch (const Json::exception& e) {
      throw std::invalid_argument(std::string("convention: not JSON: ") + e.what());
    }
    params.pins = pins_from_convention(op, c);
  }
  const Subject subject{invoke, name, op, dtypes, mode == Mode::spec};
  const Backend backend{name, "a Python function",
                        [] {
                          return Availability{true, ""};
                        },
                        [subject] { return std::make_unique<PythonEncoder>(subject); }};
  Json out = Json::array();
  bool any = false;
  for (const Property& p : property_registry()) {
    if (p.op != op || !p.matches(glob)) continue;
    any = true;
    // Properties the caller has already run (the contract ladder's agreement): not run again.
    if (std::find(skip_ids.begin(), skip_ids.end(), p.id) != skip_ids.end()) continue;
    for (DType dt : dtypes) {
      if (!p.applies(dt)) continue;
      PropertyResult r;
      if (auto why = skip_reason(p, mode, params.pins.get(), name)) {
        r = skipped_result(p, name, dt, seed, *why);
      } else {
        const auto start = std::chrono::steady_clock::now();
        if (isolate) {
          r = run_isolated(p, backend, dt, params, {.timeout_s = timeout_s, .hooks = python_fork_hooks()});
        } else {
          PythonEncoder encoder(subject);
          r = p.run(encoder, dt, params);
        }
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      Json row = result_json(r, p.direction);
      row.update({{"statement", p.statement}, {"doc", p.doc}, {"seconds", r.seconds}});
      out.push_back(std::move(row));
    }
  }
  if (!any) throw std::invalid_argument("properties: '" + glob + "' matches no property of " + op_text);
  return out.dump();
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

/// tol::rope_law_ceiling for Python's contract ladder (0: no ceiling).
std::int64_t rope_law_ceiling(const std::string& contract, const std::string& dtype) {
  return tol::rope_law_ceiling(contract_named(contract), dtype_named(dtype));
}

std::string catalogue() {
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
                   {"dtypes", dts}});
  }
  return out.dump();
}

}  // namespace

}  // namespace pecheck::python

NB_MODULE(_core, m) {
  m.doc() = "pecheck's catalogue against a Python callable (use pecheck.check)";
  m.def("run", &pecheck::python::run, nb::arg("invoke"), nb::arg("name"), nb::arg("op"), nb::arg("mode"),
        nb::arg("convention"), nb::arg("dtypes"), nb::arg("cases"), nb::arg("seed"), nb::arg("properties"),
        nb::arg("isolate"), nb::arg("timeout_s"), nb::arg("max_position"), nb::arg("contract"), nb::arg("skip_ids"));
  m.def("catalogue", &pecheck::python::catalogue);
  m.def("rope_law_ceiling", &pecheck::python::rope_law_ceiling, nb::arg("contract"), nb::arg("dtype"));
  m.def("time_rope_calls", &pecheck::python::time_rope_calls, nb::arg("invoke"), nb::arg("dtype"), nb::arg("tokens"),
        nb::arg("heads"), nb::arg("head_dim"), nb::arg("repeats"));
}
