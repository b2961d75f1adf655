// The mixture density likelihood (likelihood.kind: mixture, src/likelihoods/mixture.cpp)
// against the Gaussian it reduces to, numerical integration of its density,
// its own CDF at its interval's ends, and a bimodal problem a single
// Gaussian cannot fit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "infer/inference.h"
#include "likelihoods/hetero_gaussian.h"
#include "likelihoods/likelihood.h"

using whvi::testing::cfg_with;

using namespace whvi;


namespace {

std::shared_ptr<likelihoods::Likelihood> mixture(int64_t K, double y_mean = 0, double y_std = 1) {
  return experiment::make_likelihood(
      cfg_with({"likelihood.kind=mixture", "likelihood.mixture.components=" + std::to_string(K)}), y_mean, y_std);
}

// A random mixture prediction in original units [S, N, 3K]: normalised log
// weights, means, log variances.
torch::Tensor random_prediction(int64_t S, int64_t N, int64_t K, uint64_t seed) {
  const auto gen = make_generator(seed);
  const auto logw = torch::log_softmax(torch::randn({S, N, K}, gen, torch::kFloat64), -1);
  const auto mu = 2.0 * torch::randn({S, N, K}, gen, torch::kFloat64);
  const auto logv = torch::rand({S, N, K}, gen, torch::kFloat64) * 3.0 - 2.5;  // sd from 0.29 to 1.3
  return torch::cat({logw, mu, logv}, -1);
}

// The predictive density of prediction f (row n) at z, summed term by term.
double density(const torch::Tensor& f, int64_t n, double z) {
  const int64_t S = f.size(0), K = f.size(2) / 3;
  const auto a = f.accessor<double, 3>();
  double p = 0;
  for (int64_t s = 0; s < S; ++s)
    for (int64_t k = 0; k < K; ++k) {
      const double w = std::exp(a[s][n][k]), m = a[s][n][K + k], v = std::exp(a[s][n][2 * K + k]);
      p += w / S * std::exp(-0.5 * (z - m) * (z - m) / v) / std::sqrt(2 * M_PI * v);
    }
  return p;
}

}  // namespace

// (a) K = 1 is the Gaussian: the training term equals Σ -log N(y; μ, σ²) with the
// mean and variance the likelihood itself reports (to_original with y_mean 0,
// y_std 1), and the hetero-gaussian likelihood's term on them. Catches a wrong
// normalising constant, a log weight that is not normalised (log_softmax), a
// log variance or mean used in the loss other than the one reported.
TEST(Mixture, OneComponentIsTheGaussian) {
  auto lik = mixture(1);
  EXPECT_EQ(lik->out_dim(), 3);
  const auto gen = make_generator(1);
  const auto f = torch::randn({50, 3}, gen, torch::kFloat64) * 2;
  const auto y = torch::randn({50}, gen, torch::kFloat64) * 3;
  const auto o = lik->to_original(f);
  ASSERT_EQ(o.sizes(), f.sizes());
  EXPECT_LT(o.select(1, 0).abs().max().item<double>(), 1e-15);  // one component: log weight 0
  const auto mu = o.select(1, 1), s = o.select(1, 2);
  double ref = 0;
  for (int64_t i = 0; i < 50; ++i) {
    const double m = mu[i].item<double>(), v = std::exp(s[i].item<double>()), t = y[i].item<double>();
    ref += 0.5 * (std::log(2 * M_PI * v) + (t - m) * (t - m) / v);
  }
  const double nll = lik->nll_sum(f, y).item<double>();
  EXPECT_NEAR(nll, ref, 1e-12 * std::fabs(ref));
  likelihoods::HeteroGaussianLikelihood hetero(0, 1);
  EXPECT_NEAR(nll, hetero.nll_sum(torch::stack({mu, s}, 1), y).item<double>(), 1e-12 * std::fabs(ref));
  // and its metrics are the Gaussian mixture's over samples (metrics.h)
  const auto fs = torch::randn({4, 50, 3}, gen, torch::kFloat64);
  const auto os = lik->to_original(fs);
  const auto e = lik->evaluate(os, y);
  const auto g = metrics::regression_metrics(os.select(2, 1), y, os.select(2, 2).exp());
  EXPECT_NEAR(e.metric("mnll"), g.mnll, 1e-12 * std::fabs(g.mnll));
  EXPECT_NEAR(e.metric("mnll_paper"), g.mnll_paper, 1e-12 * std::fabs(g.mnll_paper));
  EXPECT_NEAR(e.metric("crps"), g.crps, 1e-12 * g.crps);
  EXPECT_NEAR(e.metric("rmse"), g.rmse, 1e-12 * g.rmse);
  EXPECT_EQ(e.metric("coverage_90"), g.coverage_90);
}

