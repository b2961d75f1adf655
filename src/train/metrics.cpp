#include "train/metrics.h"

#include <cmath>

#include "common/errors.h"

namespace whvi::train {

RegressionMetrics regression_metrics(const torch::Tensor& f_in, const torch::Tensor& y_in,
                                     double noise_var) {
  WHVI_CHECK_AS(ShapeError, f_in.dim() == 2 && y_in.dim() == 1 && f_in.size(1) == y_in.size(0),
                "regression_metrics: expected f [S, N] and y [N], got ", f_in.sizes(), " and ",
                y_in.sizes());
  WHVI_CHECK(noise_var > 0 && std::isfinite(noise_var), "regression_metrics: noise variance ",
             noise_var, " is not a positive number");
  RegressionMetrics m;
  if (y_in.size(0) == 0) {
    m.rmse = m.mnll = m.mnll_paper = std::nan("");
    return m;
  }
  const auto f = f_in.to(torch::kFloat64), y = y_in.to(torch::kFloat64);
  WHVI_CHECK(torch::isfinite(f).all().item<bool>(),
             "regression_metrics: the predictions contain NaN or inf (did training diverge?)");
  const double S = static_cast<double>(f.size(0));
  m.rmse = std::sqrt((f.mean(0) - y).square().mean().item<double>());
  const auto logp = -0.5 * (std::log(2.0 * M_PI * noise_var) + (f - y.unsqueeze(0)).square() / noise_var);
  m.mnll = -(torch::logsumexp(logp, 0) - std::log(S)).mean().item<double>();
  m.mnll_paper = -logp.mean().item<double>();
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
