// The oracle's number type: MPFR at 50 decimal digits, correctly rounded elementary functions.
#pragma once

#include <boost/multiprecision/mpfr.hpp>

namespace pecheck::ref {

/// Default Real of the reference: mpfr_float_50 (the MPFR backend at 50 decimal digits, ~167
/// bits) with expression templates off, so `auto` and Eigen see plain values.
using Mpfr50 =
    boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<50>, boost::multiprecision::et_off>;
using DefaultReal = Mpfr50;

template <class Real>
double to_double(const Real& x) {
  return static_cast<double>(x);
}

}  // namespace pecheck::ref
