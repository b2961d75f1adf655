// SGD with momentum μ, as PyTorch's: b ← μ b + g (the first b = g), p ← p − lr b.
#include "optim/rule.h"

namespace whvi::optim {

namespace {

struct SgdOptions {
  double momentum = 0.9;
  template <class V>
  void visit(V& v) {
    v.num("training.momentum", momentum, 0, 0.999, "momentum of training.optimizer: sgd");
    v.idle_when("training.optimizer", {"adam"});
  }
};

class Sgd final : public LoopRule<Sgd> {
 public:
  using LoopRule::update;
  explicit Sgd(double momentum) : momentum_(momentum) {}
  void update(at::Tensor p, const at::Tensor& g, at::Tensor m, at::Tensor, int64_t t,
              double lr) const override {
    if (t == 1) m.copy_(g);
    else m.mul_(momentum_).add_(g);
    p.add_(m, -lr);
  }

  // the loop of both raw-memory update()s (LoopRule)
  template <class T>
  void loop(T* p, const T* g, T* m, T*, int64_t n, int64_t t, double lr) const {
    const T step = static_cast<T>(lr), mu = static_cast<T>(momentum_);
    for (int64_t i = 0; i < n; ++i) {
      m[i] = t == 1 ? g[i] : mu * m[i] + g[i];
      p[i] -= step * m[i];
    }
  }

 private:
  double momentum_;
};

std::shared_ptr<const UpdateRule> make_sgd(const SgdOptions& o) { return std::make_shared<Sgd>(o.momentum); }

}  // namespace

RuleKind sgd_rule() { return rule_kind("sgd", make_sgd); }

}  // namespace whvi::optim
