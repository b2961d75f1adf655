// FlatAdam's update loop (flat_adam.h), in its own translation unit so that it
// can be compiled with -fno-math-errno: without it std::sqrt keeps a scalar
// error path that stops GCC from vectorising the loop (5 ns a parameter).
// Vectorised sqrt and division round exactly as the scalar ones, and nothing
// is reassociated, so the numbers are the same.
#include "optim/flat_adam.h"

namespace whvi::optim {

template <class T>
void FlatAdam<T>::step(double lr) {
  constexpr double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  T* p = flat_.data_ptr<T>();
  const T* g = grad_.data_ptr<T>();
  T* m = m_.data_ptr<T>();
  T* v = v_.data_ptr<T>();
  for (auto& s : segments_) {
    if (s.frozen) continue;
    ++s.t;
    if (rule_ == Rule::kSgd) {
      const T step = static_cast<T>(lr * s.lr_factor), mu = static_cast<T>(momentum_);
      for (int64_t i = s.offset; i < s.offset + s.size; ++i) {
        m[i] = s.t == 1 ? g[i] : mu * m[i] + g[i];
        p[i] -= step * m[i];
      }
      continue;
    }
    if (rule_ == Rule::kRmsprop) {
      const T step = static_cast<T>(lr * s.lr_factor), alpha = T(0.99), teps = T(1e-8);
      for (int64_t i = s.offset; i < s.offset + s.size; ++i) {
        v[i] = alpha * v[i] + (T(1) - alpha) * g[i] * g[i];
        p[i] -= step * g[i] / (std::sqrt(v[i]) + teps);
      }
      continue;
    }
    const double c1 = 1.0 - std::pow(b1, static_cast<double>(s.t));
    const double c2 = 1.0 - std::pow(b2, static_cast<double>(s.t));
    const T step = static_cast<T>(lr * s.lr_factor / c1);
    const T inv_sqrt_c2 = static_cast<T>(1.0 / std::sqrt(c2));
    const T tb1 = b1, tb2 = b2, teps = eps;
    for (int64_t i = s.offset; i < s.offset + s.size; ++i) {
      m[i] = tb1 * m[i] + (T(1) - tb1) * g[i];
      v[i] = tb2 * v[i] + (T(1) - tb2) * g[i] * g[i];
      p[i] -= step * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + teps);
    }
  }
}

template class FlatAdam<float>;
template class FlatAdam<double>;

}  // namespace whvi::optim
