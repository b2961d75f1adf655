// RMSprop with PyTorch's defaults: v ← 0.99 v + 0.01 g², p ← p − lr g / (√v + 1e-8).
#include <cmath>

#include "optim/rule.h"

namespace whvi::optim {

namespace {

class Rmsprop final : public LoopRule<Rmsprop> {
 public:
  using LoopRule::update;
  void update(at::Tensor p, const at::Tensor& g, at::Tensor, at::Tensor v, int64_t,
              double lr) const override {
    v.mul_(0.99).addcmul_(g, g, 0.01);
    p.addcdiv_(g, v.sqrt().add_(1e-8), -lr);
  }

  // the loop of both raw-memory update()s (LoopRule)
  template <class T>
  static void loop(T* p, const T* g, T*, T* v, int64_t n, int64_t, double lr) {
    const T step = static_cast<T>(lr), alpha = T(0.99), teps = T(1e-8);
    for (int64_t i = 0; i < n; ++i) {
      v[i] = alpha * v[i] + (T(1) - alpha) * g[i] * g[i];
      p[i] -= step * g[i] / (std::sqrt(v[i]) + teps);
    }
  }
};

std::shared_ptr<const UpdateRule> make_rmsprop(const options::None&) { return std::make_shared<Rmsprop>(); }

}  // namespace

RuleKind rmsprop_rule() { return rule_kind("rmsprop", make_rmsprop); }

}  // namespace whvi::optim
