// Student's t likelihood (likelihood.kind: student-t, student_t.cpp): its class,
// options and metrics, for its tests.
#pragma once

#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

// Student's t p(y | f) = t_nu(y; f, sigma^2) with a learned scale sigma^2 and
// learned degrees of freedom nu > 2 (likelihood.kind: student-t): robust to
// outlying targets. Its scale and nu follow the Gaussian's noise schedule
// (frozen for training.steps_fixed_noise steps, likelihood.lr_factor). The
// predictive is the mixture (1/S) Σ_s t_nu(y; f_s, sigma^2); see student_t.cpp.
struct StudentTOptions {
  double init_log_scale2 = -1.5;  // likelihood.init_log_noise_var: log sigma^2 (standardised scale)
  double init_df = 4.0;
  int64_t steps_fixed = 500;      // training.steps_fixed_noise
  double lr_factor = 1.0;         // likelihood.lr_factor
  template <class V>
  void visit(V& v) {
    v.num("likelihood.student_t.init_df", init_df, 2.01, 1e4, "student-t: initial degrees of freedom nu (> 2, learned; 4: Lange, Little and Taylor 1989); its initial scale is likelihood.init_log_noise_var");
    v.acts_only_when("likelihood.kind", {"student-t"});
    v.use("likelihood.init_log_noise_var", init_log_scale2);
    v.use("training.steps_fixed_noise", steps_fixed);
    v.use("likelihood.lr_factor", lr_factor);
  }
};

class StudentTLikelihood : public Likelihood {
 public:
  StudentTLikelihood(const StudentTOptions& o, double y_mean, double y_std);
  const char* task() const override { return "regression"; }
  int64_t out_dim() const override { return 1; }
  torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) override;
  torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const override;
  bool frozen(int64_t step) const override { return step < opt_.steps_fixed; }
  double lr_factor() const override { return opt_.lr_factor; }
  torch::Tensor to_original(const torch::Tensor& f) const override;
  Evaluation evaluate(const torch::Tensor& f, const torch::Tensor& y) override;
  const std::vector<const char*>& metric_names() const override { return metrics::regression_metric_names(); }
  std::optional<std::string> health_problem() const override;
  std::optional<std::string> fit_problem(const torch::Tensor& f, const torch::Tensor& y) const override;
  // The noise's variance sigma^2 nu / (nu - 2) in original units.
  double noise_var_original() const override;
  std::string log_text() const override;
  std::vector<std::pair<std::string, double>> learned() const override {
    return {{"df", df()}, {"scale2", scale2_original()}};
  }
  torch::Tensor predictive_cdf(const torch::Tensor& f, const torch::Tensor& y) const override;
  double df() const;                // nu
  double scale2_original() const;   // sigma^2 in original units

 private:
  StudentTOptions opt_;
  double y_mean_, y_std_;
  torch::Tensor log_scale2_, log_df_minus_2_;  // log sigma^2, log(nu - 2)
};

// The Student-t pieces, for the likelihood and its tests: the CDF of the
// standard t with nu degrees of freedom (by the regularised incomplete beta
// function), elementwise, float64; and the predictive metrics of the mixture
// (1/S) Σ_s t_nu(y; f_s, scale2), f [S, N], y [N], original units. Its CRPS
// treats each t as a scale mixture of Gaussians at M equally spaced quantiles
// of its Gamma(nu/2, nu/2) precision (M = 512 / S, from 8 to 64), so that the
// Gaussian mixture's exact CRPS applies: accurate to about 1%.
torch::Tensor student_t_cdf(const torch::Tensor& t, double nu);
metrics::RegressionMetrics student_t_metrics(const torch::Tensor& f, const torch::Tensor& y, double scale2, double nu);

}  // namespace whvi::likelihoods
