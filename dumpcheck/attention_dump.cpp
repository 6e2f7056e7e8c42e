#include "dumpcheck/attention_dump.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

#include "dumpcheck/recorder.hpp"
#include "dumpcheck/rope_manifest.hpp"
#include "properties/attention/attention_cases.hpp"

namespace pecheck::dumpcheck {

using namespace read;
using props::AttentionBound;
using props::AttentionCase;
using props::AttentionData;
using props::kOracleMinN;

namespace {

constexpr std::string_view kConventionKeys[] = {"causal", "window", "window_size", "scale", "pe", "rope", "t5", "shaw"};

bool boolean(const Json& c, const char* key, const std::string& at) {
  if (!c.at(key).is_boolean()) throw FormatError(fmt::format("{}: {} must be true or false", at, key));
  return c.at(key).get<bool>();
}

std::int64_t integer(const Json& j, const std::string& at, const char* what) {
  if (!j.is_number_integer()) throw FormatError(fmt::format("{}: {} must be an integer, got {}", at, what, j.dump()));
  return j.get<std::int64_t>();
}

/// The window in Mistral's words (query i sees i - window < j <= i): "window" as stated, or
/// flash-attention's window_size [left, right] with right 0 (causal), left + 1 keys; [-1, -1] and
/// a window of 0 are none.
int read_window(const Json& c, bool causal, const std::string& at) {
  if (c.contains("window") && c.contains("window_size"))
    throw FormatError(fmt::format("{}: state window or window_size, not both", at));
  std::int64_t w = 0;
  if (c.contains("window")) {
    w = integer(c.at("window"), at, "window");
    if (w < 0) throw FormatError(fmt::format("{}: window must be >= 0 (0: none), got {}", at, w));
  } else if (c.contains("window_size")) {
    const Json& ws = c.at("window_size");
    if (!ws.is_array() || ws.size() != 2)
      throw FormatError(fmt::format("{}: window_size must be [left, right], flash-attention's, got {}", at, ws.dump()));
    const std::int64_t left = integer(ws[0], at, "window_size[0]"), right = integer(ws[1], at, "window_size[1]");
    if (left == -1 && right == -1) return 0;
    if (left < 0 || (right != 0 && right != -1) || (right == -1 && !causal))
      throw FormatError(fmt::format(
          "{}: window_size {} is not a causal sliding window ([left, 0], left >= 0): pecheck checks those only", at,
          ws.dump()));
    w = left + 1;
  }
  if (w > 0 && !causal) throw FormatError(fmt::format("{}: a window needs \"causal\": true", at));
  if (w > std::numeric_limits<int>::max()) throw FormatError(fmt::format("{}: window {} is too large", at, w));
  return static_cast<int>(w);
}

void read_convention(const Json& c, AttentionSpec& s, const std::string& at) {
  if (!c.is_object()) throw FormatError(fmt::format("{}: must be a JSON object", at));
  for (const auto& item : c.items())
    if (std::find(std::begin(kConventionKeys), std::end(kConventionKeys), item.key()) == std::end(kConventionKeys))
      throw FormatError(
          fmt::format("{}: unknown key \"{}\" (an attention convention takes causal, window, window_size, scale, pe, "
                      "rope, t5, shaw)",
                      at, item.key()));
  if (c.contains("causal")) s.causal = boolean(c, "causal", at);
  s.window = read_window(c, s.causal, at);
  if (c.contains("scale") && !c.at("scale").is_null()) {
    const Json& v = c.at("scale");
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
      throw FormatError(fmt::format("{}: scale must be a finite number > 0, got {}", at, v.dump()));
    s.scale = v.get<double>();
  }
  const std::string pe = c.value("pe", std::string("none"));
  if (pe == "none") {
    s.pe = AttentionPE::none;
  } else if (pe == "alibi") {
    s.pe = AttentionPE::alibi;
  } else if (pe == "rope") {
    s.pe = AttentionPE::rope;
    if (!c.contains("rope"))
      throw FormatError(fmt::format("{}: pe \"rope\" needs \"rope\": the RoPE convention (layout and base)", at));
    const StatedRope r = read_rope_convention(c.at("rope"), s.head_dim, at + ".rope");
    if (!r.layout || !r.base)
      throw FormatError(
          fmt::format("{}.rope: state layout and base (or rope_theta): the RoPE inside attention is not fitted", at));
    if (r.short_factor) throw FormatError(fmt::format("{}.rope: LongRoPE inside attention is not covered yet", at));
    s.set_rope(stated_spec(
        r, RopeSpec{.head_dim = s.head_dim, .rotary_dim = r.rotary_dim.value_or(s.head_dim), .layout = *r.layout}));
    if (s.head_dim % 2 != 0) throw FormatError(fmt::format("{}: RoPE needs an even head_dim, got {}", at, s.head_dim));
  } else if (pe == "t5") {
    s.pe = AttentionPE::t5;
    const std::string t = at + ".t5";
    if (!c.contains("t5") || !c.at("t5").is_object())
      throw FormatError(
          fmt::format("{}: pe \"t5\" needs \"t5\": {{num_buckets, max_distance, bidirectional}} (HF: "
                      "relative_attention_num_buckets, relative_attention_max_distance, not is_decoder)",
                      at));
    const Json& b = c.at("t5");
    for (const auto& item : b.items())
      if (item.key() != "num_buckets" && item.key() != "max_distance" && item.key() != "bidirectional")
        throw FormatError(
            fmt::format("{}: unknown key \"{}\" (T5 takes num_buckets, max_distance, bidirectional)", t, item.key()));
    for (const char* key : {"num_buckets", "max_distance"})
      if (!b.contains(key) || !b.at(key).is_number_integer())
        throw FormatError(fmt::format("{}: {} must be an integer", t, key));
    s.t5_buckets = b.at("num_buckets").get<int>();
    s.t5_max_distance = b.at("max_distance").get<int>();
    s.t5_bidirectional = boolean(b, "bidirectional", t);
  } else if (pe == "shaw") {
    s.pe = AttentionPE::shaw;
    const std::string t = at + ".shaw";
    if (!c.contains("shaw") || !c.at("shaw").is_object())
      throw FormatError(fmt::format(
          "{}: pe \"shaw\" needs \"shaw\": {{max_distance}} (K: the table's 2K + 1 rows, the distance clipped to K)",
          at));
    const Json& b = c.at("shaw");
    for (const auto& item : b.items())
      if (item.key() != "max_distance")
        throw FormatError(fmt::format("{}: unknown key \"{}\" (Shaw takes max_distance)", t, item.key()));
    if (!b.contains("max_distance") || !b.at("max_distance").is_number_integer() ||
        b.at("max_distance").get<std::int64_t>() < 0 || b.at("max_distance").get<std::int64_t>() > (1 << 24))
      throw FormatError(fmt::format("{}: max_distance must be an integer in [0, 2^24]", t));
    s.shaw_max_distance = b.at("max_distance").get<int>();
  } else {
    throw FormatError(fmt::format("{}: pe must be none, rope, alibi, t5 or shaw, got \"{}\"", at, pe));
  }
  if (c.contains("rope") && s.pe != AttentionPE::rope)
    throw FormatError(fmt::format("{}: \"rope\" is stated but pe is \"{}\"", at, pe));
  if (c.contains("t5") && s.pe != AttentionPE::t5)
    throw FormatError(fmt::format("{}: \"t5\" is stated but pe is \"{}\"", at, pe));
  if (c.contains("shaw") && s.pe != AttentionPE::shaw)
    throw FormatError(fmt::format("{}: \"shaw\" is stated but pe is \"{}\"", at, pe));
}

/// One sequence of the dump as the properties' case and data.
struct Sequence {
  AttentionCase c;
  AttentionData x;
  std::vector<float> out;
};

Sequence sequence(const Dump& d, std::size_t b) {
  const AttentionSpec& s = *d.attention;
  const std::size_t n = d.tokens() / static_cast<std::size_t>(d.batch);
  const std::size_t qsize = s.query_count(n) * static_cast<std::size_t>(s.width()),
                    kvsize = n * static_cast<std::size_t>(s.kv_width());
  const auto slice = [](const std::vector<double>& v, std::size_t at, std::size_t size) {
    return std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(at * size),
                              v.begin() + static_cast<std::ptrdiff_t>((at + 1) * size));
  };
  Sequence q;
  q.c.spec = s;
  q.c.positions.assign(d.positions.begin() + static_cast<std::ptrdiff_t>(b * n),
                       d.positions.begin() + static_cast<std::ptrdiff_t>((b + 1) * n));
  q.x.q = slice(d.x, b, qsize);
  q.x.k = slice(d.k, b, kvsize);
  q.x.v = slice(d.v, b, kvsize);
  q.x.table.assign(d.table.begin(), d.table.end());  // T5's (num_buckets, heads) or Shaw's (2K + 1, head_dim)
  q.out = slice(d.y, b, qsize);
  return q;
}

/// The contracts of attention's ladder that differ for this PE: RoPE's own only with RoPE inside.
std::vector<tol::Contract> ladder(const AttentionSpec& s) {
  if (s.pe == AttentionPE::rope)
    return {tol::Contract::exact, tol::Contract::rounded_p, tol::Contract::dtype_trig, tol::Contract::fp32_angles};
  return {tol::Contract::exact, tol::Contract::rounded_p};
}

/// Every output's error against the exact one, in u max|V'|, with its query position; each
/// sequence's bound under each contract of the ladder; and, for the report, what a place is.
struct Judged {
  std::vector<double> err_u, abs_err, got, expected;
  std::vector<std::int64_t> position;
  std::vector<std::size_t> sequence, index;  ///< the output's sequence and its element there
  std::vector<std::vector<double>> bounds;   ///< [contract][sequence]
  std::vector<double> max_v;                 ///< per sequence
  std::size_t batch = 1, head_dim = 1, heads = 1, offset = 0;

