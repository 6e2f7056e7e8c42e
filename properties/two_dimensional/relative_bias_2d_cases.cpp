// The 2-D relative position bias case generator, compiled once (see properties/rope/rope_cases.cpp
// for why).
#include "properties/two_dimensional/relative_bias_2d_cases.hpp"

#include "harness/tolerance.hpp"

namespace pecheck::props {

namespace {

/// (rows, cols) of a window: Swin's 7 x 7, BEiT's 14 x 14 at 224 / 16, else any square one or a
/// non-square one up to 16 a side (where a row stride taken from the wrong side aliases offsets).
rc::Gen<std::pair<int, int>> window() {
  using W = std::pair<int, int>;
  return rc::gen::weightedOneOf<W>({
      {2, rc::gen::element(W{7, 7}, W{14, 14}, W{12, 12})},
      {1, rc::gen::map(rc::gen::inRange(1, 17),
                       [](int w) {
                         return W{w, w};
                       })},
      {2, rc::gen::suchThat(rc::gen::pair(rc::gen::inRange(1, 17), rc::gen::inRange(1, 17)),
                            [](W w) { return w.first != w.second; })},
  });
}

/// True one case in k whatever the size, shrinking to false: a bool drawn by weightedOneOf or
/// element would not shrink (a failing whole-window case stayed a whole window), and inRange alone
/// draws small values at the small sizes a run starts with.
rc::Gen<bool> one_in(int k) {
  return rc::gen::map(rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, k)), [k](int v) { return v == k - 1; });
}

}  // namespace

RelativeBias2dCase::Grid RelativeBias2dCase::grid() const {
  Grid g;
  if (spec.class_token) g.rows.push_back(class_row), g.cols.push_back(class_col);
  const std::int64_t wr = spec.window_rows, wc = spec.window_cols;
  if (whole_window())
    for (std::int64_t k = 0; k < wr * wc; ++k) g.rows.push_back(row0 + k / wc), g.cols.push_back(col0 + k % wc);
  else
    for (std::size_t t = 0; t < drawn_rows.size(); ++t)
      g.rows.push_back(row0 + drawn_rows[t] % wr), g.cols.push_back(col0 + drawn_cols[t] % wc);
  return g;
}

std::vector<std::string> RelativeBias2dCase::tags() const {
  std::vector<std::string> t = {spec.window_rows == spec.window_cols ? "square window" : "non-square window"};
  if (spec.class_token) t.emplace_back("class token");
  if (whole_window()) t.emplace_back("whole window");
  t.push_back(gen::position_class(std::max(row0, col0)));
  return t;
}

rc::Gen<RelativeBias2dCase> relative_bias_2d_case_gen() {
  using P = std::int64_t;
  const auto spec = rc::gen::apply(
      [](int heads, std::pair<int, int> w, bool class_token) {
        return RelativeBias2dSpec{heads, w.first, w.second, class_token};
      },
      rc::gen::inRange(1, 5), window(), one_in(3));
  // Offsets drawn below 2^12 and reduced modulo the window when the case runs.
  const auto offsets = rc::gen::mapcat(rc::gen::inRange(2, 25), [](int k) {
    const auto one = rc::gen::container<std::vector<P>>(static_cast<std::size_t>(k), rc::gen::inRange<P>(0, 4096));
    return rc::gen::pair(one, one);
  });
  const auto origin = rc::gen::oneOf(rc::gen::just<P>(0), gen::position_below(tol::kMaxPosition - 4096));
  return rc::gen::apply(
      [](RelativeBias2dSpec s, bool raster, std::pair<std::vector<P>, std::vector<P>> patches, P r0, P c0, P cls_r,
         P cls_c, std::uint32_t data) {
        // Whole windows only where they are small (a selftest's time goes as the patches squared).
        const bool whole = raster && s.window_rows * s.window_cols <= 64;
        return RelativeBias2dCase{s,     whole, std::move(patches.first), std::move(patches.second), r0, c0, cls_r,
                                  cls_c, data};
      },
      spec, one_in(4), offsets, origin, origin, gen::position_below(tol::kMaxPosition),
      gen::position_below(tol::kMaxPosition), gen::data_seed());
}

std::vector<float> relative_bias_2d_table(const RelativeBias2dCase& c, DType dt) {
  return gen::values(c.data, 1, static_cast<std::size_t>(c.spec.table_rows()) * static_cast<std::size_t>(c.spec.heads),
                     dt);
}

std::vector<float> encoder_relative_bias_2d(Encoder& enc, DType dt, const RelativeBias2dCase& c,
                                            const std::vector<float>& table, std::span<const std::int64_t> rows,
                                            std::span<const std::int64_t> cols, std::string& failure) {
  const std::size_t n = rows.size();
  std::vector<float> out = poisoned(static_cast<std::size_t>(c.spec.heads) * n * n);
  enc.run(RelativeBias2d{c.spec, dt, table, rows, cols, out});
  if (failure.empty()) failure = classify_outputs(dt, out, "bias");
  return out;
}

}  // namespace pecheck::props

namespace pecheck {
// The case type erased once for every theorem file (see erased() in harness/runner.hpp).
template rc::Gen<AnyCase> erased(rc::Gen<props::RelativeBias2dCase>);
}  // namespace pecheck
