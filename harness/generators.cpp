#include "harness/generators.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "harness/tolerance.hpp"

namespace pecheck::gen {

namespace {

/// Exactly 2^24 - 1, but shrinking towards 0 like the other bands: rc::gen::just never shrinks,
/// so a counterexample drawn there stayed at 16777215 even when position 1e6 already failed. It
/// draws nothing from the random stream, exactly as just() did, so every case is as before.
rc::Gen<std::int64_t> top_position(std::int64_t top = tol::kMaxPosition) {
  using P = std::int64_t;
  return rc::Gen<P>([top](const rc::Random&, int) {
    return rc::shrinkable::shrinkRecur(P{top}, [](P v) { return rc::shrink::towards<P>(v, 0); });
  });
}

thread_local std::int64_t g_position_ceiling = tol::kMaxPosition;

/// x, or a zero of its sign where a flush-to-zero platform would read one.
float flushed(float x) { return detail::flush_subnormals && std::fabs(x) < FLT_MIN ? std::copysign(0.0f, x) : x; }

}  // namespace

PositionCeiling::PositionCeiling(std::int64_t max) : saved_(g_position_ceiling) {
  g_position_ceiling = std::clamp<std::int64_t>(max, 0, tol::kMaxPosition);
}
PositionCeiling::~PositionCeiling() { g_position_ceiling = saved_; }
std::int64_t position_ceiling() { return g_position_ceiling; }

rc::Gen<std::int64_t> position() {
  using P = std::int64_t;
  if (g_position_ceiling < tol::kMaxPosition) {  // the same bands, cut at half the ceiling
    const P top = std::max<P>((g_position_ceiling + 1) / 2 - 1, 0);
    const auto band = [top](P end) { return rc::gen::inRange<P>(0, std::min(end, top + 1)); };
    return rc::gen::weightedOneOf<P>({{1, rc::gen::just<P>(0)},
                                      {3, band(64)},
                                      {3, band(8192)},
                                      {2, band(P{1} << 20)},
                                      {4, band(top + 1)},
                                      {1, top_position(top)}});
  }
  // Every band starts at 0 so that shrinking walks a failing position down towards the
  // smallest one that still fails (e.g. where fp32 angles first exceed the bound).
  return rc::gen::weightedOneOf<P>({
      {1, rc::gen::just<P>(0)},
      {3, rc::gen::inRange<P>(0, 64)},
      {3, rc::gen::inRange<P>(0, 8192)},
      {2, rc::gen::inRange<P>(0, P{1} << 20)},
      {4, rc::gen::inRange<P>(0, tol::kMaxPosition + 1)},
      {1, top_position()},
  });
}

rc::Gen<std::vector<std::int64_t>> positions(std::size_t n) {
  return rc::gen::container<std::vector<std::int64_t>>(n, position());
}

rc::Gen<std::int64_t> position_below(std::int64_t limit) {
  return rc::gen::map(position(), [limit](std::int64_t p) { return std::min(p, std::max<std::int64_t>(limit, 0)); });
}

std::int64_t nonzero_shift(std::vector<std::int64_t*> shifted, std::int64_t t) {
  const auto by_value = [](const std::int64_t* a, const std::int64_t* b) { return *a < *b; };
  std::int64_t* hi = *std::max_element(shifted.begin(), shifted.end(), by_value);
  const std::int64_t lo = **std::min_element(shifted.begin(), shifted.end(), by_value);
  if (lo == 0 && *hi == tol::kMaxPosition) --*hi;
  const std::int64_t room = tol::kMaxPosition - *hi;
  t = std::max<std::int64_t>(t, 1);
  return room > 0 ? std::min(t, room) : -std::min(t, lo);
}

rc::Gen<double> base() {
  return rc::gen::weightedOneOf<double>({
      {4, rc::gen::element(1e4, 5e5, 1e6)},
      {1, rc::gen::map(rc::gen::inRange(0, 1000), [](int k) { return std::round(2.0 * std::pow(5e6, k / 999.0)); })},
  });
}

rc::Gen<int> even_dim(int max) {
  std::vector<int> typical;
  for (int d : {64, 128, 256})
    if (d <= max) typical.push_back(d);
  if (typical.empty()) typical.push_back(max - max % 2);
  return rc::gen::weightedOneOf<int>({
      {2, rc::gen::element(2, 4, 6)},
      {2, rc::gen::elementOf(typical)},
      {2, rc::gen::map(rc::gen::inRange(0, std::max(1, (max - 2) / 4 + 1)),
                       [max](int k) { return std::min(2 * (2 * k + 1), max - max % 2); })},
      {2, rc::gen::map(rc::gen::inRange(1, max / 2 + 1), [](int k) { return 2 * k; })},
  });
}

rc::Gen<SinusoidalLayout> sinusoidal_layout() {
  return rc::gen::element(SinusoidalLayout::interleaved, SinusoidalLayout::concatenated);
}

rc::Gen<RopeLayout> rope_layout() { return rc::gen::element(RopeLayout::interleaved, RopeLayout::half_split); }

namespace {

rc::Gen<double> scaling_factor() {
  return rc::gen::weightedOneOf<double>({
      {3, rc::gen::element(2.0, 4.0, 8.0, 16.0, 32.0)},
      {1, rc::gen::map(rc::gen::inRange(100, 6401), [](int k) { return k / 100.0; })},
  });
}

rc::Gen<std::int64_t> original_context() {
  using P = std::int64_t;
  return rc::gen::weightedOneOf<P>({
      {3, rc::gen::element<P>(2048, 4096, 8192)},
      {1, rc::gen::inRange<P>(16, P{1} << 20)},
  });
}

}  // namespace

namespace {

/// splitmix64: the data stream of a case, a pure function of its seed.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }  ///< [0, 1)
};

SplitMix data_stream(std::uint32_t seed, std::uint32_t salt) {
  return {(std::uint64_t{seed} << 32) ^ (std::uint64_t{salt} * 0x9e3779b97f4a7c15ull)};
}

}  // namespace

