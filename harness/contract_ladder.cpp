#include "harness/contract_ladder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <regex>
#include <span>
#include <stdexcept>

#include "harness/told_apart.hpp"

namespace pecheck {

namespace {

// Each ladder strongest first: a position encoding's arithmetic, and attention's P.
constexpr std::array kEncodingLadder = {tol::Contract::exact, tol::Contract::dtype_trig, tol::Contract::fp32_angles};
// Attention's rungs each allow what the stronger ones do: P rounded to the dtype, then the RoPE
// inside attention with cos/sin stored in the dtype, then with angles formed in fp32.
constexpr std::array kAttentionLadder = {tol::Contract::exact, tol::Contract::rounded_p, tol::Contract::dtype_trig,
                                         tol::Contract::fp32_angles};
constexpr std::array kEveryContract = {tol::Contract::exact, tol::Contract::dtype_trig, tol::Contract::fp32_angles,
                                       tol::Contract::rounded_p};

std::string names_of(std::span<const tol::Contract> contracts) {
  std::string out;
  for (const tol::Contract c : contracts) out += (out.empty() ? "" : ", ") + std::string(tol::contract_name(c));
  return out;
}

// The laws that compare calls, whose bounds under a weaker contract add up the calls' own
// (properties/rope/rope_contract_laws.hpp, properties/absolute/sinusoid_contract_laws.hpp; docs/error-model.md
// rope.relational.contract, sinusoidal.relational.contract).
constexpr std::array<std::string_view, 10> kRelational = {"rope.relative",
                                                          "rope.composition",
                                                          "rope.offset_invariance",
                                                          "rope.linear_scaling",
                                                          "rope.ntk_base",
                                                          "rope2d.relative",
                                                          "mrope.relative",
                                                          "sinusoidal.shift_linearity",
                                                          "sinusoidal.offset_inner_product",
                                                          "sinusoidal.injectivity"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::optional<std::int64_t> position_in(const PropertyResult& r) {
  static const std::regex pos(R"(\bpos=(-?\d+))");
  for (const std::string* text : {&r.message, &r.counterexample}) {
    std::smatch m;
    if (std::regex_search(*text, m, pos)) return std::stoll(m[1].str());
  }
  return std::nullopt;
}

std::string miss_text(const ContractMiss& m) {
  const std::string where = m.position ? fmt::format(" at position {}", *m.position) : "";
  const double e = m.result.counterexample_error_u;
  if (std::isnan(e))
    return fmt::format("{} fails{} ({}: {})", tol::contract_name(m.contract), where, m.result.property,
                       m.result.message.empty() ? "no measurement" : m.result.message);
  // The counterexample's own bound, which its error exceeds (bound_u is the closest case's).
  const double b = std::isnan(m.result.counterexample_bound_u) ? m.result.bound_u : m.result.counterexample_bound_u;
  const auto [error, bound] = told_apart(e, b);
  return fmt::format("{} fails{} ({}, {} u > {} u)", tol::contract_name(m.contract), where, m.result.property, error,
                     bound);
}

}  // namespace

std::string_view contract_agreement_id(Op op) {
  switch (op) {
    case Op::rope_apply:
      return "rope.agrees_with_reference";
    case Op::mrope_apply:
      return "mrope.agrees_with_reference";
    case Op::sinusoidal_table:
      return "sinusoidal.agrees_with_reference";
    case Op::rope2d_apply:
      return "rope2d.agrees_with_reference";
    case Op::attention:
      return "attention.agrees_with_reference";
    default:
      return {};
  }
}

std::span<const tol::Contract> contract_ladder(Op op) {
  if (op == Op::attention) return kAttentionLadder;
  if (contract_agreement_id(op).empty()) return {};
  return kEncodingLadder;
}

bool governs(tol::Contract c, Op op) {
  const auto ladder = contract_ladder(op);
  return std::find(ladder.begin(), ladder.end(), c) != ladder.end();
}

tol::Contract contract_named(const std::string& name) {
  for (auto c : kEveryContract)
    if (tol::contract_name(c) == name) return c;
  throw std::invalid_argument(fmt::format("contract: '{}' is not {}", name, names_of(kEveryContract)));
}

tol::Contract ContractVerdict::judged() const {
  return met.value_or(asked.value_or(crashed ? tol::Contract::exact : contract_ladder(op).back()));
}

std::int64_t ContractVerdict::laws_below() const {
  // Attention's cases, all of them, where its RoPE's fp32 angles leave the output a bound: whatever
  // decided the contract (a skipped agreement leaves the weakest), params_under draws below it.
  if (op == Op::attention) return tol::attention_rope_ceiling(judged());
  if (contract_agreement_id(op).empty() || !note.empty() || !calls_compared) return 0;
  // Every family with an agreement draws its laws' positions below the ceiling: past it an fp32
  // angle's own bound lets any output pass (a vacuous case), in a table or 2-D/M-RoPE as in RoPE.
  return std::min(tol::rope_law_ceiling(judged(), dtype), tol::kMaxPosition);
}

std::string ContractVerdict::describe() const {
  std::string head;
  if (!note.empty())
    head = fmt::format("no contract judged ({})", note);
  else if (!met)
    head = fmt::format("meets no named contract (tried {})",
                       asked ? std::string(tol::contract_name(*asked)) : names_of(contract_ladder(op)));
  else
    head = fmt::format("meets {}", tol::contract_name(*met));
  for (const ContractMiss& m : misses) head += "; " + miss_text(m);
  if (laws_below())
    head += op == Op::attention ? fmt::format("; its cases drawn below position {}", laws_below())
                                : fmt::format("; the laws comparing calls judged below position {}", laws_below());
  if (!calls_compared)
    head += "; the laws comparing calls not judged (the pinned rule rescales by each call's own length)";
  return head;
}

nlohmann::json ContractVerdict::json() const {
  auto name = [](std::optional<tol::Contract> c) {
    return c ? nlohmann::json(std::string(tol::contract_name(*c))) : nlohmann::json();
  };
  nlohmann::json j = {{"dtype", dtype_name(dtype)},        {"met", name(met)}, {"asked", name(asked)},
                      {"misses", nlohmann::json::array()}, {"note", note},     {"describe", describe()}};
  const std::int64_t top = laws_below();
  j["laws_below"] = top ? nlohmann::json(top) : nlohmann::json();
  for (const ContractMiss& m : misses) {
    const double e = m.result.counterexample_error_u;
    j["misses"].push_back(
        {{"contract", tol::contract_name(m.contract)},
         {"property", m.result.property},
         {"position", m.position ? nlohmann::json(*m.position) : nlohmann::json()},
         {"error_u", std::isnan(e) ? nlohmann::json() : nlohmann::json(e)},
         {"bound_u", std::isnan(m.result.counterexample_bound_u) ? m.result.bound_u : m.result.counterexample_bound_u},
         {"counterexample", m.result.counterexample},
         {"property_seed", m.result.seed}});
  }
  return j;
}

ContractVerdict climb_contracts(Op op, DType dt, std::optional<tol::Contract> asked,
                                const std::function<PropertyResult(tol::Contract)>& run_agreement,
                                PropertyResult& decided) {
  if (asked && !governs(*asked, op))
    throw std::invalid_argument(fmt::format("contract: '{}' does not govern {} (its contracts: {})",
                                            tol::contract_name(*asked), op_name(op), names_of(contract_ladder(op))));
  ContractVerdict v{.op = op, .dtype = dt, .asked = asked};
  const auto ladder = contract_ladder(op);
  const std::vector<tol::Contract> tried =
      asked ? std::vector{*asked} : std::vector<tol::Contract>(ladder.begin(), ladder.end());
  for (tol::Contract c : tried) {
    decided = run_agreement(c);
    if (decided.verdict == Verdict::skip) {  // declined or not applicable: no contract judged
      v.note = fmt::format("{} did not run: {}", decided.property, decided.message);
      break;
    }
    if (decided.verdict == Verdict::crash) {  // no accuracy verdict: a weaker contract would crash again
      v.note = fmt::format("{} crashed: {}", decided.property, decided.message);
      v.crashed = true;
      break;
    }
    if (decided.verdict == Verdict::pass) {
      v.met = c;
      break;
    }
    v.misses.push_back({c, decided, position_in(decided)});
  }
  return v;
}

RunParams under_contract(Op op, tol::Contract c, RunParams base) {
  base.contract = c;
  if (const std::int64_t top = op == Op::attention ? tol::attention_rope_ceiling(c) : 0)
    base.max_position = base.max_position ? std::min(base.max_position, top) : top;
  return base;
}

RunParams params_under(const Property& p, const ContractVerdict& v, RunParams base) {
  if (p.op == Op::attention) return under_contract(p.op, v.judged(), base);
  base.contract = v.judged();
  if (const std::int64_t top = v.laws_below(); top && listed(kRelational, p.id))
    base.max_position = base.max_position ? std::min(base.max_position, top) : top;
  return base;
}

bool settle_contract(ContractVerdict& v, const std::vector<JudgedLaw>& laws, RunParams base,
                     const std::function<PropertyResult(const Property&, const RunParams&)>& rerun) {
  if (!v.met || v.asked || v.crashed) return false;
  const auto holds = [](const PropertyResult& r) { return r.verdict != Verdict::fail && r.verdict != Verdict::crash; };
  std::vector<JudgedLaw> failed;
  for (const JudgedLaw& law : laws)
    if (law.result->verdict == Verdict::fail && law.property->id != contract_agreement_id(v.op)) failed.push_back(law);
  if (failed.empty()) return false;
  // Where each stricter contract failed: the met one's first failed law, then each weaker one tried.
  std::vector<ContractMiss> misses = {{*v.met, *failed.front().result, position_in(*failed.front().result)}};
  const auto ladder = contract_ladder(v.op);
  const auto at = std::find(ladder.begin(), ladder.end(), *v.met);
  for (auto weaker = std::next(at); weaker != ladder.end(); ++weaker) {
    ContractVerdict under = v;
    under.met = *weaker;
    std::vector<std::pair<PropertyResult, RunParams>> again;  // each failed law under `weaker`
    for (const JudgedLaw& law : failed) {
      const RunParams params = params_under(*law.property, under, base);
      again.emplace_back(rerun(*law.property, params), params);
      if (!holds(again.back().first)) break;
    }
    if (!holds(again.back().first)) {
      misses.push_back({*weaker, again.back().first, position_in(again.back().first)});
      continue;
    }
    v.misses.insert(v.misses.end(), misses.begin(), misses.end());
    v.met = *weaker;
    for (std::size_t i = 0; i < failed.size(); ++i) {
      *failed[i].result = std::move(again[i].first);
      if (failed[i].params) *failed[i].params = again[i].second;
    }
    return true;
  }
  return false;
}

}  // namespace pecheck
