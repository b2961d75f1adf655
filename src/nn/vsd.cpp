// Variational Structured Dropout (Nguyen et al., NeurIPS 2021; notes
// baselines.md §5): multiplicative Gaussian noise on a layer's inputs with a
// structured covariance,
//   ξ = 1 + U η,  η ~ N(0, diag α),  U = H_T ⋯ H_1,  H_t = I - 2 v_t v_tᵀ / |v_t|²,
//   y = (x ∘ ξ) Θ + b,
// one ξ per row (the "dropout style" reading, §5.3 (a): the noise of a row is
// shared by all outputs). The Householder vectors follow the paper's
// "fully connected layer between successive Householder vectors": v_1 is a
// free vector and v_{t+1} = A_t v_t + c_t (model.vsd.householder = T; T = 1
// has no chain). The KL is the paper's eq. 5, the empirical-Bayes KL of the
// column marginals:
//   KL = (Q/2) Σ_i log((1 + Σ_j α_j U_ij²) / α_i),
// independent of Θ (U is built explicitly by applying the reflections to I).
//
// model.vsd.hierarchical adds the paper's §3.3 prior hierarchy with a latent
// scale z_i per input unit: W = diag(z ∘ ξ) Θ, q(z_i) = LogNormal(m_i, s_i²),
// p(z_i) = Gamma(a, rate b) (model.vsd.z_prior_shape, _rate; a = b = 1 has
// mean 1), adding Σ_i KL(LN ‖ Gamma) in closed form (baselines.md §5.5):
//   -1/2 - log(2π s²)/2 - a m - a log b + lgamma(a) + b exp(m + s²/2).
// z is drawn per row like ξ; the mean network uses E[z] = exp(m + s²/2).
// The paper does not say which prior or where z enters beyond W = diag(z∘ξ)Θ;
// these are our choices (docs/reference.md).
//
// Init: Θ, b as LibTorch's Linear (U(±1/sqrt(fan_in))); log α_i = log(p/(1-p))
// for p = model.vsd.init_dropout (Gaussian dropout's equivalence); v_1, A_t
// ~ N(0, 1/in), c_t = 0; m = 0, log s² = -9.
#include <cmath>
#include <vector>

#include "common/draws.h"
#include "nn/fused_ops.h"
#include "nn/layer.h"

namespace whvi::models {

// U = H_T ⋯ H_1 for Householder vectors vs [T, K] (rows v_1 ... v_T), as [K, K].
torch::Tensor householder_product(const torch::Tensor& vs) {
  const int64_t K = vs.size(1);
  auto u = torch::eye(K, vs.options());
  for (int64_t t = 0; t < vs.size(0); ++t) {
    const auto v = vs[t];
    // H_t U = U - 2 v (vᵀ U) / |v|²
    u = u - (2.0 / v.square().sum()) * torch::outer(v, torch::matmul(v, u));
  }
  return u;
}

// (Q/2) Σ_i log((1 + Σ_j α_j U_ij²) / α_i): the paper's eq. 5.
torch::Tensor vsd_kl(const torch::Tensor& log_alpha, const torch::Tensor& u, int64_t q) {
  const auto sigma_ii = torch::matmul(u.square(), log_alpha.exp());
  return 0.5 * static_cast<double>(q) * (torch::log1p(sigma_ii) - log_alpha).sum();
}

namespace {

// The layer's own options (`model.vsd.*`): the layer never sees the config.
struct VsdOptions {
  int64_t householder = 1;
  bool hierarchical = false;
  double z_prior_shape = 1, z_prior_rate = 1;
  double init_dropout = 0.1;
  template <class V>
  void visit(V& v) {
    v.num("model.vsd.householder", householder, 0, 16, "T: Householder reflections of VSD's noise covariance U diag(alpha) U^T (paper: 1 or 2 at scale; 0 = Gaussian dropout); v_{t+1} = A_t v_t + c_t");
    v.num("model.vsd.init_dropout", init_dropout, 1e-4, 0.99, "initial alpha = p / (1 - p) of VSD's multiplicative noise (Gaussian dropout with rate p)");
    v.flag("model.vsd.hierarchical", hierarchical, "VSD's prior hierarchy (paper 3.3): a scale z per input unit, q(z) LogNormal, p(z) Gamma(shape, rate)");
    v.num("model.vsd.z_prior_shape", z_prior_shape, 1e-6, options::kInf, "a: Gamma(a, rate b) prior on z (model.vsd.hierarchical)");
    v.num("model.vsd.z_prior_rate", z_prior_rate, 1e-6, options::kInf, "b: Gamma(a, rate b) prior on z (model.vsd.hierarchical)");
  }
};

class VsdLayer : public BayesianLayer, public FusedLayer {
 public:
  VsdLayer(int64_t in, int64_t out, const VsdOptions& o, const at::Generator& gen)
      : BayesianLayer("vsd", in, out) {
    T_ = o.householder;
    hier_ = o.hierarchical;
    a_ = o.z_prior_shape;
    b_rate_ = o.z_prior_rate;
    const double p = o.init_dropout;
    const double a = 1.0 / std::sqrt(static_cast<double>(in));
    const double sv = 1.0 / std::sqrt(static_cast<double>(in));
    torch::NoGradGuard ng;
    w_ = register_parameter("w", torch::empty({in, out}).uniform_(-a, a, gen));
    b_ = register_parameter("b", torch::empty({out}).uniform_(-a, a, gen));
    log_alpha_ = register_parameter("log_alpha", torch::full({in}, std::log(p / (1.0 - p))));
    if (T_ > 0) v1_ = register_parameter("v1", whvi::normal_(torch::empty({in}), 0.0, sv, gen));
    for (int64_t t = 1; t < T_; ++t) {
      chain_a_.push_back(register_parameter("a" + std::to_string(t), whvi::normal_(torch::empty({in, in}), 0.0, sv, gen)));
      chain_c_.push_back(register_parameter("c" + std::to_string(t), torch::zeros({in})));
    }
    if (hier_) {
      z_m_ = register_parameter("z_m", torch::zeros({in}));
      z_logvar_ = register_parameter("z_logvar", torch::full({in}, -9.0));
    }
  }

