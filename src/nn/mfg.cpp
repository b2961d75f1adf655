// Mean-field Gaussian layer with the local reparameterisation trick
// (Kingma et al. 2015): weights and biases ~ N(mu, exp(logvar)) independently;
// the pre-activation of every row is sampled from its exact Gaussian marginal
//   mean = x mu_W + mu_b,   var = x^2 exp(logvar_W) + exp(logvar_b).
// Prior N(0, prior_var) on weights (default 1/fan_in, as vardl) and
// N(0, bias_prior_var) on biases; closed-form KL.
// Init: mu_W ~ U(+-s/sqrt(fan_in)), mu_b = 0, logvar = model.mfg.init_logvar.
#include <cmath>

#include "common/draws.h"
#include "nn/fused_ops.h"
#include "nn/layer.h"
#include "nn/layer_options.h"
#include "onnx/graph.h"

namespace whvi::models {
namespace {

class MfgLayer : public BayesianLayer, public FusedLayer, public GroupLayer {
 public:
  MfgLayer(int64_t in, int64_t out, const MfgOptions& o, const at::Generator& gen)
      : BayesianLayer("mfg", in, out) {
    prior_var_ = o.prior_var > 0 ? o.prior_var : 1.0 / static_cast<double>(in);
    bias_prior_var_ = o.bias_prior_var;
    const double lv = o.init_logvar;
    const double a = o.init_mean_scale / std::sqrt(static_cast<double>(in));
    torch::NoGradGuard ng;
    w_mu_ = register_parameter("w_mu", torch::empty({in, out}).uniform_(-a, a, gen));
    w_logvar_ = register_parameter("w_logvar", torch::full({in, out}, lv));
    b_mu_ = register_parameter("b_mu", torch::zeros({out}));
    b_logvar_ = register_parameter("b_logvar", torch::full({out}, lv));
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    const Mode mode = ctx.mode;
    const auto& gen = ctx.gen;
    auto mean = torch::addmm(b_mu_, x, w_mu_);
    if (mode == Mode::kMean) return mean;
    auto var = torch::addmm(b_logvar_.exp(), x.square(), w_logvar_.exp());
    return mean + var.sqrt() * whvi::randn(mean.sizes(), gen, mean.options());
  }

  // Export: the local reparameterisation, one normal per output element drawn at every call.
  std::string export_onnx(onnx::Graph& g, const std::string& x) const override {
    const auto mean = onnx::linear(g, x, w_mu_, b_mu_);
    const auto var = onnx::linear(g, g.op("Mul", {x, x}), w_logvar_.exp(), b_logvar_.exp());
    return onnx::gaussian_draw(g, mean, g.op("Sqrt", {var}));
  }

  torch::Tensor kl_impl() override {
    return kl_diag_gaussian(w_mu_, w_logvar_, prior_var_) +
           kl_diag_gaussian(b_mu_, b_logvar_, bias_prior_var_);
  }

