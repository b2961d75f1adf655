// FlatAdam's update loop (flat_adam.h), in its own translation unit so that it
// can be compiled with -fno-math-errno: without it std::sqrt keeps a scalar
// error path that stops GCC from vectorising the loop (5 ns a parameter).
// Vectorised sqrt and division round exactly as the scalar ones, and nothing
// is reassociated, so the numbers are the same.
#include "optim/flat_adam.h"

namespace whvi::optim {

template <class T>
void FlatAdam<T>::step(double lr) {
  if (!flat_.is_cpu()) return step_tensor_ops(lr);
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

template <class T>
void FlatAdam<T>::step_tensor_ops(double lr) {
  constexpr double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  torch::NoGradGuard ng;
  for (auto& s : segments_)
    if (!s.frozen) ++s.t;
  for (size_t i = 0; i < segments_.size();) {
    const auto& s = segments_[i];
    size_t j = i + 1;  // segments i..j-1: one run with the same state, contiguous in the buffers
    while (j < segments_.size() && segments_[j].frozen == s.frozen && segments_[j].t == s.t &&
           segments_[j].lr_factor == s.lr_factor)
      ++j;
    const int64_t off = s.offset, n = segments_[j - 1].offset + segments_[j - 1].size - off;
    i = j;
    if (s.frozen || n == 0) continue;
    auto p = flat_.narrow(0, off, n), g = grad_.narrow(0, off, n), m = m_.narrow(0, off, n),
         v = v_.narrow(0, off, n);
    if (rule_ == Rule::kSgd) {
      if (s.t == 1) m.copy_(g);
      else m.mul_(momentum_).add_(g);
      p.add_(m, -(lr * s.lr_factor));
      continue;
    }
    if (rule_ == Rule::kRmsprop) {
      v.mul_(0.99).addcmul_(g, g, 0.01);
      p.addcdiv_(g, v.sqrt().add_(1e-8), -(lr * s.lr_factor));
      continue;
    }
    const double c1 = 1.0 - std::pow(b1, static_cast<double>(s.t));
    const double c2 = 1.0 - std::pow(b2, static_cast<double>(s.t));
    m.mul_(b1).add_(g, 1.0 - b1);
    v.mul_(b2).addcmul_(g, g, 1.0 - b2);
    p.addcdiv_(m, v.sqrt().mul_(1.0 / std::sqrt(c2)).add_(eps), -(lr * s.lr_factor / c1));
  }
}

template class FlatAdam<float>;
template class FlatAdam<double>;

}  // namespace whvi::optim
