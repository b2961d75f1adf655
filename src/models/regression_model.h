// A multilayer perceptron of Bayesian layers with its likelihood (the
// likelihood seam, src/likelihoods/), for regression. The network works on
// standardised inputs and targets; the likelihood keeps the training target
// statistics (in float64, whatever the network's dtype) and converts
// predictions to original units.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "common/options.h"
#include "likelihoods/likelihood.h"
#include "models/conv.h"
#include "nn/layer.h"

namespace whvi::models {

// The network's shape: the recipe model.kind names (its layers' kind and
// inference method), the architecture and the fully connected layers.
struct NetworkOptions {
  std::string kind = "whvi";
  std::string architecture = "mlp";
  int64_t depth = 2;
  int64_t width = 128;
  std::string activation = "relu";
  std::string output_layer = "auto";
  template <class V>
  void visit(V& v);
};

// The network's plan, read once (experiment/resolve.h): its shape, the layer
// kinds of its recipe and the options of its trunk and of those kinds.
struct NetworkPlan {
  NetworkOptions net;
  std::string hidden, output;  // hidden_layer_kind, output_layer_kind
  options::Resolved trunk, hidden_options, output_options;
  template <class V>
  void visit(V& v) {
    v.part(net);
  }
  void finish(const options::Nested& read);
};

class RegressionModel : public torch::nn::Module {
 public:
  // Hidden layers of the kind model.kind names (hidden_layer_kind), model.depth
  // x model.width, the output layer per model.output_layer, and the
  // likelihood `lik` (its out_dim() outputs; it keeps the target statistics).
  // `init` draws the initial parameter values. A network whose parameters
  // would not fit in this machine's memory is refused before allocation.
  RegressionModel(int64_t d_in, const NetworkPlan& plan, std::shared_ptr<likelihoods::Likelihood> lik,
                  const at::Generator& init);

  // f on the standardised target scale: x [N, d_in] -> [N] (or [N, C] for a
  // likelihood with C > 1 outputs). kSample draws
  // from `gen`.
  torch::Tensor forward_standardized(const torch::Tensor& x, Mode mode, const at::Generator& gen = {});
  // The same with a forward context (draws, Monte Carlo KL terms, captures).
  torch::Tensor forward_standardized(const torch::Tensor& x, ForwardCtx& ctx);
  // The output layer's inputs: the trunk and every hidden layer with its
  // activation, [N, width] (the inputs themselves when model.depth is 0).
  torch::Tensor features_standardized(const torch::Tensor& x, ForwardCtx& ctx);
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
// layer by layer through GroupLayer::forward_group; split s draws from
// gens[s] only. kl, when set, receives the models' KL terms as [S]. Refused
// by name for a convolutional or RFF trunk or a layer kind without it.
torch::Tensor forward_group(const std::vector<RegressionModel*>& models, const torch::Tensor& x, Mode mode,
                            const std::vector<at::Generator>& gens, torch::Tensor* kl = nullptr);
// Why `model` cannot be trained batched (empty if it can).
std::string group_unsupported(const RegressionModel& model);

// model.kind is a named recipe over the registries: the layer kind of its
// hidden layers, of its output layer under model.output_layer auto, and its
// inference method (infer/registry.cpp). A new model kind is one line in
// recipes() (models/recipes.cpp).
struct Recipe {
  std::string kind, hidden, output, method;
};
const std::vector<Recipe>& recipes();
// An option default a recipe sets where the user's config leaves the key unset
// (neither its file nor --set names it), applied by experiment/ when it loads a
// config, and only while `when_key` has the value `when_value` (e.g. the
// likelihood that reads the key). `whvi config --describe` lists them.
struct RecipeDefault {
  std::string kind, key, value, when_key, when_value, why;
};
const std::vector<RecipeDefault>& recipe_defaults();
// The recipe of `model_kind` (an unknown kind is an error listing the others).
const Recipe& recipe(const std::string& model_kind);
std::vector<std::string> model_kinds();
// model.kind's allowed values: the recipes and "auto" (`whvi train` chooses a
// recipe on validation rows, experiment/auto_kind.cpp, before anything is built).
std::vector<std::string> model_kind_choices();

// The layer kinds a model kind builds: its recipe's hidden layers, and the
// output layer for model.output_layer (auto: the recipe's; same: the hidden
// kind; else the kind named).
std::string hidden_layer_kind(const std::string& model_kind);
std::string output_layer_kind(const std::string& model_kind, const std::string& output_layer);

// Rough count of the scalars a network of this config would hold (an upper
// bound, for the memory check).
double estimated_param_count(int64_t d_in, const NetworkOptions& o);

// The model kinds trained by `method` whose hidden and output layers both have
// a layer capability (&LayerKind::batched_when): "whvi, mfg, mcd".
std::string model_kinds_with(const char* LayerKind::*capability, const std::string& method);

// model.architecture's allowed values: mlp and the registered trunks.
std::vector<std::string> architectures();
// model.architecture's and model.output_layer's help, from the trunks' and the recipes' registries.
std::string architecture_help();
std::string output_layer_help();

template <class V>
void NetworkOptions::visit(V& v) {
  v.pick("model.kind", kind, model_kind_choices(), "the model: a named recipe of its hidden layers, output layer and inference method (the allowed values come from the recipes' registry, src/models/recipes.cpp; docs/modelling.md describes each); auto: `whvi train` first trains each of model.auto.candidates on validation rows carved from every split's training rows and keeps the kind with the lowest mean validation NLL (the record's `auto` names every candidate's score)");
  static const std::string arch_help = architecture_help();
  v.pick("model.architecture", architecture, architectures(), arch_help.c_str());
  v.idle_when("model.architecture", {"mlp"});  // fully connected: no trunk
  v.num("model.depth", depth, 0, 64, "number of hidden layers");
  v.num("model.width", width, 1, 1 << 20, "units per hidden layer");
  v.pick("model.activation", activation, {"relu", "cos", "tanh"}, "hidden activation");
  static const std::string output_help = output_layer_help();
  v.pick("model.output_layer", output_layer, {"auto", "mfg", "same", "whvi-reshape"}, output_help.c_str());
}

}  // namespace whvi::models
