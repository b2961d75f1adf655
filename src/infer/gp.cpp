// Exact Gaussian-process regression (model.kind: gp), the reference model on
// small data (Rasmussen & Williams 2006, ch. 2 and 5), on the standardised
// inputs and targets with a zero prior mean:
//   f ~ GP(0, k),   y = f(x) + ε,   ε ~ N(0, σ²),
//   k(x, x') = s² exp(−r²/2)                      (se: ARD squared exponential)
//            = s² (1 + √5 r + 5r²/3) exp(−√5 r)   (matern52: ARD Matérn 5/2)
//   r² = Σ_d (x_d − x'_d)² / ℓ_d².
// Fitted in closed form from the whole training set (`ClosedForm`): with
// K_y = K + σ² I = L Lᵀ and a = K_y⁻¹ y,
//   ln p(y | θ) = −½ yᵀa − Σ ln L_ii − (N/2) ln 2π        (R&W eq. 2.30)
// is maximised over θ = (ln ℓ_1..ℓ_D, ln s², ln σ²) by L-BFGS with a strong
// Wolfe line search and its analytic gradient (eq. 5.9), from model.gp.restarts starting
// points (the first ℓ = 1, s² = 1, σ² = 0.1; the others drawn log-uniformly in
// the bounds below from the run's initialisation stream); the highest
// marginal likelihood wins (with model.gp.lengthscale_prior lognormal, the
// highest marginal likelihood times the length scales' prior). The bounds (standardised scale) keep K_y
// well-conditioned: ℓ in [0.01, 1000], s² in [0.001, 10⁴], σ² in [1e-6, 10];
// θ is clamped into them.
// The predictive at x* is N(μ*, v* + σ²) with μ* = k*ᵀ a, v* = k** − |L⁻¹k*|²
// (R&W eq. 2.25–2.26), and it is returned as such: evaluation.mc_samples
// identical Gaussian components [S, N, 2] (mean, log variance, original
// units), the form hetero-gaussian's samples take, so every metric, interval
// and calibration is of the exact predictive. Draws of f* ~ N(μ*, v*), each
// with the noise σ², would score a Monte Carlo mixture instead, whose NLL is
// biased upwards without bound as σ² shrinks next to v*: an ARD fit that
// explains its training rows with little noise was scored 558 nats a row by 64
// draws where its exact predictive scores 5.95. `whvi predict` splits the
// variance into σ² (aleatoric) and v* (epistemic).
//
// Cost: O(N³) time and O(N²) memory per marginal-likelihood evaluation, and a
// checkpoint holds the N × N factor L, so training sets above
// model.gp.max_rows rows are refused with the alternatives named. Regression
// with the gaussian likelihood and the plain MLP input only.
//
// The state is the training inputs, a, L and θ; their sizes depend on the
// training set, so they are allocated empty and a checkpoint restores their
// stored shapes (infer/inference.h, `state()`). The depth-0 "linear" network
// is unused except for its likelihood, which holds σ².
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>

#include "common/draws.h"
#include "common/errors.h"
#include "common/memory.h"
#include "infer/inference.h"
#include "likelihoods/gaussian.h"
#include "onnx/graph.h"

