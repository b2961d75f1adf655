// Batched splits (issue 11, part 3; training.batched_splits): the splits of
// a config trained as one model. A config's splits are independent trainings
// of the same network on same-sized data, and at these sizes a step's time is
// framework overhead, not arithmetic; so S splits run as one forward and one
// backward pass over [S, rows, features] tensors (each layer's parameters
// stacked along a leading split dimension, bmm in place of mm; the layer's
// own forward_group), and the step cost is shared.
//
// Independence: split s keeps its own generator (its mini-batches and every
// draw come from it, in the order train() would draw them), its own optimiser
// state (the loss is the sum of the splits' objectives, so each split's
// gradient is its own objective's), its own divergence check and its own
// final health checks. So a split's numbers do not depend on which others
// share its group (tests/test_batched.cpp checks them bit for bit). They are
// not bit-identical to the one-split-at-a-time path (training.batched_splits:
// 1): the batched WHVI layer takes the generic FWHT path rather than the
// fused kernel and bmm replaces mm, so they agree to float rounding (the test
// states the tolerance), and the fingerprint tells the two apart.
//
// Splits may have different training sizes (standard splits): each draws its
// mini-batches from its own rows and scales its data term by its own N.
// Supported: variational MLPs of whvi (default structure), mfg and mcd layers
// with the Gaussian likelihood; anything else is refused by name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/options.h"
#include "infer/inference.h"
#include "train/loop.h"

namespace whvi::train {

struct SplitTask {
  infer::Inference* inference = nullptr;
  torch::Tensor x, y;  // standardised training rows [N, D], targets [N]
  at::Generator gen;   // the split's training stream
  std::string label;   // "name split k", for log lines and errors
  TrainStats stats;                  // filled by train_group
  std::optional<std::string> error;  // set when this split diverged (nothing to write for it)
};

// training.batched_splits, and what batched_unsupported() weighs.
struct BatchedOptions {
  int64_t splits = 1;
  int64_t evaluation_every = 0;
  bool augment = false;
  std::string model_kind, likelihood;
  template <class V>
  void visit(V& v) {
    static const std::string help =
        "train this many of the config's splits at once as one batched model (train/batched.h: one forward and "
        "backward pass for all, each split with its own generator, optimiser state and checks, so its numbers do not "
        "depend on the others in its group); 1: one split at a time. Variational MLPs of layer kinds " +
        models::layer_kinds_with(&models::LayerKind::batched_when) + " with the " +
        likelihoods::likelihoods_that(likelihoods::Capability::kBatchedSplits) + " likelihood";
    v.num("training.batched_splits", splits, 1, 1024, help.c_str());
    v.idle_when("training.batched_splits", {"1"});
    v.enters_as("batched");  // a split's numbers depend on whether it was batched, not on its group
    v.use("evaluation.every", evaluation_every);
    v.use("data.augment", augment);
    v.use("model.kind", model_kind);
    v.use("likelihood.kind", likelihood);
  }
};

// What a batched group is given (experiment/resolve.h writes it): the loop's
// plan, the batching options, and whether the objective is the plain ELBO.
struct GroupPlan {
  LoopPlan loop;
  BatchedOptions batched;
  bool plain_elbo = true;  // no training.kl_warmup or training.kl_weight
};

// Why a run of this plan cannot train batched (empty if it can), checked
// before any training: evaluation.every, data.augment, the likelihood, the network.
std::string batched_unsupported(const GroupPlan& plan, infer::Inference& example);

// The splits' negative ELBOs [S] on one mini-batch each: xb [S, B, D], yb
// [S, B] (standardised), n_train[s] the split's training rows, mc_samples
// draws per row (rows repeated as negative_elbo does), split s's draws from
// gens[s]. Equal to infer::negative_elbo of each model alone up to float
// rounding (tests/test_batched.cpp).
torch::Tensor group_objective(const std::vector<models::RegressionModel*>& models, const torch::Tensor& xb,
                              const torch::Tensor& yb, const std::vector<int64_t>& n_train, int64_t mc_samples,
                              const std::vector<at::Generator>& gens);

// Trains the tasks as one batched model. A split that diverges gets its error
// and stops moving; the others go on.
void train_group(std::vector<SplitTask>& tasks, const GroupPlan& plan);

}  // namespace whvi::train
