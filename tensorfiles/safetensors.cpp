#include "tensorfiles/safetensors.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "tensorfiles/detail.hpp"

namespace pecheck::tensorfiles {

namespace {

using detail::fail;
using detail::quote_text;
using nlohmann::json;

/// The reference implementation's cap: a header this large is an attack, not a model.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

struct Entry {
  std::string name;
  ElementType type;
  std::vector<std::int64_t> shape;
  std::uint64_t begin, end;
};

/// Parses the JSON header. nlohmann keeps the last of duplicate keys silently, so duplicates are
/// caught on the way; nesting deeper than the format's is cut short before it is built.
json parse_header(std::string_view text, std::string_view name) {
  std::vector<std::set<std::string>> open_objects;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= 3) fail(name, "header JSON nests deeper than the format allows");
        if (event == json::parse_event_t::object_start) open_objects.emplace_back();
        break;
      case json::parse_event_t::object_end:
        open_objects.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open_objects.back().insert(parsed.get<std::string>()).second)
          fail(name, "duplicate key {} in header", quote_text(parsed.get<std::string>()));
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check);
  } catch (const json::exception& e) {
    fail(name, "header is not valid JSON: {}", e.what());
  }
}

ElementType dtype_of(const std::string& dtype, std::string_view name, const std::string& tensor) {
  static constexpr std::pair<std::string_view, ElementType> kKnown[] = {
      {"F16", ElementType::f16}, {"BF16", ElementType::bf16}, {"F32", ElementType::f32},
      {"F64", ElementType::f64}, {"I32", ElementType::i32},   {"I64", ElementType::i64}};
  for (const auto& [text, type] : kKnown)
    if (text == dtype) return type;
  fail(name, "tensor {}: unsupported dtype {} (supported: F16, BF16, F32, F64, I32, I64)", quote_text(tensor),
       quote_text(dtype));
}

const json& field(const json& info, const char* key, std::string_view name, const std::string& tensor) {
  const auto it = info.find(key);
  if (it == info.end()) fail(name, "tensor {}: no '{}' field", quote_text(tensor), key);
  return *it;
}

/// A non-negative JSON integer (nlohmann stores those as number_unsigned), up to `max`.
std::uint64_t count_value(const json& v, std::string_view what, std::uint64_t max, std::string_view name,
                          const std::string& tensor) {
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= max) return v.get<std::uint64_t>();
  const char* why = v.is_number_unsigned() ? "too large" : v.is_number_integer() ? "negative" : "not an integer";
  fail(name, "tensor {}: {} {} is {}", quote_text(tensor), what, quote_text(v.dump()), why);
}

Entry entry_of(const std::string& tensor, const json& info, std::uint64_t buffer_size, std::string_view name) {
  if (!info.is_object()) fail(name, "tensor {}: entry is not a JSON object", quote_text(tensor));
  const json& dtype = field(info, "dtype", name, tensor);
  if (!dtype.is_string()) fail(name, "tensor {}: dtype is not a string", quote_text(tensor));
  Entry e{.name = tensor, .type = dtype_of(dtype.get<std::string>(), name, tensor)};

  const json& shape = field(info, "shape", name, tensor);
  if (!shape.is_array()) fail(name, "tensor {}: shape is not an array", quote_text(tensor));
  if (shape.size() > detail::kMaxDims)
    fail(name, "tensor {}: shape has more than {} dims", quote_text(tensor), detail::kMaxDims);
  for (const json& d : shape)
    e.shape.push_back(static_cast<std::int64_t>(count_value(d, "dimension", INT64_MAX, name, tensor)));

  const json& offsets = field(info, "data_offsets", name, tensor);
  if (!offsets.is_array() || offsets.size() != 2)
    fail(name, "tensor {}: data_offsets is not [begin, end]", quote_text(tensor));
  e.begin = count_value(offsets[0], "offset", UINT64_MAX, name, tensor);
  e.end = count_value(offsets[1], "offset", UINT64_MAX, name, tensor);

  const std::optional<std::uint64_t> count = detail::element_count(e.shape);
  std::uint64_t need = 0;
  if (!count || __builtin_mul_overflow(*count, element_size(e.type), &need))
    fail(name, "tensor {}: shape {} is too large: its byte count overflows 64 bits", quote_text(tensor),
         detail::shape_text(e.shape));
  if (e.end < e.begin)
    fail(name, "tensor {}: data_offsets [{}, {}] end before they begin", quote_text(tensor), e.begin, e.end);
  if (e.end > buffer_size)
    fail(name, "tensor {}: data_offsets [{}, {}] run past the end of the {}-byte data buffer", quote_text(tensor),
         e.begin, e.end, buffer_size);
  if (e.end - e.begin != need)
    fail(name, "tensor {}: data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}", quote_text(tensor),
         e.begin, e.end, e.end - e.begin, detail::shape_text(e.shape), element_type_name(e.type), need);
  return e;
}

/// The format requires the tensors to tile the buffer: sorted by offset, each starts where the
/// previous one ended, and the last ends at the end of the file.
void check_tiling(std::vector<Entry> entries, std::uint64_t buffer_size, std::string_view name) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  std::uint64_t at = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < at)
      fail(name, "tensors {} and {} overlap in the data buffer", quote_text(prev->name), quote_text(e.name));
    if (e.begin > at) fail(name, "hole in the data buffer: bytes [{}, {}) belong to no tensor", at, e.begin);
    at = e.end;
    prev = &e;
  }
  if (at != buffer_size) fail(name, "hole in the data buffer: bytes [{}, {}) belong to no tensor", at, buffer_size);
}

}  // namespace

std::vector<Array> read_safetensors(std::span<const std::byte> bytes, std::string_view name) {
  if (bytes.size() < 8) fail(name, "truncated: {} bytes, too short for the 8-byte header size", bytes.size());
  const auto header_size = detail::load_le<std::uint64_t>(bytes.data());
  if (header_size > bytes.size() - 8)
    fail(name, "header size {} runs past the end of the file ({} bytes)", header_size, bytes.size());
  if (header_size > kMaxHeaderBytes)
    fail(name, "header size {} is over the {}-byte limit", header_size, kMaxHeaderBytes);
  const json header =
      parse_header(std::string_view(reinterpret_cast<const char*>(bytes.data()) + 8, header_size), name);
  if (!header.is_object()) fail(name, "header is not a JSON object");

  const std::span<const std::byte> buffer = bytes.subspan(8 + header_size);
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key != "__metadata__") {
      entries.push_back(entry_of(key, value, buffer.size(), name));
      continue;
    }
    if (!value.is_object()) fail(name, "__metadata__ is not a JSON object");
    for (const auto& [k, v] : value.items())
      if (!v.is_string()) fail(name, "__metadata__ value for {} is not a string", quote_text(k));
  }
  check_tiling(entries, buffer.size(), name);

  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  std::vector<Array> out;
  out.reserve(entries.size());
  for (Entry& e : entries) {
    Array& a = out.emplace_back(Array{.name = std::move(e.name), .type = e.type, .shape = std::move(e.shape)});
    detail::decode(buffer.subspan(e.begin, e.end - e.begin), e.type, false, a);
  }
  return out;
}

std::vector<Array> read_safetensors_file(const std::string& path) {
  const std::vector<std::byte> bytes = detail::read_file(path, std::uint64_t{8} << 30);
  return read_safetensors(bytes, path);
}

}  // namespace pecheck::tensorfiles
