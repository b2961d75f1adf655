// The run's method, read once into its plan (experiment/resolve.h):
// inference.kind resolved against model.kind's own method, that method's own
// options, and the network and likelihood it trains. make_inference() builds
// the method from it; nothing below the experiment reads the config.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "infer/inference.h"
#include "infer/variational.h"

namespace whvi::infer {

struct MethodPlan {
  std::string asked = "auto";  // inference.kind
  std::string kind, arch, conv, likelihood_kind, device;  // model.kind, .architecture, .conv, likelihood.kind, training.device
  int64_t batched_splits = 1;
  VariationalOptions variational;  // the KL weighting and the engine (read for every method)
  models::NetworkPlan network;
  likelihoods::LikelihoodPlan likelihood;
  // by finish()
  std::string method;          // the registered method that trains it
  std::string label;           // model_label: model.kind, or "<method>-<model.kind>"
  options::Resolved options;   // the method's own
  std::string origin;          // the config's name, for errors

  void finish(const options::Nested& read);
  template <class V>
  void visit(V& v) {
    static const std::string help =
        "how the network's parameters are learned: auto = model.kind's own (variational for " +
        kinds_trained_by("variational") + "; the others by their own method); ensemble with a variational "
        "model.kind trains ensemble.members independent variational networks of that kind and predicts with their "
        "mixture";
    v.pick("inference.kind", asked, choices(), help.c_str());
    v.late();
    v.use("model.kind", kind);
    v.use("model.architecture", arch);
    v.use("model.conv", conv);
    v.use("likelihood.kind", likelihood_kind);
    v.use("training.device", device);
    v.use("training.batched_splits", batched_splits);
    v.part(variational);
    v.part(network);
    v.part(likelihood);
  }
  static std::vector<std::string> choices();
};

// The method of the plan, with its network(s) built from the plan (`init`
// draws the initial values). y_mean, y_std: the training targets' statistics.
// num_classes > 0: a classifier with that many classes (likelihood.kind softmax).
// The cross-axis rules (a method that cannot train this architecture,
// likelihood or KL weighting) are refused here, naming the fix.
std::unique_ptr<Inference> make_inference(int64_t d_in, const MethodPlan& plan, double y_mean, double y_std,
                                          const at::Generator& init, int64_t num_classes = 0);

// One network of the plan with its own likelihood (a method calls it once
// per network it trains).
std::shared_ptr<models::RegressionModel> make_network(int64_t d_in, const MethodPlan& plan, double y_mean,
                                                      double y_std, const at::Generator& init,
                                                      int64_t num_classes = 0);

// The engine a run of the plan trains its splits with: training.engine when
// set to autograd or fused; for auto, fused where it applies (variational
// inference, one split at a time on the CPU, a network that
// fused_unsupported() accepts), else autograd.
std::string engine_for(const MethodPlan& plan);

}  // namespace whvi::infer
