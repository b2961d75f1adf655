// The first-order optimiser of the variational methods (out of the trainer,
// issue 9: the inference seam picks its optimiser; NNG and SGHMC bring theirs).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace whvi::optim {

// Adam over all parameters at once: the parameters and their gradients are
// re-homed as views into two flat buffers, so autograd accumulates straight
// into one gradient array and the update is a single loop over raw memory
// (LibTorch's optimiser launches ~10 small ops per parameter tensor, which
// dominates the step time of these small networks). Each segment (one
// parameter tensor) has its own learning-rate factor and step count, so a
// frozen segment keeps no moments, as in PyTorch's Adam with requires_grad
// off.
// The update rule (training.optimizer): Adam (β = 0.9, 0.999, ε = 1e-8), SGD
// with momentum μ (PyTorch's: b ← μ b + g, the first b = g; p ← p - lr b) or
// RMSprop (PyTorch's defaults: v ← 0.99 v + 0.01 g², p ← p - lr g / (√v + 1e-8)).
enum class Rule { kAdam, kSgd, kRmsprop };

template <class T>
class FlatAdam {
 public:
  struct Segment {
    int64_t offset, size;
    double lr_factor;
    bool frozen = false;
    int64_t t = 0;
  };

  explicit FlatAdam(const std::vector<torch::Tensor>& params, torch::ScalarType dtype, Rule rule = Rule::kAdam,
                    double momentum = 0.9)
      : rule_(rule), momentum_(momentum) {
    int64_t total = 0;
    for (const auto& p : params) total += p.numel();
    flat_ = torch::empty({total}, torch::TensorOptions().dtype(dtype));
    grad_ = torch::zeros({total}, flat_.options());
    m_ = torch::zeros({total}, flat_.options());
    v_ = torch::zeros({total}, flat_.options());
    int64_t off = 0;
    torch::NoGradGuard ng;
    for (auto p : params) {
      const int64_t n = p.numel();
      auto view = flat_.narrow(0, off, n).view(p.sizes());
      view.copy_(p);
      p.set_data(view);
      p.mutable_grad() = grad_.narrow(0, off, n).view(p.sizes());
      segments_.push_back({off, n, 1.0});
      off += n;
    }
  }

  Segment& segment(size_t i) { return segments_[i]; }
  // Largest |parameter| (NaN if any is NaN).
  double max_abs_param() const {
    const T* p = flat_.data_ptr<T>();
    double m = 0;
    for (int64_t i = 0, n = flat_.numel(); i < n; ++i) {
      const double a = std::fabs(static_cast<double>(p[i]));
      if (!(a <= m)) m = a;  // propagates NaN
      if (std::isnan(m)) return m;
    }
    return m;
  }
  void zero_grad() { grad_.zero_(); }

  void step(double lr) {
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

 private:
  Rule rule_ = Rule::kAdam;
  double momentum_ = 0.9;
  torch::Tensor flat_, grad_, m_, v_;
  std::vector<Segment> segments_;
};

}  // namespace whvi::optim
