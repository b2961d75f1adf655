// FlatOptimizer's walk over the segments (flat_optimizer.h); the update of
// each segment is the rule's (optim/rule.h).
#include "optim/flat_optimizer.h"

namespace whvi::optim {

template <class T>
void FlatOptimizer<T>::step(double lr) {
  if (!flat_.is_cpu()) return step_tensor_ops(lr);
  T* p = flat_.data_ptr<T>();
  const T* g = grad_.data_ptr<T>();
  T* m = m_.data_ptr<T>();
  T* v = v_.data_ptr<T>();
  for (auto& s : segments_) {
    if (s.frozen) continue;
    ++s.t;
    rule_->update(p + s.offset, g + s.offset, m + s.offset, v + s.offset, s.size, s.t, lr * s.lr_factor);
  }
}

template <class T>
void FlatOptimizer<T>::step_tensor_ops(double lr) {
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
    rule_->update(flat_.narrow(0, off, n), grad_.narrow(0, off, n), m_.narrow(0, off, n), v_.narrow(0, off, n), s.t,
                  lr * s.lr_factor);
  }
}

template class FlatOptimizer<float>;
template class FlatOptimizer<double>;

}  // namespace whvi::optim
