// What the WHVI layer (whvi.cpp) and NF-WHVI (nf_whvi.cpp) share: their typed
// options, their parameters S1, S2, μ, log σ² and bias, registered and
// initialised in one fixed order (so the two layers start from the same
// values for the same generator), and the bias.
#pragma once

#include <cmath>
#include <string>

#include <torch/torch.h>

#include "common/draws.h"
#include "common/options.h"
#include "fwht.h"
#include "nn/fused_ops.h"
#include "nn/layer.h"

namespace whvi::models {

struct WhviOptions {
  bool shared_g = false;
  double prior_var = 1;
  double init_g_mean_std = 0.7071067811865476;
  double init_g_logvar = -9.2103403719761836;
  std::string bias = "deterministic";
  double bias_prior_var = 0.01;
  // The paper's Table 2 alternatives: which diagonal factors W has, and
  // whether S1, S2 are optimised or mean-field variational.
  std::string structure = "s1hghs2";
  std::string s_posterior = "optimised";
  double s_prior_var = 0;
  template <class V>
  void visit(V& v) {
    v.num("model.whvi.prior_var", prior_var, 1e-12, options::kInf, "lambda: prior N(0, lambda I) on g (chosen on validation data, docs/modelling.md; the paper says 1e-5)");
    v.num("model.whvi.init_g_mean_std", init_g_mean_std, 0, 1e6, "g mean initialised N(0, s^2): s = 1/sqrt(2) gives W a He-scale variance with kaiming-uniform S1, S2");
    v.num("model.whvi.init_g_logvar", init_g_logvar, -50, 10, "initial log variance of g (default log(1e-4): starts near a deterministic net)");
    v.flag("model.whvi.shared_g", shared_g, "one g shared by the stacked blocks (authors' linear layer) instead of one per block");
    v.pick("model.whvi.bias", bias, {"deterministic", "bayesian", "none"}, "bias of WHVI layers");
    v.num("model.whvi.bias_prior_var", bias_prior_var, 1e-12, options::kInf, "prior variance of a Bayesian bias (authors: 0.01)");
    v.pick("model.whvi.structure", structure, {"s1hghs2", "s1hghs2h", "shgh", "gh"}, "W's factorisation (the paper's Table 2): s1hghs2 = S1 H G H S2 (WHVI), s1hghs2h = S1 H G H S2 H, shgh = S H G H, gh = G H; G = diag(g) variational; g's initial scale and prior variance are multiplied by c^2 (1, 1/D, 2/D, 4/D) so every structure starts at the same weight variance");
    v.idle_when_all({{"model.whvi.structure", {"s1hghs2"}}, {"model.whvi.s_posterior", {"optimised"}}, {"model.whvi.s_prior_var", {"0"}}});  // WHVI as the paper: older records
    v.pick("model.whvi.s_posterior", s_posterior, {"optimised", "mean-field"}, "S1, S2 optimised (WHVI) or mean-field Gaussian variational (Table 2's S_var rows; prior N(0, model.whvi.s_prior_var))");
    v.idle_when_all({{"model.whvi.structure", {"s1hghs2"}}, {"model.whvi.s_posterior", {"optimised"}}, {"model.whvi.s_prior_var", {"0"}}});  // WHVI as the paper: older records
    v.num("model.whvi.s_prior_var", s_prior_var, 0, options::kInf, "prior variance of mean-field S1, S2; 0 = 2/D (the variance of their initial values)");
    v.idle_when_all({{"model.whvi.structure", {"s1hghs2"}}, {"model.whvi.s_posterior", {"optimised"}}, {"model.whvi.s_prior_var", {"0"}}});  // WHVI as the paper: older records
  }
  bool is_default_structure() const { return structure == "s1hghs2" && s_posterior == "optimised"; }
  bool has_s1() const { return structure != "gh"; }
  bool has_s2() const { return structure == "s1hghs2" || structure == "s1hghs2h"; }
  bool s_variational() const { return s_posterior == "mean-field"; }
  // c^2: the factor on g's initial mean variance, initial variance and prior
  // variance that gives every structure the default's initial weight
  // variance 2/D (unnormalised H): 1 for S1HGHS2, 1/D with the extra H,
  // 2/D without S2, 4/D for GH (docs/reference.md, "The paper's analyses", Table 2).
  double g_scale2(int64_t d) const {
    const double dd = static_cast<double>(d);
    if (structure == "s1hghs2h") return 1.0 / dd;
    if (structure == "shgh") return 2.0 / dd;
    if (structure == "gh") return 4.0 / dd;
    return 1.0;
  }
};

struct WhviParams {
  WhviOptions opt;
  int64_t d = 1, blocks = 1, groups = 1;
  double g_prior_var = 1;  // λ c² (opt.prior_var for the default structure)
  double s_prior_var = 1;  // prior variance of mean-field S1, S2
  torch::Tensor s1, s2, g_mu, g_logvar, b_mu, b_logvar;
  torch::Tensor s1_logvar, s2_logvar;  // mean-field S only (s1, s2 are then their means)

