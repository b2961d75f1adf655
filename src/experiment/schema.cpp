// The schema: the experiment's own keys (data, seed, evaluation, output)
// and every component's, gathered from their declarations beside their code
// (common/options.h) through the registries. Defaults reproduce the WHVI
// paper's UCI protocol (supplement D.1).
#include <algorithm>
#include <map>

#include "calibration/calibration.h"
#include "config/config.h"
#include "data/source.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "nn/conv_filter.h"
#include "nn/layer.h"
#include "models/regression_model.h"
#include "models/trunk.h"
#include "optim/rule.h"
#include "train/batched.h"
#include "train/loop.h"
#include "train/stopping.h"

namespace whvi::config {
namespace {

Param I(std::string key, std::string def, double lo, double hi, std::string help) {
  return {std::move(key), Type::kInt, std::move(def), lo, hi, {}, std::move(help)};
}
Param F(std::string key, std::string def, double lo, double hi, std::string help) {
  return {std::move(key), Type::kFloat, std::move(def), lo, hi, {}, std::move(help)};
}
Param S(std::string key, std::string def, std::vector<std::string> choices, std::string help) {
  return {std::move(key), Type::kString, std::move(def), 0, 0, std::move(choices), std::move(help)};
}
Param B(std::string key, std::string def, std::string help) {
  return {std::move(key), Type::kBool, std::move(def), 0, 0, {}, std::move(help)};
}
// A key added after results were committed (options::Spec::late).
Param Late(Param p) {
  p.late = true;
  return p;
}

// The experiment's own keys: where the data come from and how they split,
// the seed, what is evaluated and where results go.
std::vector<Param> data_keys() {
  return {
      S("data.dataset", "", {}, data::dataset_help()),
      S("data.dir", "", {}, "data directory (default: $WHVI_DATA_DIR, else ./data)"),
      S("data.protocol", "paper", {"paper", "standard", "stratified", "random", "kfold", "all"}, "paper: random 90/10 splits from data.split_seed; standard: the stored splits; stratified (classification): random splits that keep each class's share; random: data.splits random splits holding out data.test_fraction (stratified for classification; what paper means for a CSV file); kfold: data.folds folds, each row tested once (stratified for classification); all: one final model trained on every row, for predict after the splits have measured the config (no held-out rows, so no test metrics; stopping's rows are carved from the training rows as in every split)"),
      F("data.test_fraction", "0.1", 0.01, 0.99, "fraction of the rows held out for testing by protocol random"),
      I("data.folds", "5", 2, 1000, "number of folds of protocol kfold (data.splits is not used)"),
      I("data.splits", "8", 0, 1000, "number of splits (standard: 0 = all stored)"),
      I("data.split_seed", "0", 0, 9.0e15, "seed of the paper protocol's splits (and of the toy data)"),
      F("data.train_fraction", "0.9", 0.01, 0.99, "training fraction of the paper protocol's splits"),
      Late(B("data.augment", "false", "image data (CIFAR-10, MNIST): random crops with 4-pixel zero padding and horizontal flips of each training mini-batch (off by default, as the authors' code)")),
      Late(S("data.target_transform", "none", {"none", "log"}, "regression: log = the model learns the natural log of the target (for a positive, skewed target; every target must be > 0), standardised like any target; metrics, records and predictions stay in the target's units (the predictive is the log-normal mixture; record noise_var is on the log scale). Not for likelihood.kind student-t (its log-t has no mean)")),
      F("data.validation_fraction", "0", 0, 0.5, "if > 0: evaluate on this fraction of each training split, carved out at random (hyper-parameter selection); the test rows are never read"),
      Late(F("data.inner_validation_fraction", "0", 0, 0.5, "with data.validation_fraction > 0: evaluate instead on this fraction of the rows that carve leaves to train, carved out at random again (nested selection: model.kind auto sets it for its candidates when its own run is on validation rows); the outer validation rows and the test rows are never read")),
      Late(I("data.validation_block", "0", 0, 99, "with data.validation_fraction > 0: which of that carve's disjoint validation sets to take: the training rows are shuffled as for block 0 (the usual carve) and block B holds out the B-th share of them, so blocks 0 to 1/fraction - 1 are a cross-validation's folds (model.auto.folds sets it for its candidates)")),
      Late(I("data.inner_validation_block", "0", 0, 99, "the same for data.inner_validation_fraction's carve")),
  };
}

std::vector<Param> run_keys() {
  return {
      I("training.seed", "0", 0, 9.0e15, "seed of initialisation, batches and noise; split k's streams are derived from (seed, k) only"),
      I("evaluation.mc_samples", "64", 1, 1000000, "Monte Carlo samples at test time"),
      S("evaluation.ood_dataset", "", {}, "classifiers: also score this data set's stored test rows (e.g. mnist-mini for a Fashion-MNIST model; same input size) as out-of-distribution and record the AUROC and AUPR of telling them from the test rows by predictive entropy and by mutual information"),
      I("evaluation.every", "0", 0, 1e9, "if > 0: also evaluate every this many steps during training (a learning curve, stored as `curve` in the split's record; the paper's Figs. 2, 3, 7); its Monte Carlo draws come from their own stream, so the trained model does not change"),
      I("evaluation.curve_mc_samples", "16", 1, 1000000, "Monte Carlo samples of each learning-curve point"),
      Late(I("evaluation.curve_train_rows", "0", 0, 1e9, "with evaluation.every: each learning-curve point also scores the first this many of the rows the steps fit (keys train_error, train_mnll, ...; all of them when fewer), to tell under-fitting from over-fitting; its draws come from their own stream, so the trained model and the held-out points do not change")),
      S("model.auto.candidates", "blr,gp,laplace,mcd,mfg,whvi,ensemble", {},
        "model.kind auto: the kinds `whvi train` tries, comma-separated; one that cannot fit the data (a GP over "
        "model.gp.max_rows rows, Bayesian linear regression on classes) is skipped, and blr and gp get model.depth 0"),
      F("model.auto.validation_fraction", "0.2", 0.05, 0.5,
        "model.kind auto: the share of each split's training rows the candidates are scored on (carved as "
        "data.validation_fraction does; the test rows are never read), before the chosen kind trains on all of them"),
      // not late: model.auto.* choose the kind before a run and are not in a run's fingerprint
      I("model.auto.folds", "1", 1, 20,
        "model.kind auto: score each candidate on this many disjoint validation sets of "
        "model.auto.validation_fraction each (data.validation_block 0, 1, ...; 5 at 0.2 is a 5-fold "
        "cross-validation), by the mean of their validation NLLs; costs the candidates this many times over"),
      S("model.auto.schedule", "halving", {"halving", "full"},
        "model.kind auto: halving: the candidates are scored on the first model.auto.splits splits, the closed "
        "forms (blr, gp) once, the networks by successive halving (all at model.auto.first_budget of their "
        "training steps, the worse half dropped, the budget doubled for the rest, until one is left or the budget "
        "is full); full: every candidate's whole budget on every split (6 to 9 times the cost of the chosen kind "
        "alone)"),
      I("model.auto.splits", "2", 0, 1000,
        "model.kind auto with model.auto.schedule halving: the candidates are scored on the first this many splits "
        "(0: all; data.protocol kfold: all folds); the chosen kind then trains every split"),
      F("model.auto.first_budget", "0.125", 0.01, 1,
        "model.kind auto with model.auto.schedule halving: the share of their training steps the networks train "
        "in the race's first rung; a network is scored at the last budget it reached, so against a closed form "
        "it is judged pessimistically, never optimistically"),
      I("model.auto.eta", "2", 2, 8,
        "model.kind auto with model.auto.schedule halving: after each rung of the race the best 1/eta of the "
        "networks (rounded up) go on, at eta times the budget (2: halving)"),
      S("model.auto.log_target", "auto", {"auto", "off"},
        "model.kind auto on a regression target that is positive in every row (and data.target_transform none): "
        "the closed forms (blr, gp) are also scored on the target's log (data.target_transform: log; candidates "
        "blr-log, gp-log), their validation NLL in the target's units, so a skewed positive quantity can get a "
        "log-normal predictive; off: never"),
      S("output.dir", "results/uci", {}, "folder for result files"),
      S("output.name", "", {}, "experiment name (default: the config file's stem); a plain file name: letters, digits, -_.+, not starting with '.'"),
      B("output.checkpoints", "true", "write a checkpoint per split (needed by `whvi eval`)"),
      I("output.grid_points", "0", 0, 1000000, "if > 0 (1-D inputs): predictions on a grid written as CSV"),
      F("output.grid_lo", "-2", -1e15, 1e15, "grid start (original input units)"),
      F("output.grid_hi", "3", -1e15, 1e15, "grid end (original input units)"),
      B("output.plot", "true", "with a grid or a classifier: draw PNG figures with gnuplot (/usr/bin/gnuplot, run without a shell)"),
  };
}

bool same(const Param& a, const Param& b) {
  return a.type == b.type && a.def == b.def && a.min == b.min && a.max == b.max && a.choices == b.choices &&
         a.help == b.help;
}

// The path component of `key` at `depth` ("model.whvi.bias", 1 -> "whvi").
std::string component(const std::string& key, size_t depth) {
  size_t start = 0;
  for (size_t d = 0; d < depth; ++d) start = key.find('.', start) + 1;
  return key.substr(start, key.find('.', start) - start);
}

// Keys grouped so that every section's keys are contiguous at every level
// (a dump writes each section once), in the order the sections first appear.
std::vector<Param> grouped(std::vector<Param> ps, size_t depth) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<Param>> by;
  for (auto& p : ps) {
    const bool leaf = std::count(p.key.begin(), p.key.end(), '.') == static_cast<long>(depth);
    const std::string name = (leaf ? "=" : "") + component(p.key, depth);
    if (!by.count(name)) order.push_back(name);
    by[name].push_back(std::move(p));
  }
  std::vector<Param> out;
  for (const auto& name : order) {
    auto g = name[0] == '=' ? std::move(by[name]) : grouped(std::move(by[name]), depth + 1);
    for (auto& p : g) out.push_back(std::move(p));
  }
  return out;
}

std::vector<Param> gather() {
  std::vector<Param> all = data_keys();
  options::append(all, data::data_source_option_specs());
  options::append(all, options::declare<models::NetworkOptions>());
  for (const auto& k : models::trunk_kinds()) options::append(all, k.declare());
  for (const auto& k : models::layer_kinds()) options::append(all, k.declare());
  options::append(all, models::filter_option_specs());
  options::append(all, infer::method_option_specs());
  options::append(all, likelihoods::likelihood_option_specs());
  options::append(all, optim::rule_option_specs());
  options::append(all, options::declare<train::LoopOptions>());
  options::append(all, options::declare<train::BatchedOptions>());
  options::append(all, options::declare<train::StoppingOptions>());
  options::append(all, calibration::option_specs());
  options::append(all, run_keys());
  // a key declared by two registrations of one component (the convolutional
  // architectures share model.conv*) appears once; two different
  // declarations of one key are a programming error
  std::vector<Param> out;
  std::map<std::string, size_t> at;
  for (auto& p : all) {
    const auto it = at.find(p.key);
    if (it == at.end()) {
      at[p.key] = out.size();
      out.push_back(std::move(p));
    } else if (!same(out[it->second], p)) {
      throw std::logic_error("configuration key '" + p.key + "' is declared twice, differently");
    }
  }
  return grouped(std::move(out), 0);
}
}  // namespace

const std::vector<Param>& schema() {
  static const std::vector<Param> params = gather();
  return params;
}

}  // namespace whvi::config
