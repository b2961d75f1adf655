// Last-layer Laplace (model.kind: laplace; MacKay 1992, Daxberger et al. 2021,
// "Laplace Redux"): a deterministic network is trained to its MAP in steps
// (infer/map_fit.h), then, once from every training row after the steps,
// the output layer's weights and bias θ get the Gaussian posterior
//   N(θ*, (H + α I)⁻¹),   H = Σ_n J_nᵀ Λ_n J_n,
// the generalised Gauss-Newton matrix of the negative log likelihood. With
// φ_n = [h_n, 1] the output layer's inputs (the trunk and hidden layers at the
// MAP) and θ ordered output by output (θ_c = [w_{:,c}, b_c]), J_n = I_C ⊗ φ_nᵀ
// and Λ_n = ∂²(−log p(y_n | f))/∂f² at f_n = f(x_n) (the likelihood's own
// second derivative, by automatic differentiation: 1/σ² for the gaussian, the
// softmax's diag(p) − p pᵀ), so
//   H[(c,i),(d,j)] = Σ_n Λ_n[c,d] φ_n[i] φ_n[j].
// The last layer is linear in θ, so for a network without hidden layers and a
// gaussian likelihood this is the exact posterior of Bayesian linear
// regression with that noise and prior.
//
// The prior precision α (model.laplace.prior_precision, standardised scale;
// 0 = chosen) maximises the Laplace approximation of the evidence at θ*:
//   ln Z(α) = ln p(y | θ*) − α/2 |θ*|² + Q/2 ln α − ½ Σ_i ln(λ_i + α)   (+ const),
// λ_i the eigenvalues of H, Q = C (width + 1): a log grid of α from 1e-6 to 1e6,
// refined by golden sections. θ* stays the MAP of the training prior
// (model.sghmc.prior_var; with model.laplace.map_prior off, the maximum of the
// likelihood alone), as in Laplace Redux's post-hoc marginal likelihood.
//
// Prediction: Monte Carlo over θ ~ N(θ*, (H + α I)⁻¹) with the hidden layers at
// the MAP (the likelihood adds its noise; a classifier's probabilities are the
// mean of the sampled softmaxes). Before the fit (stopping's measurements) the
// posterior is a point, the MAP network's own predictive.
#include <cmath>

#include <spdlog/spdlog.h>

#include "common/draws.h"
#include "common/errors.h"
#include "common/memory.h"
#include "infer/inference.h"
#include "infer/map_fit.h"
#include "models/export.h"

namespace whvi::infer {
namespace {

constexpr double kMinAlpha = 1e-6, kMaxAlpha = 1e6;

struct LaplaceOptions {
  double prior_precision = 0;
  bool map_prior = true;
  template <class V>
  void visit(V& v) {
    v.flag("model.laplace.map_prior", map_prior,
           "model.kind laplace: train the MAP network with the weights' Gaussian prior N(0, model.sghmc.prior_var) "
           "added to its NLL; off = the NLL alone (a maximum-likelihood fit that stopping regularises); the posterior's "
           "prior precision is model.laplace.prior_precision either way");
    v.num("model.laplace.prior_precision", prior_precision, 0, options::kInf,
          "model.kind laplace: precision alpha of the output layer's Gaussian prior in its posterior (standardised "
          "scale); 0 = chosen by maximising the Laplace evidence on the training rows (between 1e-6 and 1e6)");
  }
};

struct LaplaceAndOptimiser {
  LaplaceOptions laplace;
  VariationalOptions optimiser;
  template <class V>
  void visit(V& v) {
    laplace.visit(v);
    v.part(optimiser);
  }
};

// ln Z(α) up to a constant, from H's eigenvalues and |θ*|²
double log_evidence(const torch::Tensor& eig, double theta_sq, double alpha) {
  const double q = static_cast<double>(eig.size(0));
  return -0.5 * alpha * theta_sq + 0.5 * q * std::log(alpha) - 0.5 * (eig + alpha).log().sum().item<double>();
}

// The α in [kMinAlpha, kMaxAlpha] that maximises ln Z: the best of a log grid, then golden sections
// on ln α between its neighbours.
double best_alpha(const torch::Tensor& eig, double theta_sq) {
  const auto f = [&](double log_a) { return log_evidence(eig, theta_sq, std::exp(log_a)); };
  const double lo = std::log(kMinAlpha), hi = std::log(kMaxAlpha);
  const int n = 241;
  int best = 0;
  double best_v = -INFINITY;
  for (int i = 0; i < n; ++i) {
    const double v = f(lo + (hi - lo) * i / (n - 1));
    if (v > best_v) best_v = v, best = i;
  }
  double a = lo + (hi - lo) * std::max(best - 1, 0) / (n - 1), b = lo + (hi - lo) * std::min(best + 1, n - 1) / (n - 1);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a), fc = f(c), fd = f(d);
  for (int it = 0; it < 100 && b - a > 1e-12; ++it) {
    if (fc > fd) b = d, d = c, fd = fc, c = b - g * (b - a), fc = f(c);
    else a = c, c = d, fc = fd, d = a + g * (b - a), fd = f(d);
  }
  return std::exp((a + b) / 2);
}

class Laplace final : public OnMapFit {
 public:
  Laplace(std::unique_ptr<Inference> map, const LaplaceOptions& o) : OnMapFit(std::move(map)), opt_(o) {
    const auto w = last()["w"];
    p_ = w.size(0) + 1;
    c_ = w.size(1);
    // fit() holds about five q x q matrices of doubles (the Hessian, its
    // symmetric copy, the eigenvectors, the scale, a product)
    const double q = static_cast<double>(c_ * p_);
    refuse_unless_room(5.0 * 8.0 * q * q,
                       detail::concat("model.kind laplace: the output layer's posterior over its ", c_ * p_,
                                      " weights ((width + 1) x outputs; its matrices are weights x weights)"),
                       "lower model.width (the last hidden layer's), or use model.kind swag or ensemble");
    scale_ = torch::zeros({c_ * p_, c_ * p_}, torch::kFloat64);
    alpha_ = torch::zeros({1}, torch::kFloat64);
  }