  // Registers the parameters on `m`: S1, S2 ~ U(±sqrt(6/D)) (those the
  // structure has), μ ~ N(0, c² s²), log σ² constant (+ log c²), the
  // log variances of mean-field S1, S2 (log(1e-4 · 2/D)), then the bias
  // (b = 0; a Bayesian bias's log variance log(prior) - 4), drawn from gen in
  // this order.
  WhviParams(torch::nn::Module& m, int64_t in, int64_t out, const WhviOptions& o, const at::Generator& gen)
      : opt(o) {
    d = int64_t{1} << kernels::log2_exact(in);
    blocks = (out + d - 1) / d;
    groups = o.shared_g ? 1 : blocks;
    const double c2 = o.g_scale2(d), dd = static_cast<double>(d);
    g_prior_var = o.prior_var * c2;
    s_prior_var = o.s_prior_var > 0 ? o.s_prior_var : 2.0 / dd;
    torch::NoGradGuard ng;
    const double a = std::sqrt(6.0 / dd);
    if (o.has_s1()) s1 = m.register_parameter("s1", torch::empty({blocks, d}).uniform_(-a, a, gen));
    if (o.has_s2()) s2 = m.register_parameter("s2", torch::empty({blocks, d}).uniform_(-a, a, gen));
    g_mu = m.register_parameter("g_mu", whvi::randn({groups, d}, gen) * (o.init_g_mean_std * std::sqrt(c2)));
    g_logvar = m.register_parameter("g_logvar", torch::full({groups, d}, o.init_g_logvar + std::log(c2)));
    if (o.s_variational()) {
      const double lv = std::log(1e-4 * 2.0 / dd);
      if (o.has_s1()) s1_logvar = m.register_parameter("s1_logvar", torch::full({blocks, d}, lv));
      if (o.has_s2()) s2_logvar = m.register_parameter("s2_logvar", torch::full({blocks, d}, lv));
    }
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
      return y + b_mu + (0.5 * b_logvar).exp() * whvi::randn({n, out}, ctx.gen, y.options());
    }
    return y;
  }

  // KL of g, of mean-field S1, S2 and of the bias, in closed form.
  torch::Tensor closed_form_kl() const {
    auto kl = kl_diag_gaussian(g_mu, g_logvar, g_prior_var) + bias_kl();
    if (s1_logvar.defined()) kl = kl + kl_diag_gaussian(s1, s1_logvar, s_prior_var);
    if (s2_logvar.defined()) kl = kl + kl_diag_gaussian(s2, s2_logvar, s_prior_var);
    return kl;
  }

  // The fused step's pieces both layers share (whvi.cpp, nf_whvi.cpp; a
  // deterministic or no bias). The kernel's shape for n rows:
  kernels::WhviShape kernel_shape(int64_t n) const {
    kernels::WhviShape sh;
    sh.batch = n;
    sh.d = d;
    sh.blocks = blocks;
    sh.shared_g = opt.shared_g;
    return sh;
  }
  // x zero-padded to D columns (in cache slot 1 when in < D), kept in slot 0.
  torch::Tensor fused_input(const torch::Tensor& x, int64_t in, FusedCache& c) const {
    torch::Tensor xp = x;
    if (d != in) {
      auto& b = c.buffer(1, {x.size(0), d}, x.options());
      fused_ops::pad_columns_out(b, x);
      xp = b;
    }
    c[0] = xp;
    return xp;
  }
  // One standard normal per row, group and D (slot 2) and σ = e^(log σ² / 2)
  // (slot 3): the draws and the arithmetic of the autograd forward.
  void fused_noise(int64_t n, const torch::TensorOptions& o, const at::Generator& gen, FusedCache& c) const {
    auto& eps = c.buffer(2, {n, groups, d}, o);
    whvi::normal_(eps, 0, 1, gen);
    auto& sg = c.buffer(3, g_logvar.sizes(), o);
    fused_ops::scale_out(sg, g_logvar, 0.5);
    sg.exp_();
  }
  // The kernel's y [n, blocks, D] as the layer's [n, out], plus the bias (into slot `slot`).
  torch::Tensor fused_output(const torch::Tensor& y, int64_t out, FusedCache& c, size_t slot) const {
    const int64_t n = y.size(0);
    auto yv = y.view({n, blocks * d});
    if (blocks * d != out) yv = yv.narrow(1, 0, out);
    if (opt.bias == "none") return yv;
    auto& z = c.buffer(slot, {n, out}, y.options());
    fused_ops::add_row_vector_out(z, yv, b_mu);
    return z;
  }
  // The backward's dy [n, out] as the kernel's [n, blocks·D] (zero-padded into slot `slot`).
  torch::Tensor fused_dy(const torch::Tensor& g, FusedCache& c, size_t slot) const {
    torch::Tensor dy = g.contiguous();
    if (blocks * d != g.size(1)) {
      auto& b = c.buffer(slot, {g.size(0), blocks * d}, g.options());
      fused_ops::pad_columns_out(b, g);
      dy = b;
    }
    return dy;
  }
  // S1's and S2's gradients from the kernel, the bias's from dy, added into .grad().
  void fused_add_grads(const torch::Tensor& ds1, const torch::Tensor& ds2, const torch::Tensor& g) {
    fused_ops::add_(s1.mutable_grad(), ds1);
    fused_ops::add_(s2.mutable_grad(), ds2);
    if (opt.bias != "none") fused_ops::add_(b_mu.mutable_grad(), g.sum(0));
  }

  // The bias's closed-form KL (zero without a Bayesian bias).
  torch::Tensor bias_kl() const {
    if (opt.bias == "bayesian") return kl_diag_gaussian(b_mu, b_logvar, opt.bias_prior_var);
    return torch::zeros({}, g_mu.options());
  }
};

}  // namespace whvi::models
