// The mixture density likelihood (likelihood.kind: mixture), a mixture
// density network's output layer (Bishop 1994): K Gaussian components per
// input, K = likelihood.mixture.components. The network's 3K outputs per row
// are, in this order, K mixture logits a, K raw means m and K raw log
// variances r (standardised target scale), and
//   p(y | f) = Σ_k π_k N(y; μ_k, exp(s_k)),  π = softmax(a),
//   μ_k = m_k + c_k,  s_k = s_min + softplus(r_k + s0 - s_min),
// with
//   c_k = Φ⁻¹((k + ½) / K)   fixed offsets that spread the components' means
//                           over the standardised target's quantiles, so that
//                           a freshly initialised network (outputs near 0)
//                           starts with K distinct components rather than K
//                           copies (identical components get identical
//                           gradients and never separate); c = 0 for K = 1
//   s0 = -2 ln K             the initial log variance: each component's sd is
//                           1/K of the targets' (1 for K = 1, where the
//                           likelihood is the hetero-gaussian one)
//   s_min                    likelihood.mixture.log_var_floor (default -9.21, ln 1e-4:
//                           sd 1% of the targets'), a smooth floor on each
//                           component's log variance: a component that shrinks
//                           onto one training point would otherwise drive the
//                           likelihood to infinity.
// -log p is a log-sum-exp over components, on log_softmax weights.
//
// In original units (to_original) a row is [K log weights (normalised), K means
// μ y_std + y_mean, K log variances s + 2 ln y_std], so predictions are
// [S, N, 3K]; the predictive is the mixture over samples and components,
//   p(y | x) = (1/S) Σ_s Σ_k π_sk N(y; μ_sk, σ²_sk),
// and every metric (MNLL, RMSE of its mean, CRPS, the coverages from its CDF)
// is a property of that mixture.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/draws.h"
#include "common/errors.h"
#include "likelihoods/kind.h"

namespace whvi::likelihoods {

namespace {

constexpr double kLnTwoPi = 1.8378770664093453;  // ln(2 pi)
// A component whose mean weight over the training rows is below this is
// reported as collapsed (the log, not an error).
constexpr double kCollapsedWeight = 1e-3;

struct MixtureOptions {
  int64_t components = 3;
  double log_var_floor = -9.21;  // about ln 1e-4
  template <class V>
  void visit(V& v) {
    v.num("likelihood.mixture.components", components, 1, 16,
          "mixture: K, the Gaussian components per input (the network outputs 3K numbers: K logits, K means, K log variances)");
    v.late();
    v.num("likelihood.mixture.log_var_floor", log_var_floor, -30, 0,
          "mixture: smooth floor on each component's log variance on the standardised target scale (about ln 1e-4: sd 1% of the targets')");
    v.late();
  }
};

torch::Tensor std_normal_cdf(const torch::Tensor& z) { return 0.5 * torch::erfc(-z * M_SQRT1_2); }

// E|X| for X ~ N(m, v), elementwise: s sqrt(2/π) exp(-m²/2v) + m (1 - 2Φ(-m/s)).
torch::Tensor abs_moment(const torch::Tensor& m, const torch::Tensor& v) {
  const auto s = v.sqrt();
  return s * std::sqrt(2.0 / M_PI) * (-0.5 * m.square() / v).exp() + m * (1.0 - 2.0 * std_normal_cdf(-m / s));
}

// A prediction in original units [S, N, 3K] as the flat mixture over samples
// and components: log weights (each sample's weight / S), means and variances,
// each [S, K, N].
struct Flat {
  torch::Tensor logw, mu, var;
};

Flat as_flat(const torch::Tensor& f_in, int64_t K) {
  WHVI_CHECK_AS(ShapeError, f_in.dim() == 3 && f_in.size(2) == 3 * K,
                "mixture likelihood: expected predictions [S, N, ", 3 * K, "], got ", f_in.sizes());
  const auto f = f_in.to(torch::kFloat64);
  const double S = static_cast<double>(f.size(0));
  auto part = [&](int64_t i) { return f.narrow(2, i * K, K).permute({0, 2, 1}); };  // [S, K, N]
  return {part(0) - std::log(S), part(1), part(2).exp()};
}

}  // namespace

class MixtureLikelihood : public Likelihood {
 public:
  MixtureLikelihood(const MixtureOptions& o, double y_mean, double y_std) : opt_(o), y_mean_(y_mean), y_std_(y_std) {
    WHVI_CHECK(y_std > 0 && std::isfinite(y_std) && std::isfinite(y_mean),
               "mixture likelihood: bad target statistics mean=", y_mean, " std=", y_std);
    const int64_t K = o.components;
    const auto p = (torch::arange(K, torch::kFloat64) + 0.5) / static_cast<double>(K);
    offsets_ = std::sqrt(2.0) * torch::erfinv(2.0 * p - 1.0);  // Φ⁻¹(p); 0 for K = 1
    s0_ = -2.0 * std::log(static_cast<double>(K));
  }
  const char* task() const override { return "regression"; }
  int64_t out_dim() const override { return 3 * opt_.components; }

