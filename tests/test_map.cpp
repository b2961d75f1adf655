// The MAP network (model.kind map, infer/map.cpp) against closed forms: without
// hidden layers, with the gaussian likelihood's noise held fixed and full
// batches, its weights reach ridge regression's (ΦᵀΦ/σ² + I/v)⁻¹Φᵀy/σ² with
// the prior, and least squares' without; its predictive draws no weights (one
// sample, the network at its MAP weights).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "common/rng.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "infer/inference.h"

using whvi::testing::cfg_with;

using namespace whvi;

namespace {

// A map method of `sets` (float64, no hidden layers, noise frozen at exp(-1.5))
// trained `steps` full-batch steps on (x, y).
std::unique_ptr<infer::Inference> trained_map(const std::vector<std::string>& sets, const torch::Tensor& x,
                                              const torch::Tensor& y, int64_t steps) {
  std::vector<std::string> all = {"model.kind=map", "model.depth=0", "training.dtype=float64",
                                  "likelihood.init_log_noise_var=-1.5", "training.steps_fixed_noise=1000000",
                                  "training.lr=0.01"};
  all.insert(all.end(), sets.begin(), sets.end());
  auto inf = experiment::make_inference(x.size(1), cfg_with(all), 0, 1, make_generator(1, 0, Stream::kInit));
  inf->to(torch::kFloat64);
  inf->begin(x.size(0), steps, make_generator(1));
  for (int64_t t = 0; t < steps; ++t) inf->step(x, y, t, make_generator(2 + static_cast<uint64_t>(t)));
  inf->end();
  return inf;
}

// The output layer's [w; b] as one vector.
torch::Tensor weights(infer::Inference& inf) {
  auto p = inf.model().layers().back()->named_parameters();
  return torch::cat({p["w"].detach().reshape({-1}), p["b"].detach().reshape({-1})}).to(torch::kFloat64);
}

torch::Tensor design(const torch::Tensor& x) { return torch::cat({x, torch::ones({x.size(0), 1}, x.options())}, 1); }

}  // namespace

// With the prior N(0, v) on every weight and bias, the minimum of
// Σ(y - Φθ)²/(2σ²) + θᵀθ/(2v) is ridge regression's; without it, least squares'.
// v = 0.05 moves the weights far from least squares', so a prior left out,
// scaled by the batch or read as a precision is caught.
TEST(Map, LinearGaussianMapIsRidgeRegression) {
  torch::manual_seed(5);
  const auto x = torch::randn({20, 3}, torch::kFloat64);
  const auto y = x.mv(torch::tensor({1.0, -0.5, 0.25}, torch::kFloat64)) + 0.3 + 0.4 * torch::randn({20}, torch::kFloat64);
  const double noise = std::exp(-1.5), v = 0.05;
  const auto phi = design(x);
  const auto rhs = phi.t().mv(y) / noise;
  const auto ridge = torch::linalg_solve(phi.t().mm(phi) / noise + torch::eye(4, torch::kFloat64) / v, rhs);
  const auto ls = torch::linalg_solve(phi.t().mm(phi), phi.t().mv(y));
  ASSERT_GT((ridge - ls).abs().max().item<double>(), 0.1);  // the prior matters here

  auto with_prior = trained_map({"model.sghmc.prior_var=0.05"}, x, y, 4000);
  EXPECT_STREQ(with_prior->method(), "map");
  EXPECT_TRUE(torch::allclose(weights(*with_prior), ridge, 0, 2e-3)) << weights(*with_prior) << ridge;
  auto without = trained_map({"model.sghmc.prior_var=0.05", "model.map.prior=false"}, x, y, 4000);
  EXPECT_TRUE(torch::allclose(weights(*without), ls, 0, 2e-3)) << weights(*without) << ls;
}

// The predictive draws nothing: asked for any S samples it gives one, the
// network's outputs at the MAP weights, the same for every generator.
TEST(Map, PredictiveDrawsNoWeights) {
  torch::manual_seed(6);
  const auto x = torch::randn({30, 2}, torch::kFloat64);
  const auto y = torch::sin(x.select(1, 0)) + 0.1 * torch::randn({30}, torch::kFloat64);
  auto inf = trained_map({"model.depth=1", "model.width=8"}, x, y, 50);
  const auto f = inf->predict(x, 6, make_generator(9));
  ASSERT_EQ(f.size(0), 1);
  EXPECT_TRUE(torch::equal(f, inf->predict(x, 64, make_generator(10))));
  EXPECT_TRUE(torch::allclose(f[0].to(torch::kFloat64),
                              inf->likelihood().to_original(inf->mean_standardized(x)).to(torch::kFloat64), 1e-12, 1e-12));
}