  double bound(std::size_t contract, std::size_t i) const { return bounds[contract][sequence[i]]; }
  /// Formed only for the place the report names (Recorder::offer asks lazily).
  std::string where(std::size_t i) const {
    const std::size_t e = index[i], token = offset + e / head_dim / heads;
    return fmt::format("{}query token {} (position {}) head {} dim {}: {:.9g}, exact {:.9g}; max|V'| = {:.4g}",
                       batch > 1 ? fmt::format("sequence {} ", sequence[i]) : std::string(), token, position[i],
                       e / head_dim % heads, e % head_dim, got[i], expected[i], max_v[sequence[i]]);
  }
};

Judged judge(const Dump& d, const std::vector<tol::Contract>& contracts) {
  Judged j;
  j.bounds.resize(contracts.size());
  const double u = unit_roundoff(d.dtype);
  j.batch = static_cast<std::size_t>(d.batch);
  for (std::size_t b = 0; b < j.batch; ++b) {
    const Sequence q = sequence(d, b);
    double max_v = 1;
    for (std::size_t k = 0; k < contracts.size(); ++k) {
      const AttentionBound ab = props::attention_bound(q.c, d.dtype, q.x, contracts[k]);
      j.bounds[k].push_back(ab.bound_u + (q.c.n() > kOracleMinN ? ab.oracle_u : 0.0));
      max_v = ab.max_v;
    }
    j.max_v.push_back(max_v);
    std::vector<double> expected;
    const std::vector<double> err = props::errors_from_exact(q.c, q.x, q.out, expected);
    j.head_dim = static_cast<std::size_t>(q.c.spec.head_dim), j.heads = static_cast<std::size_t>(q.c.spec.heads);
    j.offset = q.c.spec.query_offset(q.c.n());
    for (std::size_t i = 0; i < err.size(); ++i) {
      const double e = std::isnan(err[i]) ? std::numeric_limits<double>::infinity() : std::fabs(err[i]);
      j.err_u.push_back(e / (u * max_v));
      j.abs_err.push_back(e);
      j.got.push_back(q.out[i]);
      j.expected.push_back(expected[i]);
      j.position.push_back(q.c.positions[j.offset + i / j.head_dim / j.heads]);
      j.sequence.push_back(b);
      j.index.push_back(i);
    }
  }
  return j;
}

bool holds(const Judged& j, std::size_t contract) {
  for (std::size_t i = 0; i < j.err_u.size(); ++i)
    if (!(j.err_u[i] <= j.bound(contract, i))) return false;
  return true;
}

/// The dump with its query heads renumbered so that a block mapping (query head h reads K/V head
/// h / group) reads what a round-robin one (h % kv_heads) read: head h becomes (h % KV) group + h / KV.
Dump heads_round_robin(const Dump& d) {
  const AttentionSpec& s = *d.attention;
  const std::size_t H = static_cast<std::size_t>(s.heads), KV = static_cast<std::size_t>(s.kv_count()),
                    D = static_cast<std::size_t>(s.head_dim), group = H / KV;
  Dump r = d;
  for (const auto& [to, from] : {std::pair{&r.x, &d.x}, std::pair{&r.y, &d.y}})
    for (std::size_t row = 0; row < from->size() / (H * D); ++row)
      for (std::size_t h = 0; h < H; ++h)
        std::copy_n(from->begin() + static_cast<std::ptrdiff_t>((row * H + h) * D), D,
                    to->begin() + static_cast<std::ptrdiff_t>((row * H + (h % KV) * group + h / KV) * D));
  return r;
}

/// PyTorch's is_causal with fewer queries than keys aligns the mask top-left: query row r sees
/// keys 0..r. Without a position encoding that is causal attention over the first `queries` keys.
Dump top_left_causal(const Dump& d) {
  const AttentionSpec& s = *d.attention;
  const std::size_t n = d.tokens() / static_cast<std::size_t>(d.batch), nq = s.query_count(n),
                    kv = static_cast<std::size_t>(s.kv_width());
  Dump r = d;
  r.k.clear(), r.v.clear(), r.positions.clear();
  for (std::size_t b = 0; b < static_cast<std::size_t>(d.batch); ++b) {
    r.k.insert(r.k.end(), d.k.begin() + static_cast<std::ptrdiff_t>(b * n * kv),
               d.k.begin() + static_cast<std::ptrdiff_t>((b * n + nq) * kv));
    r.v.insert(r.v.end(), d.v.begin() + static_cast<std::ptrdiff_t>(b * n * kv),
               d.v.begin() + static_cast<std::ptrdiff_t>((b * n + nq) * kv));
    r.positions.insert(r.positions.end(), d.positions.begin() + static_cast<std::ptrdiff_t>(b * n),
                       d.positions.begin() + static_cast<std::ptrdiff_t>(b * n + nq));
  }
  r.attention->queries = 0;
  return r;
}

}  // namespace

