// NF-WHVI (paper §2.4, supplement C): the WHVI layer W = S1 H diag(g) H S2
// with q(g) a diagonal Gaussian q0 pushed through K planar flows
// (Rezende & Mohamed 2015; nn/planar_flow.h, with the invertibility
// constraint wᵀû > -1, so every flow is invertible).
// The KL term has no closed form; it is split as
//   KL(q_K || p) = KL(q0 || p) + E_q0[ log p(z_0) - log p(z_K) - Σ_k log|det J_k| ],   p = N(0, λ I),
// the first term in closed form (kl()), the second as its Monte Carlo
// estimate, the mean over the rows of each forward in Mode::kSample, added to
// the forward context as a tensor carrying its gradient to μ, σ and the flow
// parameters. The split is exact (log q_K(z_K) = log q0(z_0) - Σ log|det J_k|)
// and its estimator is exactly 0 when the flows are the identity, where the
// plain estimator log q0(z_0) - Σ log|det J| - log p(z_K) keeps the full noise
// of log q0 - log p: on naval validation rows that noise alone (0 flows, i.e.
// WHVI's q) doubled the RMSE after 10,000 steps (docs/modelling.md, NF-WHVI). The authors' public
// code adds the log-determinants, evaluates the prior at z_0 only and
// detaches the term (shared/notes/whvi-reference.md §2.3).
//
// Sampling: local reparameterisation no longer applies, so g itself is drawn,
// one independent draw per row (data point x MC sample), as the WHVI layer
// draws its noise; each row's g goes through the flows. The product is the
// explicit s1 ⊙ H (g ⊙ H (s2 ⊙ x)) through the differentiable FWHT op (the fused
// kernel takes only Gaussian g). Mode::kMean: g = f_K(...f_1(μ)).
//
// Everything else (S1, S2, μ and log σ² init, prior λ, blocks, shared g, the
// bias) follows the WHVI layer and its model.whvi.* options; the initial
// values are drawn in the same order, so with 0 flows this layer is the WHVI
// layer. Flow parameters: u, w ~ N(0, 0.01²), b = 0 (model.nf_whvi.flows each
// group of g).
#include <cmath>

#include "common/draws.h"
#include "fwht.h"
#include "nn/layer.h"
#include "nn/planar_flow.h"
#include "nn/whvi_params.h"
#include "ops/fwht_op.h"

namespace whvi::models {
namespace {


class NfWhviLayer : public BayesianLayer {
 public:
  NfWhviLayer(int64_t in, int64_t out, const WhviOptions& o, int64_t flows, const at::Generator& gen)
      : BayesianLayer("nf-whvi", in, out), p_(*this, in, out, o, gen), flows_(flows) {
    torch::NoGradGuard ng;
    if (flows_ > 0) {
      u_ = register_parameter("flow_u", whvi::randn({flows_, p_.groups, p_.d}, gen) * 0.01);
      w_ = register_parameter("flow_w", whvi::randn({flows_, p_.groups, p_.d}, gen) * 0.01);
      b_ = register_parameter("flow_b", torch::zeros({flows_, p_.groups}));
    }
  }

  // z [n, groups, D] through the flows; returns z_K and Σ_k log|det J_k| [n].
  std::pair<torch::Tensor, torch::Tensor> flow(const torch::Tensor& z) const {
    if (flows_ == 0) return {z, torch::zeros({z.size(0)}, z.options())};
    return planar_flows(z, u_, w_, b_);
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    const int64_t n = x.size(0), d = p_.d, groups = p_.groups;
    const double lambda = p_.opt.prior_var;
    auto xp = d == in_features() ? x : torch::constant_pad_nd(x, {0, d - in_features()});
    torch::Tensor g;
    if (ctx.mode == Mode::kSample) {
      const auto eps = whvi::randn({n, groups, d}, ctx.gen, x.options());
      const auto z0 = p_.g_mu + (0.5 * p_.g_logvar).exp() * eps;
      auto [zk, logdet] = flow(z0);
      if (flows_ > 0) {
        // log p(z_0) - log p(z_K) = (|z_K|² - |z_0|²) / (2λ)
        const auto corr = (zk.square().sum({1, 2}) - z0.square().sum({1, 2})) / (2.0 * lambda) - logdet;
        ctx.add_kl(corr.mean());
      }
      g = zk;
    } else {
      g = flow(p_.g_mu.unsqueeze(0)).first.expand({n, groups, d});
    }
    // y[i, k] = s1[k] ⊙ H (g[i, q] ⊙ H (s2[k] ⊙ x[i]))
    auto t = ops::fwht(xp.unsqueeze(1) * p_.s2);  // [n, blocks, D]
    auto y = p_.s1 * ops::fwht(t * g);             // g [n, groups, D] broadcasts when groups = 1
    return p_.finish(y.reshape({n, p_.blocks * d}), out_features(), ctx);
  }

  // The closed-form part: KL(q0 || p) of g and the Bayesian bias's KL (the
  // flows' correction goes into the context).
  torch::Tensor kl_impl() override { return p_.closed_form_kl(); }

 private:
  WhviParams p_;
  int64_t flows_ = 0;
  torch::Tensor u_, w_, b_;
};

}  // namespace

// model.nf_whvi.* and WHVI's own options (declared by the whvi layer kind)
struct NfWhviOptions {
  WhviOptions whvi;
  int64_t flows = 3;
  template <class V>
  void visit(V& v) {
    v.num("model.nf_whvi.flows", flows, 0, 1000, "planar flows on each WHVI layer's g (paper: 10 on the toy problem, 3 on the CNNs); the other settings are model.whvi.*");
    v.part(whvi);
  }
};

LayerPtr make_nf_whvi_layer(int64_t in, int64_t out, const NfWhviOptions& no, const LayerContext& ctx) {
  const WhviOptions& o = no.whvi;
  WHVI_CHECK(o.is_default_structure(), "nf-whvi supports only WHVI's own structure (S1 H G H S2 with optimised S); "
             "remove model.whvi.structure and model.whvi.s_posterior, or use model.kind: whvi");
  return std::make_shared<NfWhviLayer>(in, out, o, no.flows, ctx.gen);
}

LayerKind nf_whvi_layer_kind() { return layer_kind("nf-whvi", make_nf_whvi_layer); }

}  // namespace whvi::models
