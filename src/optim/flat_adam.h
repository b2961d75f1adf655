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
    // on the parameters' device (training.device)
    const auto device = params.empty() ? torch::Device(torch::kCPU) : params.front().device();
    flat_ = torch::empty({total}, torch::TensorOptions().dtype(dtype).device(device));
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
    if (!flat_.is_cpu()) return flat_.numel() == 0 ? 0.0 : flat_.abs().max().item<double>();  // max propagates NaN
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

  // One update of every segment that is not frozen (flat_adam.cpp: compiled
  // with -fno-math-errno so that the sqrt does not stop the loop from being
  // vectorised; the same IEEE operations in the same order either way).
  // On another device (training.device: cuda) step() takes step_tensor_ops:
  // the same rule as tensor operations on runs of segments that share their
  // step count, learning-rate factor and frozen state; the same numbers as
  // the loop to float rounding (tests/test_inference.cpp checks it on the CPU).
  void step(double lr);
  void step_tensor_ops(double lr);

 private:
  Rule rule_ = Rule::kAdam;
  double momentum_ = 0.9;
  torch::Tensor flat_, grad_, m_, v_;
  std::vector<Segment> segments_;
};

extern template class FlatAdam<float>;
extern template class FlatAdam<double>;

}  // namespace whvi::optim
