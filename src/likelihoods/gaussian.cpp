#include <cmath>
#include <sstream>

#include "common/draws.h"
#include "common/errors.h"
#include "common/io.h"
#include "likelihoods/gaussian.h"
#include "likelihoods/kind.h"
#include "onnx/graph.h"

namespace whvi::likelihoods {

namespace {
constexpr double kLnTwoPi = 1.8378770664093453;  // ln(2 pi)
}

GaussianLikelihood::GaussianLikelihood(const GaussianOptions& o, double y_mean, double y_std)
    : opt_(o), y_mean_(y_mean), y_std_(y_std) {
  WHVI_CHECK(y_std > 0 && std::isfinite(y_std) && std::isfinite(y_mean),
             "gaussian likelihood: bad target statistics mean=", y_mean, " std=", y_std);
  log_noise_var_ = register_parameter("log_noise_var", torch::full({1}, o.init_log_noise_var));
}

torch::Tensor GaussianLikelihood::nll_sum(const torch::Tensor& f, const torch::Tensor& y) {
  const auto& lnv = log_noise_var_;
  return 0.5 * (static_cast<double>(f.numel()) * (kLnTwoPi + lnv) + (y - f).square().sum() * (-lnv).exp());
}

torch::Tensor Likelihood::nll_sum_group(const std::vector<Likelihood*>&, const torch::Tensor&, const torch::Tensor&) {
  throw Error(std::string("training.batched_splits: the ") + task() + " likelihood cannot train splits as one "
              "batched model (supported: " + likelihoods_that(Capability::kBatchedSplits) + "); set training.batched_splits: 1");
}

torch::Tensor GaussianLikelihood::nll_sum_group(const std::vector<Likelihood*>& group, const torch::Tensor& f,
                                                const torch::Tensor& y) {
  std::vector<torch::Tensor> lnvs;
  for (auto* l : group) lnvs.push_back(static_cast<GaussianLikelihood*>(l)->log_noise_var_);
  const auto lnv = torch::cat(lnvs);  // [S]
  return 0.5 * (static_cast<double>(f.size(1)) * (kLnTwoPi + lnv) + (y - f).square().sum(1) * (-lnv).exp());
}

torch::Tensor GaussianLikelihood::sample(const torch::Tensor& f, const at::Generator& gen) const {
  torch::NoGradGuard ng;
  const double sd = std::exp(0.5 * log_noise_var_.item<double>());
  return f.detach() + sd * whvi::randn(f.sizes(), gen, f.options());
}

torch::Tensor GaussianLikelihood::to_original(const torch::Tensor& f) const {
  return f.to(torch::kFloat64) * y_std_ + y_mean_;
}

std::string GaussianLikelihood::export_onnx(onnx::Graph& g, const std::string& f) const {
  return g.op("Add", {g.op("Mul", {f, g.scalar(y_std_)}), g.scalar(y_mean_)});
}

double GaussianLikelihood::noise_var_original() const {
  return std::exp(log_noise_var_.item<double>()) * y_std_ * y_std_;
}

void GaussianLikelihood::set_noise_var_original(double v) {
  WHVI_CHECK(v > 0 && std::isfinite(v), "the noise variance must be positive and finite, not ", v);
  torch::NoGradGuard ng;
  // noise_var_original() = exp(log_noise_var) × the target's variance; this
  // order of operations is the one every committed record was refitted with
  const double log_scale = std::log(noise_var_original()) - log_noise_var_.item<double>();
  log_noise_var_.fill_(std::log(v) - log_scale);
}

void Likelihood::set_temperature(double /*t*/) {
  throw Error(std::string("the ") + task() + " likelihood has no predictive temperature to set");
}

void Likelihood::set_noise_var_original(double /*v*/) {
  throw Error(std::string("this ") + task() + " likelihood has no single noise variance to refit");
}

void Likelihood::set_fitted(const std::string& name, double /*value*/) {
  throw Error(std::string("the ") + task() + " likelihood fits nothing named '" + printable(name, 40) +
              "' after training");
}

torch::Tensor Likelihood::predictive_cdf(const torch::Tensor& f, const torch::Tensor& y) const {
  const auto [mu, var] = regression_samples(f, noise_var_original());
  return metrics::mixture_cdf(mu, y, var);
}

std::pair<torch::Tensor, torch::Tensor> Likelihood::predictive_moments(const torch::Tensor& f) const {
  return regression_samples(f, noise_var_original());
}

std::pair<torch::Tensor, torch::Tensor> Likelihood::predictive_interval(const torch::Tensor& f, double mass) const {
  const double a = (1.0 - mass) / 2.0;
  const auto [mu, var] = predictive_moments(f);
  if (!(var > 0).all().item<bool>()) {  // no noise: the samples' quantiles
    const auto q = torch::quantile(mu, torch::tensor({a, 1.0 - a}, torch::kFloat64), 0);
    return {q[0], q[1]};
  }
  const auto reach = 12 * std::get<0>(var.sqrt().max(0));
  auto solve = [&](double p) {
    auto lo = std::get<0>(mu.min(0)) - reach, hi = std::get<0>(mu.max(0)) + reach;
    // widen a bracket that does not hold the quantile yet (heavy tails)
    for (int it = 0; it < 60; ++it) {
      const auto short_lo = predictive_cdf(f, lo) > p, short_hi = predictive_cdf(f, hi) < p;
      if (!short_lo.any().item<bool>() && !short_hi.any().item<bool>()) break;
      lo = torch::where(short_lo, lo - 2 * (hi - lo), lo);
      hi = torch::where(short_hi, hi + 2 * (hi - lo), hi);
    }
    for (int it = 0; it < 100; ++it) {
      const auto mid = (lo + hi) / 2;
      const auto below = predictive_cdf(f, mid) < p;
      lo = torch::where(below, mid, lo);
      hi = torch::where(below, hi, mid);
    }
    return (lo + hi) / 2;
  };
  return {solve(a), solve(1.0 - a)};
}

double Evaluation::metric(const std::string& name) const {
  for (const auto& [k, v] : metrics)
    if (k == name) return v;
  return std::nan("");
}

torch::Tensor GaussianLikelihood::exact_components(const torch::Tensor& mu, const torch::Tensor& var,
                                                   int64_t S) const {
  const auto log_var = (var * (y_std_ * y_std_)).log();
  return torch::stack({to_original(mu), log_var}, 1).unsqueeze(0).expand({S, mu.size(0), 2}).contiguous();
}

// f [S, N]: draws of the mean, each with the noise σ²; [S, N, 2]: Gaussian components (mean,
// log variance) from a model that integrates its own uncertainty out in closed form (gp, blr)
Evaluation GaussianLikelihood::evaluate(const torch::Tensor& f, const torch::Tensor& y) {
  if (f.dim() == 3) {
    const auto [mu, var] = regression_samples(f, noise_var_original());
    return {metrics::to_metrics(metrics::regression_metrics(mu, y, var)), {}};
  }
  return {metrics::to_metrics(metrics::regression_metrics(f, y, noise_var_original())), {}};
}

std::optional<std::string> regression_fit_problem(const torch::Tensor& f, const torch::Tensor& y) {
  const double rmse = (f.to(torch::kFloat64) - y.to(torch::kFloat64)).square().mean().sqrt().item<double>();
  if (rmse <= 10.0) return std::nullopt;
  std::ostringstream os;
  os << "the mean network's training RMSE is " << rmse
     << " standard deviations of the targets (a constant predictor has 1)";
  return os.str();
}

std::optional<std::string> GaussianLikelihood::fit_problem(const torch::Tensor& f, const torch::Tensor& y) const {
  return regression_fit_problem(f, y);
}

std::optional<std::string> GaussianLikelihood::health_problem() const {
  const double lnv = log_noise_var_.item<double>();
  if (lnv <= std::max(std::log(100.0), opt_.init_log_noise_var + std::log(10.0))) return std::nullopt;
  std::ostringstream os;
  os << "the noise variance grew to " << std::exp(lnv) << " times the variance of the training targets";
  return os.str();
}

std::string GaussianLikelihood::log_text() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "noise var %.4g", std::exp(log_noise_var_.item<double>()));
  return buf;
}


LikelihoodKind gaussian_likelihood_kind() {
  return likelihood_kind<GaussianOptions>("gaussian", false, [](const GaussianOptions& o, double m, double s, int64_t) {
    return std::make_shared<GaussianLikelihood>(o, m, s);
  }).described("regression, one learned noise variance").with_fused_step().with_batched_splits();
}

}  // namespace whvi::likelihoods
