// The softmax likelihood (likelihood.kind: softmax, softmax.cpp): its class, for the
// plan that checks its class weights and the fused step that reads them.
#pragma once

#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

// Softmax (categorical) p(y = c | f) = exp(f_c) / Σ_k exp(f_k) over C
// network outputs; no parameters of its own. Predictions average the class
// probabilities over the Monte Carlo samples (likelihoods/metrics.h). A
// temperature T (1 unless training.stopping_temperature fits one on the
// held-out stopping rows after training) divides each sample's logits in
// the predictive, softmax(f / T); training never sees it.
class SoftmaxLikelihood : public Likelihood {
 public:
  // class_weights: "none", "balanced" (class c weighs n / (C n_c), n_c its
  // training rows: every class weighs as much in total) or "name:w,..."
  // (the classes not named weigh 1), set by fit_targets.
  explicit SoftmaxLikelihood(int64_t num_classes, std::string class_weights = "none");
  const char* task() const override { return "classification"; }
  int64_t out_dim() const override { return classes_; }
  torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) override;
  torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const override;
  bool frozen(int64_t) const override { return false; }
  double lr_factor() const override { return 1.0; }
  torch::Tensor to_original(const torch::Tensor& f) const override;
  std::string export_onnx(onnx::Graph& g, const std::string& f) const override;
  Evaluation evaluate(const torch::Tensor& f, const torch::Tensor& y) override;
  const std::vector<const char*>& metric_names() const override { return metrics::classification_metric_names(); }
  std::optional<std::string> health_problem() const override { return std::nullopt; }
  std::optional<std::string> fit_problem(const torch::Tensor& f, const torch::Tensor& y) const override;
  double noise_var_original() const override;
  std::string log_text() const override { return ""; }
  std::vector<std::pair<std::string, double>> learned() const override;
  std::vector<std::string> fitted_names() const override { return {"temperature"}; }
  std::vector<std::pair<std::string, double>> fitted() const override;
  void set_fitted(const std::string& name, double value) override;
  std::string fitted_text() const override;
  void fit_targets(const torch::Tensor& y_train, const std::vector<std::string>& class_names) override;
  // Each class's weight in the training term ([C], float64), undefined when unweighted.
  const torch::Tensor& class_weights() const { return weights_; }
  // The predictive's temperature T > 0 (to_original: log_softmax(f / T)).
  bool has_temperature() const override { return true; }
  double temperature() const override { return temperature_; }
  void set_temperature(double t) override;
  const char* fused_loss() const override { return "softmax"; }

 private:
  int64_t classes_;
  double temperature_ = 1.0;
  std::string weights_spec_;
  torch::Tensor weights_;
  std::vector<std::string> names_;
};

}  // namespace whvi::likelihoods
