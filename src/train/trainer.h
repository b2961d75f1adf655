// Training and prediction for the regression models.
//
// Objective (negative ELBO, on the standardised target scale):
//   loss = (N/m) sum_{i in batch} mean_s -log p(y_i | f_s(x_i)) + KL
// Adam with lr_t = lr_0 (1 + gamma t)^-p (t: the step, from 0, over both
// phases); the first training.steps_fixed_noise steps keep the noise
// variance frozen, then training.steps more optimise it too.
//
// Divergence: every 100 steps the loss and the parameters must be finite and
// no parameter larger than 1e6 in magnitude; at the end the noise variance
// must stay below 100 times the target variance (on the standardised scale a
// constant predictor has 1) and the mean network's training RMSE below 10
// standardised units. A failed check throws whvi::Error naming the step, what
// exploded and the settings that most likely caused it; nothing is written
// as a result.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "config/config.h"
#include "models/regression_model.h"

namespace whvi::train {

// lr_t = lr0 (1 + gamma t)^-power: the paper's decay, t counted from 0 over both phases.
double learning_rate(double lr0, double gamma, double power, int64_t t);

// The negative ELBO of a mini-batch on the standardised scale:
//   (N / B) sum_{i<B} mean_{s<S} -log N(y_i | f_s(x_i), exp(log_noise_var)) + KL,
// one independent draw of the network per (sample, row), from `gen`.
// xb [B, D], yb [B]; N = n_train.
torch::Tensor negative_elbo(models::RegressionModel& model, const torch::Tensor& xb, const torch::Tensor& yb,
                            int64_t n_train, int64_t mc_samples, const at::Generator& gen);

struct TrainStats {
  int64_t steps = 0;
  double seconds = 0;
  double steps_per_second = 0;
  double final_loss = 0;  // last step's negative ELBO (standardised scale, one mini-batch estimate)
  double final_lr = 0;    // the learning rate of the last step
};

// x: [N, D] standardised inputs; y: [N] standardised targets. `label` prefixes
// progress lines. Mini-batches and noise come from `gen` only, so the run is
// deterministic for a given generator state, thread count and machine.
TrainStats train_regression(models::RegressionModel& model, const torch::Tensor& x,
                            const torch::Tensor& y, const config::Config& cfg,
                            const at::Generator& gen, const std::string& label);

// S predictive samples of the mean function in ORIGINAL units: [S, N], float64,
// each an independent draw (from `gen`) of the network's randomness.
torch::Tensor predict_samples(models::RegressionModel& model, const torch::Tensor& x, int64_t S,
                              const at::Generator& gen);

// The settings that most plausibly make training diverge, for error messages:
// "training.lr = 10 (default 0.001)" and every numeric model/likelihood/training
// key that differs from its default by more than 10x.
std::string divergence_suspects(const config::Config& cfg);

// The noise variance in original units.
double noise_var_original(models::RegressionModel& model);

}  // namespace whvi::train
