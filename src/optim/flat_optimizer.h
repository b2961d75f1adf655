// The flat first-order optimiser of the variational methods and deep
// ensembles: the update rule (optim/rule.h, training.optimizer) applied to
// every parameter at once.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "optim/rule.h"

namespace whvi::optim {

// The parameters and their gradients are re-homed as views into two flat
// buffers, so autograd accumulates straight into one gradient array and the
// update is a single loop over raw memory (LibTorch's optimiser launches ~10
// small ops per parameter tensor, which dominates the step time of these small
// networks). Each segment (one parameter tensor) has its own learning-rate
// factor and update count, so a frozen segment keeps no state, as in
// PyTorch's optimisers with requires_grad off.
template <class T>
class FlatOptimizer {
 public:
  struct Segment {
    int64_t offset, size;
    double lr_factor;
    bool frozen = false;
    int64_t t = 0;
  };

  explicit FlatOptimizer(const std::vector<torch::Tensor>& params, torch::ScalarType dtype,
                         std::shared_ptr<const UpdateRule> rule = default_rule())
      : rule_(std::move(rule)) {
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

  // One update of every segment that is not frozen, by the rule's loop (the
  // rules' files are compiled with -fno-math-errno so that the sqrt does not
  // stop the loop from being vectorised; the same IEEE operations in the same
  // order either way).
  // On another device (training.device: cuda) step() takes step_tensor_ops:
  // the same rule as tensor operations on runs of segments that share their
  // step count, learning-rate factor and frozen state; the same numbers as
  // the loop to float rounding (tests/test_inference.cpp checks it on the CPU).
  void step(double lr);
  void step_tensor_ops(double lr);

 private:
  std::shared_ptr<const UpdateRule> rule_;
  torch::Tensor flat_, grad_, m_, v_;
  std::vector<Segment> segments_;
};

extern template class FlatOptimizer<float>;
extern template class FlatOptimizer<double>;

}  // namespace whvi::optim