  // The Householder vectors v_1 ... v_T as rows [T, in].
  torch::Tensor vectors() const {
    std::vector<torch::Tensor> vs;
    if (T_ > 0) vs.push_back(v1_);
    for (size_t t = 0; t < chain_a_.size(); ++t) vs.push_back(torch::matmul(chain_a_[t], vs.back()) + chain_c_[t]);
    return vs.empty() ? torch::empty({0, in_features()}, log_alpha_.options()) : torch::stack(vs);
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    if (ctx.mode == Mode::kMean) {
      if (!hier_) return torch::addmm(b_, x, w_);
      return torch::addmm(b_, x * (z_m_ + 0.5 * z_logvar_.exp()).exp(), w_);
    }
    auto eta = whvi::normal_(torch::empty_like(x), 0.0, 1.0, ctx.gen) * (0.5 * log_alpha_).exp();
    if (T_ > 0) {
      const auto vs = vectors();
      for (int64_t t = 0; t < T_; ++t) {
        const auto v = vs[t];
        eta = eta - torch::outer(torch::matmul(eta, v), v) * (2.0 / v.square().sum());
      }
    }
    auto scale = eta + 1.0;
    if (hier_) {
      const auto eps = whvi::normal_(torch::empty_like(x), 0.0, 1.0, ctx.gen);
      scale = scale * (z_m_ + (0.5 * z_logvar_).exp() * eps).exp();
    }
    return torch::addmm(b_, x * scale, w_);
  }

  torch::Tensor kl_impl() override {
    const auto u = householder_product(vectors());
    auto kl = vsd_kl(log_alpha_, u, out_features());
    if (hier_) {
      const double a = a_, b = b_rate_;
      kl = kl + (-0.5 - 0.5 * (std::log(2.0 * M_PI) + z_logvar_) - a * z_m_ - a * std::log(b) + std::lgamma(a) +
                 b * (z_m_ + 0.5 * z_logvar_.exp()).exp())
                    .sum();
    }
    return kl;
  }

  // Fused step (T <= 1, no hierarchy): the same draws as forward_impl (one
  // normal per input element of each row); the reflection's backward pass and
  // the KL's gradient written out below.
  FusedLayer* fused() override { return T_ <= 1 && !hier_ ? this : nullptr; }
  torch::Tensor fused_forward(const torch::Tensor& x_in, const at::Generator& gen, FusedCache& c) override;
  torch::Tensor fused_backward(const torch::Tensor& g, FusedCache& c, bool need_dx) override;
  double fused_kl_backward() override;

