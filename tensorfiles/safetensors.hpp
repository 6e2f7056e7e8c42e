// safetensors files: an 8-byte little-endian header size, a JSON header, then one byte buffer.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensorfiles/array.hpp"

namespace pecheck::tensorfiles {

/// Decodes every tensor of a safetensors file held in memory, sorted by name (Array::name is the
/// tensor's name). Supported dtypes: F16, BF16, F32, F64, I32, I64. The tensors must tile the
/// byte buffer exactly (no overlap, no hole, nothing after), as the format requires. `name` names
/// the file in error messages. Throws FormatError on anything malformed or unsupported.
std::vector<Array> read_safetensors(std::span<const std::byte> bytes, std::string_view name);

/// read_safetensors on a file's contents (FormatError when it cannot be read or is over 8 GiB).
std::vector<Array> read_safetensors_file(const std::string& path);

}  // namespace pecheck::tensorfiles
