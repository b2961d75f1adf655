// Bayesian linear regression (model.kind: blr), the reference a network should
// beat on small data: y = w·x + b + ε, ε ~ N(0, 1/β), prior (w, b) ~ N(0, I/α),
// on the standardised inputs and targets (Bishop 2006, §3.3; MacKay 1992).
// Fitted in closed form from the whole training set (the loop calls fit(), no
// steps; `ClosedForm` in inference.h): with Φ = [x, 1] (N × P),
//   A = α I + β ΦᵀΦ,   posterior N(m, A⁻¹),   m = β A⁻¹ Φᵀ y,
// and α, β chosen by maximising the evidence p(y | α, β) with MacKay's
// fixed-point updates (Bishop eq. 3.92, 3.95) in the eigenbasis of ΦᵀΦ:
//   γ = Σ β e_i / (α + β e_i),   α = γ / |m|²,   β = (N − γ) / |y − Φ m|²,
// until both move by less than 1e-12 relative, or model.blr.iterations
// (α at most 1e12: where the inputs explain nothing linearly the evidence grows
// without bound in α, towards the constant predictor).
// model.blr.prior_var / model.blr.noise_var fix 1/α / 1/β instead (> 0).
//
// Choices: the bias has the weights' prior (the targets are standardised, so
// its posterior mean is near 0 either way); the predictive at α, β is the exact
// Gaussian N(Φ* m, Φ* A⁻¹ Φ*ᵀ + 1/β), returned as the GP's is (infer/gp.cpp):
// evaluation.mc_samples identical Gaussian components [S, N, 2] (mean, log
// variance, original units), so every metric and interval is of the exact
// predictive, not of a mixture of weight draws, whose NLL is biased upwards
// (Jensen) by the Monte Carlo error; `whvi predict` splits the variance into 1/β
// (aleatoric) and Φ* A⁻¹ Φ*ᵀ (epistemic). Regression with the gaussian likelihood
// and the plain MLP input only.
//
// The network is a depth-0 "linear" layer holding m (its w, b), so the mean
// prediction, checkpoints and `whvi predict` go through the usual paths; the
// posterior covariance's factor L (A⁻¹ = L Lᵀ), α and β are the method's state.
#include <chrono>
#include <cmath>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/memory.h"
#include "common/runtime.h"
#include "infer/inference.h"
#include "likelihoods/gaussian.h"
#include "onnx/graph.h"

namespace whvi::infer {
namespace {

// α's bound (prior sd 10⁻⁶ on the standardised scale): reached only where the
// evidence keeps growing with α, i.e. the inputs explain nothing linearly
constexpr double kMaxAlpha = 1e12;

struct BlrOptions {
  double prior_var = 0, noise_var = 0;
  int64_t iterations = 1000, depth = 0;
  template <class V>
  void visit(V& v) {
    v.num("model.blr.prior_var", prior_var, 0, 1e12, "prior variance 1/alpha of the weights and bias (standardised scale; at most 1e12, a prior that still makes the posterior proper); 0 = chosen by maximising the evidence");
    v.num("model.blr.noise_var", noise_var, 0, 1e12, "noise variance 1/beta (standardised scale; at most 1e12); 0 = chosen by maximising the evidence");
    v.num("model.blr.iterations", iterations, 1, 1000000, "most evidence fixed-point updates of alpha and beta (they stop when both move by < 1e-12 relative)");
    v.use("model.depth", depth);
  }
};

class Blr final : public Inference, public ClosedForm {
 public:
  Blr(std::shared_ptr<models::RegressionModel> model, const BlrOptions& o) : model_(std::move(model)), opt_(o) {
    const auto& out = model_->layers().front();
    p_ = out->named_parameters()["w"].size(0) + 1;
    chol_ = torch::zeros({0, 0}, torch::kFloat64);  // P x P once fitted (or read from a checkpoint)
    alpha_ = torch::zeros({1}, torch::kFloat64);
    beta_ = torch::zeros({1}, torch::kFloat64);
  }

