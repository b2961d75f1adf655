// The run's plan: the config read once (experiment/resolve_run.cpp) into the
// experiment's own typed options (data, evaluation, output, model.auto) and
// the components' plans, before anything loads or trains. The experiment's
// parts take the plan, not the config.
//
// The experiment's own keys are declared here, as a component declares its
// own (common/options.h): the structs' member initialisers are the defaults
// and their visit() feeds the schema (experiment/schema.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "calibration/calibration.h"
#include "config/config.h"
#include "data/source.h"
#include "infer/plan.h"
#include "train/batched.h"
#include "train/loop.h"
#include "train/stopping.h"

namespace whvi::experiment {

// Where the data come from and how they split.
struct DataOptions {
  std::string dataset, dir, protocol = "paper", target_transform = "none";
  double test_fraction = 0.1, train_fraction = 0.9, validation_fraction = 0, inner_validation_fraction = 0;
  int64_t folds = 5, splits = 8, split_seed = 0, validation_block = 0, inner_validation_block = 0;
  bool augment = false;
  template <class V>
  void visit(V& v);
};

// model.kind auto's race (experiment/auto_kind.cpp).
struct AutoOptions {
  std::string candidates = "blr,gp,laplace,mcd,mfg,whvi,ensemble", schedule = "halving", log_target = "auto";
  double validation_fraction = 0.2, first_budget = 0.125;
  int64_t folds = 1, splits = 2, eta = 2;
  template <class V>
  void visit(V& v);
};

// The seed, what is evaluated and where results go.
struct RunOptions {
  int64_t seed = 0;  // training.seed
  int64_t mc_samples = 64, every = 0, curve_mc_samples = 16, curve_train_rows = 0;  // evaluation.*
  std::string ood_dataset;
  AutoOptions autos;
  std::string dir = "results/uci", name;  // output.*
  bool checkpoints = true, plot = true;
  int64_t grid_points = 0;
  double grid_lo = -2, grid_hi = 3;
  template <class V>
  void visit(V& v);
};

// Keys of components the experiment itself acts on (declared by them).
struct Uses {
  std::string missing = "impute";      // data.missing (CSV and .npy data)
  std::string class_weights = "none";  // likelihood.class_weights
  int64_t sghmc_samples = 0;           // model.sghmc.samples
  double sghmc_burn_in = 0;            // model.sghmc.burn_in
  template <class V>
  void visit(V& v) {
    v.use("data.missing", missing);
    v.use("likelihood.class_weights", class_weights);
    v.use("model.sghmc.samples", sghmc_samples);
    v.use("model.sghmc.burn_in", sghmc_burn_in);
  }
};

struct RunPlan {
  // The config the plan was read from: for the run fingerprint, the record's
  // copy, the checkpoint's YAML and the data sets a run loads besides its own.
  const config::Config* config = nullptr;
  std::string origin;  // the config's name, for errors
  DataOptions data;
  RunOptions run;
  Uses uses;
  infer::MethodPlan method;  // model.kind, likelihood.kind, training.device, training.batched_splits, ...
  train::LoopPlan loop;      // training.steps, ..., and the divergence suspects
  train::GroupPlan group;    // training.batched_splits > 1: the splits trained as one model
  train::StoppingOptions stopping;
  calibration::CalibrationOptions calibration;
  data::DataPlan data_plan;                      // data.dataset's source with its options
  const data::DataSourceKind* source = nullptr;  // data_plan.source
  bool classification = false;  // likelihood.kind is for class labels
  bool toy = false;             // every row trains the model (the toy problem): one split, no test rows
  bool no_test_rows = false;    // the toy, and the final model of data.protocol: all
  std::string fingerprint;      // the settings that shape a split's numbers (fingerprint_of); none for auto
  // what the method can do (its registration's); nothing for model.kind auto, whose method is not chosen yet
  const infer::Capabilities& can() const;
  // the method predicts with the samples it keeps after a burn-in (SGHMC: model.sghmc.samples, .burn_in)
  bool keeps_samples() const;
  int64_t total_steps() const { return loop.options.steps_fixed_noise + loop.options.steps; }
};

// The plan of a config. With model.kind auto it holds the data, the
// evaluation and the race's options (method.kind "auto", method.likelihood_kind);
// the race gives each candidate a plan of its own.
RunPlan resolve_run(const config::Config& cfg);
// The configuration that determines a split's numbers (resolve_fingerprint.cpp):
// the config minus what its declarations say does not act there, and minus the
// options of the components the run does not use; a JSON text.
std::string fingerprint_of(const config::Config& cfg);

// What the commands on a checkpoint (predict, eval, export) read of the
// config stored in it: its data need not be at hand.
struct CheckpointPlan {
  infer::MethodPlan method;
  torch::ScalarType dtype = torch::kFloat32;  // training.dtype
  int64_t seed = 0;                           // training.seed
  int64_t mc_samples = 64;                    // evaluation.mc_samples
  bool log_target = false;                    // data.target_transform: log
};
CheckpointPlan resolve_checkpoint(const config::Config& cfg);

template <class V>
void DataOptions::visit(V& v) {
  static const std::string dataset_help = data::dataset_help();
  v.text("data.dataset", dataset, dataset_help.c_str());
  v.text("data.dir", dir, "data directory (default: $WHVI_DATA_DIR, else ./data)");
  v.pick("data.protocol", protocol, {"paper", "standard", "stratified", "random", "kfold", "all"}, "paper: random 90/10 splits from data.split_seed; standard: the stored splits; stratified (classification): random splits that keep each class's share; random: data.splits random splits holding out data.test_fraction (stratified for classification; what paper means for a CSV file); kfold: data.folds folds, each row tested once (stratified for classification); all: one final model trained on every row, for predict after the splits have measured the config (no held-out rows, so no test metrics; stopping's rows are carved from the training rows as in every split)");
  v.num("data.test_fraction", test_fraction, 0.01, 0.99, "fraction of the rows held out for testing by protocol random");
  v.idle_when_all({{"data.protocol", {"random"}, false}, {"plan.user_table", {"true"}, false}});
  v.num("data.folds", folds, 2, 1000, "number of folds of protocol kfold (data.splits is not used)");
  v.acts_only_when("data.protocol", {"kfold"});
  v.num("data.splits", splits, 0, 1000, "number of splits (standard: 0 = all stored)");
  v.outside_split();  // split k does not depend on how many run: --resume extends a run
  v.num("data.split_seed", split_seed, 0, 9.0e15, "seed of the paper protocol's splits (and of the toy data)");
  v.num("data.train_fraction", train_fraction, 0.01, 0.99, "training fraction of the paper protocol's splits");
  v.flag("data.augment", augment, "image data (CIFAR-10, MNIST): random crops with 4-pixel zero padding and horizontal flips of each training mini-batch (off by default, as the authors' code)");
  v.late();
  v.pick("data.target_transform", target_transform, {"none", "log"}, "regression: log = the model learns the natural log of the target (for a positive, skewed target; every target must be > 0), standardised like any target; metrics, records and predictions stay in the target's units (the predictive is the log-normal mixture; record noise_var is on the log scale). Not for likelihood.kind student-t (its log-t has no mean)");
  v.late();
  v.num("data.validation_fraction", validation_fraction, 0, 0.5, "if > 0: evaluate on this fraction of each training split, carved out at random (hyper-parameter selection); the test rows are never read");
  v.num("data.inner_validation_fraction", inner_validation_fraction, 0, 0.5, "with data.validation_fraction > 0: evaluate instead on this fraction of the rows that carve leaves to train, carved out at random again (nested selection: model.kind auto sets it for its candidates when its own run is on validation rows); the outer validation rows and the test rows are never read");
  v.late();
  v.num("data.validation_block", validation_block, 0, 99, "with data.validation_fraction > 0: which of that carve's disjoint validation sets to take: the training rows are shuffled as for block 0 (the usual carve) and block B holds out the B-th share of them, so blocks 0 to 1/fraction - 1 are a cross-validation's folds (model.auto.folds sets it for its candidates)");
  v.late();
  v.num("data.inner_validation_block", inner_validation_block, 0, 99, "the same for data.inner_validation_fraction's carve");
  v.late();
}

template <class V>
void AutoOptions::visit(V& v) {
  v.text("model.auto.candidates", candidates,
         "model.kind auto: the kinds `whvi train` tries, comma-separated or a list; one that cannot fit the data (a GP over "
         "model.gp.max_rows rows, Bayesian linear regression on classes) is skipped, and blr and gp get model.depth 0");
  v.outside_split();  // chooses the kind before a run
  v.num("model.auto.validation_fraction", validation_fraction, 0.05, 0.5,
        "model.kind auto: the share of each split's training rows the candidates are scored on (carved as "
        "data.validation_fraction does; the test rows are never read), before the chosen kind trains on all of them");
  v.outside_split();  // chooses the kind before a run
  // not late: model.auto.* choose the kind before a run and are not in a run's fingerprint
  v.num("model.auto.folds", folds, 1, 20,
        "model.kind auto: score each candidate on this many disjoint validation sets of "
        "model.auto.validation_fraction each (data.validation_block 0, 1, ...; 5 at 0.2 is a 5-fold "
        "cross-validation), by the mean of their validation NLLs; costs the candidates this many times over");
  v.outside_split();  // chooses the kind before a run
  v.pick("model.auto.schedule", schedule, {"halving", "full"},
         "model.kind auto: halving: the candidates are scored on the first model.auto.splits splits, the closed "
         "forms (blr, gp) once, the networks by successive halving (all at model.auto.first_budget of their "
         "training steps, the worse half dropped, the budget doubled for the rest, until one is left or the budget "
         "is full); full: every candidate's whole budget on every split (6 to 9 times the cost of the chosen kind "
         "alone)");
  v.outside_split();  // chooses the kind before a run
  v.num("model.auto.splits", splits, 0, 1000,
        "model.kind auto with model.auto.schedule halving: the candidates are scored on the first this many splits "
        "(0: all; data.protocol kfold: all folds); the chosen kind then trains every split");
  v.outside_split();  // chooses the kind before a run
  v.num("model.auto.first_budget", first_budget, 0.01, 1,
        "model.kind auto with model.auto.schedule halving: the share of their training steps the networks train "
        "in the race's first rung; a network is scored at the last budget it reached, so against a closed form "
        "it is judged pessimistically, never optimistically");
  v.outside_split();  // chooses the kind before a run
  v.num("model.auto.eta", eta, 2, 8,
        "model.kind auto with model.auto.schedule halving: after each rung of the race the best 1/eta of the "
        "networks (rounded up) go on, at eta times the budget (2: halving)");
  v.outside_split();  // chooses the kind before a run
  v.pick("model.auto.log_target", log_target, {"auto", "off"},
         "model.kind auto on a regression target that is positive in every row (and data.target_transform none): "
         "the closed forms (blr, gp) are also scored on the target's log (data.target_transform: log; candidates "
         "blr-log, gp-log), their validation NLL in the target's units, so a skewed positive quantity can get a "
         "log-normal predictive; off: never");
  v.outside_split();  // chooses the kind before a run
}

template <class V>
void RunOptions::visit(V& v) {
  v.num("training.seed", seed, 0, 9.0e15, "seed of initialisation, batches and noise; split k's streams are derived from (seed, k) only");
  v.num("evaluation.mc_samples", mc_samples, 1, 1000000, "Monte Carlo samples at test time");
  v.text("evaluation.ood_dataset", ood_dataset, "classifiers: also score this data set's stored test rows (e.g. mnist-mini for a Fashion-MNIST model; same input size) as out-of-distribution and record the AUROC and AUPR of telling them from the test rows by predictive entropy and by mutual information");
  v.outside_split();  // scored after training, with draws of their own
  v.num("evaluation.every", every, 0, 1e9, "if > 0: also evaluate every this many steps during training (a learning curve, stored as `curve` in the split's record; the paper's Figs. 2, 3, 7); its Monte Carlo draws come from their own stream, so the trained model does not change");
  v.idle_when("evaluation.every", {"0"});
  v.num("evaluation.curve_mc_samples", curve_mc_samples, 1, 1000000, "Monte Carlo samples of each learning-curve point");
  v.idle_when("evaluation.every", {"0"});
  v.num("evaluation.curve_train_rows", curve_train_rows, 0, 1e9, "with evaluation.every: each learning-curve point also scores the first this many of the rows the steps fit (keys train_error, train_mnll, ...; all of them when fewer), to tell under-fitting from over-fitting; its draws come from their own stream, so the trained model and the held-out points do not change");
  v.late();
  autos.visit(v);
  v.text("output.dir", dir, "folder for result files");
  v.outside_split();
  v.text("output.name", name, "experiment name (default: the config file's stem); a plain file name: letters, digits, -_.+, not starting with '.'");
  v.outside_split();
  v.flag("output.checkpoints", checkpoints, "write a checkpoint per split (needed by `whvi eval`)");
  v.outside_split();
  v.num("output.grid_points", grid_points, 0, 1000000, "if > 0 (1-D inputs): predictions on a grid written as CSV");
  v.outside_split();
  v.num("output.grid_lo", grid_lo, -1e15, 1e15, "grid start (original input units)");
  v.outside_split();
  v.num("output.grid_hi", grid_hi, -1e15, 1e15, "grid end (original input units)");
  v.outside_split();
  v.flag("output.plot", plot, "with a grid or a classifier: draw PNG figures with gnuplot (/usr/bin/gnuplot, run without a shell)");
  v.outside_split();
}

}  // namespace whvi::experiment
