// A multilayer perceptron of Bayesian layers with a Gaussian likelihood, for
// regression. The network works on standardised inputs and targets; the model
// keeps the training target statistics (in float64, whatever the network's
// dtype), so predictions come out in original units (y = f(x) * y_std + y_mean).
#pragma once

#include <vector>

#include <torch/torch.h>

#include "config/config.h"
#include "models/layer.h"

namespace whvi::models {

class RegressionModel : public torch::nn::Module {
 public:
  // Hidden layers of cfg model.kind (model.depth x model.width), output
  // layer per model.output_layer. y_mean/y_std: training target statistics.
  RegressionModel(int64_t d_in, const config::Config& cfg, double y_mean, double y_std);

  // f on the standardised target scale: x [N, d_in] -> [N].
  torch::Tensor forward_std(const torch::Tensor& x, Mode mode);
  // Sum of the layers' KL terms.
  torch::Tensor kl();
  // Learned log noise variance on the standardised scale (a 1-element parameter).
  torch::Tensor& log_noise_var() { return log_noise_var_; }
  double y_mean() const { return y_mean_; }
  double y_std() const { return y_std_; }
  // Trainable scalars (all layers and the noise).
  int64_t num_params() const;
  const std::vector<LayerPtr>& layers() const { return layers_; }

 private:
  std::vector<LayerPtr> layers_;
  std::string activation_;
  torch::Tensor log_noise_var_;
  double y_mean_, y_std_;
};

// Gaussian log density log N(y | f, exp(log_var)), elementwise.
torch::Tensor gaussian_log_prob(const torch::Tensor& y, const torch::Tensor& f,
                                const torch::Tensor& log_var);

}  // namespace whvi::models