  void to(torch::ScalarType dtype) override { model_->to(dtype); }
  void begin(int64_t, int64_t, const at::Generator&) override {}
  torch::Tensor step(const torch::Tensor&, const torch::Tensor&, int64_t, const at::Generator&) override {
    throw Error("blr: Bayesian linear regression is fitted in closed form, not in steps (ClosedForm::fit)");
  }
  double step_size(int64_t) const override { return 0; }
  double max_abs_param() const override {
    const auto m = model_->layers().front()->named_parameters();
    return std::max(m["w"].detach().abs().max().item<double>(), m["b"].detach().abs().max().item<double>());
  }
  void end() override {}
  ClosedForm* closed_form() override { return this; }
  std::string engine() const override { return "closed-form"; }

  void fit(const torch::Tensor& x_in, const torch::Tensor& y_in) override {
    torch::NoGradGuard ng;
    check_room(x_in.size(0), p_);
    announce(x_in.size(0), p_);
    const auto phi = design(x_in);
    const auto y = y_in.to(torch::kFloat64).reshape({-1});
    const int64_t n = phi.size(0);
    // ΦᵀΦ = V diag(e) Vᵀ; the posterior in that basis is diagonal
    // the ATen op: torch::linalg::eigh needs <torch/linalg.h>, not reached from here on LibTorch 2.x
    const auto [e_raw, v] = torch::linalg_eigh(phi.t().mm(phi), "L");
    const auto e = e_raw.clamp_min(0);
    const auto c = v.t().mv(phi.t().mv(y));  // Vᵀ Φᵀ y
    double alpha = opt_.prior_var > 0 ? 1 / opt_.prior_var : 1.0;
    double beta = opt_.noise_var > 0 ? 1 / opt_.noise_var : 1.0;
    const auto mean_of = [&](double a, double b) { return v.mv(c * b / (a + b * e)); };
    int64_t it = 0;
    for (; it < opt_.iterations && (opt_.prior_var == 0 || opt_.noise_var == 0); ++it) {
      const auto m = mean_of(alpha, beta);
      const double gamma = (beta * e / (alpha + beta * e)).sum().item<double>();
      // no linear signal: the evidence grows as α → ∞ (the prior at 0, the constant
      // predictor); α stops at kMaxAlpha there
      const double ratio = gamma / m.dot(m).item<double>();
      const double a_new = opt_.prior_var > 0 ? alpha : ratio < kMaxAlpha ? ratio : kMaxAlpha;
      const double sse = (y - phi.mv(m)).square().sum().item<double>();
      const double b_new = opt_.noise_var > 0 ? beta : (static_cast<double>(n) - gamma) / sse;
      WHVI_CHECK(std::isfinite(a_new) && std::isfinite(b_new) && a_new > 0 && b_new > 0,
                 "blr: the evidence maximisation left alpha = ", a_new, ", beta = ", b_new,
                 " (a perfect linear fit?); fix them with model.blr.prior_var and model.blr.noise_var");
      const bool done = std::fabs(a_new - alpha) <= 1e-12 * alpha && std::fabs(b_new - beta) <= 1e-12 * beta;
      alpha = a_new, beta = b_new;
      if (done) break;
    }
    const auto m = mean_of(alpha, beta);
    chol_ = v * (alpha + beta * e).rsqrt().unsqueeze(0);  // A⁻¹ = (V D^-1/2)(V D^-1/2)ᵀ
    alpha_.fill_(alpha);
    beta_.fill_(beta);
    auto params = model_->layers().front()->named_parameters();
    params["w"].detach().copy_(m.narrow(0, 0, p_ - 1).view({p_ - 1, 1}));
    params["b"].detach().copy_(m.narrow(0, p_ - 1, 1));
    lik().log_noise_var().detach().fill_(-std::log(beta));
    log_evidence_ = log_evidence(e, c, y, alpha, beta, n);
    spdlog::info("blr: alpha {:.6g}, beta {:.6g} (noise variance {:.6g}, standardised), log evidence {:.6g}, {} updates",
                 alpha, beta, 1 / beta, log_evidence_, it);
  }

