#include "train/metrics.h"

#include <cmath>

#include "common/errors.h"

namespace whvi::train {
namespace {

torch::Tensor std_normal_cdf(const torch::Tensor& z) { return 0.5 * torch::erfc(-z * M_SQRT1_2); }

// A(mu, var) = E|X| for X ~ N(mu, var): mu (2 Phi(mu/sd) - 1) + 2 sd phi(mu/sd).
torch::Tensor abs_moment(const torch::Tensor& mu, double var) {
  const double sd = std::sqrt(var);
  const auto z = mu / sd;
  return mu * (2.0 * std_normal_cdf(z) - 1.0) + (2.0 * sd / std::sqrt(2.0 * M_PI)) * (-0.5 * z.square()).exp();
}

}  // namespace

const std::vector<const char*>& regression_metric_names() {
  static const std::vector<const char*> names = {"rmse",        "mnll",        "mnll_paper",
                                                 "coverage_50", "coverage_90", "coverage_95",
                                                 "calibration_error", "crps"};
  return names;
}

double metric_value(const RegressionMetrics& m, const std::string& name) {
  if (name == "rmse") return m.rmse;
  if (name == "mnll") return m.mnll;
  if (name == "mnll_paper") return m.mnll_paper;
  if (name == "coverage_50") return m.coverage_50;
  if (name == "coverage_90") return m.coverage_90;
  if (name == "coverage_95") return m.coverage_95;
  if (name == "calibration_error") return m.calibration_error;
  if (name == "crps") return m.crps;
  WHVI_ASSERT(false && "unknown metric");
  return 0;
}

torch::Tensor mixture_cdf(const torch::Tensor& f, const torch::Tensor& y, double noise_var) {
  return std_normal_cdf((y.unsqueeze(0) - f) / std::sqrt(noise_var)).mean(0);
}

torch::Tensor mixture_crps(const torch::Tensor& f, const torch::Tensor& y, double noise_var) {
  // CRPS(F, y) = E|X - y| - 1/2 E|X - X'|, X, X' ~ F independent; for the
  // equal-weight mixture: (1/S) sum_s A(y - f_s, v) - 1/(2 S^2) sum_{s,t} A(f_s - f_t, 2v).
  const int64_t S = f.size(0);
  const auto first = abs_moment(y.unsqueeze(0) - f, noise_var).mean(0);
  // diagonal pairs s == t: A(0, 2v) = 2 sqrt(2v) phi(0)
  const double a0 = 2.0 * std::sqrt(2.0 * noise_var) / std::sqrt(2.0 * M_PI);
  auto pair_sum = torch::zeros_like(y);  // mean over ordered pairs s != t
  if (S > 1) {
    const int64_t shifts = S <= 512 ? S - 1 : 255;
    for (int64_t k = 1; k <= shifts; ++k)
      pair_sum += abs_moment(f - torch::roll(f, k, 0), 2.0 * noise_var).mean(0);
    pair_sum /= static_cast<double>(shifts);
  }
  const double Sd = static_cast<double>(S);
  const auto second = a0 / Sd + pair_sum * ((Sd - 1.0) / Sd);
  return first - 0.5 * second;
}

RegressionMetrics regression_metrics(const torch::Tensor& f_in, const torch::Tensor& y_in,
                                     double noise_var) {
  WHVI_CHECK_AS(ShapeError, f_in.dim() == 2 && y_in.dim() == 1 && f_in.size(1) == y_in.size(0),
                "regression_metrics: expected f [S, N] and y [N], got ", f_in.sizes(), " and ",
                y_in.sizes());
  WHVI_CHECK(noise_var > 0 && std::isfinite(noise_var), "regression_metrics: noise variance ",
             noise_var, " is not a positive number");
  RegressionMetrics m;
  if (y_in.size(0) == 0) {
    m.rmse = m.mnll = m.mnll_paper = m.coverage_50 = m.coverage_90 = m.coverage_95 =
        m.calibration_error = m.crps = std::nan("");
    return m;
  }
  const auto f = f_in.to(torch::kFloat64), y = y_in.to(torch::kFloat64);
  WHVI_CHECK(torch::isfinite(f).all().item<bool>(),
             "regression_metrics: the model's predictions contain NaN or inf");
  const double S = static_cast<double>(f.size(0));
  m.rmse = std::sqrt((f.mean(0) - y).square().mean().item<double>());
  const auto logp = -0.5 * (std::log(2.0 * M_PI * noise_var) + (f - y.unsqueeze(0)).square() / noise_var);
  m.mnll = -(torch::logsumexp(logp, 0) - std::log(S)).mean().item<double>();
  m.mnll_paper = -logp.mean().item<double>();
  const auto dist = (mixture_cdf(f, y, noise_var) - 0.5).abs();
  auto coverage = [&](double level) { return (dist <= 0.5 * level).to(torch::kFloat64).mean().item<double>(); };
  m.coverage_50 = coverage(0.50);
  m.coverage_90 = coverage(0.90);
  m.coverage_95 = coverage(0.95);
  double ce = 0;
  for (int i = 1; i <= 19; ++i) ce += std::fabs(0.05 * i - coverage(0.05 * i));
  m.calibration_error = ce / 19.0;
  m.crps = mixture_crps(f, y, noise_var).mean().item<double>();
  return m;
}

Summary summarize(const std::vector<double>& v) {
  Summary s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / s.n);
  s.sem = s.std / std::sqrt(static_cast<double>(s.n));
  return s;
}

}  // namespace whvi::train
