// Stopping on validation rows (training.stopping): a share of the training
// rows is held out before training, the model's predictive NLL on them is
// measured every `every` steps with Monte Carlo draws from a stream of their
// own, the parameters of the best measurement are kept, and training stops
// after `patience` measurements without improvement (or at the configured
// number of steps, then the maximum). The best parameters are restored at the
// end, so the trained model is the one that predicted the held-out rows best.
//
// auto (the default) stops on validation for every data set that is not one
// of the papers' benchmarks (data::is_benchmark, a property of the data
// source, not of the file format), on splits of at least kMinRows training
// rows, and keeps the fixed schedule of the benchmarks (the papers'
// protocols); the choice was made on validation rows (results/selection/stopping/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "common/options.h"
#include "infer/inference.h"

namespace whvi::train {

// auto stops on validation only on splits with at least this many training rows.
constexpr int64_t kMinRows = 20;
// training.stopping_every 0 (the default): a measurement every budget /
// kMeasurementsPerBudget steps (the budget: training.steps_fixed_noise +
// training.steps), at least kMinEvery; with the default patience, chosen on
// learning curves of validation rows (results/selection/stopping-rule/).
constexpr int64_t kMeasurementsPerBudget = 50;
constexpr int64_t kMinEvery = 50;
// The steps between measurements for a budget of `budget` steps when
// training.stopping_every is 0.
int64_t auto_every(int64_t budget);

struct StoppingOptions {
  std::string mode = "auto";  // training.stopping
  double fraction = 0.1;    // share of the training rows held out
  int64_t every = 0;        // steps between measurements; 0: auto_every(the budget), set by finish()
  int64_t patience = 20;    // measurements without improvement before stopping
  int64_t every_epochs = 0; // training.stopping_every_epochs: with every 0, at most this many epochs between measurements (0: no cap)
  int64_t batch_size = 0;   // training.batch_size (an epoch's steps)
  int64_t mc_samples = 32;
  std::string noise = "refit";  // training.stopping_noise (chosen on validation rows, results/selection/stopping-noise/)
  std::string temperature = "prior";  // training.stopping_temperature (chosen on validation rows, results/selection/stopping-temperature/)
  int64_t min_steps = 0;    // never stop before this step (training.steps_fixed_noise: the frozen-noise phase)
  int64_t steps = 0;        // training.steps: with min_steps, the budget
  // what resolve() weighs
  std::string model_kind, inference_kind, device, dataset;
  int64_t batched_splits = 1;
  // derived by finish()
  bool on = false;          // training.stopping resolved for this data set and method
  bool asked = false;       // mode validation (auto leaves splits of under kMinRows rows alone)
  bool every_auto = false;  // training.stopping_every was 0
  void finish() {
    on = resolve();
    every_auto = every == 0;
    if (every == 0) every = auto_every(min_steps + steps);
  }
  // The steps between measurements for a split that trains on fit_rows rows:
  // every, capped at every_epochs epochs (at least kMinEvery steps) when
  // training.stopping_every is 0 and training.stopping_every_epochs is set.
  int64_t every_for(int64_t fit_rows) const;
  // Whether stopping acts: "validation", or "auto" on data that are not one
  // of the papers' benchmarks. Throws when it is asked for where it cannot act
  // (SGHMC, batched splits, a GPU). `why_off` receives the reason when auto
  // resolves to off.
  bool resolve(std::string* why_off = nullptr);
  template <class V>
  void visit(V& v);
};

// The rows of a training split, carved into those that train and those that
// stop training: a random `fraction` of the n rows (at least 1; at least 2
// left to train) drawn from `seed`. Returned as sorted row numbers. Too few
// rows is an error naming `fraction_key` and, as the way out, `off`.
struct Holdout {
  std::vector<int64_t> fit, validation;
};
Holdout carve_holdout(int64_t n, double fraction, uint64_t seed,
                      const std::string& fraction_key = "training.stopping_fraction",
                      const std::string& off = "training.stopping: off");

// The noise variance v (f's and y's units) that minimises the mean over rows
// of −log (1/S) Σ_s N(y_i; f_si, v), the Gaussian likelihood's predictive NLL,
// for predictions f [S, N] of targets y [N] (float64): the minimum of a grid of
// ln v steps of 0.05 over [ln m − 14, ln m + 4] (m the mean squared residual,
// where one sample's minimum lies), refined by golden-section search.
double fit_noise_var(const torch::Tensor& f, const torch::Tensor& y);

// The temperature T in [0.05, 20] that minimises the mean over rows of
// −log (1/S) Σ_s softmax(lp_s / T)_{y_i}, the predictive NLL of the mixture of
// S tempered samples, for log class probabilities lp [S, N, C] (float64; a
// sample's log-softmax output, so lp_s / T tempers its logits) and labels y
// [N]: the minimum of a grid of ln T steps of 0.02, refined by golden-section
// search between its neighbours. min_t > 0.05 raises the range's lower end
// (1: the temperature only ever softens the predictive). prior_sd > 0 adds
// the negative log of a N(0, prior_sd²) prior on ln T, (ln T)² / (2 prior_sd² N),
// to the mean: the MAP temperature, which stays finite where every row is
// classified right with margin (there the NLL falls towards 0 as T does).
double fit_sample_temperature(const torch::Tensor& lp, const torch::Tensor& y, double min_t = 0.05,
                              double prior_sd = 0);

// The softmax predictive's temperature of every likelihood `inf` predicts
// with (Inference::predicting_likelihoods), and the first's (1 where the
// likelihood is not a softmax).
void set_temperature(infer::Inference& inf, double t);
double temperature_of(infer::Inference& inf);

class ValidationStopping {
 public:
  // x_val: standardised inputs [N, D]; y_val: targets in original units [N]
  // (float64; class indices for a classifier).
  ValidationStopping(infer::Inference& inf, torch::Tensor x_val, torch::Tensor y_val, const StoppingOptions& o,
                     at::Generator gen);
  // After `steps` steps: measures, keeps the parameters if they are the best
  // so far; true when training should stop now.
  bool measure(int64_t steps);
  // Copies the best parameters back into the model (after training).
  void restore_best();
  // After restore_best(): the Gaussian likelihood's noise variance is set to
  // the value that minimises the held-out rows' predictive NLL at the kept
  // parameters (fit_noise_var, on mc_samples draws of this stopping's stream)
  // with training.stopping_noise refit at any kept step, with frozen only when
  // the kept step lies inside the frozen-noise phase (best_step < min_steps,
  // where the variance is still its initial value, learned from no row).
  // Returns the variance before and after (target's units), or nothing when it
  // was left alone (keep, frozen at a later kept step, another likelihood).
  std::optional<std::pair<double, double>> refit_noise();
  // After restore_best(), a classifier with training.stopping_temperature fit:
  // the softmax predictive's temperature is set to fit_sample_temperature of
  // the held-out rows' predictions at the kept parameters (mc_samples draws
  // of this stopping's stream; soften: at least 1; prior: the MAP under a
  // N(0, 1) prior on ln T). Returns it before and
  // after, or nothing when it was left alone (keep, another likelihood, no
  // measurement).
  std::optional<std::pair<double, double>> refit_temperature();