  // Fused step: the same draws as forward_impl (one normal per output element).
  // The mean's and the variance's halves are independent: fused_ops::both runs
  // them at once when the run has two threads.
  FusedLayer* fused() override { return this; }
  torch::Tensor fused_forward(const torch::Tensor& x, const at::Generator& gen, FusedCache& c) override {
    torch::NoGradGuard ng;
    const int64_t n = x.size(0), out = out_features();
    const auto o = x.options();
    c[0] = x;
    auto& mean = c.buffer(1, {n, out}, o);
    auto& wv = c.buffer(2, w_logvar_.sizes(), o);
    auto& bv = c.buffer(3, b_logvar_.sizes(), o);
    auto& x2 = c.buffer(4, x.sizes(), o);
    auto& sd = c.buffer(5, {n, out}, o);
    auto& eps = c.buffer(6, {n, out}, o);
    auto& y = c.buffer(7, {n, out}, o);
    fused_ops::both(
        [&] {
          fused_ops::addmm_out(mean, b_mu_, x, w_mu_);
          whvi::normal_(eps, 0, 1, gen);
        },
        [&] {
          at::exp_out(wv, w_logvar_);
          at::exp_out(bv, b_logvar_);
          fused_ops::square_out(x2, x);
          fused_ops::addmm_out(sd, bv, x2, wv);
          fused_ops::sqrt_(sd);
        });
    fused_wv_ = wv;
    fused_bv_ = bv;
    at::addcmul_out(y, mean, sd, eps);
    return y;
  }
  torch::Tensor fused_backward(const torch::Tensor& g, FusedCache& c, bool need_dx) override {
    torch::NoGradGuard ng;
    const auto &x = c[0], &wv = c[2], &bv = c[3], &x2 = c[4], &sd = c[5], &eps = c[6];
    // dL/dvar = g eps / (2 sd)
    auto& dv = c.buffer(8, g.sizes(), g.options());
    fused_ops::mul_div_scale_out(dv, g, eps, sd, 0.5);
    auto& t = c.buffer(9, wv.sizes(), g.options());
    auto& dx = c.buffer(10, x.sizes(), g.options());
    auto& dx2 = c.buffer(11, x.sizes(), g.options());
    fused_ops::both(
        [&] {  // through the mean
          fused_ops::xt_mm_out(w_mu_.mutable_grad(), x, g, 1.0);
          fused_ops::add_(b_mu_.mutable_grad(), g.sum(0));
          if (need_dx) fused_ops::mm_wt_out(dx, g, w_mu_);
        },
        [&] {  // through the variance
          fused_ops::xt_mm_out(t, x2, dv, 0.0);
          w_logvar_.mutable_grad().addcmul_(t, wv);
          b_logvar_.mutable_grad().addcmul_(dv.sum(0), bv);
          if (need_dx) fused_ops::mm_wt_out(dx2, dv, wv);
        });
    if (!need_dx) return {};
    dx.addcmul_(dx2, x, 2.0);
    return dx;
  }
  // The KL's gradient needs e^logvar, which fused_forward made for this step
  // (LibTorch's vectorised exp, as the autograd KL's): reused, not recomputed
  // per element in double (that was ~22% of a 2 x 128 MFG step).
  double fused_kl_backward() override {
    WHVI_ASSERT(fused_wv_.defined() && fused_bv_.defined());
    return kl_diag_gaussian_backward_exp(w_mu_, w_logvar_, fused_wv_, prior_var_) +
           kl_diag_gaussian_backward_exp(b_mu_, b_logvar_, fused_bv_, bias_prior_var_);
  }

  GroupLayer* group() override { return this; }
  torch::Tensor forward_group(const std::vector<BayesianLayer*>& group, const torch::Tensor& x, Mode mode,
                              const std::vector<at::Generator>& gens, torch::Tensor* kl) override {
    const auto w_mu = stack_group<MfgLayer>(group, [](MfgLayer& l) { return l.w_mu_; });
    const auto w_lv = stack_group<MfgLayer>(group, [](MfgLayer& l) { return l.w_logvar_; });
    const auto b_mu = stack_group<MfgLayer>(group, [](MfgLayer& l) { return l.b_mu_; });
    const auto b_lv = stack_group<MfgLayer>(group, [](MfgLayer& l) { return l.b_logvar_; });
    if (kl)
      *kl = kl_diag_gaussian_per_split(w_mu, w_lv, prior_var_) + kl_diag_gaussian_per_split(b_mu, b_lv, bias_prior_var_);
    auto mean = torch::baddbmm(b_mu.unsqueeze(1), x, w_mu);
    if (mode == Mode::kMean) return mean;
    auto var = torch::baddbmm(b_lv.exp().unsqueeze(1), x.square(), w_lv.exp());
    const int64_t r = x.size(1), out = out_features();
    const auto eps = draw_per_split(gens, [&](const at::Generator& g) { return whvi::randn({r, out}, g, mean.options()); });
    return mean + var.sqrt() * eps;
  }

 private:
  double prior_var_ = 1, bias_prior_var_ = 1;
  torch::Tensor w_mu_, w_logvar_, b_mu_, b_logvar_;
  torch::Tensor fused_wv_, fused_bv_;  // e^logvar from the last fused_forward (the KL's gradient reuses them)
};

}  // namespace

LayerPtr make_mfg_layer(int64_t in, int64_t out, const MfgOptions& o, const LayerContext& ctx) {
  return std::make_shared<MfgLayer>(in, out, o, ctx.gen);
}

LayerKind mfg_layer_kind() { return layer_kind("mfg", make_mfg_layer).fused("").batched("").exports(""); }

}  // namespace whvi::models
