// The heteroscedastic Gaussian likelihood (likelihood.kind: hetero-gaussian,
// hetero_gaussian.cpp): its class, for its tests and the mixture's.
#pragma once

#include <cmath>

#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

// Heteroscedastic Gaussian p(y | f) = N(y; f_0, exp(f_1)): the network's two
// outputs are the mean and the log variance (standardised scale), so the noise
// depends on the input; no parameters of its own. Predictions keep both
// outputs ([S, N, 2] in original units: mean, log variance) and the predictive
// is the mixture (1/S) Σ_s N(y; mean_s, exp(logvar_s)).
class HeteroGaussianLikelihood : public Likelihood {
 public:
  HeteroGaussianLikelihood(double y_mean, double y_std);
  const char* task() const override { return "regression"; }
  int64_t out_dim() const override { return 2; }
  torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) override;
  torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const override;
  bool frozen(int64_t) const override { return false; }
  double lr_factor() const override { return 1.0; }
  torch::Tensor to_original(const torch::Tensor& f) const override;
  Evaluation evaluate(const torch::Tensor& f, const torch::Tensor& y) override;
  const std::vector<const char*>& metric_names() const override { return metrics::regression_metric_names(); }
  std::optional<std::string> health_problem() const override { return std::nullopt; }
  std::optional<std::string> fit_problem(const torch::Tensor& f, const torch::Tensor& y) const override;
  double noise_var_original() const override { return std::nan(""); }
  std::string log_text() const override { return ""; }

 private:
  double y_mean_, y_std_;
};

}  // namespace whvi::likelihoods