// (b) A random 3-component mixture over 2 samples: MNLL against the density
// summed term by term, the CDF and the CRPS against the trapezoid rule on a
// fine grid of that density (CRPS = ∫ (F(z) - 1{z >= y})² dz), the RMSE against
// the mean ∫ z p(z) dz. Catches a mis-weighted component or sample (weights not
// divided by S), a wrong abs-moment formula or a missing cross-sample term in the
// CRPS, and a CDF that is not the mixture's.
TEST(Mixture, MetricsMatchNumericalIntegration) {
  auto lik = mixture(3);
  const int64_t S = 2, N = 3, K = 3;
  const auto f = random_prediction(S, N, K, 3);
  const auto y = torch::tensor({-1.0, 0.3, 2.5}, torch::kFloat64);
  const auto e = lik->evaluate(f, y);
  const auto cdf = lik->predictive_cdf(f, y);
  const double lo = -25, hi = 25;
  const int64_t G = 100000;
  double mnll = 0, crps = 0, se = 0;
  for (int64_t n = 0; n < N; ++n) {
    const double yn = y[n].item<double>();
    mnll -= std::log(density(f, n, yn)) / N;
    // trapezoid rule: the total mass, the mean, and the CDF at y (a grid that ends at y)
    auto trapezoid = [&](double a, double b, auto g) {
      const double dz = (b - a) / G;
      double sum = 0.5 * (g(a) + g(b));
      for (int64_t i = 1; i < G; ++i) sum += g(a + i * dz);
      return sum * dz;
    };
    const auto p = [&](double z) { return density(f, n, z); };
    EXPECT_NEAR(trapezoid(lo, hi, p), 1.0, 1e-9) << n;
    const double mean = trapezoid(lo, hi, [&](double z) { return z * density(f, n, z); });
    const double F_at_y = trapezoid(lo, yn, p);
    EXPECT_NEAR(cdf[n].item<double>(), F_at_y, 1e-8) << n;
    se += (mean - yn) * (mean - yn) / N;
    // CRPS = ∫ (F(z) - 1{z >= y})² dz with F(z) = ∫_lo^z p on the same grid, on
    // either side of y (the integrand jumps there)
    for (const double side : {0.0, 1.0}) {
      const double a = side == 0 ? lo : yn, b = side == 0 ? yn : hi, dz = (b - a) / G;
      double F = side == 0 ? 0.0 : F_at_y, prev_p = p(a), prev_e = (F - side) * (F - side), integral = 0;
      for (int64_t i = 1; i <= G; ++i) {
        const double cur_p = p(a + i * dz);
        F += 0.5 * (prev_p + cur_p) * dz;
        const double cur_e = (F - side) * (F - side);
        integral += 0.5 * (prev_e + cur_e) * dz;
        prev_p = cur_p, prev_e = cur_e;
      }
      crps += integral / N;
    }
  }
  EXPECT_NEAR(e.metric("mnll"), mnll, 1e-12 * std::fabs(mnll));
  EXPECT_NEAR(e.metric("crps"), crps, 1e-6 * crps);
  EXPECT_NEAR(e.metric("rmse"), std::sqrt(se), 1e-7);
  // mnll_paper: the mean over samples of each sample's own -log p
  double paper = 0;
  for (int64_t s = 0; s < S; ++s)
    for (int64_t n = 0; n < N; ++n) paper -= std::log(density(f.narrow(0, s, 1), n, y[n].item<double>())) / (S * N);
  EXPECT_NEAR(e.metric("mnll_paper"), paper, 1e-12 * std::fabs(paper));
}