 private:
  int64_t T_ = 1;
  bool hier_ = false;
  double a_ = 1, b_rate_ = 1;
  torch::Tensor w_, b_, log_alpha_, v1_, z_m_, z_logvar_;
  std::vector<torch::Tensor> chain_a_, chain_c_;
};

// Forward, per row r: e = η₀ ∘ s (s = e^{log α / 2}), with T = 1
// c_r = e·v, η = e - k c_r v (k = 2 / |v|²), else η = e; ξ = 1 + η;
// y = (x ∘ ξ) Θ + b. Cache: x, η₀, s, e, ξ, x ∘ ξ, c.
torch::Tensor VsdLayer::fused_forward(const torch::Tensor& x_in, const at::Generator& gen, FusedCache& c) {
  torch::NoGradGuard ng;
  const auto x = x_in.contiguous();
  const int64_t n = x.size(0), in = in_features(), out = out_features();
  const auto o = x.options();
  c[0] = x;
  auto& eta0 = c.buffer(1, {n, in}, o);
  whvi::normal_(eta0, 0.0, 1.0, gen);
  auto& s = c.buffer(2, {in}, o);
  at::exp_out(s, log_alpha_ * 0.5);
  auto& e = c.buffer(3, {n, in}, o);
  auto& xi = c.buffer(4, {n, in}, o);
  auto& xs = c.buffer(5, {n, in}, o);
  auto& cr = c.buffer(6, {n}, o);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "vsd_fused_forward", [&] {
    const scalar_t *xp = x.data_ptr<scalar_t>(), *ep0 = eta0.data_ptr<scalar_t>(), *sp = s.data_ptr<scalar_t>();
    const scalar_t* vp = T_ == 1 ? v1_.data_ptr<scalar_t>() : nullptr;
    scalar_t *ep = e.data_ptr<scalar_t>(), *xip = xi.data_ptr<scalar_t>(), *xsp = xs.data_ptr<scalar_t>();
    scalar_t* cp = cr.data_ptr<scalar_t>();
    scalar_t k = 0;
    if (vp) {
      scalar_t vv = 0;
      for (int64_t j = 0; j < in; ++j) vv += vp[j] * vp[j];
      k = scalar_t(2) / vv;
    }
    for (int64_t r = 0; r < n; ++r) {
      const int64_t o0 = r * in;
      scalar_t dot = 0;
      for (int64_t j = 0; j < in; ++j) {
        ep[o0 + j] = ep0[o0 + j] * sp[j];
        if (vp) dot += ep[o0 + j] * vp[j];
      }
      cp[r] = dot;
      for (int64_t j = 0; j < in; ++j) {
        const scalar_t eta = vp ? ep[o0 + j] - k * dot * vp[j] : ep[o0 + j];
        xip[o0 + j] = eta + scalar_t(1);
        xsp[o0 + j] = xp[o0 + j] * xip[o0 + j];
      }
    }
  });
  auto& y = c.buffer(7, {n, out}, o);
  fused_ops::addmm_out(y, b_, xs, w_);
  return y;
}

// Backward from g = dL/dy: dΘ = (x ∘ ξ)ᵀ g, db = Σ_r g_r, dξ̃ = g Θᵀ; dx = dξ̃ ∘ ξ;
// dη = dξ̃ ∘ x; through the reflection (H symmetric) de = dη - k d_r v with
// d_r = dη·v, and dv = -k (dηᵀ c + eᵀ d) + k² (c·d) v (k = 2/|v|² depends on
// v: dk/dv = -k² v); ds = Σ_r de ∘ η₀, d log α = s ∘ ds / 2.
torch::Tensor VsdLayer::fused_backward(const torch::Tensor& g, FusedCache& c, bool need_dx) {
  torch::NoGradGuard ng;
  const auto &x = c[0], &eta0 = c[1], &s = c[2], &e = c[3], &xi = c[4], &xs = c[5], &cr = c[6];
  const int64_t n = x.size(0), in = in_features();
  fused_ops::xt_mm_out(w_.mutable_grad(), xs, g, 1.0);
  fused_ops::add_(b_.mutable_grad(), g.sum(0));
  auto& dxs = c.buffer(8, {n, in}, g.options());
  fused_ops::mm_wt_out(dxs, g, w_);
  auto& dx = c.buffer(9, {n, in}, g.options());
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "vsd_fused_backward", [&] {
    const scalar_t *xp = x.data_ptr<scalar_t>(), *ep0 = eta0.data_ptr<scalar_t>(), *sp = s.data_ptr<scalar_t>();
    const scalar_t *ep = e.data_ptr<scalar_t>(), *xip = xi.data_ptr<scalar_t>(), *cp = cr.data_ptr<scalar_t>();
    const scalar_t* vp = T_ == 1 ? v1_.data_ptr<scalar_t>() : nullptr;
    const scalar_t* gp = dxs.data_ptr<scalar_t>();
    scalar_t* dxp = dx.data_ptr<scalar_t>();
    std::vector<double> ds(static_cast<size_t>(in), 0.0), dv(static_cast<size_t>(vp ? in : 0), 0.0);
    double k = 0, cd = 0;
    if (vp) {
      double vv = 0;
      for (int64_t j = 0; j < in; ++j) vv += static_cast<double>(vp[j]) * vp[j];
      k = 2.0 / vv;
    }
    for (int64_t r = 0; r < n; ++r) {
      const int64_t o0 = r * in;
      double d = 0;
      if (vp)
        for (int64_t j = 0; j < in; ++j) d += static_cast<double>(gp[o0 + j]) * xp[o0 + j] * vp[j];
      cd += static_cast<double>(cp[r]) * d;
      for (int64_t j = 0; j < in; ++j) {
        const double deta = static_cast<double>(gp[o0 + j]) * xp[o0 + j];
        const double de = vp ? deta - k * d * vp[j] : deta;
        ds[j] += de * ep0[o0 + j];
        if (vp) dv[j] -= k * (deta * cp[r] + static_cast<double>(ep[o0 + j]) * d);
        if (need_dx) dxp[o0 + j] = gp[o0 + j] * xip[o0 + j];
      }
    }
    scalar_t* gla = log_alpha_.mutable_grad().data_ptr<scalar_t>();
    for (int64_t j = 0; j < in; ++j) gla[j] += static_cast<scalar_t>(0.5 * sp[j] * ds[j]);
    if (vp) {
      scalar_t* gv = v1_.mutable_grad().data_ptr<scalar_t>();
      for (int64_t j = 0; j < in; ++j) gv[j] += static_cast<scalar_t>(dv[j] + k * k * cd * vp[j]);
    }
  });
  return need_dx ? dx : torch::Tensor();
}