namespace whvi::infer {
namespace {

// bounds of θ on the standardised scale: ln ℓ, ln s², ln σ²
constexpr std::array<double, 2> kLogLengthscale = {-4.605170185988091, 6.907755278982137};  // 0.01, 1000
constexpr std::array<double, 2> kLogSignalVar = {-6.907755278982137, 9.210340371976184};    // 0.001, 10000
constexpr std::array<double, 2> kLogNoiseVar = {-13.815510557964274, 2.302585092994046};    // 1e-6, 10

// model.gp.lengthscale_prior lognormal: ln ℓ_d ~ N(√2 + ln(D)/2, 3) for each of the D inputs
// (Hvarfner, Hellsten & Nardi 2024's dimension-scaled prior), so θ maximises the marginal
// likelihood plus that log prior: a MAP fit that keeps the length scales from fitting noise
constexpr double kPriorVar = 3.0;
double prior_mean(int64_t d) { return std::sqrt(2.0) + 0.5 * std::log(static_cast<double>(d)); }

struct GpOptions {
  std::string kernel = "se", lengthscale_prior = "none";
  int64_t restarts = 3, iterations = 200, max_rows = 2000, depth = 0;
  double noise_var = 0;
  template <class V>
  void visit(V& v) {
    v.pick("model.gp.kernel", kernel, {"se", "matern52"},
           "covariance function, with one length scale per input (ARD): se = squared exponential, matern52 = "
           "Matern 5/2");
    v.pick("model.gp.lengthscale_prior", lengthscale_prior, {"none", "lognormal"},
           "none = the hyper-parameters maximise the marginal likelihood; lognormal = they maximise it plus a "
           "log prior ln(length scale) ~ N(sqrt(2) + ln(D)/2, 3) on each of the D inputs (a MAP fit)");
    v.late();
    v.num("model.gp.restarts", restarts, 1, 100,
          "starting points of the marginal-likelihood maximisation (the first fixed, the others random); the "
          "best one is kept");
    v.num("model.gp.iterations", iterations, 1, 100000, "most L-BFGS iterations per starting point");
    v.num("model.gp.max_rows", max_rows, 1, 50000,
          "most training rows (time grows as rows^3, memory and the checkpoint as rows^2 x 8 bytes)");
    v.num("model.gp.noise_var", noise_var, 0, 10,
          "noise variance sigma^2 on the standardised scale; 0 = chosen with the kernel's hyper-parameters");
    v.use("model.depth", depth);
  }
};

class Gp final : public Inference, public ClosedForm {
 public:
  Gp(std::shared_ptr<models::RegressionModel> model, const GpOptions& o, int64_t d)
      : model_(std::move(model)), opt_(o), d_(d) {
    const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
    x_ = torch::zeros({0, d_}, f64);
    a_ = torch::zeros({0}, f64);
    chol_ = torch::zeros({0, 0}, f64);
    theta_ = torch::zeros({d_ + 2}, f64);
  }

  void to(torch::ScalarType dtype) override { model_->to(dtype); }
  void begin(int64_t n_train, int64_t, const at::Generator& gen) override {
    WHVI_CHECK(n_train <= opt_.max_rows, "model.kind gp: ", n_train, " training rows is above model.gp.max_rows (",
               opt_.max_rows, "): an exact GP costs rows^3 time and rows^2 memory. Use model.kind blr or a "
               "network (whvi, mcd) for this many rows, or raise model.gp.max_rows");
    // a marginal-likelihood step holds about five rows x rows matrices of
    // doubles (the kernel, its Cholesky factor, their gradients' tape)
    const double n = static_cast<double>(n_train);
    refuse_unless_room(5.0 * 8.0 * n * n,
                       detail::concat("model.kind gp on ", n_train, " training rows (its matrices are rows x rows)"),
                       "use model.kind blr or a network (whvi, mcd) for this many rows, or train on a sample of them");
    // the random starting points, drawn here from the run's initialisation stream
    starts_ = torch::rand({opt_.restarts, d_ + 2}, gen, torch::kFloat64);
  }
  torch::Tensor step(const torch::Tensor&, const torch::Tensor&, int64_t, const at::Generator&) override {
    throw Error("gp: a Gaussian process is fitted in closed form, not in steps (ClosedForm::fit)");
  }
  double step_size(int64_t) const override { return 0; }
  double max_abs_param() const override {
    return a_.numel() > 0 ? a_.abs().max().item<double>() : theta_.abs().max().item<double>();
  }
  void end() override {}
  ClosedForm* closed_form() override { return this; }
  std::string engine() const override { return "closed-form"; }