void load_attention(const Json& m, ArrayReader& r, Dump& d) {
  const std::string where = r.manifest();
  const Json arrays = field<Json>(m, "arrays", where);
  const std::string axes = m.value("axes", std::string("nhd"));
  check_axes(axes, where);
  std::int64_t dims[4][4];
  const char* roles[4] = {"q", "k", "v", "out"};
  std::vector<double>* into[4] = {&d.x, &d.k, &d.v, &d.y};
  std::string names[4];
  for (int i = 0; i < 4; ++i) {
    const tensorfiles::Array a = r.read(roles[i], field<std::string>(arrays, roles[i], where));
    names[i] = a.name;
    floats(a, roles[i]);
    *into[i] = to_bnhd(a, axes, dims[i]);
    if (i < 3) require_finite(*into[i], a.name);  // the output may be non-finite: the check says so
    require_representable(*into[i], d.dtype, a.name);
  }
  const auto [batch, nq, heads, head_dim] = std::to_array(dims[0]);
  const std::int64_t n = dims[1][1], kv_heads = dims[1][2];
  if (!std::equal(dims[0], dims[0] + 4, dims[3]))
    throw FormatError(fmt::format("{}: out must have q's shape", names[3]));
  if (!std::equal(dims[1], dims[1] + 4, dims[2])) throw FormatError(fmt::format("{}: v must have k's shape", names[2]));
  if (dims[1][0] != batch || dims[1][3] != head_dim)
    throw FormatError(fmt::format("{}: k must have q's batch and head_dim", names[1]));
  if (nq == 0 || n == 0 || heads == 0 || head_dim == 0) throw FormatError(fmt::format("{}: no tokens", names[0]));
  if (nq > n)
    throw FormatError(
        fmt::format("{}: {} queries but {} keys: the queries are the last of the keys' tokens", names[0], nq, n));
  if (heads % kv_heads != 0)
    throw FormatError(fmt::format("{}: {} K/V heads do not divide q's {} heads", names[1], kv_heads, heads));
  AttentionSpec s;
  s.heads = static_cast<int>(heads);
  s.head_dim = static_cast<int>(head_dim);
  s.kv_heads = kv_heads == heads ? 0 : static_cast<int>(kv_heads);
  s.queries = nq == n ? 0 : static_cast<int>(nq);
  if (m.contains("convention")) read_convention(m.at("convention"), s, where + ": convention");
  try {
    s.validate();
  } catch (const std::invalid_argument& e) {
    throw FormatError(fmt::format("{}: {}", where, e.what()));
  }
  if (s.pe == AttentionPE::t5 || s.pe == AttentionPE::shaw) {
    // The table the bias (T5) or the relative keys (Shaw) are read from, shared by the batch.
    const bool t5 = s.pe == AttentionPE::t5;
    const std::vector<std::int64_t> shape = t5 ? std::vector<std::int64_t>{s.t5_buckets, s.heads}
                                               : std::vector<std::int64_t>{s.shaw().table_rows(), s.head_dim};
    const char* dims = t5 ? "(num_buckets, heads)" : "(2 max_distance + 1, head_dim)";
    if (!arrays.contains("table"))
      throw FormatError(fmt::format("{}: pe \"{}\" needs the array \"table\" {}", where, t5 ? "t5" : "shaw", dims));
    const tensorfiles::Array t = r.read("table", field<std::string>(arrays, "table", where));
    floats(t, "table");
    if (t.shape != shape) throw FormatError(fmt::format("{}: must be {} = ({})", t.name, dims, fmt::join(shape, ", ")));
    d.table = t.values;
    require_finite(d.table, t.name);
    require_representable(d.table, d.dtype, t.name);
  }
  d.attention = s;
  d.batch = static_cast<int>(batch);
  d.heads = s.heads;
  d.width = s.head_dim;
  if (arrays.contains("positions")) {
    const tensorfiles::Array pa = r.read("positions", field<std::string>(arrays, "positions", where));
    const bool shared = pa.shape.size() == 1;
    if (!shared && !(pa.shape.size() == 2 && pa.shape[0] == batch))
      throw FormatError(fmt::format("{}: positions must be (n) or (batch, n)", pa.name));
    const auto p = positions_of(pa, static_cast<std::size_t>(shared ? n : batch * n));
    for (std::int64_t b = 0; b < batch; ++b)
      d.positions.insert(d.positions.end(), p.begin() + (shared ? 0 : b * n), p.begin() + (shared ? n : (b + 1) * n));
  } else {
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t t = 0; t < n; ++t) d.positions.push_back(t);
  }
}

