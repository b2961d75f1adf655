// One-dimensional minimisation by golden-section search.
#pragma once

#include <cmath>

namespace whvi {

// The middle of the last bracket of a golden-section search for the minimum
// of fn over [a, b] (fn unimodal there): the bracket shrinks by the golden
// ratio at most `iters` times, until it is narrower than `tol`.
template <class F>
double golden_section_min(F&& fn, double a, double b, int iters = 100, double tol = 1e-10) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a), fc = fn(c), fd = fn(d);
  for (int it = 0; it < iters && b - a > tol; ++it) {
    if (fc < fd) {
      b = d, d = c, fd = fc, c = b - g * (b - a), fc = fn(c);
    } else {
      a = c, c = d, fc = fd, d = a + g * (b - a), fd = fn(d);
    }
  }
  return (a + b) / 2;
}

}  // namespace whvi
