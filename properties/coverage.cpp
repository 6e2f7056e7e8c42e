#include "properties/coverage.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "properties/registry.hpp"

namespace pecheck {

std::vector<std::string> coverage_forms(Op op, bool pinned) {
  // Far positions: where fp32 and bf16 angles break (2^20 and up) and the last one, 2^24 - 1.
  const std::vector<std::string> far = {"pos=0", "pos>=2^20", "pos=2^24-1"};
  std::vector<std::string> forms;
  switch (op) {
    case Op::rope_apply:
      if (!pinned)
        forms = {"interleaved",         "half_split",   "partial",        "scaling:linear",  "scaling:ntk",
                 "scaling:dynamic_ntk", "scaling:yarn", "scaling:llama3", "scaling:longrope"};
      forms.insert(forms.end(), far.begin(), far.end());
      return forms;
    case Op::attention:
      forms = {"causal",       "full",         "grouped-query", "window",          "queries < keys",
               "stated scale", "large logits", "n > 128",       "ragged last tile"};
      if (!pinned)
        for (AttentionPE pe : {AttentionPE::none, AttentionPE::sinusoidal, AttentionPE::rope, AttentionPE::alibi,
                               AttentionPE::shaw, AttentionPE::t5})
          forms.emplace_back(pe_name(pe));
      return forms;
    case Op::sinusoidal_table:
    case Op::mrope_apply:
    case Op::rope2d_apply:
    case Op::sinusoidal2d_table:
      return far;
    case Op::t5_bias:
      return {"bidirectional", "causal"};
    case Op::relative_bias_2d:
      return pinned ? std::vector<std::string>{"whole window"}
                    : std::vector<std::string>{"square window", "non-square window", "class token", "whole window"};
    default:
      return {};
  }
}

std::vector<CoverageGap> coverage_gaps(const std::vector<PropertyResult>& results, bool pinned) {
  struct Seen {
    CoverageGap gap;
    std::set<std::string> tags;
  };
  std::vector<Seen> seen;
  for (const PropertyResult& r : results) {
    if (r.verdict != Verdict::pass && r.verdict != Verdict::fail) continue;
    Op op;
    try {
      op = registered_property(r.property).op;
    } catch (const std::invalid_argument&) {
      continue;  // a row of no registered property (a plugin's own check) has no forms to count
    }
    auto it = std::find_if(seen.begin(), seen.end(),
                           [&](const Seen& s) { return s.gap.encoder == r.encoder && s.gap.op == op; });
    if (it == seen.end()) it = seen.insert(seen.end(), Seen{CoverageGap{r.encoder, op, {}, 0}, {}});
    it->gap.cases += r.cases;
    for (const auto& [tag, count] : r.distribution)
      if (count > 0) it->tags.insert(tag);
  }
  std::vector<CoverageGap> gaps;
  for (Seen& s : seen) {
    const std::vector<std::string> forms = coverage_forms(s.gap.op, pinned);
    if (forms.empty()) continue;
    for (const std::string& f : forms)
      if (!s.tags.contains(f)) s.gap.never.push_back(f);
    gaps.push_back(std::move(s.gap));
  }
  return gaps;
}

std::vector<std::string> coverage_lines(const std::vector<CoverageGap>& gaps) {
  std::vector<std::string> lines;
  for (const CoverageGap& g : gaps) {
    const std::string head = fmt::format("coverage on {} ({}, {} cases)", g.encoder, op_name(g.op), g.cases);
    lines.push_back(g.never.empty() ? fmt::format("{}: every form drawn", head)
                                    : fmt::format("{}: never exercised: {}", head, fmt::join(g.never, ", ")));
  }
  return lines;
}

}  // namespace pecheck
