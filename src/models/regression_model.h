// A multilayer perceptron of Bayesian layers with its likelihood (the
// likelihood seam, src/likelihoods/), for regression. The network works on
// standardised inputs and targets; the likelihood keeps the training target
// statistics (in float64, whatever the network's dtype) and converts
// predictions to original units.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "config/config.h"
#include "likelihoods/likelihood.h"
#include "models/conv.h"
#include "models/layer.h"

namespace whvi::models {

class RegressionModel : public torch::nn::Module {
 public:
  // Hidden layers of the kind model.kind names (hidden_layer_kind), model.depth
  // x model.width, the output layer per model.output_layer. y_mean/y_std: training target statistics.
  // `init` draws the initial parameter values. A network whose parameters
  // would not fit in this machine's memory is refused before allocation.
  // num_classes > 0: a classifier (likelihood.kind softmax) with that many outputs.
  RegressionModel(int64_t d_in, const config::Config& cfg, double y_mean, double y_std,
                  const at::Generator& init, int64_t num_classes = 0);

  // f on the standardised target scale: x [N, d_in] -> [N] (or [N, C] for a
  // likelihood with C > 1 outputs). kSample draws
  // from `gen`.
  torch::Tensor forward_standardized(const torch::Tensor& x, Mode mode, const at::Generator& gen = {});
  // The same with a forward context (draws, Monte Carlo KL terms, captures).
  torch::Tensor forward_standardized(const torch::Tensor& x, ForwardCtx& ctx);
  // Sum of the layers' KL terms.
  torch::Tensor kl();
  // p(y | f), with the parameters it owns (a submodule named "likelihood").
  likelihoods::Likelihood& likelihood() { return *likelihood_; }
  // Trainable scalars (all layers and the likelihood's).
  int64_t num_params() const;
  const std::vector<LayerPtr>& layers() const { return layers_; }
  bool has_trunk() const { return static_cast<bool>(trunk_); }
  const std::string& activation() const { return activation_; }

 private:
  std::shared_ptr<Trunk> trunk_;  // model.architecture other than mlp
  std::vector<LayerPtr> layers_;
  std::string activation_;
  std::shared_ptr<likelihoods::Likelihood> likelihood_;
};

// Batched splits (training.batched_splits): S models of the same config, one
// per split, run as one: x [S, R, d_in] -> f [S, R] (standardised scale),
// layer by layer through BayesianLayer::forward_group; split s draws from
// gens[s] only. kl, when set, receives the models' KL terms as [S]. Refused
// by name for a convolutional or RFF trunk or a layer kind without it.
torch::Tensor forward_group(const std::vector<RegressionModel*>& models, const torch::Tensor& x, Mode mode,
                            const std::vector<at::Generator>& gens, torch::Tensor* kl = nullptr);
// Why `model` cannot be trained batched (empty if it can).
std::string group_unsupported(const RegressionModel& model);

// The layer kinds a model kind builds: hidden layers (sghmc: "linear", else
// the kind itself) and the output layer for model.output_layer (auto: mcd ->
// mcd, sghmc -> linear, nng -> nng, otherwise mfg; same: the hidden kind).
std::string hidden_layer_kind(const std::string& model_kind);
std::string output_layer_kind(const std::string& model_kind, const std::string& output_layer);

// Rough count of the scalars a network of this config would hold (an upper
// bound, for the memory check).
double estimated_param_count(int64_t d_in, const config::Config& cfg);

}  // namespace whvi::models