  // f [..., 3K] on the network's scale -> log weights, means, log variances [..., K]
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> components(const torch::Tensor& f) const {
    const int64_t K = opt_.components;
    WHVI_CHECK_AS(ShapeError, f.dim() >= 1 && f.size(-1) == 3 * K, "mixture likelihood: expected outputs [..., ",
                  3 * K, "], got ", f.sizes());
    const auto logw = torch::log_softmax(f.narrow(-1, 0, K), -1);
    const auto mu = f.narrow(-1, K, K) + offsets_.to(f.options());
    const double lo = opt_.log_var_floor;
    const auto s = lo + torch::softplus(f.narrow(-1, 2 * K, K) + (s0_ - lo));
    return {logw, mu, s};
  }

  torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) override {
    WHVI_CHECK_AS(ShapeError, f.dim() == 2 && y.dim() == 1 && y.size(0) == f.size(0),
                  "mixture likelihood: expected outputs [M, ", out_dim(), "] and targets [M], got ", f.sizes(),
                  " and ", y.sizes());
    const auto [logw, mu, s] = components(f);
    const auto logp = logw - 0.5 * (kLnTwoPi + s + (y.unsqueeze(1) - mu).square() * (-s).exp());
    return -torch::logsumexp(logp, 1).sum();
  }

  torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const override {
    torch::NoGradGuard ng;
    const auto [logw, mu, s] = components(f.detach());
    // the component: the first k whose cumulative weight exceeds u ~ U(0, 1)
    const auto u = torch::rand({f.size(0), 1}, gen, logw.options());
    const auto k = (logw.exp().cumsum(1) < u).sum(1, true).clamp_max(opt_.components - 1);
    const auto m = mu.gather(1, k).squeeze(1), sd = (0.5 * s.gather(1, k).squeeze(1)).exp();
    return m + sd * whvi::randn(m.sizes(), gen, m.options());
  }

  bool frozen(int64_t) const override { return false; }
  double lr_factor() const override { return 1.0; }

  torch::Tensor to_original(const torch::Tensor& f) const override {
    const auto [logw, mu, s] = components(f.to(torch::kFloat64));
    return torch::cat({logw, mu * y_std_ + y_mean_, s + 2.0 * std::log(y_std_)}, -1);
  }

  Evaluation evaluate(const torch::Tensor& f, const torch::Tensor& y) override {
    return {metrics::to_metrics(mixture_metrics(f, y)), {}};
  }

