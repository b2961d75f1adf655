// SWAG (model.kind swag, infer/swag.cpp): its Gaussian's moments are those of
// its snapshots (checked from the stored deviations, independently of how the
// fit accumulated them), its predictive draws have that Gaussian's moments in
// function space, and on a linear-Gaussian model the snapshots' mean is the
// closed-form MAP (ridge regression) to within the phase's spread.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "common/draws.h"
#include "common/rng.h"
#include "experiment/resolve.h"
#include "closed_form_helpers.h"
#include "helpers.h"
#include "infer/inference.h"

using whvi::testing::cfg_with;
using whvi::testing::error_of;
using whvi::testing::state_of;

using namespace whvi;

namespace {

// A swag method of `sets` (float64) trained `steps` steps on (x, y), then fitted.
std::unique_ptr<infer::Inference> swag(const std::vector<std::string>& sets, const torch::Tensor& x,
                                       const torch::Tensor& y, int64_t steps) {
  std::vector<std::string> all = {"model.kind=swag"};
  all.insert(all.end(), sets.begin(), sets.end());
  return whvi::testing::fitted_after_steps(all, x, y, 0, steps);
}

// The network's weights at θ̄ for a network without hidden layers: [w; b] as one vector.
torch::Tensor mean_weights(infer::Inference& inf) {
  auto p = inf.model().layers().back()->named_parameters();
  return torch::cat({p["w"].detach().reshape({-1}), p["b"].detach().reshape({-1})}).to(torch::kFloat64);
}

}  // namespace

// With rank = snapshots every snapshot's deviation is stored: they sum to zero
// (θ̄ is their mean) and the diagonal variance is their mean square.
TEST(Swag, MomentsAreTheSnapshotsMoments) {
  torch::manual_seed(3);
  const auto x = torch::randn({60, 3}, torch::kFloat64);
  const auto y = x.select(1, 0) - 0.5 * x.select(1, 2) + 0.3 * torch::randn({60}, torch::kFloat64);
  auto inf = swag({"model.depth=1", "model.width=5", "model.swag.snapshots=6", "model.swag.rank=6",
                   "training.batch_size=16", "training.lr=0.01"},
                  x, y, 50);
  const auto d = state_of(*inf, "swag.deviations");
  const auto sd = state_of(*inf, "swag.sqrt_diag");
  ASSERT_EQ(d.sizes(), (torch::IntArrayRef{6, sd.size(0)}));
  EXPECT_LT(d.sum(0).abs().max().item<double>(), 1e-12);
  EXPECT_TRUE(torch::allclose(sd.square(), d.square().mean(0), 1e-9, 1e-14));
  EXPECT_GT(sd.max().item<double>(), 0.0);  // the phase moved the weights
  EXPECT_EQ(inf->learned().front().second, 6.0);
  // the predictive's batched forward pass is the network's own: with the spread
  // made negligible (one deviation of 1e-300), every draw is the network at θ̄
  sd.zero_();
  d.zero_();
  d[0][0] = 1e-300;
  const auto f = inf->predict(x, 3, make_generator(6));
  ASSERT_EQ(f.sizes(), (torch::IntArrayRef{3, 60}));
  for (int64_t s = 0; s < 3; ++s)
    EXPECT_TRUE(torch::allclose(f[s], inf->mean_standardized(x), 1e-12, 1e-12)) << s;
}

