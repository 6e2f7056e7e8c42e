/* Storage for the C example plugins: one element of a pecheck_tensor read as a double, and a
 * double rounded once (to nearest, ties to even) into fp32, bf16 or fp16 storage. */
#ifndef PECHECK_EXAMPLE_STORAGE_H
#define PECHECK_EXAMPLE_STORAGE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pecheck/encoder_abi.h"

static inline uint16_t bf16_from_double(double v) {
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if (isnan(f)) return (uint16_t)((bits >> 16) | 0x40);
  bits += 0x7FFFu + ((bits >> 16) & 1u); /* round to nearest, ties to even */
  return (uint16_t)(bits >> 16);
}

static inline uint16_t f16_from_double(double v) {
  const uint16_t sign = signbit(v) ? 0x8000 : 0;
  const double a = fabs(v);
  if (isnan(v)) return 0x7E00;
  if (a >= 65520.0) return sign | 0x7C00;                                   /* rounds to infinity */
  if (a < ldexp(1.0, -14)) return sign | (uint16_t)nearbyint(ldexp(a, 24)); /* subnormal, in units of 2^-24 */
  int e;
  frexp(a, &e);
  int exponent = e - 1;
  double m = nearbyint(ldexp(a, 10 - exponent)); /* in [1024, 2048] */
  if (m == 2048.0) {
    m = 1024.0;
    ++exponent;
  }
  if (exponent > 15) return sign | 0x7C00;
  return sign | (uint16_t)((exponent + 15) << 10) | (uint16_t)(m - 1024.0);
}

static inline double f16_to_double(uint16_t b) {
  const int exponent = (b >> 10) & 0x1F, mantissa = b & 0x3FF;
  double a;
  if (exponent == 0)
    a = ldexp(mantissa, -24);
  else if (exponent == 31)
    a = mantissa ? NAN : INFINITY;
  else
    a = ldexp(mantissa + 1024, exponent - 25);
  return (b & 0x8000) ? -a : a;
}

static inline double load(const pecheck_tensor* t, int64_t offset) {
  if (t->dtype == PECHECK_F32) return ((const float*)t->data)[offset];
  const uint16_t b = ((const uint16_t*)t->data)[offset];
  if (t->dtype == PECHECK_F16) return f16_to_double(b);
  const uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline void store(const pecheck_tensor* t, int64_t offset, double v) {
  if (t->dtype == PECHECK_F32)
    ((float*)t->data)[offset] = (float)v;
  else
    ((uint16_t*)t->data)[offset] = t->dtype == PECHECK_BF16 ? bf16_from_double(v) : f16_from_double(v);
}

#endif /* PECHECK_EXAMPLE_STORAGE_H */