  metrics::RegressionMetrics mixture_metrics(const torch::Tensor& f, const torch::Tensor& y_in) const {
    const int64_t K = opt_.components;
    const auto c = as_flat(f, K);
    WHVI_CHECK_AS(ShapeError, y_in.dim() == 1 && y_in.size(0) == f.size(1),
                  "mixture likelihood: expected targets [", f.size(1), "], got ", y_in.sizes());
    metrics::RegressionMetrics m;
    if (y_in.size(0) == 0) {
      m.rmse = m.mnll = m.mnll_paper = m.coverage_50 = m.coverage_90 = m.coverage_95 = m.calibration_error = m.crps =
          std::nan("");
      return m;
    }
    WHVI_CHECK_AS(NonFiniteError,
                  torch::isfinite(c.logw).all().item<bool>() && torch::isfinite(c.mu).all().item<bool>() &&
                      torch::isfinite(c.var).all().item<bool>() && (c.var > 0).all().item<bool>(),
                  "the model's predictions contain NaN or inf (or a non-positive variance)");
    const auto y = y_in.to(torch::kFloat64);
    const double S = static_cast<double>(f.size(0));
    const auto w = c.logw.exp();                                               // [S, K, N], sums to 1 over S, K
    m.rmse = std::sqrt(((w * c.mu).sum(0).sum(0) - y).square().mean().item<double>());
    const auto logn = -0.5 * ((2.0 * M_PI * c.var).log() + (y.view({1, 1, -1}) - c.mu).square() / c.var);
    const auto logp = c.logw + logn;                                           // log (π_sk / S) N(y; μ_sk, σ²_sk)
    m.mnll = -torch::logsumexp(logp.flatten(0, 1), 0).mean().item<double>();
    // the authors' convention: mean over samples of each sample's -log p (its own K-component mixture)
    m.mnll_paper = -(torch::logsumexp(logp, 1) + std::log(S)).mean().item<double>();
    metrics::set_coverage(m, mixture_cdf(c, y));
    m.crps = mixture_crps(c, y).mean().item<double>();
    return m;
  }

  // Σ_sk W_sk Φ((y - μ_sk) / σ_sk), [N]
  static torch::Tensor mixture_cdf(const Flat& c, const torch::Tensor& y) {
    return (c.logw.exp() * std_normal_cdf((y.view({1, 1, -1}) - c.mu) / c.var.sqrt())).sum(0).sum(0);
  }

  // CRPS = Σ_i W_i A(y - μ_i, v_i) - ½ Σ_ij W_i W_j A(μ_i - μ_j, v_i + v_j) (Grimit et
  // al. 2006), i, j over samples and components. The pairs within a sample
  // are all summed; the pairs across samples by cyclic shifts of the sample
  // axis, all S - 1 of them while S K ≤ 512, above that 255 / K of them scaled
  // to S - 1 (an unbiased estimate, as metrics::mixture_crps).
  static torch::Tensor mixture_crps(const Flat& c, const torch::Tensor& y) {
    const int64_t S = c.mu.size(0), K = c.mu.size(1);
    const auto w = c.logw.exp();
    const auto first = (w * abs_moment(y.view({1, 1, -1}) - c.mu, c.var)).sum(0).sum(0);
    // [S, K, 1, N] against [S, 1, K, N]: every component pair (k, l) of sample s and of sample s + r
    auto pairs = [&](int64_t r) {
      const auto mu2 = torch::roll(c.mu, r, 0).unsqueeze(1), var2 = torch::roll(c.var, r, 0).unsqueeze(1);
      const auto w2 = torch::roll(w, r, 0).unsqueeze(1);
      return (w.unsqueeze(2) * w2 * abs_moment(c.mu.unsqueeze(2) - mu2, c.var.unsqueeze(2) + var2)).sum(0).sum(0).sum(0);
    };
    auto second = pairs(0);
    if (S > 1) {
      const int64_t shifts = S * K <= 512 ? S - 1 : std::min<int64_t>(S - 1, std::max<int64_t>(1, 255 / K));
      auto across = torch::zeros_like(second);
      for (int64_t r = 1; r <= shifts; ++r) across += pairs(r);
      second += across * (static_cast<double>(S - 1) / static_cast<double>(shifts));
    }
    return first - 0.5 * second;
  }

  torch::Tensor predictive_cdf(const torch::Tensor& f, const torch::Tensor& y) const override {
    return mixture_cdf(as_flat(f, opt_.components), y.to(torch::kFloat64));
  }

  // Each sample's mixture mean sum_k w_k m_k and variance sum_k w_k (v_k + m_k^2) - mean^2 per row.
  std::pair<torch::Tensor, torch::Tensor> predictive_moments(const torch::Tensor& f) const override {
    const auto c = as_flat(f, opt_.components);  // [S, K, N], log weights less ln S
    const auto w = (c.logw + std::log(static_cast<double>(f.size(0)))).exp();
    const auto mean = (w * c.mu).sum(1);
    const auto var = ((w * (c.var + c.mu.square())).sum(1) - mean.square()).clamp_min(0);
    return {mean, var};
  }

