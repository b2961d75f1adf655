// The heteroscedastic Gaussian likelihood against closed forms and finite
// differences, its mixture metrics against numerical integration and against
// the homoscedastic forms they generalise, and a network that learns an
// input-dependent noise through the likelihood seam.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <tuple>

#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "train/loop.h"
#include "train/metrics.h"

using namespace whvi;

namespace {
config::Config cfg_with(const std::vector<std::string>& sets) { return config::Config::parse("", "test", sets); }

double log_normal(double y, double m, double v) { return -0.5 * (std::log(2 * M_PI * v) + (y - m) * (y - m) / v); }
}  // namespace

// -Σ log N(y; mu, e^s) term by term, and its gradient against central differences.
TEST(HeteroGaussian, NllAndGradientMatchTheClosedForm) {
  likelihoods::HeteroGaussianLikelihood lik(0.0, 1.0);
  torch::manual_seed(1);
  const auto f = torch::randn({6, 2}, torch::kFloat64).requires_grad_(true);
  const auto y = torch::randn({6}, torch::kFloat64);
  const auto nll = lik.nll_sum(f, y);
  double want = 0;
  for (int i = 0; i < 6; ++i)
    want -= log_normal(y[i].item<double>(), f[i][0].item<double>(), std::exp(f[i][1].item<double>()));
  EXPECT_NEAR(nll.item<double>(), want, 1e-12);
  const auto g = torch::autograd::grad({nll}, {f})[0];
  const double h = 1e-6;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 2; ++j) {
      auto fp = f.detach().clone(), fm = f.detach().clone();
      fp[i][j] += h;
      fm[i][j] -= h;
      const double fd = (lik.nll_sum(fp, y).item<double>() - lik.nll_sum(fm, y).item<double>()) / (2 * h);
      EXPECT_NEAR(g[i][j].item<double>(), fd, 1e-6) << i << "," << j;
    }
}

// In original units the density is the standardised one divided by y_std.
TEST(HeteroGaussian, OriginalUnitsAreAChangeOfVariables) {
  const double ym = 3.0, ys = 2.5;
  likelihoods::HeteroGaussianLikelihood lik(ym, ys);
  const auto f = torch::tensor({{0.3, -0.7}, {-1.2, 0.4}}, torch::kFloat64);
  const auto o = lik.to_original(f.unsqueeze(0))[0];  // [2, 2]
  for (int i = 0; i < 2; ++i) {
    const double ys_row = 0.9 - i;  // a target on the standardised scale
    const double yo = ys_row * ys + ym;
    const double std_lp = log_normal(ys_row, f[i][0].item<double>(), std::exp(f[i][1].item<double>()));
    const double orig_lp = log_normal(yo, o[i][0].item<double>(), std::exp(o[i][1].item<double>()));
    EXPECT_NEAR(orig_lp, std_lp - std::log(ys), 1e-12);
  }
}

// Mixture metrics with a variance per component: the predictive density
// written out, CRPS against numerical integration of (F(t) - 1{t >= y})^2,
// and the scalar-variance functions when every variance is the same.
TEST(HeteroGaussian, MixtureMetricsMatchIndependentReferences) {
  torch::manual_seed(2);
  const int64_t S = 5, N = 4;
  const auto f = torch::randn({S, N}, torch::kFloat64);
  const auto var = torch::rand({S, N}, torch::kFloat64) * 2 + 0.05;
  const auto y = torch::randn({N}, torch::kFloat64);
  const auto m = train::regression_metrics(f, y, var);
  double mnll = 0;
  for (int64_t n = 0; n < N; ++n) {
    double p = 0;
    for (int64_t s = 0; s < S; ++s)
      p += std::exp(log_normal(y[n].item<double>(), f[s][n].item<double>(), var[s][n].item<double>())) / S;
    mnll -= std::log(p) / N;
  }
  EXPECT_NEAR(m.mnll, mnll, 1e-12);
  const auto crps = train::mixture_crps(f, y, var);
  for (int64_t n = 0; n < N; ++n) {
    const auto cdf = [&](double t) {
      double c = 0;
      for (int64_t s = 0; s < S; ++s)
        c += 0.5 * std::erfc(-(t - f[s][n].item<double>()) / std::sqrt(2 * var[s][n].item<double>())) / S;
      return c;
    };
    // midpoint rule on each side of y (the integrand jumps there)
    const double yn = y[n].item<double>();
    double integral = 0;
    for (const auto& [lo, hi, step] : {std::tuple<double, double, double>{yn - 30, yn, 0.0},
                                       std::tuple<double, double, double>{yn, yn + 30, 1.0}}) {
      const int K = 60000;
      const double dt = (hi - lo) / K;
      for (int i = 0; i < K; ++i) {
        const double e = cdf(lo + (i + 0.5) * dt) - step;
        integral += e * e * dt;
      }
    }
    EXPECT_NEAR(crps[n].item<double>(), integral, 1e-5) << n;
  }
  const double v = 0.7;
  const auto a = train::regression_metrics(f, y, v), b = train::regression_metrics(f, y, torch::full_like(f, v));
  EXPECT_NEAR(a.mnll, b.mnll, 1e-12);
  EXPECT_NEAR(a.mnll_paper, b.mnll_paper, 1e-12);
  EXPECT_NEAR(a.crps, b.crps, 1e-12);
  EXPECT_EQ(a.coverage_95, b.coverage_95);
  EXPECT_NEAR(a.calibration_error, b.calibration_error, 1e-12);
}

