// Test metrics for regression from Monte Carlo predictive samples.
#pragma once

#include <torch/torch.h>

namespace whvi::train {

struct RegressionMetrics {
  double rmse = 0;        // RMSE of the MC-mean prediction
  double mnll = 0;        // -mean_n log mean_s p(y_n | f_s): the predictive density
  double mnll_paper = 0;  // mean_n mean_s -log p(y_n | f_s): the WHVI authors' convention
};

// f: [S, N] predictive means of S samples, y: [N], both in original units;
// noise_var: the likelihood's noise variance in original units. Computed in
// float64; the mean over samples of p uses a stable log-sum-exp.
RegressionMetrics regression_metrics(const torch::Tensor& f, const torch::Tensor& y,
                                     double noise_var);

// mean, population std (ddof 0), standard error std/sqrt(n) of values.
struct Summary {
  double mean = 0, std = 0, sem = 0;
  int64_t n = 0;
};
Summary summarize(const std::vector<double>& values);

}  // namespace whvi::train
