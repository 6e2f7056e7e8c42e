// Every shape of a call checked against its spec, shared by all backends (and by each call type's
// check()): std::invalid_argument naming the tensor whose size is wrong, or the spec's own error.
#pragma once

#include <cstddef>

#include "spec/conventions.hpp"
#include "spec/conventions_2d.hpp"
#include "spec/mrope.hpp"

namespace pecheck::shapes {
void sinusoidal(const SinusoidalSpec&, std::size_t n, std::size_t out);
void learned(const LearnedSpec&, std::size_t table, std::size_t n, std::size_t x);
void rope(const RopeSpec&, int heads, std::size_t n, std::size_t x);
void alibi(const AlibiSpec&, std::size_t n, std::size_t out);
void sinusoidal2d(const Sinusoidal2dSpec&, std::size_t rows, std::size_t cols, std::size_t out);
void rope2d(const Rope2dSpec&, int heads, std::size_t rows, std::size_t cols, std::size_t x);
void mrope(const MropeSpec&, int heads, std::size_t temporal, std::size_t height, std::size_t width, std::size_t x);
void t5(const T5Spec&, std::size_t table, std::size_t n, std::size_t out);
void shaw(const ShawSpec&, std::size_t q, std::size_t k, std::size_t table, std::size_t n, std::size_t out);
void attention(const AttentionSpec&, std::size_t n, std::size_t q, std::size_t k, std::size_t v, std::size_t table,
               std::size_t out);
}  // namespace pecheck::shapes
