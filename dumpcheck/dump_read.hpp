// What the dump readers share (dumpcheck/dump_set.cpp and the per-family loaders): the manifest's
// array references, typed fields, and the checks every array gets. Internal to dumpcheck/.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/dtype.hpp"
#include "tensorfiles/array.hpp"
#include "tensorfiles/npy.hpp"
#include "tensorfiles/safetensors.hpp"

namespace pecheck::dumpcheck::read {

using tensorfiles::FormatError;
using Json = nlohmann::json;
namespace fs = std::filesystem;

inline constexpr std::int64_t kMaxPosition = std::int64_t{1} << 24;

/// Reads the manifest's "arrays" entries: "file.npy", or "file.safetensors:tensor".
class ArrayReader {
 public:
  ArrayReader(std::string dir, DType dt) : dir_(std::move(dir)), dt_(dt) {}

  tensorfiles::Array read(const std::string& role, const std::string& ref) {
    const auto colon = ref.find(".safetensors:");
    if (colon != std::string::npos) {
      const std::string file = ref.substr(0, colon + 12), tensor = ref.substr(colon + 13);
      auto& tensors = safetensors_[file];
      if (tensors.empty()) tensors = tensorfiles::read_safetensors_file(path(file));
      for (const auto& a : tensors)
        if (a.name == tensor) return a;
      throw FormatError(
          fmt::format("{}: {} names tensor '{}', which {} does not hold", manifest(), role, tensor, file));
    }
    const auto hint = dt_ == DType::bf16 ? tensorfiles::StorageHint::bf16 : tensorfiles::StorageHint::none;
    return tensorfiles::read_npy_file(path(ref), hint);
  }
  std::string manifest() const { return (fs::path(dir_) / "manifest.json").string(); }

 private:
  std::string path(const std::string& file) const {
    if (file.empty() || fs::path(file).is_absolute() || file.find("..") != std::string::npos)
      throw FormatError(fmt::format("{}: array file '{}' must be a relative path inside the dump", manifest(), file));
    return (fs::path(dir_) / file).string();
  }
  std::string dir_;
  DType dt_;
  std::map<std::string, std::vector<tensorfiles::Array>> safetensors_;
};

template <class T>
inline T field(const Json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw FormatError(fmt::format("{}: missing \"{}\"", where, key));
  try {
    return j.at(key).get<T>();
  } catch (const Json::exception&) {
    throw FormatError(fmt::format("{}: \"{}\" has the wrong type", where, key));
  }
}

/// The array's values, as doubles; FormatError unless it is floating-point.
std::vector<double> floats(const tensorfiles::Array& a, const std::string& role);
/// Values the declared dtype cannot hold mean the dump is not what the manifest says (fp32 data
/// declared bf16 would be checked against a looser bound than its own).
void require_representable(const std::vector<double>& v, DType dt, const std::string& name);
/// Integer positions (integer-valued floats accepted), `expected` of them, in [0, 2^24).
std::vector<std::int64_t> positions_of(const tensorfiles::Array& a, std::size_t expected);
void require_finite(const std::vector<double>& v, const std::string& what);
/// floats(), then require_finite() and require_representable() in dt: an array of inputs or
/// outputs as every family takes them.
std::vector<double> clean_floats(const tensorfiles::Array& a, const std::string& role, DType dt);

/// A rotation dump's input and output (RoPE, M-RoPE, 2-D RoPE): "x" and "y" of one shape in the
/// manifest's "axes" (default "nhd"), as (b, n, h, d); x finite, both in the declared dtype.
struct Rotation {
  std::vector<double> x, y;
  std::int64_t batch = 1, tokens = 0, heads = 0, head_dim = 0;
  std::string x_name;
};
/// Reads it, head_dim a positive multiple of `pairs_of` times 2 (2: RoPE's pairs; 4: 2-D RoPE's
/// two axes of pairs).
Rotation read_rotation(const Json& manifest, ArrayReader& r, DType dt, int pairs_of);

/// Reorders (b, h, n, d)-like axes into (b, n, h, d) given the manifest's axis letters; dims
/// gets the four extents (1 for a letter the axes lack).
std::vector<double> to_bnhd(const tensorfiles::Array& a, const std::string& axes, std::int64_t dims[4]);
/// The manifest's "axes": each of b, n, h, d at most once, n and d included.
void check_axes(const std::string& axes, const std::string& where);

}  // namespace pecheck::dumpcheck::read
