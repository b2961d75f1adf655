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
// Initialisation and prior (docs/modelling.md, "Modelling choices"): S1, S2 ~ U(+-sqrt(6/D))
// (the authors' kaiming-uniform), mu ~ N(0, s^2) with s = 1/sqrt(2) so that
// the mean weight matrix has He variance 2/D, logvar = log(1e-4), prior
// N(0, lambda I) with lambda = 1. Because S1 and S2 are free, lambda only
// sets the scale at which the optimiser must move g: the paper's 1e-5 makes
// the KL pull g to a scale Adam (lr 1e-3) cannot follow, and the layer
// collapses to the prior (notes §10).
//
// Sampling: one independent noise draw of g per row (data point x MC
// sample), pushed through the fused kernel: the local reparameterisation.
//
// The paper's Table 2 alternatives (model.whvi.structure, s_posterior; issue
// 12) take the generic path: the factors applied right to left through the
// differentiable FWHT op, with per-row draws of g and, when mean-field, of
// S1 and S2 (each row gets an independent draw of W, as above). S1 H G H S2
// with optimised S is the default and always takes the fused kernel.
#include <cmath>

#include "common/draws.h"
#include "common/errors.h"
#include "common/runtime.h"
#include "fwht.h"
#include "nn/fused_ops.h"
#include "nn/layer.h"
#include "nn/whvi_params.h"
#include "onnx/graph.h"
#include "ops/fwht_op.h"

namespace whvi::models {
namespace {

class WhviLayer : public BayesianLayer, public FusedLayer, public GroupLayer {
 public:
  WhviLayer(int64_t in, int64_t out, const WhviOptions& o, const at::Generator& gen)
      : BayesianLayer("whvi", in, out), p_(*this, in, out, o, gen) {}

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    const int64_t n = x.size(0), d = p_.d;
    auto xp = d == in_features() ? x : torch::constant_pad_nd(x, {0, d - in_features()});
    if (!p_.opt.is_default_structure()) return p_.finish(structured(xp, ctx).reshape({n, p_.blocks * d}), out_features(), ctx);
    torch::Tensor eps;
    if (ctx.mode == Mode::kSample) eps = whvi::randn({n, p_.groups, d}, ctx.gen, x.options());
    auto y = ops::whvi_matvec(xp, eps, p_.s1, p_.s2, p_.g_mu, (0.5 * p_.g_logvar).exp(), p_.opt.shared_g);
    return p_.finish(y.view({n, p_.blocks * d}), out_features(), ctx);
  }

  torch::Tensor kl_impl() override { return p_.closed_form_kl(); }

  // Export (the default structure): S1 H diag(g) H S2 on the zero-padded rows,
  // g drawn per row and group at every call (RandomNormalLike), the FWHT exact
  // (onnx::fwht); then the output truncated and the bias added.
  std::string export_onnx(onnx::Graph& g, const std::string& x) const override {
    if (!p_.opt.is_default_structure()) return "";
    const int64_t d = p_.d, in = in_features(), out = out_features();
    const auto xp = d == in ? x : g.op("Pad", {x, g.ints({0, 0, 0, d - in})});
    const auto x3 = g.op("Unsqueeze", {xp, g.ints({1})});  // [R, 1, D]
    auto t = onnx::fwht(g, g.op("Mul", {x3, g.constant(p_.s2)}), d);  // [R, blocks, D]
    const auto like = p_.groups == 1 ? x3 : t;                        // [R, groups, D]
    const auto eps = g.op("RandomNormalLike", {like});
    const auto gs = g.op("Add", {g.constant(p_.g_mu), g.op("Mul", {eps, g.constant((0.5 * p_.g_logvar).exp())})});
    t = g.op("Mul", {onnx::fwht(g, g.op("Mul", {t, gs}), d), g.constant(p_.s1)});
    auto y = g.op("Reshape", {t, g.ints({-1, p_.blocks * d})});
    if (p_.blocks * d != out) y = g.op("Slice", {y, g.ints({0}), g.ints({out}), g.ints({1})});
    if (p_.opt.bias == "none") return y;
    y = g.op("Add", {y, g.constant(p_.b_mu)});
    if (p_.opt.bias == "bayesian") y = onnx::gaussian_draw(g, y, g.constant((0.5 * p_.b_logvar).exp()));
    return y;
  }