  void fit(const torch::Tensor& x_in, const torch::Tensor& y_in) override {
    const auto x = x_in.to(torch::kFloat64).contiguous();
    const auto y = y_in.to(torch::kFloat64).reshape({-1});
    WHVI_CHECK(starts_.defined(), "gp: fit() before begin()");
    double best = -std::numeric_limits<double>::infinity();
    torch::Tensor best_theta;
    int failed = 0;
    // a fit that will take a while says so, and how far it is (each start costs about rows³)
    const auto t0 = std::chrono::steady_clock::now();
    note_ = t0;
    if (x.size(0) >= 1000)
      spdlog::info("gp: fitting on {} rows from {} starting points; each costs about rows³, so this takes a while "
                   "(progress after each)", x.size(0), opt_.restarts);
    for (int64_t r = 0; r < opt_.restarts; ++r) {
      auto theta = start(r).requires_grad_(true);
      try {
        const double lml = maximise(theta, x, y, r);
        spdlog::debug("gp: start {}: log marginal likelihood {:.6g}", r, lml);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double to_go = sec / static_cast<double>(r + 1) * static_cast<double>(opt_.restarts - r - 1);
        // at most one line every 10 s, and only for a fit of over 30 s
        if (sec + to_go > 30 && r + 1 < opt_.restarts &&
            std::chrono::steady_clock::now() - note_ >= std::chrono::seconds(10)) {
          spdlog::info("gp: start {} of {} done after {:.0f} s; about {:.0f} s to go (model.gp.restarts)", r + 1,
                       opt_.restarts, sec, to_go);
          note_ = std::chrono::steady_clock::now();
        }
        if (!std::isfinite(lml)) ++failed;
        else if (lml > best) best = lml, best_theta = theta.detach().clone();
      } catch (const c10::Error&) {
        ++failed;  // K_y lost positive definiteness along the line search
      }
    }
    WHVI_CHECK(best_theta.defined(), "gp: every one of the ", opt_.restarts, " marginal-likelihood maximisations "
               "failed (the kernel matrix is not positive definite); set model.gp.noise_var, e.g. 0.01");
    torch::NoGradGuard ng;
    const auto th = clamp(best_theta);
    const auto L = torch::linalg_cholesky(kernel(th, x, x) + th[d_ + 1].exp() * torch::eye(x.size(0), x.options()));
    const auto a = torch::cholesky_solve(y.unsqueeze(1), L).squeeze(1);
    theta_.copy_(th);
    x_.resize_(x.sizes()).copy_(x);
    a_.resize_(a.sizes()).copy_(a);
    chol_.resize_(L.sizes()).copy_(L);
    lik().log_noise_var().detach().fill_(th[d_ + 1].item<double>());
    // the starts are compared by the log posterior when there is a prior; the record keeps the marginal likelihood
    lml_ = opt_.lengthscale_prior == "none" ? best : -objective(best_theta, x, y, false).first;
    const auto ls = th.narrow(0, 0, d_).exp();
    spdlog::info("gp: {} kernel, log marginal likelihood {:.6g} (best of {} starts{}), signal variance {:.4g}, "
                 "noise variance {:.4g} (standardised), length scales {:.3g} to {:.3g}",
                 opt_.kernel, lml_, opt_.restarts, failed ? ", " + std::to_string(failed) + " failed" : "",
                 th[d_].exp().item<double>(), th[d_ + 1].exp().item<double>(), ls.min().item<double>(),
                 ls.max().item<double>());
  }

  bool predicts_concurrently() const override { return true; }  // no state changes
  // [S, N, 2]: S copies of the exact predictive N(μ*, v* + σ²) per row (mean, log variance; original
  // units); nothing is drawn
  torch::Tensor predict(const torch::Tensor& x_in, int64_t S, const at::Generator&) override {
    torch::NoGradGuard ng;
    const auto [mu, var] = posterior(x_in);
    return lik().exact_components(mu, var + std::exp(lik().log_noise_var().item<double>()), S);
  }