TEST(HeteroGaussian, IsRegisteredAndRefusedWhereItCannotWork) {
  const auto reg = likelihoods::registered_likelihoods();
  EXPECT_NE(std::find(reg.begin(), reg.end(), "hetero-gaussian"), reg.end());
  auto lik = likelihoods::make_likelihood(cfg_with({"likelihood.kind=hetero-gaussian"}), 0, 1);
  EXPECT_EQ(lik->out_dim(), 2);
  EXPECT_TRUE(std::isnan(lik->noise_var_original()));
  std::string msg;
  try {
    infer::make_inference(2, cfg_with({"likelihood.kind=hetero-gaussian", "model.kind=sghmc"}), 0, 1,
                          make_generator(1));
  } catch (const std::exception& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("set likelihood.kind: gaussian"), std::string::npos) << msg;
  try {
    likelihoods::make_likelihood(cfg_with({"likelihood.kind=hetero-gaussian"}), 0, 1, 10);
    ADD_FAILURE() << "classification data accepted";
  } catch (const Error&) {
  }
}

// Noise sd 0.05 for x < 0 and 0.5 for x > 0: a deterministic network with this
// likelihood (one-member ensemble), trained through the seam, predicts a noise
// variance several times larger on the right than on the left.
TEST(HeteroGaussian, ANetworkLearnsInputDependentNoise) {
  set_threads(1);
  const int64_t N = 400;
  const auto gen = make_generator(7);
  const auto x = torch::rand({N, 1}, gen, torch::kFloat64) * 2 - 1;
  const auto sd = torch::where(x.squeeze(1) < 0, torch::full({N}, 0.05, torch::kFloat64),
                               torch::full({N}, 0.5, torch::kFloat64));
  const auto y = (2 * x.squeeze(1)).sin() + sd * torch::randn({N}, gen, torch::kFloat64);
  const auto cfg = cfg_with({"model.kind=ensemble", "ensemble.members=1", "likelihood.kind=hetero-gaussian",
                             "model.width=32", "training.steps=3000", "training.steps_fixed_noise=0",
                             "training.lr=0.005", "training.log_every=1000000", "training.dtype=float64"});
  auto inf = infer::make_inference(1, cfg, 0.0, 1.0, make_generator(8));
  inf->to(torch::kFloat64);
  train::train(*inf, x, y, cfg, make_generator(9), "hetero");
  const auto grid = torch::tensor({{-0.6}, {-0.3}, {0.3}, {0.6}}, torch::kFloat64);
  const auto f = inf->predict(grid, 1, make_generator(10));  // [1, 4, 2]: mean, log variance
  ASSERT_EQ(f.dim(), 3);
  const auto v = f[0].select(1, 1).exp();
  const double left = (v[0] + v[1]).item<double>() / 2, right = (v[2] + v[3]).item<double>() / 2;
  EXPECT_GT(right / left, 10.0) << left << " " << right;  // the truth: 100
  EXPECT_LT(right, 1.0);
  const auto m = inf->likelihood().evaluate(f, (2 * grid.squeeze(1)).sin());
  EXPECT_TRUE(std::isfinite(m.metric("mnll")));
}
