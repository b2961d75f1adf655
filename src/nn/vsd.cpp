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

#include "common/draws.h"
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

class VsdLayer : public BayesianLayer {
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

 private:
  int64_t T_ = 1;
  bool hier_ = false;
  double a_ = 1, b_rate_ = 1;
  torch::Tensor w_, b_, log_alpha_, v1_, z_m_, z_logvar_;
  std::vector<torch::Tensor> chain_a_, chain_c_;
};

}  // namespace

LayerPtr make_vsd_layer(int64_t in, int64_t out, const VsdOptions& o, const LayerContext& ctx) {
  return std::make_shared<VsdLayer>(in, out, o, ctx.gen);
}

LayerKind vsd_layer_kind() { return layer_kind("vsd", make_vsd_layer); }

}  // namespace whvi::models