  // Export: the exact predictive as predict() gives it, [1, N, 2] (mean, log variance; original units),
  // computed in float64 inside the graph (the kernel's distances and k** − |L⁻¹k*|² lose too much in
  // float32); L⁻¹ is stored, so |L⁻¹k*|² is one product.
  std::string export_onnx(onnx::Graph& g, const std::string& x_in, int64_t, std::string&) override {
    const auto th = theta_;
    const auto d = [&](double v) { return g.scalar(v, true); };
    const auto inv_ls = (-th.narrow(0, 0, d_)).exp();
    const auto xt = x_ * inv_ls;  // [N, D]
    const auto x = g.op("Mul", {onnx::cast(g, x_in, onnx::Elem::kDouble), g.constant(inv_ls, true)});
    const auto sq = onnx::reduce(g, "ReduceSum", g.op("Mul", {x, x}), 1, /*keepdims=*/true);
    const auto cross = g.op("Mul", {g.op("MatMul", {x, g.constant(xt.t(), true)}), d(2)});
    const auto r2 = g.op("Max", {g.op("Add", {g.op("Sub", {sq, cross}), g.constant(xt.square().sum(1), true)}), d(0)});
    const double log_s2 = th[d_].item<double>();
    std::string k;
    if (opt_.kernel == "se") {
      k = g.op("Exp", {g.op("Add", {g.op("Mul", {r2, d(-0.5)}), d(log_s2)})});
    } else {  // s² (1 + √5 r + 5r²/3) e^{−√5 r}
      const double c = std::sqrt(5.0);
      const auto r = g.op("Sqrt", {r2});
      const auto e = g.op("Exp", {g.op("Add", {g.op("Mul", {r, d(-c)}), d(log_s2)})});
      k = g.op("Mul", {e, g.op("Add", {g.op("Add", {g.op("Mul", {r, d(c)}), d(1)}), g.op("Mul", {r2, d(5.0 / 3.0)})})});
    }
    const auto mu = g.op("MatMul", {k, g.constant(a_.unsqueeze(1), true)});  // [m, 1]
    const auto l_inv = torch::linalg_solve_triangular(chol_, torch::eye(chol_.size(0), chol_.options()), /*upper=*/false);
    const auto v = g.op("MatMul", {k, g.constant(l_inv.t(), true)});
    const auto vv = onnx::reduce(g, "ReduceSum", g.op("Mul", {v, v}), 1, /*keepdims=*/true);
    const double noise = std::exp(lik().log_noise_var().item<double>());
    const double y_var = lik().noise_var_original() / noise;
    const auto var = g.op("Add", {g.op("Max", {g.op("Sub", {d(std::exp(log_s2)), vv}), d(0)}), d(noise)});
    const auto to_float = [&](const std::string& t) { return onnx::cast(g, t, onnx::Elem::kFloat); };
    const auto log_var = to_float(g.op("Log", {g.op("Mul", {var, d(y_var)})}));
    const auto both = g.op("Concat", {lik().export_onnx(g, to_float(mu)), log_var}, {onnx::Attr::integer("axis", 1)});
    return g.op("Unsqueeze", {both, g.ints({0})});
  }

  torch::Tensor mean_standardized(const torch::Tensor& x) override {
    torch::NoGradGuard ng;
    return posterior(x).first.to(x.scalar_type());
  }

  likelihoods::Likelihood& likelihood() override { return model_->likelihood(); }
  int64_t num_params() const override { return d_ + 2; }  // the kernel's hyper-parameters and the noise
  NamedTensors state() override {
    NamedTensors out;
    for (const auto& p : model_->named_parameters()) out.emplace_back(p.key(), p.value());
    out.emplace_back("gp.theta", theta_);
    out.emplace_back("gp.x", x_);
    out.emplace_back("gp.a", a_);
    out.emplace_back("gp.chol", chol_);
    return out;
  }
  const char* method() const override { return "gp"; }
  // standardised scale; length_scale_k for input k (1-based, the model's input order)
  std::vector<std::pair<std::string, double>> learned() const override {
    std::vector<std::pair<std::string, double>> out = {{"log_marginal_likelihood", lml_},
                                                       {"signal_var", theta_[d_].exp().item<double>()},
                                                       {"noise_var", theta_[d_ + 1].exp().item<double>()}};
    for (int64_t k = 0; k < d_; ++k)
      out.emplace_back("length_scale_" + std::to_string(k + 1), theta_[k].exp().item<double>());
    return out;
  }
  models::RegressionModel& model() override { return *model_; }

 private:
  // starting point r: θ on the log scale (r = 0: ℓ = 1, s² = 1, σ² = 0.1)
  torch::Tensor start(int64_t r) const {
    auto th = torch::zeros({d_ + 2}, torch::kFloat64);
    if (r == 0) {
      th[d_ + 1] = std::log(0.1);
    } else {
      const auto u = starts_[r];
      const auto lerp = [](const torch::Tensor& t, const std::array<double, 2>& b) { return b[0] + (b[1] - b[0]) * t; };
      th.narrow(0, 0, d_).copy_(lerp(u.narrow(0, 0, d_), kLogLengthscale));
      th[d_] = lerp(u[d_], kLogSignalVar);
      th[d_ + 1] = lerp(u[d_ + 1], kLogNoiseVar);
    }
    if (opt_.noise_var > 0) th[d_ + 1] = std::log(opt_.noise_var);
    return th;
  }

  torch::Tensor clamp(const torch::Tensor& theta) const {
    auto noise = theta.narrow(0, d_ + 1, 1);
    if (opt_.noise_var > 0) noise = torch::full({1}, std::log(opt_.noise_var), theta.options()).detach();
    return torch::cat({theta.narrow(0, 0, d_).clamp(kLogLengthscale[0], kLogLengthscale[1]),
                       theta.narrow(0, d_, 1).clamp(kLogSignalVar[0], kLogSignalVar[1]),
                       noise.clamp(kLogNoiseVar[0], kLogNoiseVar[1])});
  }

