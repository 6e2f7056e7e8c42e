// pecheck golden: reference inputs and outputs as NPY files (in the requested dtype, correctly
// rounded once, and as float64), with the manifest `validate --dump` reads, so that another
// project's own tests can compare against them.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <type_traits>

#include "cli/commands.hpp"
#include "reference/alibi.hpp"
#include "reference/attention.hpp"
#include "reference/encodings_2d.hpp"
#include "reference/mrope.hpp"
#include "reference/real.hpp"
#include "reference/rope.hpp"
#include "reference/shaw.hpp"
#include "reference/sinusoidal.hpp"
#include "reference/t5.hpp"
#include "tensorfiles/npy.hpp"

namespace pecheck::cli {

namespace fs = std::filesystem;

namespace {

using Real = ref::DefaultReal;
constexpr std::size_t kMaxTokens = 1 << 20;

/// "0:64,100,4096:8192:512": integers and half-open ranges A:B with an optional step.
std::vector<std::int64_t> parse_positions(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    long long a = 0, b = 0, step = 1;
    int used = 0;
    const char* c = item.c_str();
    if (std::sscanf(c, "%lld:%lld:%lld%n", &a, &b, &step, &used) == 3 && used == static_cast<int>(item.size())) {
    } else if (std::sscanf(c, "%lld:%lld%n", &a, &b, &used) == 2 && used == static_cast<int>(item.size())) {
      step = 1;
    } else if (std::sscanf(c, "%lld%n", &a, &used) == 1 && used == static_cast<int>(item.size())) {
      b = a + 1;
    } else {
      throw UsageError(fmt::format("--positions: '{}' is not N, A:B or A:B:STEP", item));
    }
    if (a < 0 || b > (1ll << 24) || a >= b || step < 1)
      throw UsageError(fmt::format("--positions: '{}' must lie in [0, 2^24) with A < B and STEP >= 1", item));
    for (long long p = a; p < b; p += step) {
      out.push_back(p);
      if (out.size() > kMaxTokens) throw UsageError(fmt::format("--positions: more than {} positions", kMaxTokens));
    }
  }
  if (out.empty()) throw UsageError("--positions: no position");
  return out;
}

/// "layout=half_split,rotary_dim=32,base=5e5,linear=4" into key -> value.
std::map<std::string, std::string> parse_convention(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto eq = item.find('=');
    if (item.empty()) continue;
    if (eq == std::string::npos) throw UsageError(fmt::format("--convention: '{}' is not KEY=VALUE", item));
    kv[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return kv;
}

double number(const std::string& key, const std::string& v) {
  try {
    std::size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("--convention: {}={} is not a number", key, v));
}

tensorfiles::ElementType storage(DType dt) {
  return dt == DType::f32    ? tensorfiles::ElementType::f32
         : dt == DType::bf16 ? tensorfiles::ElementType::bf16
                             : tensorfiles::ElementType::f16;
}

tensorfiles::Array array(std::string name, tensorfiles::ElementType t, std::vector<std::int64_t> shape,
                         std::vector<double> v) {
  tensorfiles::Array a;
  a.name = std::move(name);
  a.type = t;
  a.shape = std::move(shape);
  a.values = std::move(v);
  return a;
}

RopeLayout rope_layout(const std::string& layout) {
  if (layout != "interleaved" && layout != "half_split")
    throw UsageError(fmt::format("--convention: layout must be interleaved or half_split, got '{}'", layout));
  return layout == "interleaved" ? RopeLayout::interleaved : RopeLayout::half_split;
}

/// A rotation's files (RoPE, M-RoPE): x and y in the dtype, and as float64 (y exact, rounded once).
void add_rotation(std::vector<tensorfiles::Array>& files, nlohmann::json& arrays, DType dt,
                  const std::vector<std::int64_t>& shape, const std::vector<double>& x, const std::vector<double>& y,
                  const std::vector<double>& y_exact) {
  files.push_back(array("x", storage(dt), shape, x));
  files.push_back(array("x_f64", tensorfiles::ElementType::f64, shape, x));
  files.push_back(array("y", storage(dt), shape, y));
  files.push_back(array("y_f64", tensorfiles::ElementType::f64, shape, y_exact));
  arrays["x"] = "x.npy";
  arrays["y"] = "y.npy";
}

}  // namespace

int golden(const GoldenOptions& g) {
  DType dt;
  try {
    dt = parse_dtype(g.dtype);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const auto positions = parse_positions(g.positions);
  auto kv = parse_convention(g.convention);
  auto take = [&](const char* key, const char* fallback) {
    const auto it = kv.find(key);
    std::string v = it == kv.end() ? fallback : it->second;
    if (it != kv.end()) kv.erase(it);
    return v;
  };
  const std::int64_t n = static_cast<std::int64_t>(positions.size());
  nlohmann::json convention, arrays = {{"positions", "positions.npy"}};
  std::vector<tensorfiles::Array> files;
  tensorfiles::Array pos_array;
  pos_array.name = "positions";
  pos_array.type = tensorfiles::ElementType::i64;
  pos_array.shape = {n};
  pos_array.ints = positions;
  files.push_back(pos_array);
  std::string describe;
  if (g.family == "rope") {
    RopeSpec s{.head_dim = g.dim, .rotary_dim = g.dim};
    s.layout = rope_layout(take("layout", "interleaved"));
    s.rotary_dim = static_cast<int>(number("rotary_dim", take("rotary_dim", std::to_string(g.dim).c_str())));
    s.base = number("base", take("base", "10000"));
    const double factor = number("linear", take("linear", "1"));
    if (factor != 1) s.scaling = {.kind = RopeScalingKind::linear, .factor = factor};
    // HF's rope_scaling, as rope_type=llama3,factor=8,...: written to the manifest verbatim.
    nlohmann::json rope_scaling;
    if (const std::string type = take("rope_type", ""); !type.empty()) {
      const std::map<std::string, RopeScalingKind> kinds = {{"linear", RopeScalingKind::linear},
                                                            {"dynamic", RopeScalingKind::dynamic_ntk},
                                                            {"ntk", RopeScalingKind::ntk},
                                                            {"yarn", RopeScalingKind::yarn},
                                                            {"llama3", RopeScalingKind::llama3}};
      if (!kinds.contains(type) || factor != 1)
        throw UsageError(
            fmt::format("--convention: rope_type '{}' must be one of linear, dynamic, ntk, yarn, llama3, "
                        "without linear=",
                        type));
      RopeScaling& sc = s.scaling;
      sc = {.kind = kinds.at(type), .factor = number("factor", take("factor", "1"))};
      rope_scaling = {{"rope_type", type}, {"factor", sc.factor}};
      auto optional = [&](const char* key, auto& field) {
        if (const std::string v = take(key, ""); !v.empty()) {
          field = static_cast<std::remove_reference_t<decltype(field)>>(number(key, v));
          rope_scaling[key] = field;
        }
      };
      optional("original_max_position_embeddings", sc.original_max_position);
      optional("low_freq_factor", sc.low_freq_factor);
      optional("high_freq_factor", sc.high_freq_factor);
      optional("beta_fast", sc.beta_fast);
      optional("beta_slow", sc.beta_slow);
      if (const std::string v = take("seq_len", ""); !v.empty())  // dynamic NTK's length: not HF config
        sc.seq_len = static_cast<std::int64_t>(number("seq_len", v));
    }
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for rope", kv.begin()->first));
    if (g.heads < 1) throw UsageError(fmt::format("--heads must be >= 1, got {}", g.heads));
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    convention = {{"layout", layout_name(s.layout)}, {"rotary_dim", s.rotary_dim}, {"base", s.base}};
    if (factor != 1) convention["linear_factor"] = factor;
    if (!rope_scaling.is_null()) convention["rope_scaling"] = rope_scaling;
    const std::size_t count =
        static_cast<std::size_t>(n) * static_cast<std::size_t>(g.heads) * static_cast<std::size_t>(g.dim);
    std::mt19937_64 rng(g.seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<double> x(count), y(count), y_exact(count);
    for (double& v : x) v = round_to(dt, uniform(rng));
    std::vector<Real> head(static_cast<std::size_t>(g.dim));
    for (std::size_t base = 0; base < count; base += head.size()) {
      for (std::size_t k = 0; k < head.size(); ++k) head[k] = Real(x[base + k]);
      ref::rope_rotate<Real>(s, positions[base / head.size() / static_cast<std::size_t>(g.heads)], head);
      for (std::size_t k = 0; k < head.size(); ++k) {
        y_exact[base + k] = ref::to_double(head[k]);
        y[base + k] = round_to(
            dt, y_exact[base + k]);  // one rounding of the 50-digit value (double first: exact ties are measure-zero)
      }
    }
    const std::vector<std::int64_t> shape{n, g.heads, g.dim};
    add_rotation(files, arrays, dt, shape, x, y, y_exact);
    describe = s.describe();
  } else if (g.family == "mrope") {
    // Qwen2-VL's positions (its get_rope_index): the text tokens at --positions on every axis, then
    // one image of grid HxW at s = max + 1, patch (i, j) at (s, s + i, s + j).
    MropeSpec s{.head_dim = g.dim};
    s.layout = rope_layout(take("layout", "half_split"));
    const int rotary_dim = static_cast<int>(number("rotary_dim", take("rotary_dim", std::to_string(g.dim).c_str())));
    s.head_dim = rotary_dim;
    s.base = number("base", take("base", "1000000"));
    s.assignment = number("interleaved", take("interleaved", "0")) != 0 ? MropeAssignment::interleaved
                                                                        : MropeAssignment::sectioned;
    int s0 = 0, s1 = 0, s2 = 0, rows = 0, cols = 0, used = 0;
    const std::string section = take("mrope_section", "");
    if (!section.empty() && !(std::sscanf(section.c_str(), "%d/%d/%d%n", &s0, &s1, &s2, &used) == 3 &&
                              used == static_cast<int>(section.size())))
      throw UsageError(fmt::format("--convention: mrope_section must be T/H/W, got '{}'", section));
    if (section.empty()) {  // Qwen2-VL's proportions: a quarter temporal, the rest shared
      s2 = s1 = (rotary_dim / 2 - rotary_dim / 8) / 2;
      s0 = rotary_dim / 2 - s1 - s2;
    }
    s.mrope_section = {s0, s1, s2};
    const std::string grid = take("grid", "4x6");
    if (!(std::sscanf(grid.c_str(), "%dx%d%n", &rows, &cols, &used) == 2 && used == static_cast<int>(grid.size())) ||
        rows < 0 || cols < 0 || rows > 1024 || cols > 1024)
      throw UsageError(fmt::format("--convention: grid must be RxC (0 to 1024 each), got '{}'", grid));
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for mrope", kv.begin()->first));
    if (g.heads < 1) throw UsageError(fmt::format("--heads must be >= 1, got {}", g.heads));
    if (rotary_dim > g.dim || rotary_dim % 2 != 0)
      throw UsageError(fmt::format("--convention: rotary_dim {} must be even and at most --dim {}", rotary_dim, g.dim));
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::array<std::vector<std::int64_t>, 3> axes{positions, positions, positions};
    const std::int64_t start = *std::max_element(positions.begin(), positions.end()) + 1;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        if (start + std::max(i, j) >= (1ll << 24)) throw UsageError("--positions: the image grid passes 2^24");
        axes[0].push_back(start), axes[1].push_back(start + i), axes[2].push_back(start + j);
      }
    const std::int64_t tokens = static_cast<std::int64_t>(axes[0].size());
    const std::size_t hd = static_cast<std::size_t>(g.dim), rot = static_cast<std::size_t>(rotary_dim);
    const std::size_t count = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(g.heads) * hd;
    std::mt19937_64 rng(g.seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<double> x(count), y(count), y_exact(count);
    for (double& v : x) v = round_to(dt, uniform(rng));
    std::vector<Real> head(rot);
    for (std::size_t base = 0; base < count; base += hd) {
      const std::size_t t = base / hd / static_cast<std::size_t>(g.heads);
      for (std::size_t k = 0; k < rot; ++k) head[k] = Real(x[base + k]);
      const std::int64_t pt = axes[0][t], ph = axes[1][t], pw = axes[2][t];
      ref::mrope_apply<Real>(s, 1, {&pt, 1}, {&ph, 1}, {&pw, 1}, head);
      for (std::size_t k = 0; k < hd; ++k) {
        y_exact[base + k] = k < rot ? ref::to_double(head[k]) : x[base + k];
        y[base + k] = round_to(dt, y_exact[base + k]);
      }
    }
    files.front().shape = {3, tokens};
    files.front().ints.clear();
    for (const auto& a : axes) files.front().ints.insert(files.front().ints.end(), a.begin(), a.end());
    const std::vector<std::int64_t> shape{tokens, g.heads, g.dim};
    add_rotation(files, arrays, dt, shape, x, y, y_exact);
    convention = {{"layout", layout_name(s.layout)},
                  {"rotary_dim", rotary_dim},
                  {"rope_theta", s.base},
                  {"mrope_section", s.mrope_section},
                  {"mrope_interleaved", s.assignment == MropeAssignment::interleaved}};
    describe = s.describe();
  } else if (g.family == "sinusoidal") {
    SinusoidalSpec s{.d_model = g.dim};
    const std::string layout = take("layout", "interleaved");
    if (layout != "interleaved" && layout != "concatenated")
      throw UsageError(fmt::format("--convention: layout must be interleaved or concatenated, got '{}'", layout));
    s.layout = layout == "interleaved" ? SinusoidalLayout::interleaved : SinusoidalLayout::concatenated;
    const std::string freq = take("frequencies", "vaswani");
    if (freq != "vaswani" && freq != "fairseq")
      throw UsageError(fmt::format("--convention: frequencies must be vaswani or fairseq, got '{}'", freq));
    s.frequencies = freq == "vaswani" ? SinusoidalFrequencies::vaswani : SinusoidalFrequencies::fairseq;
    s.base = number("base", take("base", "10000"));
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for sinusoidal", kv.begin()->first));
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    convention = {{"layout", layout_name(s.layout)}, {"frequencies", freq}, {"base", s.base}};
    std::vector<double> y, y_exact;
    for (std::int64_t p : positions)
      for (const Real& v : ref::sinusoidal_row<Real>(s, p)) {
        y_exact.push_back(ref::to_double(v));
        y.push_back(round_to(dt, y_exact.back()));
      }
    files.push_back(array("table", storage(dt), {n, g.dim}, y));
    files.push_back(array("table_f64", tensorfiles::ElementType::f64, {n, g.dim}, y_exact));
    arrays["table"] = "table.npy";
    describe = s.describe();
  } else if (g.family == "alibi") {
    // The catalogue's bias tensor (heads, n, n): -m_h |p_i - p_j|, -inf above the diagonal when
    // causal. ALiBi states no convention: the slopes are the paper's for --heads heads.
    const AlibiSpec s{.heads = g.heads, .causal = number("causal", take("causal", "1")) != 0};
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for alibi", kv.begin()->first));
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::vector<double> b, b_exact;
    for (const Real& v : ref::alibi_bias_tensor<Real>(s, positions)) {
      b_exact.push_back(ref::to_double(v));
      b.push_back(std::isinf(b_exact.back()) ? b_exact.back() : round_to(dt, b_exact.back()));
    }
    files.push_back(array("bias", storage(dt), {g.heads, n, n}, b));
    files.push_back(array("bias_f64", tensorfiles::ElementType::f64, {g.heads, n, n}, b_exact));
    arrays["bias"] = "bias.npy";
    describe = s.describe();
  } else if (g.family == "shaw") {
    // Random q, k (n, head_dim) and relative table (2K + 1, head_dim) in the dtype, and the scores
    // (n, n) they give, the 50-digit value rounded once.
    const ShawSpec s{.max_distance = static_cast<int>(number("max_distance", take("max_distance", "4"))),
                     .head_dim = g.dim};
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for shaw", kv.begin()->first));
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::mt19937_64 rng(g.seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    const std::size_t d = static_cast<std::size_t>(g.dim), rows = static_cast<std::size_t>(s.table_rows());
    std::vector<double> q(static_cast<std::size_t>(n) * d), k(q.size()), table(rows * d);
    for (auto* v : {&q, &k, &table})
      for (double& e : *v) e = round_to(dt, uniform(rng));
    std::vector<Real> qr(q.begin(), q.end()), kr(k.begin(), k.end()), tr(table.begin(), table.end());
    std::vector<double> scores;
    for (const Real& v : ref::shaw_scores<Real>(s, qr, kr, tr, positions))
      scores.push_back(round_to(dt, ref::to_double(v)));
    files.push_back(array("q", storage(dt), {n, g.dim}, q));
    files.push_back(array("k", storage(dt), {n, g.dim}, k));
    files.push_back(array("table", storage(dt), {s.table_rows(), g.dim}, table));
    files.push_back(array("scores", storage(dt), {n, n}, scores));
    for (const char* role : {"q", "k", "table", "scores"}) arrays[role] = std::string(role) + ".npy";
    describe = s.describe();
  } else if (g.family == "t5") {
    // A random bucket table (num_buckets, heads) in the dtype and the bias (heads, n, n) it gives:
    // a gather, so the reference is exact.
    const T5Spec s{.heads = g.heads,
                   .num_buckets = static_cast<int>(number("num_buckets", take("num_buckets", "32"))),
                   .max_distance = static_cast<int>(number("max_distance", take("max_distance", "128"))),
                   .bidirectional = number("bidirectional", take("bidirectional", "1")) != 0};
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for t5", kv.begin()->first));
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::mt19937_64 rng(g.seed);
    std::normal_distribution<double> normal;
    std::vector<double> table(static_cast<std::size_t>(s.num_buckets * s.heads));
    for (double& v : table) v = round_to(dt, normal(rng));
    const auto bias = ref::t5_bias_tensor<double>(s, table, positions);
    files.push_back(array("table", storage(dt), {s.num_buckets, s.heads}, table));
    files.push_back(array("bias", storage(dt), {s.heads, n, n}, bias));
    arrays["table"] = "table.npy";
    arrays["bias"] = "bias.npy";
    convention = {{"bidirectional", s.bidirectional}, {"max_distance", s.max_distance}};
    describe = s.describe();
  } else if (g.family == "rope2d") {
    // Axial 2-D RoPE over a grid `columns` wide: position p is patch (p / columns, p % columns).
    Rope2dSpec s{.head_dim = g.dim, .base = number("base", take("base", "10000"))};
    s.layout = rope_layout(take("layout", "half_split"));
    const std::string pairing = take("pairing", "per_half");
    if (pairing != "per_half" && pairing != "whole_head")
      throw UsageError(fmt::format("--convention: pairing must be per_half or whole_head, got '{}'", pairing));
    s.pairing = pairing == "per_half" ? Rope2dPairing::per_half : Rope2dPairing::whole_head;
    const std::string frequencies = take("frequencies", "shared");
    if (frequencies != "shared" && frequencies != "split")
      throw UsageError(fmt::format("--convention: frequencies must be shared or split, got '{}'", frequencies));
    s.frequencies = frequencies == "shared" ? Rope2dFrequencies::shared : Rope2dFrequencies::split;
    const auto columns = static_cast<std::int64_t>(number("columns", take("columns", "8")));
    if (columns < 1) throw UsageError("--convention: columns must be >= 1");
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for rope2d", kv.begin()->first));
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    tensorfiles::Array rows = pos_array, cols = pos_array;
    rows.name = "rows", cols.name = "cols";
    for (std::size_t t = 0; t < positions.size(); ++t)
      rows.ints[t] = positions[t] / columns, cols.ints[t] = positions[t] % columns;
    files.front() = rows;  // the grid's coordinates, not the flat index
    files.push_back(cols);
    arrays = {{"rows", "rows.npy"}, {"cols", "cols.npy"}};
    const std::size_t count =
        static_cast<std::size_t>(n) * static_cast<std::size_t>(g.heads) * static_cast<std::size_t>(g.dim);
    std::mt19937_64 rng(g.seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<double> x(count), y, y_exact;
    for (double& v : x) v = round_to(dt, uniform(rng));
    std::vector<Real> xr(x.begin(), x.end());
    ref::rope2d_apply<Real>(s, g.heads, rows.ints, cols.ints, std::span(xr));
    for (const Real& v : xr) {
      y_exact.push_back(ref::to_double(v));
      y.push_back(round_to(dt, y_exact.back()));
    }
    add_rotation(files, arrays, dt, {n, g.heads, g.dim}, x, y, y_exact);
    convention = {{"layout", layout_name(s.layout)},
                  {"base", s.base},
                  {"pairing", pairing_name(s.pairing)},
                  {"frequencies", frequencies_name(s.frequencies)}};
    describe = s.describe();
  } else if (g.family == "attention") {
    // Random Q (the last `queries` tokens), K and V (every token, kv_heads heads) in the dtype and
    // the output (queries, heads, dim) they give under the stated mask, window, scale and ALiBi or
    // RoPE inside, the 50-digit value rounded once.
    AttentionSpec s{.heads = g.heads, .head_dim = g.dim};
    s.kv_heads = static_cast<int>(number("kv_heads", take("kv_heads", "0")));
    s.queries = static_cast<int>(number("queries", take("queries", "0")));
    s.causal = number("causal", take("causal", "0")) != 0;
    s.window = static_cast<int>(number("window", take("window", "0")));
    if (const std::string scale = take("scale", ""); !scale.empty()) s.scale = number("scale", scale);
    const std::string pe = take("pe", "none");
    if (pe != "none" && pe != "alibi" && pe != "rope" && pe != "t5" && pe != "shaw")
      throw UsageError(fmt::format("--convention: pe must be none, alibi, rope, t5 or shaw, got '{}'", pe));
    s.pe = pe == "alibi"  ? AttentionPE::alibi
           : pe == "rope" ? AttentionPE::rope
           : pe == "t5"   ? AttentionPE::t5
           : pe == "shaw" ? AttentionPE::shaw
                          : AttentionPE::none;
    nlohmann::json rope, t5, shaw;
    if (s.pe == AttentionPE::shaw) {  // Shaw's relative keys inside: a random table (2K + 1, head_dim)
      s.shaw_max_distance = static_cast<int>(number("max_distance", take("max_distance", "4")));
      shaw = {{"max_distance", s.shaw_max_distance}};
    }
    if (s.pe == AttentionPE::t5) {  // T5's bias inside: a random table (num_buckets, heads) in the dtype
      s.t5_buckets = static_cast<int>(number("num_buckets", take("num_buckets", "32")));
      s.t5_max_distance = static_cast<int>(number("max_distance", take("max_distance", "128")));
      s.t5_bidirectional = number("bidirectional", take("bidirectional", "1")) != 0;
      t5 = {{"num_buckets", s.t5_buckets}, {"max_distance", s.t5_max_distance}, {"bidirectional", s.t5_bidirectional}};
    }
    if (s.pe == AttentionPE::rope) {  // RoPE inside: Q and K written before rotation
      s.rope_layout = rope_layout(take("layout", "half_split"));
      s.pe_base = number("base", take("base", "10000"));
      s.rotary_dim = static_cast<int>(number("rotary_dim", take("rotary_dim", std::to_string(g.dim).c_str())));
      rope = {{"layout", layout_name(s.rope_layout)}, {"base", s.pe_base}, {"rotary_dim", s.rope().rotary_dim}};
    }
    if (!kv.empty()) throw UsageError(fmt::format("--convention: unknown key '{}' for attention", kv.begin()->first));
    try {
      s.validate();
      if (s.query_count(static_cast<std::size_t>(n)) > static_cast<std::size_t>(n))
        throw std::invalid_argument(fmt::format("queries {} exceed the {} positions", s.queries, n));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::mt19937_64 rng(g.seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    const std::int64_t nq = static_cast<std::int64_t>(s.query_count(static_cast<std::size_t>(n)));
    std::vector<double> q(static_cast<std::size_t>(nq * s.width())), k(static_cast<std::size_t>(n * s.kv_width())),
        v(k.size()),
        table(s.pe == AttentionPE::t5     ? static_cast<std::size_t>(s.t5_buckets * s.heads)
              : s.pe == AttentionPE::shaw ? static_cast<std::size_t>(s.shaw().table_rows() * g.dim)
                                          : 0);
    for (auto* x : {&q, &k, &v, &table})
      for (double& e : *x) e = round_to(dt, uniform(rng));
    const auto real = [](const std::vector<double>& x) { return std::vector<Real>(x.begin(), x.end()); };
    std::vector<double> out;
    for (const Real& e : ref::attention<Real>(s, positions, {real(q), real(k), real(v)}, real(table)))
      out.push_back(round_to(dt, ref::to_double(e)));
    files.push_back(array("q", storage(dt), {nq, s.heads, g.dim}, q));
    files.push_back(array("k", storage(dt), {n, s.kv_count(), g.dim}, k));
    files.push_back(array("v", storage(dt), {n, s.kv_count(), g.dim}, v));
    files.push_back(array("out", storage(dt), {nq, s.heads, g.dim}, out));
    for (const char* role : {"q", "k", "v", "out"}) arrays[role] = std::string(role) + ".npy";
    if (s.pe == AttentionPE::t5) files.push_back(array("table", storage(dt), {s.t5_buckets, s.heads}, table));
    if (s.pe == AttentionPE::shaw) files.push_back(array("table", storage(dt), {s.shaw().table_rows(), g.dim}, table));
    if (!table.empty()) arrays["table"] = "table.npy";
    convention = {{"causal", s.causal}, {"pe", pe}};
    if (!rope.is_null()) convention["rope"] = rope;
    if (!t5.is_null()) convention["t5"] = t5;
    if (!shaw.is_null()) convention["shaw"] = shaw;
    if (s.window > 0) convention["window"] = s.window;
    if (s.scale) convention["scale"] = *s.scale;
    describe = s.describe();
  } else {
    throw UsageError(fmt::format(
        "--family must be rope, mrope, rope2d, sinusoidal, alibi, t5, shaw or attention, got '{}'", g.family));
  }
  // Written into a sibling directory, then renamed into place: nothing is half-written.
  std::error_code ec;
  if (fs::exists(g.out, ec) && !fs::is_empty(g.out, ec))
    throw UsageError(fmt::format("--out '{}' exists and is not empty", g.out));
  const fs::path tmp = fs::path(g.out).string() + fmt::format(".tmp-{}", ::getpid());
  fs::remove_all(tmp, ec);
  if (!fs::create_directories(tmp, ec)) throw UsageError(fmt::format("--out '{}': cannot create it", g.out));
  try {
    for (const auto& a : files) tensorfiles::write_npy((tmp / (a.name + ".npy")).string(), a);
    nlohmann::json manifest = {{"encoder", fmt::format("pecheck golden {}", describe)},
                               {"family", g.family},
                               {"dtype", dtype_name(dt)},
                               {"arrays", arrays}};
    if (!convention.is_null()) manifest["convention"] = convention;
    write_file_atomically((tmp / "manifest.json").string(), manifest.dump(2) + "\n", "--out");
    fs::remove(g.out, ec);  // an empty directory may be replaced
    fs::rename(tmp, g.out);
  } catch (const std::exception& e) {
    fs::remove_all(tmp, ec);
    throw UsageError(fmt::format("--out '{}': {}", g.out, e.what()));
  }
  std::cout << fmt::format("pecheck golden: {} in {}, {} positions, written to {}\n", describe, dtype_name(dt), n,
                           g.out);
  return 0;
}

}  // namespace pecheck::cli
