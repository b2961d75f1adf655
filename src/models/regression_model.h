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
  // `init` draws the initial parameter values. A network whose parameters
  // would not fit in this machine's memory is refused before allocation.
  RegressionModel(int64_t d_in, const config::Config& cfg, double y_mean, double y_std,
                  const at::Generator& init);

  // f on the standardised target scale: x [N, d_in] -> [N]. kSample draws
  // from `gen`.
  torch::Tensor forward_standardized(const torch::Tensor& x, Mode mode, const at::Generator& gen = {});
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

// Rough count of the scalars a network of this config would hold (an upper
// bound, for the memory check).
double estimated_param_count(int64_t d_in, const config::Config& cfg);

}  // namespace whvi::models