// Each entry jittered by up to 25%, so the lists are not monotone (the published ones are not).
void longrope_lists(RopeScaling& s, int rotary_dim, std::uint32_t seed) {
  SplitMix r{seed};
  const int pairs = rotary_dim / 2;
  for (int p = 0; p < pairs; ++p) {
    const double t = pairs > 1 ? static_cast<double>(p) / (pairs - 1) : 0.0;
    s.short_factor.push_back(1.0 + 0.25 * r.unit());
    s.long_factor.push_back((1.0 + (2.0 * s.factor - 1.0) * t * t) * (0.75 + 0.5 * r.unit()));
  }
}

rc::Gen<RopeScaling> rope_scaling(int rotary_dim) {
  using K = RopeScalingKind;
  const bool ntk_ok = rotary_dim >= 4;
  return rc::gen::apply(
      [ntk_ok, rotary_dim](K kind, double factor, std::int64_t l0, int seq_choice, std::int64_t any_seq, int beta_fast,
                           int beta_slow, bool default_params, int lo, int hi_extra, std::uint32_t lists_seed) {
        RopeScaling s{.kind = kind, .factor = factor, .original_max_position = l0};
        if (!ntk_ok && (kind == K::ntk || kind == K::dynamic_ntk)) s.kind = K::linear;
        const std::int64_t seq[] = {l0 / 2 + 1, l0, l0 + 1, 2 * l0, any_seq};
        s.seq_len = seq[seq_choice];
        if (!default_params) {
          s.beta_fast = beta_fast;
          s.beta_slow = std::min(beta_slow, beta_fast - 1) / 2.0 + 0.5;
          s.low_freq_factor = lo / 4.0;
          s.high_freq_factor = s.low_freq_factor + hi_extra / 4.0;
        }
        if (s.kind == K::longrope) {
          longrope_lists(s, rotary_dim, lists_seed);
          if (!default_params) s.attention_factor = 1.0 + hi_extra / 32.0;  // stated, not HF's default
        }
        return s;
      },
      rc::gen::weightedOneOf<K>({{5, rc::gen::just(K::none)},
                                 {1, rc::gen::just(K::linear)},
                                 {1, rc::gen::just(K::ntk)},
                                 {1, rc::gen::just(K::dynamic_ntk)},
                                 {1, rc::gen::just(K::yarn)},
                                 {1, rc::gen::just(K::llama3)},
                                 {1, rc::gen::just(K::longrope)}}),
      scaling_factor(), original_context(), rc::gen::inRange(0, 5),
      rc::gen::inRange<std::int64_t>(1, tol::kMaxPosition + 1), rc::gen::inRange(2, 65), rc::gen::inRange(1, 64),
      rc::gen::weightedOneOf<bool>({{3, rc::gen::just(true)}, {1, rc::gen::just(false)}}), rc::gen::inRange(1, 17),
      rc::gen::inRange(1, 33), rc::gen::arbitrary<std::uint32_t>());
}

