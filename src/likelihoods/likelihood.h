// The likelihood seam (issue 9): p(y | f) with the parameters it owns, the
// training term of the ELBO, the conversion of network outputs to original
// units, and the predictive metrics. One registry entry per kind, each with its
// own typed options; the trainer and the experiment talk only to this
// interface. Gaussian now; the classification issue adds softmax here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.h"
#include "train/metrics.h"

namespace whvi::likelihoods {

class Likelihood : public torch::nn::Module {
 public:
  ~Likelihood() override = default;
  // -sum over all entries of log p(y | f), on the network's (standardised)
  // scale; f and y have the same shape.
  virtual torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) = 0;
  // Draws ỹ ~ p(y | f) (the sampled-target Fisher of NNG), on the network's scale.
  virtual torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const = 0;
  // The likelihood's own parameters are optimised after the network's, at
  // lr_factor() times the learning rate, and not while frozen(t).
  virtual bool frozen(int64_t step) const = 0;
  virtual double lr_factor() const = 0;
  // Network outputs [S, N] on the standardised scale -> original units (float64).
  virtual torch::Tensor to_original(const torch::Tensor& f) const = 0;
  // Predictive metrics of samples f [S, N] (original units) for targets y [N].
  virtual train::RegressionMetrics evaluate(const torch::Tensor& f, const torch::Tensor& y) = 0;
  // A description of a diverged end state (e.g. an exploded noise), if any.
  virtual std::optional<std::string> health_problem() const = 0;
  // Scalars recorded with each result (e.g. the noise variance in original units).
  virtual double noise_var_original() const = 0;
  // Step-log text ("noise var 0.123").
  virtual std::string log_text() const = 0;
};

// Gaussian p(y | f) = N(y; f, σ²) with a learned log σ² on the standardised
// scale, frozen for the first steps_fixed steps (the paper's schedule).
struct GaussianOptions {
  double init_log_noise_var = -1.5;  // likelihood.init_log_noise_var
  int64_t steps_fixed = 500;         // training.steps_fixed_noise
  double lr_factor = 1.0;            // likelihood.lr_factor
  static GaussianOptions from(const config::Config& cfg);
};

class GaussianLikelihood : public Likelihood {
 public:
  // y_mean, y_std: the training targets' statistics (original = f * y_std + y_mean).
  GaussianLikelihood(const GaussianOptions& o, double y_mean, double y_std);
  torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) override;
  torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const override;
  bool frozen(int64_t step) const override { return step < opt_.steps_fixed; }
  double lr_factor() const override { return opt_.lr_factor; }
  torch::Tensor to_original(const torch::Tensor& f) const override;
  train::RegressionMetrics evaluate(const torch::Tensor& f, const torch::Tensor& y) override;
  std::optional<std::string> health_problem() const override;
  double noise_var_original() const override;
  std::string log_text() const override;
  torch::Tensor& log_noise_var() { return log_noise_var_; }

 private:
  GaussianOptions opt_;
  double y_mean_, y_std_;
  torch::Tensor log_noise_var_;
};

// The registry: likelihood.kind -> a likelihood built from its own options.
std::shared_ptr<Likelihood> make_likelihood(const config::Config& cfg, double y_mean, double y_std);
std::vector<std::string> registered_likelihoods();

}  // namespace whvi::likelihoods
