// The Gaussian likelihood (likelihood.kind: gaussian, gaussian.cpp): its class and
// options, for the closed forms (gp, blr) and the fused step that read its noise.
#pragma once

#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

// Gaussian p(y | f) = N(y; f, σ²) with a learned log σ² on the standardised
// scale, frozen for the first steps_fixed steps (the paper's schedule).
struct GaussianOptions {
  double init_log_noise_var = -1.5;
  int64_t steps_fixed = 500;  // training.steps_fixed_noise
  double lr_factor = 1.0;
  template <class V>
  void visit(V& v) {
    v.num("likelihood.init_log_noise_var", init_log_noise_var, -30, 10, "initial log noise variance on the standardised target scale (authors: -1.5; whvi and mcd with the gaussian likelihood: 0, see the defaults by model kind below); student-t: its initial log scale^2");
    v.num("likelihood.lr_factor", lr_factor, 0, options::kInf, "learning rate of the noise variance relative to training.lr");
    v.use("training.steps_fixed_noise", steps_fixed);
  }
};

class GaussianLikelihood : public Likelihood {
 public:
  // y_mean, y_std: the training targets' statistics (original = f * y_std + y_mean).
  GaussianLikelihood(const GaussianOptions& o, double y_mean, double y_std);
  const char* task() const override { return "regression"; }
  int64_t out_dim() const override { return 1; }
  torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) override;
  torch::Tensor nll_sum_group(const std::vector<Likelihood*>& group, const torch::Tensor& f,
                              const torch::Tensor& y) override;
  torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const override;
  bool frozen(int64_t step) const override { return step < opt_.steps_fixed; }
  double lr_factor() const override { return opt_.lr_factor; }
  torch::Tensor to_original(const torch::Tensor& f) const override;
  std::string export_onnx(onnx::Graph& g, const std::string& f) const override;
  Evaluation evaluate(const torch::Tensor& f, const torch::Tensor& y) override;
  const std::vector<const char*>& metric_names() const override { return metrics::regression_metric_names(); }
  std::optional<std::string> health_problem() const override;
  std::optional<std::string> fit_problem(const torch::Tensor& f, const torch::Tensor& y) const override;
  double noise_var_original() const override;
  std::string log_text() const override;
  torch::Tensor& log_noise_var() { return log_noise_var_; }
  bool refits_noise() const override { return true; }
  void set_noise_var_original(double v) override;
  const char* fused_loss() const override { return "gaussian"; }
  // A closed-form model's exact predictive (gp, blr) as predict() returns it: S copies of
  // N(mu, var) per row, Gaussian components [S, N, 2] (mean, log variance) in original units,
  // from mu and var [N] on the standardised scale (var with the noise)
  torch::Tensor exact_components(const torch::Tensor& mu, const torch::Tensor& var, int64_t S) const;

 private:
  GaussianOptions opt_;
  double y_mean_, y_std_;
  torch::Tensor log_noise_var_;
};

}  // namespace whvi::likelihoods
