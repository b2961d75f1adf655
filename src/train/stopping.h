// Stopping on validation rows (training.stopping): a share of the training
// rows is held out before training, the model's predictive NLL on them is
// measured every `every` steps with Monte Carlo draws from a stream of their
// own, the parameters of the best measurement are kept, and training stops
// after `patience` measurements without improvement (or at the configured
// number of steps, then the maximum). The best parameters are restored at the
// end, so the trained model is the one that predicted the held-out rows best.
//
// auto (the default) stops on validation for a user's CSV file and for the
// synthetic problems, on splits of at least kMinRows training rows, and keeps
// the fixed schedule of the named data sets (the papers' protocols); the
// choice was made on validation rows (results/selection/stopping/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.h"
#include "infer/inference.h"

namespace whvi::train {

// auto stops on validation only on splits with at least this many training rows.
constexpr int64_t kMinRows = 20;

struct StoppingOptions {
  bool on = false;          // training.stopping resolved for this data set and method
  bool asked = false;       // training.stopping: validation (auto leaves splits of under kMinRows rows alone)
  double fraction = 0.1;    // training.stopping_fraction: share of the training rows held out
  int64_t every = 500;      // training.stopping_every: steps between measurements
  int64_t patience = 10;    // training.stopping_patience: measurements without improvement before stopping
  int64_t mc_samples = 32;  // training.stopping_mc_samples
  int64_t min_steps = 0;    // never stop before this step (the frozen-noise phase)
  static StoppingOptions from(const config::Config& cfg);
};

// Whether training.stopping acts for cfg: "validation", or "auto" on a CSV
// file or a synthetic problem. Throws when it is asked for where it cannot act (SGHMC, batched
// splits). `why_off` receives the reason when auto resolves to off.
bool stopping_on(const config::Config& cfg, std::string* why_off = nullptr);

// The rows of a training split, carved into those that train and those that
// stop training: a random `fraction` of the n rows (at least 1; at least 2
// left to train) drawn from `seed`. Returned as sorted row numbers.
struct Holdout {
  std::vector<int64_t> fit, validation;
};
Holdout carve_holdout(int64_t n, double fraction, uint64_t seed);

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

}  // namespace whvi::train