Measurement attention_agreement(const Dump& d, tol::Contract judged) {
  const AttentionSpec& s = *d.attention;
  std::vector<tol::Contract> contracts = ladder(s);
  if (std::find(contracts.begin(), contracts.end(), judged) == contracts.end()) contracts.push_back(judged);
  const Judged j = judge(d, contracts);
  const std::size_t at =
      static_cast<std::size_t>(std::find(contracts.begin(), contracts.end(), judged) - contracts.begin());
  Recorder rec("attention.agrees_with_reference", j.bounds[at].empty() ? 0 : j.bounds[at].front(),
               judged == tol::Contract::exact ? "" : fmt::format("the {} contract", tol::contract_name(judged)));
  const std::size_t per_token = static_cast<std::size_t>(s.width());
  for (std::size_t i = 0; i < j.err_u.size(); ++i) {
    if (i % per_token == 0) rec.count_token(j.position[i]);
    rec.offer(
        j.position[i], j.err_u[i], j.abs_err[i], [&] { return j.where(i); }, j.bound(at, i));
  }
  Measurement out = rec.finish("O = softmax(scale QK^T + mask) V");
  ContractReading cr{.judged = judged, .weakest = ladder(s).back()};
  for (std::size_t k = 0; k < ladder(s).size() && !cr.met; ++k)
    if (holds(j, k)) cr.met = contracts[k];
  for (std::size_t i = 0; i < j.err_u.size(); ++i)
    if (!(j.err_u[i] <= j.bound(0, i)) && (!cr.exact_to || j.position[i] < *cr.exact_to)) cr.exact_to = j.position[i];
  out.contracts = cr;
  return out;
}

