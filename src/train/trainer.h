// Training and prediction for the regression models.
//
// Objective (negative ELBO, on the standardised target scale):
//   loss = (N/m) sum_{i in batch} mean_s -log p(y_i | f_s(x_i)) + KL
// Adam with lr_t = lr_0 (1 + gamma t)^-p (t: the step, from 0, over both
// phases); the first training.steps_fixed_noise steps keep the noise
// variance frozen, then training.steps more optimise it too.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "config/config.h"
#include "models/regression_model.h"

namespace whvi::train {

struct TrainStats {
  int64_t steps = 0;
  double seconds = 0;
  double steps_per_second = 0;
  double final_loss = 0;  // last step's negative ELBO (standardised scale, one mini-batch estimate)
};

// x: [N, D] standardised inputs; y: [N] standardised targets. `label` prefixes
// progress lines. Deterministic for a given seed, thread count and machine.
TrainStats train_regression(models::RegressionModel& model, const torch::Tensor& x,
                            const torch::Tensor& y, const config::Config& cfg, uint64_t seed,
                            const std::string& label);

// S predictive samples of the mean function in ORIGINAL units: [S, N], float64.
torch::Tensor predict_samples(models::RegressionModel& model, const torch::Tensor& x, int64_t S);

// The noise variance in original units.
double noise_var_original(models::RegressionModel& model);

}  // namespace whvi::train