// The predictive draws of the mean function are φ(x)ᵀθ with θ ~ N(θ̄, Σ),
// Σ = ½ diag(s²) + D Dᵀ / (2 (K − 1)), for a network without hidden layers
// (φ = [x, 1]; weights ordered [W row by row, b], W [D, 1]): their mean and
// variance at two rows within 5 standard errors (40,000 draws).
TEST(Swag, PredictiveDrawsHaveTheGaussiansMoments) {
  torch::manual_seed(5);
  const auto x = torch::randn({40, 2}, torch::kFloat64);
  const auto y = x.select(1, 1) + 0.3 * torch::randn({40}, torch::kFloat64);
  auto inf = swag({"model.depth=0", "model.swag.snapshots=8", "model.swag.rank=4", "training.batch_size=8",
                   "training.lr=0.05"},
                  x, y, 30);
  const auto d = state_of(*inf, "swag.deviations");
  const auto s = state_of(*inf, "swag.sqrt_diag");
  const auto cov = torch::diag(0.5 * s.square()) + d.t().mm(d) / (2.0 * (d.size(0) - 1));
  const auto xs = x.narrow(0, 0, 2);
  const auto phi = torch::cat({xs, torch::ones({2, 1}, torch::kFloat64)}, 1);
  const auto mean = phi.mv(mean_weights(*inf));
  const auto var = (phi.mm(cov) * phi).sum(1);
  const int64_t n = 40000;
  const auto f = inf->predict(xs, n, make_generator(4));
  ASSERT_EQ(f.sizes(), (torch::IntArrayRef{n, 2}));
  for (int64_t i = 0; i < 2; ++i) {
    const double v = var[i].item<double>();
    ASSERT_GT(v, 0.0);
    EXPECT_NEAR(f.select(1, i).mean().item<double>(), mean[i].item<double>(), 5 * std::sqrt(v / n));
    EXPECT_NEAR(f.select(1, i).var().item<double>(), v, 5 * v * std::sqrt(2.0 / (n - 1)));
  }
  // the network is left at θ̄ after predicting
  EXPECT_TRUE(torch::allclose(inf->mean_standardized(xs), mean, 1e-10, 1e-12));
  // draws kept for the next call from the same generator state (`whvi predict`'s rows)
  // give the same numbers and leave the generator where drawing leaves it; a changed
  // Gaussian is drawn anew
  auto g1 = make_generator(9), g2 = make_generator(9);
  const auto a = inf->predict(xs, 5, g1);
  const auto b = inf->predict(xs, 5, g2);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_TRUE(torch::equal(whvi::randn({3}, g1, torch::kFloat64), whvi::randn({3}, g2, torch::kFloat64)));
  s.mul_(2);
  EXPECT_FALSE(torch::equal(inf->predict(xs, 5, make_generator(9)), a));
}

// A linear model with the gaussian likelihood at a fixed noise variance σ²
// (every step in the frozen-noise phase) and prior N(0, v): the MAP is ridge
// regression, θ* = (ΦᵀΦ/σ² + I/v)⁻¹ Φᵀy/σ². The snapshots of the
// constant-learning-rate phase average to it, within 4 of the snapshots'
// standard deviations over √T (a loose bound: the snapshots are correlated).
TEST(Swag, SnapshotMeanOfALinearModelIsTheRidgeSolution) {
  torch::manual_seed(8);
  const auto x = torch::randn({200, 3}, torch::kFloat64);
  const auto y = x.mv(torch::tensor({1.0, -2.0, 0.5}, torch::kFloat64)) + 0.4 +
                 0.5 * torch::randn({200}, torch::kFloat64);
  const double noise = std::exp(-1.0), v = 1.0;
  auto inf = swag({"model.depth=0", "likelihood.init_log_noise_var=-1", "training.steps_fixed_noise=3000",
                   "training.steps=0", "model.sghmc.prior_var=1", "model.swag.snapshots=40", "model.swag.rank=10",
                   "training.batch_size=20", "training.lr=0.01"},
                  x, y, 3000);
  const auto phi = torch::cat({x, torch::ones({200, 1}, torch::kFloat64)}, 1);
  const auto ridge = torch::linalg_solve(phi.t().mm(phi) / noise + torch::eye(4, torch::kFloat64) / v,
                                         phi.t().mv(y) / noise);
  const auto sd = state_of(*inf, "swag.sqrt_diag");
  const auto got = mean_weights(*inf);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_NEAR(got[i].item<double>(), ridge[i].item<double>(), 4 * sd[i].item<double>() / std::sqrt(40.0) + 1e-3)
        << "weight " << i;
  // the noise stayed where it was frozen
  EXPECT_NEAR(inf->likelihood().parameters().front().item<double>(), -1.0, 1e-12);
}

// Refused before training, naming the fix.
TEST(Swag, RefusesWhatItCannotFit) {
  const auto make = [](std::vector<std::string> sets) {
    sets.push_back("model.kind=swag");
    return error_of([&] { experiment::make_inference(3, cfg_with(sets), 0, 1, make_generator(1)); });
  };
  EXPECT_NE(make({"model.swag.snapshots=5", "model.swag.rank=6"}).find("lower the rank"), std::string::npos);
  EXPECT_NE(make({"training.engine=fused"}).find("training.engine"), std::string::npos);
}