// Above S K = 512 the CRPS's cross-sample pairs are estimated from 255 / K
// cyclic shifts: within 1% of the exact value (the same mixture with the
// component axis unrolled into samples of one component each is exact through
// metrics::mixture_crps only for equal weights, so the reference here is the
// integral). Catches a wrong scale on the estimated pairs ((S - 1) / shifts).
TEST(Mixture, CrpsEstimateForManySamplesIsClose) {
  auto lik = mixture(3);
  const int64_t S = 300, N = 2, K = 3;
  const auto f = random_prediction(S, N, K, 5);
  const auto y = torch::tensor({0.1, 1.7}, torch::kFloat64);
  const double crps = lik->evaluate(f, y).metric("crps");
  // the exact CRPS from the CDF on a grid (midpoint rule on each side of y)
  double ref = 0;
  for (int64_t n = 0; n < N; ++n) {
    const double yn = y[n].item<double>();
    const int64_t G = 4000;
    for (const double side : {-1.0, 1.0}) {
      const double a = side < 0 ? yn - 20 : yn, b = side < 0 ? yn : yn + 20, dz = (b - a) / G;
      const auto z = torch::linspace(a + dz / 2, b - dz / 2, G, torch::kFloat64);
      const auto F = lik->predictive_cdf(f.select(1, n).unsqueeze(1).expand({S, G, 3 * K}), z);
      ref += ((F - (side < 0 ? 0.0 : 1.0)).square().sum().item<double>() * dz) / N;
    }
  }
  EXPECT_NEAR(crps, ref, 0.01 * ref);
}

// (c) The interval the mixture reports holds `mass` of it: its CDF at the ends
// is (1 - mass)/2 and (1 + mass)/2, also for a bimodal row whose interval spans
// the gap between two far components. Catches an interval from the wrong
// distribution (a single Gaussian of the mixture's moments, the samples' means)
// or a bisection that stops short.
TEST(Mixture, IntervalEndsAreTheMixtureQuantiles) {
  auto lik = mixture(3);
  auto f = random_prediction(4, 5, 3, 7);
  // row 0: two far, narrow components of equal weight in every sample
  for (int64_t s = 0; s < 4; ++s) {
    f[s][0] = torch::tensor({std::log(0.5), std::log(0.5), -40.0, -5.0, 5.0, 0.0, std::log(0.01), std::log(0.01), 0.0},
                            torch::kFloat64);
  }
  for (const double mass : {0.5, 0.9, 0.95}) {
    const auto [lo, hi] = lik->predictive_interval(f, mass);
    const auto clo = lik->predictive_cdf(f, lo), chi = lik->predictive_cdf(f, hi);
    for (int64_t n = 0; n < 5; ++n) {
      EXPECT_NEAR(clo[n].item<double>(), (1 - mass) / 2, 1e-9) << mass << " " << n;
      EXPECT_NEAR(chi[n].item<double>(), (1 + mass) / 2, 1e-9) << mass << " " << n;
    }
    // bimodal row: the lower end lies in the lower component, the upper in the upper one
    EXPECT_LT(lo[0].item<double>(), -4.5);
    EXPECT_GT(hi[0].item<double>(), 4.5);
  }
  // the interval is in original units: shifting and scaling the targets moves it
  auto moved = mixture(3, 10.0, 2.0);
  const auto raw = torch::randn({2, 3, 9}, make_generator(8), torch::kFloat64);
  const auto [a, b] = lik->predictive_interval(lik->to_original(raw), 0.9);
  const auto [c, d] = moved->predictive_interval(moved->to_original(raw), 0.9);
  EXPECT_LT((c - (2 * a + 10)).abs().max().item<double>(), 1e-8);
  EXPECT_LT((d - (2 * b + 10)).abs().max().item<double>(), 1e-8);
}

