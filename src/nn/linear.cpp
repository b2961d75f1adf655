// Deterministic linear layer, for the sampling methods (SGHMC moves its
// weights; there is no variational distribution). Its kl() is the negative
// log prior of the weights up to a constant,
//   (|W|^2 + |b|^2) / (2 prior_var)        (prior N(0, prior_var) per scalar),
// so "loss = (N/B) nll + kl" is the potential energy U(theta) of the posterior.
// prior_var = model.sghmc.prior_var, 0 meaning 1/fan_in (as MFG's default), so
// that the prior over functions keeps its scale as the network widens.
// Init: U(+-1/sqrt(fan_in)) for W and b (LibTorch's Linear default).
#include <cmath>

#include "nn/layer.h"
#include "onnx/graph.h"

namespace whvi::models {
namespace {

class LinearLayer : public BayesianLayer {
 public:
  LinearLayer(int64_t in, int64_t out, double prior_var, const at::Generator& gen)
      : BayesianLayer("linear", in, out), prior_var_(prior_var) {
    const double a = 1.0 / std::sqrt(static_cast<double>(in));
    torch::NoGradGuard ng;
    w_ = register_parameter("w", torch::empty({in, out}).uniform_(-a, a, gen));
    b_ = register_parameter("b", torch::empty({out}).uniform_(-a, a, gen));
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx&) override { return torch::addmm(b_, x, w_); }
  torch::Tensor kl_impl() override { return (w_.square().sum() + b_.square().sum()) * (0.5 / prior_var_); }
  std::string export_onnx(onnx::Graph& g, const std::string& x) const override { return onnx::linear(g, x, w_, b_); }

 private:
  double prior_var_ = 1;
  torch::Tensor w_, b_;
};

}  // namespace

// The deterministic layer's prior (SGHMC's target, an ensemble's MAP fit).
struct LinearOptions {
  double prior_var = 0;
  template <class V>
  void visit(V& v) {
    v.num("model.sghmc.prior_var", prior_var, 0, options::kInf, "prior N(0, v) on every weight and bias of the deterministic network; 0 = 1/fan_in (as model.mfg.prior_var)");
  }
};

LayerPtr make_linear_layer(int64_t in, int64_t out, const LinearOptions& o, const LayerContext& ctx) {
  const double pv = o.prior_var;
  return std::make_shared<LinearLayer>(in, out, pv > 0 ? pv : 1.0 / static_cast<double>(in), ctx.gen);
}

LayerKind linear_layer_kind() { return layer_kind("linear", make_linear_layer).exports(""); }

}  // namespace whvi::models