  // squared scaled distances r² [Na, Nb] at θ: |a|² + |b|² − 2 a·b (one GEMM), clamped at 0 against rounding
  torch::Tensor dist2(const torch::Tensor& th, const torch::Tensor& a, const torch::Tensor& b) const {
    const auto inv_ls = (-th.narrow(0, 0, d_)).exp();
    const auto as = a * inv_ls, bs = b * inv_ls;
    return (as.square().sum(1, true) + bs.square().sum(1).unsqueeze(0) - 2 * as.mm(bs.t())).clamp_min(0);
  }
  // k(a, b) [Na, Nb] at θ
  torch::Tensor kernel(const torch::Tensor& th, const torch::Tensor& a, const torch::Tensor& b) const {
    return kernel_and_slope(th, dist2(th, a, b)).first;
  }
  // k(r²) and G = −2 dk/d(r²), which gives ∂k/∂ln ℓ_d = G (x_d − x'_d)²/ℓ_d²:
  //   se:       k = s² e^{−r²/2},                  G = k
  //   matern52: k = s² (1 + √5 r + 5r²/3) e^{−√5 r}, G = (5/3) s² (1 + √5 r) e^{−√5 r}
  std::pair<torch::Tensor, torch::Tensor> kernel_and_slope(const torch::Tensor& th, const torch::Tensor& r2) const {
    const double log_s2 = th[d_].item<double>();
    if (opt_.kernel == "se") {
      const auto k = (log_s2 - 0.5 * r2).exp();
      return {k, k};
    }
    const auto r = r2.sqrt();
    const double c = std::sqrt(5.0);
    const auto e = (log_s2 - c * r).exp();
    return {e * (1 + c * r + (5.0 / 3.0) * r2), (5.0 / 3.0) * e * (1 + c * r)};
  }

  // −ln p(y | θ) at θ (within the bounds) and its gradient in θ (R&W eq. 5.9:
  // ∂ ln p/∂θ_j = ½ tr((aaᵀ − K_y⁻¹) ∂K_y/∂θ_j)); the gradient is 0 in a
  // coordinate held by a bound or fixed by model.gp.noise_var
  std::pair<double, torch::Tensor> objective(const torch::Tensor& theta, const torch::Tensor& x,
                                             const torch::Tensor& y, bool with_prior = true) const {
    const auto th = clamp(theta);
    const int64_t n = x.size(0);
    const auto [k, g] = kernel_and_slope(th, dist2(th, x, x));
    const double noise = th[d_ + 1].exp().item<double>();
    const auto L = torch::linalg_cholesky(k + noise * torch::eye(n, x.options()));
    const auto a = torch::cholesky_solve(y.unsqueeze(1), L).squeeze(1);
    const double nlml = 0.5 * y.dot(a).item<double>() + L.diagonal().log().sum().item<double>() +
                        0.5 * static_cast<double>(n) * std::log(2 * M_PI);
    const auto w = torch::outer(a, a) - torch::cholesky_inverse(L);  // aaᵀ − K_y⁻¹
    auto grad = torch::zeros_like(theta);
    // ln ℓ_d: ½ Σ_ik W_ik G_ik (x_id − x_kd)²/ℓ_d² = (Σ_i x_id² (M1)_i − x_dᵀ M x_d)/ℓ_d², M = W∘G
    const auto m = w * g;
    const auto quad = x.square().mul(m.sum(1, true)).sum(0) - (x * m.mm(x)).sum(0);
    grad.narrow(0, 0, d_).copy_(quad * (-2 * th.narrow(0, 0, d_)).exp());
    grad[d_] = 0.5 * (w * k).sum();      // ln s²: ∂K/∂ln s² = K
    grad[d_ + 1] = 0.5 * noise * w.diagonal().sum();  // ln σ²: ∂K_y/∂ln σ² = σ² I
    if (opt_.noise_var > 0) grad[d_ + 1] = 0;
    double neg_log_prior = 0;
    if (with_prior && opt_.lengthscale_prior == "lognormal") {  // −ln N(ln ℓ; m, 3) up to a constant
      const auto z = th.narrow(0, 0, d_) - prior_mean(d_);
      neg_log_prior = z.square().sum().item<double>() / (2 * kPriorVar);
      grad.narrow(0, 0, d_).sub_(z / kPriorVar);
    }
    grad.masked_fill_(th != theta, 0);  // held by a bound
    return {nlml + neg_log_prior, -grad};
  }