bool attention_meets_some_contract(const Dump& d) { return holds(judge(d, {ladder(*d.attention).back()}), 0); }

std::string attention_hint(const Dump& d) {
  const AttentionSpec& s = *d.attention;
  const tol::Contract weakest = ladder(s).back();
  // A reading fits when every output is within its bound and that bound is tight enough to tell
  // readings apart: 2/u max|V'| admits any output, and a bound near it (a scale of 1 in bf16 makes
  // logits large enough for a few hundred u) would let a wrong reading fit. An eighth of it keeps
  // every reading a correct kernel meets (bf16's are about 20 u of the 64) and rejects those.
  const auto fits = [&](const Dump& alt) {
    const Judged j = judge(alt, {weakest});
    const double loose = 0.25 / unit_roundoff(d.dtype);
    return holds(j, 0) && std::all_of(j.bounds[0].begin(), j.bounds[0].end(), [&](double b) { return b < loose; });
  };
  const auto with = [&](const std::function<void(AttentionSpec&)>& change) {
    Dump alt = d;
    change(*alt.attention);
    return alt;
  };
  const double standard = 1.0 / std::sqrt(double(s.head_dim));
  if (s.scale && *s.scale != standard && fits(with([](AttentionSpec& a) { a.scale.reset(); })))
    return fmt::format("the output fits the default scale 1/sqrt({}) = {:.6g}, not the stated {:.6g}", s.head_dim,
                       standard, *s.scale);
  // No scale at all, or the default applied twice (1/head_dim).
  for (const double other : {1.0, 1.0 / s.head_dim}) {
    if (s.scale && *s.scale == other) continue;
    if (fits(with([other](AttentionSpec& a) { a.scale = other; })))
      return fmt::format("the output fits scale {:.6g}, not the {} {:.6g}", other, s.scale ? "stated" : "default",
                         s.effective_scale());
  }
  if (s.causal && s.queries > 0 && s.pe == AttentionPE::none && fits(top_left_causal(d)))
    return fmt::format(
        "the output fits the causal mask aligned top-left (query row r sees keys 0..r: PyTorch's is_causal with {} "
        "queries and more keys), not bottom-right (the last query sees every key)",
        s.queries);
  if (s.window == 0 && fits(with([](AttentionSpec& a) { a.causal = !a.causal; })))
    return fmt::format("the output fits {} attention, not the stated {}", s.causal ? "full (non-causal)" : "causal",
                       s.causal ? "causal" : "full");
  for (const int w : {s.window - 1, s.window + 1})
    if (s.window > 0 && w > 0 && fits(with([w](AttentionSpec& a) { a.window = w; })))
      return fmt::format(
          "the output fits a window of {} keys, not {}: an off-by-one at the window's edge{}", w, s.window,
          w == s.window + 1 ? fmt::format(" (flash-attention's window_size ({}, 0) covers {} keys)", s.window, w) : "");
  if (s.pe == AttentionPE::rope) {
    // The RoPE inside, read the ways kernels get it wrong: the other pair layout, every dim turned
    // (rotary_dim ignored), the scaling rule left out.
    const RopeLayout other = s.rope_layout == RopeLayout::half_split ? RopeLayout::interleaved : RopeLayout::half_split;
    if (fits(with([other](AttentionSpec& a) { a.rope_layout = other; })))
      return fmt::format("the output fits the RoPE inside in the {} layout, not {}", layout_name(other),
                         layout_name(s.rope_layout));
    if (s.rope().rotary_dim != s.head_dim && fits(with([](AttentionSpec& a) { a.rotary_dim = a.head_dim; })))
      return fmt::format("the output fits RoPE turning all {} dims of each head: rotary_dim {} is ignored", s.head_dim,
                         s.rope().rotary_dim);
    if (s.rope_scaling.kind != RopeScalingKind::none &&
        fits(with([](AttentionSpec& a) { a.rope_scaling = RopeScaling{}; })))
      return fmt::format("the output fits RoPE without its scaling rule ({} is ignored)",
                         scaling_name(s.rope_scaling.kind));
  }
  const std::size_t n = d.tokens() / static_cast<std::size_t>(d.batch);
  if (s.pe == AttentionPE::t5 || s.pe == AttentionPE::shaw) {
    // The relative position read query minus key: the positions mirrored give p_i - p_j where the
    // reference reads p_j - p_i.
    Dump mirrored = d;
    for (std::size_t b = 0; b < static_cast<std::size_t>(d.batch); ++b) {
      const auto first = mirrored.positions.begin() + static_cast<std::ptrdiff_t>(b * n);
      const std::int64_t top = *std::max_element(first, first + static_cast<std::ptrdiff_t>(n));
      std::for_each(first, first + static_cast<std::ptrdiff_t>(n), [top](std::int64_t& p) { p = top - p; });
    }
    if (fits(mirrored))
      return fmt::format(
          "the output fits {} read at query minus key, not key minus query: the relative position is reversed",
          s.pe == AttentionPE::t5 ? "T5's bias" : "Shaw's relative keys");
  }
  if (s.pe == AttentionPE::shaw && s.shaw_max_distance > 0) {
    // The clip one short: a kernel clamping to [-(K - 1), K - 1] reads rows 1 .. 2K - 1 of the 2K + 1,
    // which is the reference at K - 1 on the table without its first and last rows.
    const int k = s.shaw_max_distance;
    Dump short_clip = with([k](AttentionSpec& a) { a.shaw_max_distance = k - 1; });
    const auto row = static_cast<std::ptrdiff_t>(s.head_dim);
    short_clip.table.assign(d.table.begin() + row, d.table.end() - row);
    if (fits(short_clip))
      return fmt::format("the output fits Shaw's distance clipped to {}, not {}: the clip is one short", k - 1, k);
  }
  if (s.pe == AttentionPE::t5) {
    if (fits(with([](AttentionSpec& a) { a.t5_bidirectional = !a.t5_bidirectional; })))
      return fmt::format("the output fits T5's {} bucketing, not the stated {}",
                         s.t5_bidirectional ? "causal (decoder)" : "bidirectional (encoder)",
                         s.t5_bidirectional ? "bidirectional" : "causal");
  }
  if (s.kv_count() != s.heads && fits(heads_round_robin(d)))
    return fmt::format(
        "the output fits query head h reading K/V head h % {} (round-robin), not h / {} (consecutive groups, "
        "repeat_interleave's): the heads are grouped the other way",
        s.kv_count(), s.heads / s.kv_count());
  return "";
}