  bool predicts_concurrently() const override { return true; }  // no state changes
  // [S, N, 2]: S copies of the exact predictive N(Φ* m, |Φ* L|² + 1/β) per row (mean, log
  // variance; original units); nothing is drawn
  torch::Tensor predict(const torch::Tensor& x_in, int64_t S, const at::Generator&) override {
    torch::NoGradGuard ng;
    check_fitted();
    const auto phi = design(x_in);
    const auto var = phi.mm(chol_).square().sum(1);  // diag(Φ* A⁻¹ Φ*ᵀ)
    return lik().exact_components(phi.mv(mean_weights()), var + 1 / beta_.item<double>(), S);
  }

  // Export: the exact predictive as predict() gives it, [1, N, 2] (mean, log
  // variance; original units); nothing is drawn.
  std::string export_onnx(onnx::Graph& g, const std::string& x, int64_t, std::string&) override {
    check_fitted();
    const int64_t d = p_ - 1;
    const auto m = mean_weights();
    const auto mean = onnx::linear(g, x, m.narrow(0, 0, d).view({d, 1}), m.narrow(0, d, 1));  // [N, 1]
    const auto pl = onnx::linear(g, x, chol_.narrow(0, 0, d), chol_[d]);                   // Φ* L, [N, P]
    const auto v = onnx::reduce(g, "ReduceSum", g.op("Mul", {pl, pl}), 1, /*keepdims=*/true);
    // original units: the variance times y_std² = noise_var_original() β
    const double beta = beta_.item<double>(), scale = lik().noise_var_original() * beta;
    const auto var = g.op("Mul", {g.op("Add", {v, g.scalar(1 / beta)}), g.scalar(scale)});
    const auto both = g.op("Concat", {lik().export_onnx(g, mean), g.op("Log", {var})}, {onnx::Attr::integer("axis", 1)});
    return g.op("Unsqueeze", {both, g.ints({0})});
  }

  torch::Tensor mean_standardized(const torch::Tensor& x) override {
    torch::NoGradGuard ng;
    return model_->forward_standardized(x, models::Mode::kMean);
  }

  likelihoods::Likelihood& likelihood() override { return model_->likelihood(); }
  // the posterior's mean and covariance, and the noise variance
  int64_t num_params() const override { return p_ + p_ * (p_ + 1) / 2 + 1; }
  NamedTensors state() override {
    NamedTensors out;
    for (const auto& p : model_->named_parameters()) out.emplace_back(p.key(), p.value());
    out.emplace_back("blr.chol", chol_);
    out.emplace_back("blr.alpha", alpha_);
    out.emplace_back("blr.beta", beta_);
    return out;
  }
  const char* method() const override { return "blr"; }
  // standardised scale
  std::vector<std::pair<std::string, double>> learned() const override {
    return {{"alpha", alpha_.item<double>()}, {"beta", beta_.item<double>()}, {"log_evidence", log_evidence_}};
  }
  models::RegressionModel& model() override { return *model_; }