  // The posterior of the output layer from every training row (x standardised; y the targets as trained on).
  void fit(const torch::Tensor& x, const torch::Tensor& y) override {
    const auto phi = design(x);
    const auto lam = output_hessians(x, y);  // [N, C, C]
    auto h = torch::zeros({c_, p_, c_, p_}, torch::kFloat64);
    for (int64_t c = 0; c < c_; ++c)
      for (int64_t d = 0; d < c_; ++d) h.select(0, c).select(1, d).copy_(phi.t().mm(phi * lam.select(1, c).select(1, d).unsqueeze(1)));
    const auto hq = h.reshape({c_ * p_, c_ * p_});
    // the ATen op: torch::linalg::eigh needs <torch/linalg.h>, not reached from here on LibTorch 2.x
    const auto [eig_raw, v] = torch::linalg_eigh(0.5 * (hq + hq.t()), "L");
    const auto eig = eig_raw.clamp_min(0);
    const double theta_sq = theta().square().sum().item<double>();
    const double alpha = opt_.prior_precision > 0 ? opt_.prior_precision : best_alpha(eig, theta_sq);
    scale_.copy_(v * (eig + alpha).rsqrt().unsqueeze(0));  // (H + αI)⁻¹ = (V D^-1/2)(V D^-1/2)ᵀ
    alpha_.fill_(alpha);
    log_evidence_ = log_evidence(eig, theta_sq, alpha);
    spdlog::info("laplace: prior precision {:.6g} (standardised){}, {} output-layer weights", alpha,
                 opt_.prior_precision > 0 ? " as set" : " by the Laplace evidence", c_ * p_);
  }

  bool predicts_concurrently() const override { return true; }  // no state changes
  // S output-layer weight vectors, applied to every row's MAP features alike
  bool draws_weights_only() const override { return true; }
  torch::Tensor predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) override {
    torch::NoGradGuard ng;
    const auto phi = design(x);
    const int64_t q = c_ * p_;
    // θ_s = θ* + scale z_s, [S, C, P]
    const auto th = (theta().unsqueeze(0) + whvi::randn({S, q}, gen, scale_.options()).mm(scale_.t())).view({S, c_, p_});
    auto f = torch::einsum("np,scp->snc", {phi, th});
    return likelihood().to_original(c_ == 1 ? f.squeeze(2) : f);
  }

  // Export: the MAP network's features, then S draws of θ ~ N(θ*, scale scaleᵀ) per call, each shared
  // by the call's rows (as predict()), through the likelihood.
  std::string export_onnx(onnx::Graph& g, const std::string& x, int64_t S, std::string& why) override {
    const auto h = models::export_features(g, map_->model(), x, why);
    if (h.empty()) return "";
    // φ = [h, 1]
    const auto first = g.op("Slice", {h, g.ints({0}), g.ints({1}), g.ints({1})});
    const auto phi = g.op("Concat", {h, g.op("Add", {g.op("Mul", {first, g.scalar(0)}), g.scalar(1)})},
                          {onnx::Attr::integer("axis", 1)});
    const int64_t q = c_ * p_;
    const auto z = g.op("RandomNormal", {}, {onnx::Attr::list("shape", {S, q})});  // [S, q], no constant of that size
    const auto th = g.op("Add", {g.op("MatMul", {z, g.constant(scale_.t())}), g.constant(theta())});  // [S, q]
    const auto tht = g.op("Transpose", {g.op("Reshape", {th, g.ints({S, c_, p_})})}, {onnx::Attr::list("perm", {0, 2, 1})});
    auto f = g.op("MatMul", {phi, tht});  // [S, N, C]
    if (c_ == 1) f = g.op("Squeeze", {f, g.ints({2})});
    return models::export_likelihood(g, map_->model(), f, why);
  }