  // L-BFGS on −ln p(y | θ) from theta (updated in place); returns ln p at the end
  double maximise(torch::Tensor& theta, const torch::Tensor& x, const torch::Tensor& y, int64_t r) {
    torch::optim::LBFGS opt({theta}, torch::optim::LBFGSOptions(1.0)
                                         .max_iter(opt_.iterations)
                                         .history_size(20)
                                         .tolerance_grad(1e-6)
                                         .tolerance_change(1e-10)
                                         .line_search_fn("strong_wolfe"));
    int64_t evals = 0;
    const auto closure = [&] {
      ++evals;
      // a start that runs long says so every 30 s (model.gp.iterations bounds its L-BFGS iterations)
      if (std::chrono::steady_clock::now() - note_ > std::chrono::seconds(30)) {
        spdlog::info("gp: start {} of {}: {} marginal-likelihood evaluations so far (at most about model.gp."
                     "iterations = {} iterations per start; lower it or model.gp.restarts to finish sooner)",
                     r + 1, opt_.restarts, evals, opt_.iterations);
        note_ = std::chrono::steady_clock::now();
      }
      torch::NoGradGuard ng;
      auto [value, grad] = objective(theta.detach(), x, y);
      theta.mutable_grad() = grad;
      return torch::full({}, value, theta.options().requires_grad(false));
    };
    opt.step(closure);
    spdlog::debug("gp: {} marginal-likelihood evaluations", evals);
    torch::NoGradGuard ng;
    return -objective(theta.detach(), x, y).first;
  }

  // the posterior mean and variance of f at the rows of x_in (standardised), in chunks
  std::pair<torch::Tensor, torch::Tensor> posterior(const torch::Tensor& x_in) const {
    WHVI_CHECK(a_.numel() > 0 && x_.size(0) == a_.size(0) && chol_.size(0) == a_.size(0) &&
                   chol_.size(1) == a_.size(0),
               "gp: the model was not fitted, or its checkpoint's state is damaged (",
               x_.size(0), " training rows, ", a_.size(0), " weights, a ", chol_.size(0), "x", chol_.size(1),
               " factor); train that split again");
    const auto x = x_in.to(torch::kFloat64);
    if (x.size(0) == 0) return {torch::zeros({0}, x.options()), torch::zeros({0}, x.options())};  // no rows
    const auto th = theta_;
    std::vector<torch::Tensor> mus, vars;
    const double s2 = th[d_].exp().item<double>();
    for (int64_t i = 0; i < x.size(0); i += 1024) {
      const auto xs = x.narrow(0, i, std::min<int64_t>(1024, x.size(0) - i));
      const auto ks = kernel(th, x_, xs);  // [N, m]
      mus.push_back(ks.t().mv(a_));
      const auto v = torch::linalg_solve_triangular(chol_, ks, /*upper=*/false);
      vars.push_back((s2 - v.square().sum(0)).clamp_min(0));
    }
    return {torch::cat(mus), torch::cat(vars)};
  }

  likelihoods::GaussianLikelihood& lik() { return static_cast<likelihoods::GaussianLikelihood&>(model_->likelihood()); }

  std::shared_ptr<models::RegressionModel> model_;
  GpOptions opt_;
  int64_t d_;
  torch::Tensor x_, a_, chol_, theta_, starts_;
  double lml_ = std::nan("");  // of the fit (not in the checkpoint)
  std::chrono::steady_clock::time_point note_{};  // the last progress line of a fit
};

std::unique_ptr<Inference> make_gp(const NetworkMaker& make_network, const GpOptions& o) {
  WHVI_CHECK(o.depth == 0, "model.kind gp has no hidden layers, but model.depth is ", o.depth,
             "; leave model.depth unset or set it to 0");
  auto net = make_network();
  WHVI_CHECK(!net->has_trunk(), "model.kind gp works on the inputs themselves; set model.architecture: mlp");
  const int64_t d = net->layers().front()->named_parameters()["w"].size(0);
  return std::make_unique<Gp>(std::move(net), o, d);
}

}  // namespace

MethodKind gp_method() {
  return method_kind("gp", make_gp,
                     Capabilities().fitted_in_closed_form().only_for(
                         {"gaussian"}, "Gaussian-process regression: its marginal likelihood is a Gaussian's"));
}

}  // namespace whvi::infer
