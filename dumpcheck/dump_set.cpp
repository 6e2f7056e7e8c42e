#include "dumpcheck/dump_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "dumpcheck/alibi_dump.hpp"
#include "dumpcheck/attention_dump.hpp"
#include "dumpcheck/dump_read.hpp"
#include "dumpcheck/mrope_dump.hpp"
#include "dumpcheck/rope2d_dump.hpp"
#include "dumpcheck/rope_manifest.hpp"
#include "dumpcheck/shaw_dump.hpp"
#include "dumpcheck/t5_dump.hpp"
#include "tensorfiles/npy.hpp"
#include "tensorfiles/safetensors.hpp"

namespace pecheck::dumpcheck {

namespace fs = std::filesystem;
using tensorfiles::FormatError;
using Json = nlohmann::json;

namespace {

using namespace read;

void load_rope(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  Rotation rot = read_rotation(m, r, d.dtype, 2);
  d.x = std::move(rot.x), d.y = std::move(rot.y);
  const std::int64_t batch = rot.batch, n = rot.tokens;
  d.heads = static_cast<int>(rot.heads);
  d.width = static_cast<int>(rot.head_dim);
  const tensorfiles::Array pa = r.read("positions", field<std::string>(arrays, "positions", where));
  // positions (n) are shared by the batch; (b, n) gives each sequence its own. M-RoPE's are HF's
  // position_ids, one such stream per axis: (3, n) or (3, b, n).
  const bool mrope = d.kind == Kind::mrope;
  const std::size_t streams = mrope ? 3 : 1, rank = pa.shape.size() - (mrope ? 1 : 0);
  if (mrope && (pa.shape.size() < 2 || pa.shape.front() != 3))
    throw FormatError(fmt::format("{}: M-RoPE positions must be (3, n) or (3, batch, n), HF's position_ids", pa.name));
  const bool shared = rank == 1;
  const std::size_t per_stream = static_cast<std::size_t>(shared ? n : batch * n);
  const auto p = positions_of(pa, streams * per_stream);
  for (std::size_t a = 0; a < streams; ++a) {
    std::vector<std::int64_t>& out = mrope ? d.axes[a] : d.positions;
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t t = 0; t < n; ++t)
        out.push_back(p[a * per_stream + static_cast<std::size_t>(shared ? t : b * n + t)]);
  }
  if (mrope) d.positions = d.axes[kMropeTemporal];
  if (m.contains("convention")) {
    const std::string at = where + ": convention";
    if (mrope)
      read_mrope_convention(m.at("convention"), d, at);
    else
      d.rope = read_rope_convention(m.at("convention"), d.width, at);
  }
}

void load_sinusoidal(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  const tensorfiles::Array ta = r.read("table", field<std::string>(arrays, "table", where));
  if (ta.shape.size() != 2 && !(ta.shape.size() == 3 && ta.shape[0] == 1))
    throw FormatError(fmt::format("{}: the table must be (n, d_model) or (1, n, d_model)", ta.name));
  const std::int64_t n = ta.shape[ta.shape.size() - 2], w = ta.shape.back();
  if (n == 0 || w < 2 || w % 2 != 0)
    throw FormatError(fmt::format("{}: table of {} x {}: need rows and an even d_model", ta.name, n, w));
  d.y = floats(ta, "table");
  require_representable(d.y, d.dtype, ta.name);
  d.width = static_cast<int>(w);
  if (arrays.contains("positions")) {
    d.positions =
        positions_of(r.read("positions", field<std::string>(arrays, "positions", where)), static_cast<std::size_t>(n));
  } else {  // a table buffer holds positions 0..n-1
    for (std::int64_t t = 0; t < n; ++t) d.positions.push_back(t);
  }
  if (m.contains("convention")) {
    const Json& c = m.at("convention");
    if (c.contains("layout")) {
      const auto l = field<std::string>(c, "layout", where);
      if (l != "interleaved" && l != "concatenated")
        throw FormatError(fmt::format("{}: sinusoid layout must be interleaved or concatenated, got '{}'", where, l));
      d.sinusoidal.layout = l == "interleaved" ? SinusoidalLayout::interleaved : SinusoidalLayout::concatenated;
    }
    if (c.contains("frequencies")) {
      const auto f = field<std::string>(c, "frequencies", where);
      if (f != "vaswani" && f != "fairseq")
        throw FormatError(fmt::format("{}: frequencies must be vaswani or fairseq, got '{}'", where, f));
      d.sinusoidal.frequencies = f == "vaswani" ? SinusoidalFrequencies::vaswani : SinusoidalFrequencies::fairseq;
    }
    if (c.contains("base")) {
      d.sinusoidal.base = field<double>(c, "base", where);
      if (!(*d.sinusoidal.base > 1)) throw FormatError(fmt::format("{}: convention: base must be > 1", where));
    }
  }
}

void load_learned(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  const tensorfiles::Array ta = r.read("table", field<std::string>(arrays, "table", where));
  const tensorfiles::Array xa = r.read("x", field<std::string>(arrays, "x", where));
  const tensorfiles::Array ya = r.read("y", field<std::string>(arrays, "y", where));
  if (ta.shape.size() != 2 || ta.shape[0] == 0 || ta.shape[1] == 0)
    throw FormatError(fmt::format("{}: the table must be (max_len, d_model), non-empty", ta.name));
  // x and y: (n, d) or (1, n, d), as a module's (batch, seq, d) with one sequence.
  auto rows = [&](const tensorfiles::Array& a) {
    if (!(a.shape.size() == 2 || (a.shape.size() == 3 && a.shape[0] == 1)) || a.shape.back() != ta.shape[1])
      throw FormatError(
          fmt::format("{}: must be (n, d_model) or (1, n, d_model) with d_model {}", a.name, ta.shape[1]));
    return a.shape[a.shape.size() - 2];
  };
  const std::int64_t n = rows(xa);
  if (rows(ya) != n) throw FormatError(fmt::format("{}: x and y differ in shape", where));
  d.table = clean_floats(ta, "table", d.dtype);
  d.x = clean_floats(xa, "x", d.dtype);
  d.y = floats(ya, "y");  // an output may be non-finite: the check says so, the reader does not refuse it
  require_representable(d.y, d.dtype, ya.name);
  d.max_len = static_cast<int>(ta.shape[0]);
  d.width = static_cast<int>(ta.shape[1]);
  d.positions =
      positions_of(r.read("positions", field<std::string>(arrays, "positions", where)), static_cast<std::size_t>(n));
  if (m.contains("past_table")) {
    const Json& p = m.at("past_table");
    d.refused_past_table = field<bool>(p, "refused", where + " past_table");
    d.refusal = p.value("message", std::string());
    std::replace(d.refusal.begin(), d.refusal.end(), '\n', ' ');
  }
}

}  // namespace

