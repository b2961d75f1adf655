// The WHVI paper's Fig. 11 (supplement): how well the structure
// S1 H diag(g) H S2 (H the orthonormal Walsh-Hadamard matrix, S1, S2 diagonal)
// can approximate a dense D x D matrix with i.i.d. U(-1, 1) entries. For each
// D and repetition, s1, g, s2 are fitted by minimising the RMSE with Adam
// (lr, steps below); the minimum RMSE reached is recorded. Predicting 0
// everywhere has RMSE sqrt(1/3) ~ 0.577, the reference line of the figure.
//
// W is formed with the FWHT (O(D² log D) per step, never the D³ product):
// M = H diag(g) H is the transform of the columns of diag(g) H.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace whvi::analysis {

struct ApproximationOptions {
  std::vector<int64_t> dims = {4, 8, 16, 32, 64, 128, 256, 512, 1024};
  int64_t repeats = 20;
  int64_t steps = 2000;
  double lr = 0.01;
  uint64_t seed = 0;
};

// W = diag(s1) H diag(g) H diag(s2) with the orthonormal H, [D, D] (float64).
torch::Tensor structured_matrix(const torch::Tensor& s1, const torch::Tensor& g, const torch::Tensor& s2);

// Fits s1, g, s2 to `target` [D, D]; returns the lowest RMSE seen (each step's
// RMSE is that of the parameters before the step). `gen` draws the initial values.
double fit_structure(const torch::Tensor& target, int64_t steps, double lr, const at::Generator& gen);

// The whole study: {"dims": [{"d", "rmse": [...], "median"}...], settings, environment}.
nlohmann::json run_approximation(const ApproximationOptions& o);

}  // namespace whvi::analysis