// Each sample's moments (what `whvi predict` writes as mean, epistemic and
// aleatoric parts) against the mixture's own CDF integrated on a fine grid, one
// sample at a time. Catches a mean without the weights, a variance without the
// spread of the component means, or the ln S of the pooled weights left in.
TEST(Mixture, MomentsAreThoseOfEachSamplesMixture) {
  auto lik = mixture(3);
  const auto f = random_prediction(2, 4, 3, 11);
  const auto [mean, var] = lik->predictive_moments(f);
  ASSERT_EQ(mean.sizes(), (std::vector<int64_t>{2, 4}));
  for (int64_t s = 0; s < 2; ++s) {
    const auto one = f.narrow(0, s, 1);
    const auto grid = torch::linspace(-60, 60, 120001, torch::kFloat64);
    for (int64_t n = 0; n < 4; ++n) {
      const auto row = one.narrow(1, n, 1).expand({1, grid.size(0), 9}).contiguous();
      const auto cdf = lik->predictive_cdf(row, grid);
      const auto p = cdf.slice(0, 1) - cdf.slice(0, 0, -1);
      const auto mid = (grid.slice(0, 1) + grid.slice(0, 0, -1)) / 2;
      const double m = (p * mid).sum().item<double>(), m2 = (p * mid.square()).sum().item<double>();
      EXPECT_NEAR(mean[s][n].item<double>(), m, 1e-5) << s << " " << n;
      EXPECT_NEAR(var[s][n].item<double>(), m2 - m * m, 1e-4) << s << " " << n;
    }
  }
}

// Draws from sample() follow the mixture: mean and variance of many draws of
// one row against the mixture's moments. Catches a component chosen with the
// wrong weights or a standard deviation taken as the variance.
TEST(Mixture, SamplesFollowTheMixture) {
  auto lik = mixture(3);
  const int64_t M = 200000;
  const auto row = torch::tensor({{0.5, -1.0, 0.0, 0.3, -0.2, 0.8, -1.0, 0.5, -2.0}}, torch::kFloat64);
  const auto draws = lik->sample(row.expand({M, 9}), make_generator(4));
  const auto o = lik->to_original(row)[0];
  const auto w = o.narrow(0, 0, 3).exp(), mu = o.narrow(0, 3, 3), v = o.narrow(0, 6, 3).exp();
  const double mean = (w * mu).sum().item<double>();
  const double var = (w * (v + mu.square())).sum().item<double>() - mean * mean;
  EXPECT_NEAR(draws.mean().item<double>(), mean, 5 * std::sqrt(var / M));
  EXPECT_NEAR(draws.var().item<double>(), var, 0.02 * var);
}

// Registered for real-valued targets only; the methods written for the
// Gaussian (sghmc, laplace) refuse it by name. Catches a registration that
// takes class labels or a method that silently trains on a likelihood it
// cannot handle.
TEST(Mixture, IsRegisteredAndRefusedWhereItCannotWork) {
  const auto kinds = likelihoods::registered_likelihoods();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "mixture"), kinds.end());
  EXPECT_EQ(mixture(5)->out_dim(), 15);
  EXPECT_TRUE(std::isnan(mixture(3)->noise_var_original()));
  EXPECT_THROW(experiment::make_likelihood(cfg_with({"likelihood.kind=mixture"}), 0, 1, 10), Error);
  EXPECT_THROW(cfg_with({"likelihood.kind=mixture", "likelihood.mixture.components=17"}), Error);
  for (const char* kind : {"sghmc", "laplace"}) {
    std::string msg;
    try {
      experiment::make_inference(2, cfg_with({"likelihood.kind=mixture", std::string("model.kind=") + kind}), 0, 1,
                                 make_generator(1));
    } catch (const std::exception& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find("mixture"), std::string::npos) << kind << ": " << msg;
  }
}