// The KL (eq. 5) for T <= 1 without building U: with U = I - k v vᵀ,
// σ_i = Σ_j α_j U_ij² = α_i (1 - 2k v_i²) + k² v_i² S, S = Σ_j α_j v_j²
// (T = 0: σ_i = α_i). With r_i = (Q/2) / (1 + σ_i), R = Σ r_m v_m² and
// P = Σ r_m α_m v_m²: ∂KL/∂α_i = r_i (1 - 2k v_i²) + k² v_i² R, so
// ∂KL/∂log α_i = α_i ∂KL/∂α_i - Q/2, and
// ∂KL/∂v_j = v_j [r_j (2k² S - 4k α_j) + 2k² (α_j R + P) - 2k³ S R].
// In double; the test checks it against autograd through householder_product.
double VsdLayer::fused_kl_backward() {
  torch::NoGradGuard ng;
  const int64_t in = in_features();
  const double half_q = 0.5 * static_cast<double>(out_features());
  double kl = 0;
  AT_DISPATCH_FLOATING_TYPES(log_alpha_.scalar_type(), "vsd_fused_kl", [&] {
    const scalar_t* la = log_alpha_.data_ptr<scalar_t>();
    const scalar_t* vp = T_ == 1 ? v1_.data_ptr<scalar_t>() : nullptr;
    std::vector<double> a(static_cast<size_t>(in)), v2(static_cast<size_t>(in), 0.0), r(static_cast<size_t>(in));
    double k = 0, S = 0, R = 0, P = 0;
    for (int64_t i = 0; i < in; ++i) a[i] = std::exp(static_cast<double>(la[i]));
    if (vp) {
      double vv = 0;
      for (int64_t i = 0; i < in; ++i) {
        v2[i] = static_cast<double>(vp[i]) * vp[i];
        vv += v2[i];
        S += a[i] * v2[i];
      }
      k = 2.0 / vv;
    }
    for (int64_t i = 0; i < in; ++i) {
      const double sigma = a[i] * (1.0 - 2.0 * k * v2[i]) + k * k * v2[i] * S;
      kl += half_q * (std::log1p(sigma) - la[i]);
      r[i] = half_q / (1.0 + sigma);
      R += r[i] * v2[i];
      P += r[i] * a[i] * v2[i];
    }
    scalar_t* gla = log_alpha_.mutable_grad().data_ptr<scalar_t>();
    for (int64_t i = 0; i < in; ++i)
      gla[i] += static_cast<scalar_t>(a[i] * (r[i] * (1.0 - 2.0 * k * v2[i]) + k * k * v2[i] * R) - half_q);
    if (vp) {
      scalar_t* gv = v1_.mutable_grad().data_ptr<scalar_t>();
      for (int64_t j = 0; j < in; ++j)
        gv[j] += static_cast<scalar_t>(vp[j] * (r[j] * (2.0 * k * k * S - 4.0 * k * a[j]) + 2.0 * k * k * (a[j] * R + P) -
                                                2.0 * k * k * k * S * R));
    }
  });
  return kl;
}

}  // namespace

LayerPtr make_vsd_layer(int64_t in, int64_t out, const VsdOptions& o, const LayerContext& ctx) {
  return std::make_shared<VsdLayer>(in, out, o, ctx.gen);
}

LayerKind vsd_layer_kind() {
  return layer_kind("vsd", make_vsd_layer).fused("with model.vsd.householder at most 1 and not model.vsd.hierarchical");
}

}  // namespace whvi::models