  // the network's parameters and the output layer's posterior covariance
  int64_t num_params() const override { return map_->num_params() + c_ * p_ * (c_ * p_ + 1) / 2; }
  NamedTensors state() override {
    auto out = map_->state();
    out.emplace_back("laplace.scale", scale_);
    out.emplace_back("laplace.prior_precision", alpha_);
    return out;
  }
  const char* method() const override { return "laplace"; }
  std::vector<std::pair<std::string, double>> learned() const override {
    return {{"prior_precision", alpha_.item<double>()}, {"log_evidence_laplace", log_evidence_}};
  }
  // θ* (float64, output by output) and the output layer's inputs with a 1, in float64 (for tests too)
  torch::Tensor theta() {
    auto p = last();
    return torch::cat({p["w"].detach().t(), p["b"].detach().unsqueeze(1)}, 1).reshape({-1}).to(torch::kFloat64);
  }
  torch::Tensor design(const torch::Tensor& x_in) {
    torch::NoGradGuard ng;
    auto& net = map_->model();
    models::ForwardCtx ctx;
    ctx.mode = models::Mode::kMean;
    const auto h = net.features_standardized(x_in.to(net.parameters().front().scalar_type()), ctx).to(torch::kFloat64);
    return torch::cat({h, torch::ones({h.size(0), 1}, h.options())}, 1);
  }

 private:
  torch::OrderedDict<std::string, torch::Tensor> last() { return map_->model().layers().back()->named_parameters(); }

  // Λ_n = ∂²(−log p(y_n | f))/∂f² at the MAP's outputs, [N, C, C] in float64
  torch::Tensor output_hessians(const torch::Tensor& x, const torch::Tensor& y) {
    auto f0 = map_->mean_standardized(x).to(torch::kFloat64).detach();
    const bool vec = f0.dim() == 1;
    auto f = (vec ? f0.unsqueeze(1) : f0).clone().requires_grad_(true);
    auto& lik = likelihood();
    const auto dtype = lik.parameters().empty() ? torch::kFloat64 : lik.parameters().front().scalar_type();
    const auto nll = lik.nll_sum((vec ? f.squeeze(1) : f).to(dtype), y.to(dtype)).to(torch::kFloat64);
    const auto g = torch::autograd::grad({nll}, {f}, {}, true, true)[0];
    auto lam = torch::zeros({f.size(0), c_, c_}, torch::kFloat64);
    for (int64_t c = 0; c < c_; ++c) {
      const auto gc = torch::autograd::grad({g.select(1, c).sum()}, {f}, {}, true, false, true)[0];
      if (gc.defined()) lam.select(1, c).copy_(gc.detach());
    }
    return lam;
  }

  LaplaceOptions opt_;
  int64_t p_ = 0, c_ = 0;
  torch::Tensor scale_, alpha_;
  double log_evidence_ = std::nan("");  // of the fit (not in the checkpoint)
};

std::unique_ptr<Inference> make_laplace(const NetworkMaker& make_network, const LaplaceAndOptimiser& o) {
  WHVI_CHECK(!o.optimiser.fused,
             "training.engine fused: model.kind laplace trains its MAP network through autograd; set training.engine: autograd");
  return std::make_unique<Laplace>(make_map_fit(make_network, o.optimiser, o.laplace.map_prior), o.laplace);
}

}  // namespace

MethodKind laplace_method() {
  return method_kind("laplace", make_laplace,
                     Capabilities().only_for({"gaussian", "softmax"},
                                             "its Gauss-Newton matrix needs a likelihood convex in the network's output"));
}

// For tests: θ* and the design of a laplace method's output layer (infer/laplace.cpp).
torch::Tensor laplace_theta(Inference& inf) { return dynamic_cast<Laplace&>(inf).theta(); }
torch::Tensor laplace_design(Inference& inf, const torch::Tensor& x) { return dynamic_cast<Laplace&>(inf).design(x); }

}  // namespace whvi::infer