  int64_t best_step() const { return best_step_; }
  double best_nll() const { return best_nll_; }
  const std::vector<double>& steps() const { return steps_; }
  const std::vector<double>& nll() const { return nll_; }

 private:
  infer::Inference& inf_;
  torch::Tensor x_, y_;
  StoppingOptions o_;
  at::Generator gen_;
  std::vector<torch::Tensor> best_;
  int64_t best_step_ = -1;
  double best_nll_ = 0;
  int64_t since_best_ = 0;
  std::vector<double> steps_, nll_;
};

template <class V>
void StoppingOptions::visit(V& v) {
  v.pick("training.stopping", mode, {"auto", "off", "validation"},
         "validation: hold out training.stopping_fraction of each split's training rows, measure the predictive NLL "
         "on them every training.stopping_every steps, stop after training.stopping_patience measurements without "
         "improvement (the configured steps are then the maximum) and keep the parameters of the best measurement "
         "(train/stopping.h; the record's `stopping` says where); off: the fixed schedule; auto: validation for "
         "every data set that is not one of the papers' benchmarks, whatever its format (a CSV or .npy file, a "
         "folder in the UCI layout, a synthetic problem; splits of 20 training rows or more), off for the "
         "benchmarks (their papers' schedules); chosen on validation rows (results/selection/stopping/). Not for sghmc, "
         "batched splits or a GPU");
  v.acts_only_when("plan.stopping", {"on"});
  v.num("training.stopping_fraction", fraction, 0.01, 0.5, "training.stopping: share of the training rows held out (at least 1 row)");
  v.acts_only_when("plan.stopping", {"on"});
  v.num("training.stopping_every", every, 0, 1e9,
        "training.stopping: steps between measurements on the held-out rows; 0: the budget "
        "(training.steps_fixed_noise + training.steps) / 50, at least 50 (chosen on validation rows, "
        "results/selection/stopping-rule/)");
  v.acts_only_when("plan.stopping", {"on"});
  v.num("training.stopping_patience", patience, 1, 1e6,
        "training.stopping: measurements without improvement before training stops (never inside "
        "training.steps_fixed_noise); with training.stopping_every 0, 20 measurements are 40% of the budget (chosen with it)");
  v.acts_only_when("plan.stopping", {"on"});
  v.num("training.stopping_every_epochs", every_epochs, 0, 1e6,
        "training.stopping with training.stopping_every 0: at most this many epochs (passes over the split's "
        "training rows at training.batch_size) between measurements, at least 50 steps, so a small table is "
        "measured before it overfits whatever the budget; 0: no cap, the budget / 50 alone");
  v.late();
  v.use("training.batch_size", batch_size);
  v.num("training.stopping_mc_samples", mc_samples, 1, 1e6, "training.stopping: Monte Carlo samples of each measurement");
  v.acts_only_when("plan.stopping", {"on"});
  v.pick("training.stopping_noise", noise, {"refit", "frozen", "keep"},
         "training.stopping: the Gaussian noise variance at the kept step. refit: set to the value that minimises "
         "the held-out rows' predictive NLL at the kept parameters, at any kept step; frozen: only when the kept "
         "step lies inside training.steps_fixed_noise, where the variance is still its initial value; keep: the "
         "trained value (the record's stopping.noise_refit says from what to what); refit chosen on validation rows of 13 "
         "sets for all 7 models tried (results/selection/stopping-noise/)");
  v.late();
  v.pick("training.stopping_temperature", temperature, {"keep", "fit", "soften", "prior"},
         "training.stopping with a softmax likelihood: the predictive's temperature at the kept step. fit: every "
         "sample's logits are divided by the T in [0.05, 20] that minimises the held-out stopping rows' "
         "predictive NLL at the kept parameters (the record's stopping.temperature_fit and likelihood.temperature "
         "say which; `whvi predict` applies it); soften: the same with T in [1, 20], so it never sharpens; prior: "
         "the MAP T under a N(0, 1) prior on ln T, which rows the network separates perfectly cannot drive to 0; keep: "
         "T = 1, the trained network as it is; prior chosen on validation rows of 13 classification sets for 5 of "
         "the 7 models tried (results/selection/stopping-temperature/)");
  v.late();
  v.use("training.steps_fixed_noise", min_steps);
  v.use("training.steps", steps);
  v.use("model.kind", model_kind);
  v.use("inference.kind", inference_kind);
  v.use("training.device", device);
  v.use("training.batched_splits", batched_splits);
  v.use("data.dataset", dataset);
}

}  // namespace whvi::train
