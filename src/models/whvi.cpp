// WHVI layer (Rossi, Marmin & Filippone 2020): W = S1 H diag(g) H S2 with the
// unnormalised Sylvester H, q(g) = N(mu, diag(exp(logvar))).
//
// Shapes follow the paper's Algorithm 1: the input (in) is zero-padded to
// D = next power of two, ceil(out / D) blocks of size D are stacked and the
// output is truncated to `out`. Each block has its own S1, S2 and, by
// default, its own g (model.whvi.shared_g: one g for all blocks, as the
// authors' linear layer).
//
// Parameterisation (one convention everywhere, unlike the public code that
// mixes log-variance and log-std, see shared/notes/whvi-reference.md §1.3):
// g_logvar is a log variance, used both for sampling and in the KL.
//
// Initialisation and prior (README "WHVI choices"): S1, S2 ~ U(+-sqrt(6/D))
// (the authors' kaiming-uniform), mu ~ N(0, s^2) with s = 1/sqrt(2) so that
// the mean weight matrix has He variance 2/D, logvar = log(1e-4), prior
// N(0, lambda I) with lambda = 1. Because S1 and S2 are free, lambda only
// sets the scale at which the optimiser must move g: the paper's 1e-5 makes
// the KL pull g to a scale Adam (lr 1e-3) cannot follow, and the layer
// collapses to the prior (notes §10).
//
// Sampling: one independent noise draw of g per row (data point x MC
// sample), pushed through the fused kernel: the local reparameterisation.
#include <cmath>

#include "fwht.h"
#include "models/layer.h"
#include "ops/fwht_op.h"

namespace whvi::models {
namespace {

class WhviLayer : public BayesianLayer {
 public:
  WhviLayer(int64_t in, int64_t out, const config::Config& cfg, const at::Generator& gen)
      : BayesianLayer("whvi", in, out) {
    d_ = int64_t{1} << kernels::log2_exact(in);
    blocks_ = (out + d_ - 1) / d_;
    shared_ = cfg.get_bool("model.whvi.shared_g");
    const int64_t groups = shared_ ? 1 : blocks_;
    prior_var_ = cfg.get_float("model.whvi.prior_var");
    bias_kind_ = cfg.get_string("model.whvi.bias");
    bias_prior_var_ = cfg.get_float("model.whvi.bias_prior_var");
    torch::NoGradGuard ng;
    const double a = std::sqrt(6.0 / static_cast<double>(d_));
    s1_ = register_parameter("s1", torch::empty({blocks_, d_}).uniform_(-a, a, gen));
    s2_ = register_parameter("s2", torch::empty({blocks_, d_}).uniform_(-a, a, gen));
    g_mu_ = register_parameter(
        "g_mu", torch::randn({groups, d_}, gen) * cfg.get_float("model.whvi.init_g_mean_std"));
    g_logvar_ = register_parameter("g_logvar",
                                   torch::full({groups, d_}, cfg.get_float("model.whvi.init_g_logvar")));
    if (bias_kind_ != "none") b_mu_ = register_parameter("b_mu", torch::zeros({out}));
    if (bias_kind_ == "bayesian")
      b_logvar_ = register_parameter("b_logvar", torch::full({out}, std::log(bias_prior_var_) - 4.0));
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, Mode mode, const at::Generator& gen) override {
    const int64_t n = x.size(0);
    auto xp = d_ == in_features() ? x : torch::constant_pad_nd(x, {0, d_ - in_features()});
    torch::Tensor eps;
    if (mode == Mode::kSample) eps = torch::randn({n, shared_ ? 1 : blocks_, d_}, gen, x.options());
    auto y = ops::whvi_matvec(xp, eps, s1_, s2_, g_mu_, (0.5 * g_logvar_).exp(), shared_);
    y = y.view({n, blocks_ * d_});
    if (blocks_ * d_ != out_features()) y = y.narrow(1, 0, out_features());
    if (bias_kind_ == "deterministic") return y + b_mu_;
    if (bias_kind_ == "bayesian") {
      if (mode == Mode::kMean) return y + b_mu_;
      return y + b_mu_ + (0.5 * b_logvar_).exp() * torch::randn({n, out_features()}, gen, x.options());
    }
    return y;
  }

  torch::Tensor kl_impl() override {
    auto kl = kl_diag_gaussian(g_mu_, g_logvar_, prior_var_);
    if (bias_kind_ == "bayesian") kl = kl + kl_diag_gaussian(b_mu_, b_logvar_, bias_prior_var_);
    return kl;
  }

 private:
  int64_t d_ = 1, blocks_ = 1;
  bool shared_ = false;
  double prior_var_ = 1, bias_prior_var_ = 1;
  std::string bias_kind_;
  torch::Tensor s1_, s2_, g_mu_, g_logvar_, b_mu_, b_logvar_;
};

}  // namespace

LayerPtr make_whvi_layer(int64_t in, int64_t out, const config::Config& cfg, const LayerContext& ctx) {
  return std::make_shared<WhviLayer>(in, out, cfg, ctx.gen);
}

}  // namespace whvi::models