  std::pair<torch::Tensor, torch::Tensor> predictive_interval(const torch::Tensor& f, double mass) const override {
    return interval(f, mass);
  }

  // The central interval of probability `mass`: bisection on the mixture's CDF
  // between bounds that hold every component's ±12 sd.
  std::pair<torch::Tensor, torch::Tensor> interval(const torch::Tensor& f, double mass) const {
    const auto c = as_flat(f, opt_.components);
    const auto sd = c.var.sqrt();
    const auto lo0 = (c.mu - 12 * sd).amin({0, 1}), hi0 = (c.mu + 12 * sd).amax({0, 1});
    auto solve = [&](double p) {
      auto lo = lo0, hi = hi0;
      for (int it = 0; it < 200; ++it) {
        const auto mid = (lo + hi) / 2;
        const auto below = mixture_cdf(c, mid) < p;
        lo = torch::where(below, mid, lo);
        hi = torch::where(below, hi, mid);
      }
      return (lo + hi) / 2;
    };
    const double a = (1.0 - mass) / 2.0;
    return {solve(a), solve(1.0 - a)};
  }

  const std::vector<const char*>& metric_names() const override { return metrics::regression_metric_names(); }
  // No parameters of its own: nothing can diverge here. A collapsed component
  // is not a divergence (a non-empty answer here would fail the run), so it is
  // reported in the log by fit_problem, which sees the training rows.
  std::optional<std::string> health_problem() const override { return std::nullopt; }

  // The mixture mean's fit (regression_fit_problem); and, logged as a warning,
  // components whose mean weight over these (training) rows is below 1e-3.
  std::optional<std::string> fit_problem(const torch::Tensor& f, const torch::Tensor& y) const override {
    if (f.dim() != 2 || f.size(1) != out_dim() || f.size(0) == 0) return regression_fit_problem(f, y);
    torch::NoGradGuard ng;
    const auto [logw, mu, s] = components(f.detach().to(torch::kFloat64));
    const auto w = logw.exp();
    const auto mean_w = w.mean(0);
    min_weight_ = mean_w.min().item<double>();
    std::ostringstream collapsed;
    collapsed.precision(3);
    for (int64_t k = 0; k < opt_.components; ++k)
      if (const double wk = mean_w[k].item<double>(); wk < kCollapsedWeight)
        collapsed << (collapsed.tellp() > 0 ? ", " : "") << k << " (mean weight " << wk << ")";
    if (collapsed.tellp() > 0)
      spdlog::warn("mixture likelihood: component(s) {} of {} collapsed: mean weight over the training rows below {} "
                   "(fewer components may do as well)", collapsed.str(), opt_.components, kCollapsedWeight);
    return regression_fit_problem((w * mu).sum(1), y);
  }

  // No single noise variance: the aleatoric variance depends on the input
  // (as the hetero-gaussian likelihood's). NaN keeps every caller that reads
  // a finite value as one homoscedastic noise off this likelihood.
  double noise_var_original() const override { return std::nan(""); }
  std::string log_text() const override { return ""; }
  // The smallest component's mean weight over the training rows, once fit_problem has seen them.
  std::vector<std::pair<std::string, double>> learned() const override {
    if (!std::isfinite(min_weight_)) return {};
    return {{"min_component_weight", min_weight_}};
  }

 private:
  MixtureOptions opt_;
  double y_mean_, y_std_;
  torch::Tensor offsets_;  // c_k [K], float64
  double s0_;
  mutable double min_weight_ = std::nan("");
};

LikelihoodKind mixture_likelihood_kind() {
  return likelihood_kind<MixtureOptions>("mixture", false, [](const MixtureOptions& o, double m, double s, int64_t) {
    return std::make_shared<MixtureLikelihood>(o, m, s);
  }).described("regression: a mixture density network, likelihood.mixture.components Gaussians per input with "
               "input-dependent weights, means and variances; the predictive is the mixture over samples and components");
}

}  // namespace whvi::likelihoods
