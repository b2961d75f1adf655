// What the WHVI layer (whvi.cpp) and NF-WHVI (nf_whvi.cpp) share: their typed
// options, their parameters S1, S2, μ, log σ² and bias, registered and
// initialised in one fixed order (so the two layers start from the same
// values for the same generator), and the bias.
#pragma once

#include <cmath>
#include <string>

#include <torch/torch.h>

#include "config/config.h"
#include "fwht.h"
#include "models/layer.h"

namespace whvi::models {

struct WhviOptions {
  bool shared_g = false;                     // model.whvi.shared_g
  double prior_var = 1;                      // model.whvi.prior_var
  double init_g_mean_std = 0.7071067811865476;  // model.whvi.init_g_mean_std
  double init_g_logvar = -9.2103403719761836;   // model.whvi.init_g_logvar
  std::string bias = "deterministic";        // model.whvi.bias
  double bias_prior_var = 0.01;              // model.whvi.bias_prior_var
  static WhviOptions from(const config::Config& cfg) {
    WhviOptions o;
    o.shared_g = cfg.get_bool("model.whvi.shared_g");
    o.prior_var = cfg.get_float("model.whvi.prior_var");
    o.init_g_mean_std = cfg.get_float("model.whvi.init_g_mean_std");
    o.init_g_logvar = cfg.get_float("model.whvi.init_g_logvar");
    o.bias = cfg.get_string("model.whvi.bias");
    o.bias_prior_var = cfg.get_float("model.whvi.bias_prior_var");
    return o;
  }
};

struct WhviParams {
  WhviOptions opt;
  int64_t d = 1, blocks = 1, groups = 1;
  torch::Tensor s1, s2, g_mu, g_logvar, b_mu, b_logvar;

  // Registers the parameters on `m`: S1, S2 ~ U(±sqrt(6/D)), μ ~ N(0, s²),
  // log σ² constant, then the bias (b = 0; a Bayesian bias's log variance
  // log(prior) - 4), drawn from gen in this order.
  WhviParams(torch::nn::Module& m, int64_t in, int64_t out, const WhviOptions& o, const at::Generator& gen)
      : opt(o) {
    d = int64_t{1} << kernels::log2_exact(in);
    blocks = (out + d - 1) / d;
    groups = o.shared_g ? 1 : blocks;
    torch::NoGradGuard ng;
    const double a = std::sqrt(6.0 / static_cast<double>(d));
    s1 = m.register_parameter("s1", torch::empty({blocks, d}).uniform_(-a, a, gen));
    s2 = m.register_parameter("s2", torch::empty({blocks, d}).uniform_(-a, a, gen));
    g_mu = m.register_parameter("g_mu", torch::randn({groups, d}, gen) * o.init_g_mean_std);
    g_logvar = m.register_parameter("g_logvar", torch::full({groups, d}, o.init_g_logvar));
    if (o.bias != "none") b_mu = m.register_parameter("b_mu", torch::zeros({out}));
    if (o.bias == "bayesian")
      b_logvar = m.register_parameter("b_logvar", torch::full({out}, std::log(o.bias_prior_var) - 4.0));
  }

  // y [n, blocks*D] -> [n, out] plus the bias (a Bayesian bias sampled per row in kSample).
  torch::Tensor finish(torch::Tensor y, int64_t out, const ForwardCtx& ctx) const {
    const int64_t n = y.size(0);
    if (blocks * d != out) y = y.narrow(1, 0, out);
    if (opt.bias == "deterministic") return y + b_mu;
    if (opt.bias == "bayesian") {
      if (ctx.mode == Mode::kMean) return y + b_mu;
      return y + b_mu + (0.5 * b_logvar).exp() * torch::randn({n, out}, ctx.gen, y.options());
    }
    return y;
  }

  // The bias's closed-form KL (zero without a Bayesian bias).
  torch::Tensor bias_kl() const {
    if (opt.bias == "bayesian") return kl_diag_gaussian(b_mu, b_logvar, opt.bias_prior_var);
    return torch::zeros({}, g_mu.options());
  }
};

}  // namespace whvi::models