 private:
  // A fitted model, or one read from a checkpoint whose factor has the model's shape.
  void check_fitted() const {
    WHVI_CHECK(alpha_.item<double>() > 0, "blr: the model was not fitted");
    WHVI_CHECK(chol_.dim() == 2 && chol_.size(0) == p_ && chol_.size(1) == p_, "blr: the posterior's factor is ",
               chol_.sizes(), ", the model has ", p_, " inputs with the bias: the checkpoint is damaged; train again");
  }
  // The fit holds the design twice (the inputs in float64, then with the bias)
  // and about six P x P matrices (ΦᵀΦ, its eigenvectors, LAPACK's work space,
  // the factor): refused before any of them is made when that cannot fit.
  static void check_room(int64_t n, int64_t p) {
    const double need = 8.0 * (2.0 * static_cast<double>(n) * static_cast<double>(p) +
                               6.0 * static_cast<double>(p) * static_cast<double>(p));
    refuse_unless_room(need, detail::concat("blr: the closed-form fit on ", n, " rows x ", p - 1,
                                            " inputs (its matrices are inputs x inputs)"),
                       "leave wide categories out of data.features (each one-hot category is one input), or use a "
                       "network (model.kind mfg)");
  }
  // Over 30 s of work said before it starts: ΦᵀΦ grows as rows x inputs², its
  // eigendecomposition as inputs³; both timed on a pilot of 512 inputs.
  static void announce(int64_t n, int64_t p) {
    constexpr int64_t kPilot = 512;
    if (p < 2 * kPilot) return;
    const int64_t n_pilot = std::min<int64_t>(n, 4096);
    // a dense matrix without structure, drawn from no generator (a timing only)
    const auto a = torch::arange(n_pilot * kPilot, torch::kFloat64).mul_(0.7).sin_().view({n_pilot, kPilot});
    const auto t0 = std::chrono::steady_clock::now();
    const auto gram = a.t().mm(a);
    const auto t1 = std::chrono::steady_clock::now();
    static_cast<void>(torch::linalg_eigh(gram, "L"));
    const auto t2 = std::chrono::steady_clock::now();
    const double r = static_cast<double>(p) / kPilot;
    const double sec = std::chrono::duration<double>(t1 - t0).count() * r * r * static_cast<double>(n) / n_pilot +
                       std::chrono::duration<double>(t2 - t1).count() * r * r * r;
    if (sec > 30)
      spdlog::info("blr: the closed-form fit on {} rows x {} inputs will take about {:.0f} s (from a pilot's "
                   "speed); it grows as inputs³, and each one-hot category is one input",
                   n, p - 1, sec);
  }
  // Φ = [x, 1] in float64
  static torch::Tensor design(const torch::Tensor& x_in) {
    const auto x = x_in.to(torch::kFloat64);
    return torch::cat({x, torch::ones({x.size(0), 1}, x.options())}, 1);
  }
  likelihoods::GaussianLikelihood& lik() { return static_cast<likelihoods::GaussianLikelihood&>(model_->likelihood()); }
  torch::Tensor mean_weights() {
    auto params = model_->layers().front()->named_parameters();
    return torch::cat({params["w"].detach().reshape({-1}), params["b"].detach()}).to(torch::kFloat64);
  }
  // ln p(y | α, β) (Bishop eq. 3.86), in the eigenbasis
  static double log_evidence(const torch::Tensor& e, const torch::Tensor& c, const torch::Tensor& y, double alpha,
                             double beta, int64_t n) {
    const double p = static_cast<double>(e.size(0));
    const auto d = alpha + beta * e;
    // E(m) = β/2 |y − Φm|² + α/2 |m|² = (β/2)(yᵀy − β Σ c_i² / d_i)
    const double em = 0.5 * beta * (y.dot(y).item<double>() - beta * (c.square() / d).sum().item<double>());
    return 0.5 * p * std::log(alpha) + 0.5 * static_cast<double>(n) * std::log(beta) - em -
           0.5 * d.log().sum().item<double>() - 0.5 * static_cast<double>(n) * std::log(2 * M_PI);
  }

  std::shared_ptr<models::RegressionModel> model_;
  BlrOptions opt_;
  int64_t p_ = 0;
  torch::Tensor chol_, alpha_, beta_;
  double log_evidence_ = std::nan("");  // of the fit (not in the checkpoint)
};

std::unique_ptr<Inference> make_blr(const NetworkMaker& make_network, const BlrOptions& o) {
  WHVI_CHECK(o.depth == 0, "model.kind blr is Bayesian linear regression on the inputs, with no hidden layers, but "
             "model.depth is ", o.depth, "; set model.depth: 0");
  auto net = make_network();
  WHVI_CHECK(!net->has_trunk(), "model.kind blr works on the inputs themselves; set model.architecture: mlp");
  return std::make_unique<Blr>(std::move(net), o);
}

}  // namespace

MethodKind blr_method() {
  return method_kind("blr", make_blr,
                     Capabilities().fitted_in_closed_form().only_for(
                         {"gaussian"}, "its posterior and evidence are those of a Gaussian noise model"));
}

}  // namespace whvi::infer