std::string attention_text(const Dump& d) {
  const AttentionSpec& s = *d.attention;
  std::string t = s.causal ? "causal" : "full (not causal)";
  if (s.window > 0) t += fmt::format(", window {}", s.window);
  t += s.scale ? fmt::format(", scale {:.6g} (stated)", *s.scale)
               : fmt::format(", scale 1/sqrt({}) (the default)", s.head_dim);
  if (s.pe == AttentionPE::rope) t += fmt::format(", RoPE inside: {}", s.rope().describe());
  if (s.pe == AttentionPE::alibi) t += fmt::format(", ALiBi inside (the standard slopes of {} heads)", s.heads);
  if (s.pe == AttentionPE::t5)
    t += fmt::format(", T5's bias inside ({} buckets, max_distance {}, {}; the table given)", s.t5_buckets,
                     s.t5_max_distance, s.t5_bidirectional ? "bidirectional" : "causal");
  if (s.pe == AttentionPE::shaw)
    t += fmt::format(", Shaw's relative keys inside (max_distance {}; the table given)", s.shaw_max_distance);
  if (s.kv_count() != s.heads) t += fmt::format(", {} query heads over {} K/V heads", s.heads, s.kv_count());
  if (s.queries > 0) t += fmt::format(", the last {} tokens query", s.queries);
  if (d.batch > 1) t += fmt::format(", {} sequences", d.batch);
  return t;
}

}  // namespace pecheck::dumpcheck