  // Fused step: the default structure without a Bayesian bias, on the CPU;
  // the same draws as forward_impl (one normal per row, group and D).
  FusedLayer* fused() override { return p_.opt.is_default_structure() && p_.opt.bias != "bayesian" ? this : nullptr; }
  torch::Tensor fused_forward(const torch::Tensor& x, const at::Generator& gen, FusedCache& c) override {
    torch::NoGradGuard ng;
    WHVI_CHECK(x.is_cpu(), "training.engine fused: the WHVI layer's fused step runs on the CPU; set training.engine: autograd");
    const int64_t n = x.size(0), d = p_.d;
    const auto o = x.options();
    const auto xp = p_.fused_input(x, in_features(), c);
    p_.fused_noise(n, o, gen, c);
    const auto &eps = c[2], &sg = c[3];
    auto& y = c.buffer(4, {n, p_.blocks, d}, o);
    auto& hu = c.buffer(12, {n, p_.blocks, d}, o);  // the kernel's intermediates, for the backward
    auto& hw = c.buffer(13, {n, p_.blocks, d}, o);
    const auto sh = p_.kernel_shape(n);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "whvi_fused_forward", [&] {
      kernels::whvi_forward_cpu<scalar_t>(sh, xp.data_ptr<scalar_t>(), eps.data_ptr<scalar_t>(),
                                          p_.s1.data_ptr<scalar_t>(), p_.s2.data_ptr<scalar_t>(),
                                          p_.g_mu.data_ptr<scalar_t>(), sg.data_ptr<scalar_t>(),
                                          y.data_ptr<scalar_t>(), threads(), hu.data_ptr<scalar_t>(),
                                          hw.data_ptr<scalar_t>());
    });
    return p_.fused_output(y, out_features(), c, 5);
  }
  torch::Tensor fused_backward(const torch::Tensor& g, FusedCache& c, bool need_dx) override {
    torch::NoGradGuard ng;
    const int64_t n = g.size(0), d = p_.d, in = in_features();
    const auto o = g.options();
    const auto &xp = c[0], &eps = c[2], &sg = c[3], &hu = c[12], &hw = c[13];
    const auto dy = p_.fused_dy(g, c, 6);
    auto& dx = c.buffer(7, {n, d}, o);
    auto& ds1 = c.buffer(8, p_.s1.sizes(), o);
    auto& ds2 = c.buffer(9, p_.s2.sizes(), o);
    auto& dmu = c.buffer(10, p_.g_mu.sizes(), o);
    auto& dsg = c.buffer(11, p_.g_mu.sizes(), o);
    const auto sh = p_.kernel_shape(n);
    AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "whvi_fused_backward", [&] {
      kernels::whvi_backward_cpu<scalar_t>(
          sh, xp.data_ptr<scalar_t>(), eps.data_ptr<scalar_t>(), p_.s1.data_ptr<scalar_t>(),
          p_.s2.data_ptr<scalar_t>(), p_.g_mu.data_ptr<scalar_t>(), sg.data_ptr<scalar_t>(),
          dy.data_ptr<scalar_t>(), need_dx ? dx.data_ptr<scalar_t>() : nullptr, ds1.data_ptr<scalar_t>(),
          ds2.data_ptr<scalar_t>(), dmu.data_ptr<scalar_t>(), dsg.data_ptr<scalar_t>(), threads(),
          hu.data_ptr<scalar_t>(), hw.data_ptr<scalar_t>());
    });
    fused_ops::add_(p_.g_mu.mutable_grad(), dmu);
    // d exp(lv/2) / d lv = exp(lv/2) / 2
    p_.g_logvar.mutable_grad().addcmul_(dsg, sg, 0.5);
    p_.fused_add_grads(ds1, ds2, g);
    if (!need_dx) return {};
    return d == in ? dx : dx.narrow(1, 0, in);
  }
  double fused_kl_backward() override { return kl_diag_gaussian_backward(p_.g_mu, p_.g_logvar, p_.g_prior_var); }

  // Batched splits: S1 H diag(g) H S2 through the differentiable FWHT op
  // (the generic path; the fused kernel takes one layer's vectors), one draw
  // of g per row as forward(), then the bias.
  GroupLayer* group() override { return p_.opt.is_default_structure() ? this : nullptr; }
  torch::Tensor forward_group(const std::vector<BayesianLayer*>& group, const torch::Tensor& x, Mode mode,
                              const std::vector<at::Generator>& gens, torch::Tensor* kl) override {
    const auto& o = p_.opt;
    const int64_t S = x.size(0), r = x.size(1), d = p_.d, out = out_features();
    auto get = [&](auto member) { return stack_group<WhviLayer>(group, [&](WhviLayer& l) { return l.p_.*member; }); };
    const auto s1 = get(&WhviParams::s1), s2 = get(&WhviParams::s2);      // [S, blocks, D]
    const auto g_mu = get(&WhviParams::g_mu), g_lv = get(&WhviParams::g_logvar);  // [S, groups, D]
    torch::Tensor b_mu, b_lv;
    if (o.bias != "none") b_mu = get(&WhviParams::b_mu);  // [S, out]
    if (o.bias == "bayesian") b_lv = get(&WhviParams::b_logvar);
    if (kl) {
      *kl = kl_diag_gaussian_per_split(g_mu, g_lv, p_.g_prior_var);
      if (o.bias == "bayesian") *kl = *kl + kl_diag_gaussian_per_split(b_mu, b_lv, o.bias_prior_var);
    }
    const auto xp = d == in_features() ? x : torch::constant_pad_nd(x, {0, d - in_features()});
    torch::Tensor g = g_mu.unsqueeze(1);  // [S, 1, groups, D]
    if (mode == Mode::kSample) {
      const auto eps = draw_per_split(gens, [&](const at::Generator& gn) {
        return whvi::randn({r, p_.groups, d}, gn, x.options());
      });
      g = g + (0.5 * g_lv).exp().unsqueeze(1) * eps;  // [S, r, groups, D]
    }
    auto t = xp.unsqueeze(2) * s2.unsqueeze(1);         // [S, r, blocks, D]
    t = ops::fwht(ops::fwht(t) * g) * s1.unsqueeze(1);
    auto y = t.reshape({S, r, p_.blocks * d});
    if (p_.blocks * d != out) y = y.narrow(2, 0, out);
    if (o.bias == "none") return y;
    y = y + b_mu.unsqueeze(1);
    if (o.bias == "bayesian" && mode == Mode::kSample)
      y = y + (0.5 * b_lv).exp().unsqueeze(1) *
                  draw_per_split(gens, [&](const at::Generator& gn) { return whvi::randn({r, out}, gn, x.options()); });
    return y;
  }

 private:
  // A diagonal factor: its mean, or in kSample one draw per row [n, rows, D].
  static torch::Tensor draw(const torch::Tensor& mu, const torch::Tensor& logvar, int64_t n, ForwardCtx& ctx) {
    if (!logvar.defined() || ctx.mode == Mode::kMean) return mu;
    return mu + (0.5 * logvar).exp() * whvi::randn({n, mu.size(0), mu.size(1)}, ctx.gen, mu.options());
  }

  // [n, blocks, D]: the structure's factors applied right to left to x [n, D].
  torch::Tensor structured(const torch::Tensor& x, ForwardCtx& ctx) const {
    const auto& o = p_.opt;
    const int64_t n = x.size(0);
    // draws in a fixed order: g, then S1, then S2
    const auto g = draw(p_.g_mu, p_.g_logvar, n, ctx);
    const auto s1 = o.has_s1() ? draw(p_.s1, p_.s1_logvar, n, ctx) : torch::Tensor();
    const auto s2 = o.has_s2() ? draw(p_.s2, p_.s2_logvar, n, ctx) : torch::Tensor();
    auto t = x.unsqueeze(1);  // [n, 1, D]
    if (o.structure == "gh") {  // G H x
      t = ops::fwht(t) * g;
    } else {                    // S1 H G H S2 (H) x, S2 or the trailing H as the structure has them
      if (o.structure == "s1hghs2h") t = ops::fwht(t);
      if (s2.defined()) t = t * s2;
      t = ops::fwht(ops::fwht(t) * g) * s1;
    }
    return t.expand({n, p_.blocks, p_.d});
  }

  WhviParams p_;
};
}  // namespace

LayerPtr make_whvi_layer(int64_t in, int64_t out, const WhviOptions& o, const LayerContext& ctx) {
  return std::make_shared<WhviLayer>(in, out, o, ctx.gen);
}

LayerKind whvi_layer_kind() { return layer_kind("whvi", make_whvi_layer)
      .fused("with its default structure and a deterministic or no bias")
      .batched("with its default structure")
      .exports("with its default structure"); }

}  // namespace whvi::models
