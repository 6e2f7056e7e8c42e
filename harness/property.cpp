#include "harness/property.hpp"

#include <fnmatch.h>

#include <algorithm>

namespace pecheck {

std::string_view family_name(Family f) {
  switch (f) {
    case Family::sinusoidal:
      return "sinusoidal";
    case Family::sinusoidal2d:
      return "sinusoidal2d";
    case Family::learned:
      return "learned";
    case Family::shaw:
      return "shaw";
    case Family::t5:
      return "t5";
    case Family::rope:
      return "rope";
    case Family::rope2d:
      return "rope2d";
    case Family::mrope:
      return "mrope";
    case Family::alibi:
      return "alibi";
    case Family::attention:
      return "attention";
    case Family::relative_bias_2d:
      return "relative_bias_2d";
  }
  return "?";
}

bool Property::matches(const std::string& glob) const {
  if (fnmatch(glob.c_str(), id.c_str(), 0) == 0) return true;
  return std::any_of(aliases.begin(), aliases.end(),
                     [&](const std::string& a) { return fnmatch(glob.c_str(), a.c_str(), 0) == 0; });
}

bool Property::applies(DType dt) const { return std::find(dtypes.begin(), dtypes.end(), dt) != dtypes.end(); }

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::skip:
      return "skip";
    case Verdict::crash:
      return "crash";
  }
  return "?";
}

std::uint64_t derive_seed(std::uint64_t run_seed, const Property& property, DType dtype) {
  const std::string& property_id = property.seed_key();
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the id and dtype
  for (char c : property_id + "/" + std::string(dtype_name(dtype))) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  std::uint64_t z = run_seed ^ h;  // splitmix64 finaliser: nearby run seeds give unrelated seeds
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::optional<std::string> pinned_skip(const Property& p, const Pins& pins) {
  if (!pins.pins(p.op)) return std::nullopt;
  if (!p.pinnable)
    return p.id + " calls the encoder with specs a pin cannot rewrite (it varies the convention within a case)";
  if (p.op == Op::rope_apply && pins.rope_length_per_call && !p.calls_at_case_positions)
    return p.id +
           " compares calls at different positions, and the pinned rule rescales by each call's own length "
           "(max(position) + 1): the law does not hold across such calls";
  return std::nullopt;
}

PropertyResult skipped_result(const Property& p, std::string encoder, DType dt, std::uint64_t run_seed,
                              std::string reason) {
  PropertyResult r{.property = p.id, .encoder = std::move(encoder), .dtype = dt, .verdict = Verdict::skip};
  r.seed = derive_seed(run_seed, p, dt);
  r.message = std::move(reason);
  return r;
}

}  // namespace pecheck