// (d) Two branches y = ±(0.6 + 0.4 x) with equal probability plus noise sd 0.05:
// trained through the experiment's seam (a one-member ensemble), the mixture's
// held-out MNLL is far below the Gaussian's (truth: about -0.9 against about
// 0.8 for the best single Gaussian). Catches a mixture that does not learn
// its weights or means per input (e.g. components tied together, gradients
// blocked by the floor) or whose evaluation is not the mixture's density.
TEST(Mixture, BimodalTargetsBeatTheGaussian) {
  set_threads(1);
  const auto gen = make_generator(21);
  auto draw = [&](int64_t N) {
    const auto x = torch::rand({N, 1}, gen, torch::kFloat64) * 2 - 1;
    const auto b = torch::where(torch::rand({N}, gen, torch::kFloat64) < 0.5, torch::ones({N}, torch::kFloat64),
                                -torch::ones({N}, torch::kFloat64));
    const auto y = b * (0.6 + 0.4 * x.squeeze(1)) + 0.05 * torch::randn({N}, gen, torch::kFloat64);
    return std::make_pair(x, y);
  };
  const auto [x, y] = draw(400);
  const auto [xv, yv] = draw(400);
  auto fit = [&, &x = x, &y = y, &xv = xv, &yv = yv](const std::string& kind) {
    const auto cfg = cfg_with({"model.kind=ensemble", "ensemble.members=1", "likelihood.kind=" + kind,
                               "model.width=32", "training.steps=1500", "training.steps_fixed_noise=0",
                               "training.lr=0.01", "training.log_every=1000000", "training.dtype=float64"});
    auto inf = experiment::make_inference(1, cfg, 0.0, 1.0, make_generator(22));
    inf->to(torch::kFloat64);
    experiment::train(*inf, x, y, cfg, make_generator(23), kind);
    const auto f = inf->predict(xv, 1, make_generator(24));
    return inf->likelihood().evaluate(f, yv).metric("mnll");
  };
  const double mix = fit("mixture"), gauss = fit("gaussian");
  EXPECT_LT(mix, gauss - 1.0) << mix << " " << gauss;
  EXPECT_LT(mix, 0.0) << mix;
}

// The end-of-training checks on the training rows' outputs: a component with
// almost no weight is reported (learned min_component_weight, a log warning)
// without failing the run, and a mixture mean far from the targets is a
// divergence. Catches the weight taken over the wrong axis (per row instead of
// per component), a collapse that fails the run, and the fit check applied to
// a raw output column instead of the mixture's mean.
TEST(Mixture, CollapsedComponentIsReportedNotFatal) {
  auto lik = mixture(3);
  const int64_t M = 100;
  const auto gen = make_generator(6);
  const auto y = torch::randn({M}, gen, torch::kFloat64);
  auto f = torch::zeros({M, 9}, torch::kFloat64);
  f.select(1, 2).fill_(-20.0);  // component 2's logit: weight about 2e-9 on every row
  EXPECT_TRUE(lik->learned().empty());  // nothing seen yet
  EXPECT_FALSE(lik->fit_problem(f, y).has_value());
  ASSERT_EQ(lik->learned().size(), 1u);
  EXPECT_EQ(lik->learned()[0].first, "min_component_weight");
  EXPECT_LT(lik->learned()[0].second, 1e-3);
  EXPECT_FALSE(lik->health_problem().has_value());
  // a balanced mixture: its smallest mean weight is about 1/3
  auto g = torch::zeros({M, 9}, torch::kFloat64);
  g.narrow(1, 0, 3).copy_(torch::randn({M, 3}, gen, torch::kFloat64) * 0.1);
  EXPECT_FALSE(lik->fit_problem(g, y).has_value());
  EXPECT_NEAR(lik->learned()[0].second, 1.0 / 3, 0.05);
  // every component's mean 50 target sds away, log weights and variances untouched: diverged
  auto h = g.clone();
  h.narrow(1, 3, 3).fill_(50.0);
  EXPECT_TRUE(lik->fit_problem(h, y).has_value());
}