std::vector<std::string> find_dumps(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw FormatError(fmt::format("dump '{}': no such directory", dir));
  if (fs::exists(fs::path(dir) / "manifest.json")) return {dir};
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && fs::exists(e.path() / "manifest.json")) out.push_back(e.path().string());
  if (out.empty()) throw FormatError(fmt::format("dump '{}': no manifest.json in it or in its subdirectories", dir));
  std::sort(out.begin(), out.end());
  return out;
}

Dump load_dump(const std::string& dir) {
  const std::string where = (fs::path(dir) / "manifest.json").string();
  std::ifstream in(where);
  if (!in) throw FormatError(fmt::format("{}: cannot be read", where));
  Json m;
  try {
    m = Json::parse(in);
  } catch (const Json::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw FormatError(fmt::format("{}: not valid JSON: {}", where, what));
  }
  if (!m.is_object()) throw FormatError(fmt::format("{}: must be a JSON object", where));
  Dump d;
  d.dir = dir;
  d.encoder = field<std::string>(m, "encoder", where);
  const auto family = field<std::string>(m, "family", where);
  try {
    d.dtype = parse_dtype(field<std::string>(m, "dtype", where));
  } catch (const std::invalid_argument& e) {
    throw FormatError(fmt::format("{}: {}", where, e.what()));
  }
  ArrayReader reader(dir, d.dtype);
  if (family == "rope") {
    d.kind = Kind::rope;
    load_rope(m, reader, d);
  } else if (family == "sinusoidal") {
    d.kind = Kind::sinusoidal;
    load_sinusoidal(m, reader, d);
  } else if (family == "learned") {
    d.kind = Kind::learned;
    load_learned(m, reader, d);
  } else if (family == "alibi") {
    d.kind = Kind::alibi;
    load_alibi(m, reader, d);
  } else if (family == "t5") {
    d.kind = Kind::t5;
    load_t5(m, reader, d);
  } else if (family == "mrope") {
    d.kind = Kind::mrope;
    load_rope(m, reader, d);
  } else if (family == "shaw") {
    d.kind = Kind::shaw;
    load_shaw(m, reader, d);
  } else if (family == "rope2d") {
    d.kind = Kind::rope2d;
    load_rope2d(m, reader, d);
  } else if (family == "attention") {
    d.kind = Kind::attention;
    load_attention(m, reader, d);
  } else {
    throw FormatError(
        fmt::format("{}: family '{}' cannot be validated from a dump yet (rope, mrope, sinusoidal, learned, alibi, t5, "
                    "shaw, attention)",
                    where, family));
  }
  if (m.contains("ftz")) {
    if (!m.at("ftz").is_boolean()) throw FormatError(fmt::format("{}: \"ftz\" must be true or false", where));
    d.ftz = m.at("ftz").get<bool>();
  }
  if (d.ftz)  // the inputs as the flushing platform read them
    for (std::vector<double>* input : {&d.x, &d.k, &d.v})
      for (double& v : *input)
        if (std::fabs(v) < FLT_MIN) v = std::copysign(0.0, v);
  return d;
}

}  // namespace pecheck::dumpcheck
