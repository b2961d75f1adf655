// Adam (Kingma & Ba, 2015) with PyTorch's defaults: β = 0.9, 0.999, ε = 1e-8,
// bias-corrected per segment (each segment counts its own updates, so a
// frozen one keeps no moments).
#include <cmath>

#include "optim/rule.h"

namespace whvi::optim {

namespace {

constexpr double kB1 = 0.9, kB2 = 0.999, kEps = 1e-8;

class Adam final : public LoopRule<Adam> {
 public:
  using LoopRule::update;
  void update(at::Tensor p, const at::Tensor& g, at::Tensor m, at::Tensor v, int64_t t,
              double lr) const override {
    const double c1 = 1.0 - std::pow(kB1, static_cast<double>(t));
    const double c2 = 1.0 - std::pow(kB2, static_cast<double>(t));
    m.mul_(kB1).add_(g, 1.0 - kB1);
    v.mul_(kB2).addcmul_(g, g, 1.0 - kB2);
    p.addcdiv_(m, v.sqrt().mul_(1.0 / std::sqrt(c2)).add_(kEps), -(lr / c1));
  }

  // the loop of both raw-memory update()s (LoopRule)
  template <class T>
  static void loop(T* p, const T* g, T* m, T* v, int64_t n, int64_t t, double lr) {
    const double c1 = 1.0 - std::pow(kB1, static_cast<double>(t));
    const double c2 = 1.0 - std::pow(kB2, static_cast<double>(t));
    const T step = static_cast<T>(lr / c1);
    const T inv_sqrt_c2 = static_cast<T>(1.0 / std::sqrt(c2));
    const T tb1 = kB1, tb2 = kB2, teps = kEps;
    for (int64_t i = 0; i < n; ++i) {
      m[i] = tb1 * m[i] + (T(1) - tb1) * g[i];
      v[i] = tb2 * v[i] + (T(1) - tb2) * g[i] * g[i];
      p[i] -= step * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + teps);
    }
  }
};

std::shared_ptr<const UpdateRule> make_adam(const options::None&) { return std::make_shared<Adam>(); }

}  // namespace

RuleKind adam_rule() { return rule_kind("adam", make_adam); }

std::shared_ptr<const UpdateRule> default_rule() {
  static const auto adam = make_adam({});
  return adam;
}

}  // namespace whvi::optim