rc::Gen<RopeSpec> rope_spec(int max_dim, bool scaled) {
  return rc::gen::mapcat(even_dim(max_dim), [scaled](int head_dim) {
    return rc::gen::mapcat(
        rc::gen::apply(
            [head_dim](int rot_choice, int any_rot, double base, RopeLayout layout) {
              int rot = head_dim;
              if (rot_choice == 1 && head_dim % 4 == 0) rot = head_dim / 2;
              if (rot_choice == 2) rot = 2 * any_rot;
              return RopeSpec{head_dim, rot, base, layout};
            },
            rc::gen::weightedOneOf<int>({{3, rc::gen::just(0)}, {1, rc::gen::just(1)}, {1, rc::gen::just(2)}}),
            rc::gen::inRange(1, head_dim / 2 + 1), base(), rope_layout()),
        [scaled](RopeSpec s) {
          if (!scaled) return rc::gen::just(s);
          return rc::gen::map(rope_scaling(s.rotary_dim), [s](RopeScaling sc) {
            RopeSpec t = s;
            t.scaling = sc;
            return t;
          });
        });
  });
}

rc::Gen<std::uint32_t> data_seed() { return rc::gen::arbitrary<std::uint32_t>(); }

std::vector<float> values(std::uint32_t seed, std::uint32_t salt, std::size_t n, DType dt, double scale) {
  SplitMix r = data_stream(seed, salt);
  std::vector<float> v(n);
  bool nonzero = false;
  for (float& x : v) {
    x = flushed(round_to(dt, (2 * r.unit() - 1) * scale));
    nonzero |= x != 0;
  }
  if (!nonzero && n > 0) v[0] = round_to(dt, scale);
  return v;
}

std::vector<float> edge_values(std::uint32_t seed, std::uint32_t salt, std::size_t n, DType dt, std::size_t row) {
  std::vector<float> v = values(seed, salt, n, dt);
  SplitMix r = data_stream(seed, salt ^ 0x5eedu);
  if (r.next() % 2 == 0 || n == 0) return v;  // half the tensors as drawn
  const double tiny = min_normal(dt);
  for (float& x : v) {
    const std::uint64_t pick = r.next() % 16;
    if (pick == 0) x = 0.0f;
    if (pick == 1) x = -0.0f;
    if (pick == 2) x = round_to(dt, (2 * r.unit() - 1) * tiny);  // subnormal (or a signed zero)
    if (pick >= 3 && pick < 7) x = round_to(dt, x * std::ldexp(1.0, -static_cast<int>(r.next() % 25)));
  }
  // A padding row: every value of one row (a head vector, a token) exactly zero.
  if (row > 0 && n >= 2 * row) {
    const std::size_t at = (r.next() % (n / row)) * row;
    std::fill(v.begin() + static_cast<std::ptrdiff_t>(at), v.begin() + static_cast<std::ptrdiff_t>(at + row), 0.0f);
  }
  for (float& x : v) x = flushed(x);
  if (std::none_of(v.begin(), v.end(), [](float x) { return x != 0; })) v[0] = round_to(dt, 0.5);
  return v;
}

std::string position_class(std::int64_t pos) {
  if (pos == 0) return "pos=0";
  if (pos < 64) return "pos<64";
  if (pos < 8192) return "pos<8192";
  if (pos == tol::kMaxPosition) return "pos=2^24-1";
  if (pos >= (std::int64_t{1} << 20)) return "pos>=2^20";
  return "pos<2^20";
}

std::string dim_class(int d) {
  if (d <= 6) return "d<=6";
  if (d % 16 == 0) return "d%16==0";
  if (d % 8 == 0) return "d%8==0";
  return "d%8!=0";
}

}  // namespace pecheck::gen
