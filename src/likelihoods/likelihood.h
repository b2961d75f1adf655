// The likelihood seam (issue 9): p(y | f) with the parameters it owns, the
// training term of the ELBO, the conversion of network outputs to original
// units, and the predictive metrics. One registry entry per kind, each with its
// own typed options; the trainer and the experiment talk only to this
// interface. Each kind's class and options live in its own files
// (<kind>.cpp, and <kind>.h where other code needs the concrete class).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "common/options.h"
#include "likelihoods/metrics.h"

namespace whvi::onnx {
class Graph;  // onnx/graph.h
}

namespace whvi::likelihoods {

// What a likelihood reports about a set of predictions: its metrics, in
// order, and (classification) the reliability diagram's bins.
struct Evaluation {
  metrics::Metrics metrics;
  std::vector<metrics::ReliabilityBin> reliability;
  double metric(const std::string& name) const;  // NaN if absent
};

class Likelihood : public torch::nn::Module {
 public:
  ~Likelihood() override = default;
  // "regression" or "classification" (written into every result).
  virtual const char* task() const = 0;
  // Network outputs per input: 1 (Gaussian) or the number of classes.
  virtual int64_t out_dim() const = 0;
  // -sum over all rows of log p(y | f), on the network's (standardised)
  // scale: f [M] (out_dim 1) or [M, C], y [M].
  virtual torch::Tensor nll_sum(const torch::Tensor& f, const torch::Tensor& y) = 0;
  // Batched splits (training.batched_splits): nll_sum of S likelihoods of this
  // kind (group[0] is this one), one per split: f, y [S, M] -> [S]. The
  // default refuses by name.
  virtual torch::Tensor nll_sum_group(const std::vector<Likelihood*>& group, const torch::Tensor& f,
                                      const torch::Tensor& y);
  // Draws ỹ ~ p(y | f) (the sampled-target Fisher of NNG), on the network's scale.
  virtual torch::Tensor sample(const torch::Tensor& f, const at::Generator& gen) const = 0;
  // The likelihood's own parameters are optimised after the network's, at
  // lr_factor() times the learning rate, and not while frozen(t).
  virtual bool frozen(int64_t step) const = 0;
  virtual double lr_factor() const = 0;
  // Network outputs -> the predictive quantity in original units, float64:
  // Gaussian: f [..] -> f y_std + y_mean; softmax: logits [.., C] -> log class probabilities.
  virtual torch::Tensor to_original(const torch::Tensor& f) const = 0;
  // Opt-in, `whvi export` (onnx/graph.h): appends to `g` what to_original
  // does to the network outputs named `f` ([S, N] or [S, N, C]) and returns
  // its name; "" where this likelihood does not export.
  virtual std::string export_onnx(onnx::Graph& /*g*/, const std::string& /*f*/) const { return ""; }
  // Predictive metrics of S samples from predict() ([S, N] or [S, N, C]) for targets y [N].
  virtual Evaluation evaluate(const torch::Tensor& f, const torch::Tensor& y) = 0;
  // The metric names evaluate() returns, in its order.
  virtual const std::vector<const char*>& metric_names() const = 0;
  // A description of a diverged end state (e.g. an exploded noise), if any.
  virtual std::optional<std::string> health_problem() const = 0;
  // The mean network's outputs on training rows (standardised scale) against
  // their targets: a description if the fit is far worse than a constant predictor.
  virtual std::optional<std::string> fit_problem(const torch::Tensor& f, const torch::Tensor& y) const = 0;
  // Scalars recorded with each result (the Gaussian's noise variance in
  // original units; NaN where there is none).
  virtual double noise_var_original() const = 0;
  // Step-log text ("noise var 0.123").
  virtual std::string log_text() const = 0;
  // Learned scalars beyond noise_var_original(), by name, for the split
  // record's `likelihood` (Student's t: its degrees of freedom and scale^2).
  virtual std::vector<std::pair<std::string, double>> learned() const { return {}; }
  // Refits after training on held-out rows (train/stopping.cpp), declared
  // here so that no caller casts to a concrete likelihood: a predictive
  // temperature (softmax) and one noise variance in original units
  // (gaussian). The defaults have neither, and their setters refuse.
  virtual bool has_temperature() const { return false; }
  virtual double temperature() const { return 1.0; }
  virtual void set_temperature(double t);
  virtual bool refits_noise() const { return false; }
  virtual void set_noise_var_original(double v);
  // The fused training step's loss for this likelihood (infer/fused_step.h):
  // "gaussian" or "softmax"; "" where it has none (the autograd step only).
  virtual const char* fused_loss() const { return ""; }
  // Scalars fitted after training, on held-out rows, that the predictive uses
  // (softmax: its temperature, training.stopping_temperature): every name this
  // kind can fit (fitted_names), those that differ from their neutral value
  // (fitted), and one set back by name (set_fitted; the default refuses any
  // name). A checkpoint keeps them as meta/<name>, read back through these, so
  // a new one costs the likelihood alone. fitted_text: what they do, for
  // predict's log ("" when nothing is fitted).
  virtual std::vector<std::string> fitted_names() const { return {}; }
  virtual std::vector<std::pair<std::string, double>> fitted() const { return {}; }
  virtual void set_fitted(const std::string& name, double value);
  virtual std::string fitted_text() const { return ""; }
  // Called once per split before training, with its training targets (class
  // indices for a classifier, [N]) and the class names: a likelihood whose
  // training term weighs rows by their class (softmax's
  // likelihood.class_weights) sets itself up here. Metrics stay unweighted.
  virtual void fit_targets(const torch::Tensor& /*y_train*/, const std::vector<std::string>& /*class_names*/) {}
  // Regression: the predictive mixture's CDF at y [N] (the PIT values of
  // targets, or a bisection's trial points) for S samples of to_original's
  // output ([S, N], or [S, N, 2] for hetero-gaussian). The default is the
  // Gaussian mixture of regression_samples(f, noise_var_original()).
  virtual torch::Tensor predictive_cdf(const torch::Tensor& f, const torch::Tensor& y) const;
  // Regression: each sample's predictive mean and variance per row ([S, N]
  // each, original units) for S samples of to_original's output: what the
  // mixture's moments, epistemic and aleatoric parts are made of. The default
  // is regression_samples(f, noise_var_original()).
  virtual std::pair<torch::Tensor, torch::Tensor> predictive_moments(const torch::Tensor& f) const;
  // The central interval of probability `mass` of that mixture per row, by
  // bisection on predictive_cdf (the samples' quantiles where there is no noise).
  virtual std::pair<torch::Tensor, torch::Tensor> predictive_interval(const torch::Tensor& f, double mass) const;
};

// The regression likelihoods' fit check: the mean network's training RMSE
// (standardised scale) above 10 target standard deviations is a divergence.
std::optional<std::string> regression_fit_problem(const torch::Tensor& f, const torch::Tensor& y);

// Predictive samples of a regression likelihood in original units, split into
// means [S, N] and noise variances [S, N]: f [S, N] (a homoscedastic
// likelihood: noise_var for every element) or [S, N, 2] (mean, log variance).
std::pair<torch::Tensor, torch::Tensor> regression_samples(const torch::Tensor& f, double noise_var);

std::vector<std::string> registered_likelihoods();
// What a registered likelihood kind declares it supports (kind.h).
enum class Capability { kClassification, kFusedStep, kBatchedSplits };
bool likelihood_can(const std::string& kind, Capability c);
// The kinds that can, comma-separated ("gaussian, softmax").
std::string likelihoods_that(Capability c);
// likelihood.kind's help: every kind with its description.
std::string likelihood_kinds_help();

// The run's likelihood, read once into its plan (experiment/resolve.h):
// likelihood.kind, the data set it is for (errors name it) and that kind's
// own options.
struct LikelihoodPlan {
  std::string kind = "gaussian";
  std::string dataset;        // data.dataset
  options::Resolved options;  // the kind's own, read by finish()
  std::string origin;         // the config's name, for errors
  void finish(const options::Nested& read);
  template <class V>
  void visit(V& v) {
    static const std::string help = likelihood_kinds_help();
    v.pick("likelihood.kind", kind, registered_likelihoods(), help.c_str());
    v.use("data.dataset", dataset);
  }
};

// The registry: a likelihood of the plan's kind built from its own options.
// y_mean, y_std: the training targets' statistics (regression); num_classes:
// the data set's classes (0 for regression). A kind that does not fit the
// data (softmax on regression targets, gaussian on classes) is refused.
std::shared_ptr<Likelihood> make_likelihood(const LikelihoodPlan& plan, double y_mean, double y_std,
                                            int64_t num_classes = 0);
// likelihood.kind and every registered likelihood's options, declared.
std::vector<options::Spec> likelihood_option_specs();

}  // namespace whvi::likelihoods
