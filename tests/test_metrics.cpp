// Predictive metrics against hand-computed cases, the synthetic problems'
// noise floors, and the checks that catch the mistakes a reviewer found
// untested (issue 8 §5): each test below fails if the named mistake is made.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cmath>

#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "data/dataset.h"
#include "data/synthetic.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "infer/fused_step.h"
#include "infer/inference.h"
#include "infer/variational.h"
#include "likelihoods/gaussian.h"
#include "likelihoods/metrics.h"
#include "models/regression_model.h"
#include "train/loop.h"

using whvi::testing::cfg_with;

using namespace whvi;

namespace {

double Phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double phi(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI); }

torch::Tensor t1(std::vector<double> v) { return torch::tensor(v, torch::kFloat64); }

// ---- calibration metrics --------------------------------------------------------

TEST(Calibration, SingleGaussianCrpsIsTheClosedForm) {
  // CRPS(N(mu, s^2), y) = s [ z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi) ],  z = (y - mu)/s
  const double mu = 1.5, s = 2.0;
  for (double y : {-3.0, 0.0, 1.5, 2.7, 9.0}) {
    const double z = (y - mu) / s;
    const double ref = s * (z * (2 * Phi(z) - 1) + 2 * phi(z) - 1 / std::sqrt(M_PI));
    EXPECT_NEAR(metrics::mixture_crps(t1({mu}).view({1, 1}), t1({y}), s * s).item<double>(), ref, 1e-12) << y;
  }
}

TEST(Calibration, MixtureCrpsMatchesNumericalIntegration) {
  // two components N(-1, 0.25) and N(2, 0.25): CRPS = int (F(t) - 1{t >= y})^2 dt
  const auto f = t1({-1.0, 2.0}).view({2, 1});
  const double v = 0.25;
  for (double y : {-2.0, 0.3, 2.0}) {
    double integral = 0;
    const int n = 200000;  // midpoint rule on [-12, y] and [y, 12]: the integrand jumps at y
    for (auto [lo, hi] : {std::pair{-12.0, y}, std::pair{y, 12.0}}) {
      const double h = (hi - lo) / n;
      for (int i = 0; i < n; ++i) {
        const double t = lo + (i + 0.5) * h;
        const double F = 0.5 * (Phi((t + 1) / 0.5) + Phi((t - 2) / 0.5));
        const double d = F - (t >= y ? 1.0 : 0.0);
        integral += d * d * h;
      }
    }
    EXPECT_NEAR(metrics::mixture_crps(f, t1({y}), v).item<double>(), integral, 1e-6) << y;
  }
  // the sampled estimate for many samples is close to the exact double sum
  auto g = make_generator(3);
  const auto big = torch::randn({1000, 5}, g, torch::kFloat64);
  const auto exact_small = metrics::mixture_crps(big.narrow(0, 0, 500), t1({0, 1, 2, 3, 4}), 0.3);
  const auto y5 = t1({0, 1, 2, 3, 4});
  const auto est = metrics::mixture_crps(big, y5, 0.3), exact = [&] {
    // exact O(S^2) for S = 1000 by hand
    auto first = torch::zeros({5}, torch::kFloat64), second = torch::zeros({5}, torch::kFloat64);
    const double sd = std::sqrt(0.3), sd2 = std::sqrt(0.6);
    auto A = [](const torch::Tensor& m, double s) {
      return m * (2 * (0.5 * torch::erfc(-m / s / std::sqrt(2.0))) - 1) + 2 * s * (-0.5 * (m / s).square()).exp() / std::sqrt(2 * M_PI);
    };
    first = A(y5.unsqueeze(0) - big, sd).mean(0);
    for (int64_t i = 0; i < 1000; ++i) second += A(big[i].unsqueeze(0) - big, sd2).mean(0);
    return first - 0.5 * second / 1000.0;
  }();
  EXPECT_LE((est - exact).abs().max().item<double>(), 2e-3);
  EXPECT_GT(exact_small.numel(), 0);
}

TEST(Calibration, CoverageOfKnownQuantiles) {
  // one Gaussian N(0, 1): targets at z = 0.5 (inside the 50% interval, |z| < 0.674),
  // z = 1.0 (inside 90%), z = 1.8 (inside 95%, outside 90%), z = 2.5 (outside all)
  const auto f = torch::zeros({1, 4}, torch::kFloat64);
  const auto m = metrics::regression_metrics(f, t1({0.5, -1.0, 1.8, -2.5}), 1.0);
  EXPECT_DOUBLE_EQ(m.coverage_50, 0.25);
  EXPECT_DOUBLE_EQ(m.coverage_90, 0.5);
  EXPECT_DOUBLE_EQ(m.coverage_95, 0.75);
  // calibration error by hand: |F(y) - 1/2| = 0.1915, 0.3413, 0.4641, 0.4938
  double ce = 0;
  for (int i = 1; i <= 19; ++i) {
    const double a = 0.05 * i;
    double cov = 0;
    for (double z : {0.5, 1.0, 1.8, 2.5}) cov += (std::fabs(Phi(z) - 0.5) <= a / 2) / 4.0;
    ce += std::fabs(a - cov) / 19;
  }
  EXPECT_NEAR(m.calibration_error, ce, 1e-12);
}

TEST(Calibration, MixtureIntervalsAreTheMixturesNotAFittedGaussians) {
  // mixture 0.5 N(-3, 0.01) + 0.5 N(3, 0.01): y = 0 lies inside the central 50%
  // interval of the mixture (F(0) = 1/2) although both components put no mass there;
  // a Gaussian fitted to the mixture would say the same; y = 2.5 lies outside the
  // mixture's 50% interval (F = 0.5 + 0.5 * Phi(-5) ~ 0.5) ... inside its 95%.
  const auto f = t1({-3.0, 3.0}).view({2, 1});
  auto cov = [&](double y) { return metrics::mixture_cdf(f, t1({y}), 0.01).item<double>(); };
  EXPECT_NEAR(cov(0.0), 0.5, 1e-12);
  EXPECT_NEAR(cov(3.0), 0.75, 1e-12);
  EXPECT_NEAR(cov(-3.0), 0.25, 1e-12);
  // with a fitted Gaussian N(0, 9.01), y = 3 would be at Phi(3/3.0017) = 0.841
  const auto m = metrics::regression_metrics(f, t1({3.0}), 0.01);
  EXPECT_DOUBLE_EQ(m.coverage_50, 1.0);  // F = 0.75: the boundary of the central 50%
}

TEST(Calibration, AWellSpecifiedModelIsCalibrated) {
  // y ~ N(f, 1) exactly as predicted: coverage near nominal, CRPS near its expectation
  auto g = make_generator(11);
  const int64_t N = 200000;
  const auto f = torch::zeros({1, N}, torch::kFloat64);
  const auto y = torch::randn({N}, g, torch::kFloat64);
  const auto m = metrics::regression_metrics(f, y, 1.0);
  EXPECT_NEAR(m.coverage_50, 0.50, 0.005);
  EXPECT_NEAR(m.coverage_95, 0.95, 0.003);
  EXPECT_LT(m.calibration_error, 0.005);
  // E CRPS = E|X - Y| - E|X - X'| / 2 = 2/sqrt(pi) - 1/sqrt(pi) for X, X', Y ~ N(0, 1)
  EXPECT_NEAR(m.crps, 1 / std::sqrt(M_PI), 0.005);
  // over-confident: predicted variance 0.25 of a variance-1 truth
  const auto over = metrics::regression_metrics(f, y, 0.25);
  EXPECT_LT(over.coverage_95, 0.7);
  EXPECT_GT(over.calibration_error, 0.15);
}

// ---- synthetic problems ----------------------------------------------------------

TEST(Synthetic, DeterministicFromTheSeedAndFloorsAsDocumented) {
  for (const auto& name : data::synthetic_names()) {
    const auto a = data::make_synthetic("synthetic:" + name, 5), b = data::make_synthetic("synthetic:" + name, 5);
    const auto c = data::make_synthetic("synthetic:" + name, 6);
    EXPECT_TRUE(torch::equal(a.x, b.x) && torch::equal(a.y, b.y)) << name;
    EXPECT_FALSE(torch::equal(a.y, c.y)) << name;
    EXPECT_EQ(a.std_train.size(), 10u);
    EXPECT_EQ(a.std_train[0].size() + a.std_test[0].size(), static_cast<size_t>(a.x.size(0)));
  }
  EXPECT_NEAR(data::synthetic_floor("friedman").rmse, 1.0, 1e-15);
  EXPECT_NEAR(data::synthetic_floor("friedman").mnll, 0.5 * std::log(2 * M_PI * M_E), 1e-12);
  EXPECT_NEAR(data::synthetic_floor("gap").mnll, 0.5 * std::log(2 * M_PI * M_E * 0.01), 1e-12);
  // hetero: s(x) = 0.1 + 0.1|x| on U[-4, 4]: E s^2 = 0.01 (1 + 4 + 16/3) by hand
  const auto h = data::synthetic_floor("hetero");
  EXPECT_NEAR(h.rmse, std::sqrt(0.01 * (1 + 4 + 16.0 / 3)), 1e-9);
  EXPECT_LT(h.mnll, h.mnll_homoscedastic);  // Jensen
  EXPECT_THROW(data::make_synthetic("synthetic:nope", 0), Error);
}

TEST(Synthetic, TheTrueFunctionAttainsTheFloor) {
  // the residuals y - f(x) of `linear` are the noise: their RMSE estimates the floor
  const auto d = data::make_synthetic("synthetic:linear", 1, 200000);
  const double w[8] = {1.0, -2.0, 0.5, 0.0, 3.0, -1.0, 0.25, 2.0};
  auto f = torch::full({d.x.size(0)}, 1.0, torch::kFloat64);
  for (int j = 0; j < 8; ++j) f += w[j] * d.x.select(1, j);
  const double rmse = (d.y.squeeze(1) - f).square().mean().sqrt().item<double>();
  EXPECT_NEAR(rmse, data::synthetic_floor("linear").rmse, 0.005);
  const auto m = metrics::regression_metrics(f.view({1, -1}), d.y.squeeze(1), 0.25);
  EXPECT_NEAR(m.mnll, data::synthetic_floor("linear").mnll, 0.01);
}

// bimodal: the floor by quadrature against simulation. The exact density
// 1/2 N(y; sin x + h, s^2) + 1/2 N(y; sin x - h, s^2), h = (1 + |x|)/2, s = 0.2,
// scored on 200,000 rows of the generator: its mean NLL estimates the floor
// (within 4 standard errors), the residual about sin x the RMSE floor, and a
// single Gaussian's best (mnll_homoscedastic) lies far above it. A generator
// that drew one branch, or a floor of one Gaussian, fails here.
TEST(Synthetic, TheBimodalFloorIsTheTrueDensitysAndNoGaussianReachesIt) {
  const auto d = data::make_synthetic("synthetic:bimodal", 3, 200000);
  const auto x = d.x.select(1, 0), y = d.y.squeeze(1);
  const double s = 0.2;
  const auto h = 0.5 * (1 + x.abs()), r = y - x.sin();
  const auto dens = 0.5 * ((-0.5 * ((r - h) / s).square()).exp() + (-0.5 * ((r + h) / s).square()).exp()) /
                    (s * std::sqrt(2 * M_PI));
  const auto nll = -dens.log();
  const double se = nll.std().item<double>() / std::sqrt(200000.0);
  const auto fl = data::synthetic_floor("bimodal");
  EXPECT_NEAR(nll.mean().item<double>(), fl.mnll, 4 * se);
  EXPECT_NEAR(r.square().mean().sqrt().item<double>(), fl.rmse, 0.005);
  EXPECT_GT(fl.mnll_homoscedastic - fl.mnll, 0.3);
  // both branches are drawn, about equally often
  const double upper = (r > 0).to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(upper, 0.5, 0.01);
}

// ---- mutation catchers (issue 8 §5) ------------------------------------------------


// Flipping the sign of the decay exponent, or computing the schedule anywhere
// but learning_rate(), fails here.
TEST(Mutation, LearningRateDecaysAsThePaperSays) {
  EXPECT_DOUBLE_EQ(infer::learning_rate(1e-3, 5e-4, 0.3, 0), 1e-3);
  EXPECT_NEAR(infer::learning_rate(1e-3, 5e-4, 0.3, 2000), 1e-3 * std::pow(2.0, -0.3), 1e-15);
  EXPECT_LT(infer::learning_rate(1e-3, 5e-4, 0.3, 50499), 1e-3 * 0.5);
  // the trainer uses it: the last step's rate is the schedule's
  auto cfg = cfg_with({"training.steps=90", "training.steps_fixed_noise=10", "training.log_every=1000000"});
  auto x = torch::randn({50, 3}, make_generator(1), torch::kFloat64);
  auto y = x.sum(1);
  const auto m = experiment::make_inference(3, cfg, 0.0, 1.0, make_generator(2));
  const auto st = experiment::train(*m, x, y, cfg, make_generator(3), "t");
  EXPECT_DOUBLE_EQ(st.final_lr, infer::learning_rate(1e-3, 5e-4, 0.3, 99));
}

// Dropping the N/m scaling of the likelihood (or the ln 2 pi, or the KL) fails here.
TEST(Mutation, TheObjectiveScalesTheBatchToTheTrainingSet) {
  // MCD with dropout 0 is deterministic, so the ELBO is computable by hand
  auto cfg = cfg_with({"model.kind=mcd", "model.mcd.dropout=0", "model.mcd.length_scale=0.5",
                       "likelihood.init_log_noise_var=-0.7"});
  auto m_ptr = experiment::make_network(2, cfg, 0.0, 1.0, make_generator(4));
  auto& m = *m_ptr;
  m.to(torch::kFloat64);
  auto xb = torch::randn({5, 2}, make_generator(5), torch::kFloat64);
  auto yb = torch::randn({5}, make_generator(6), torch::kFloat64);
  const int64_t N = 400;
  const double got = infer::negative_elbo(m, xb, yb, N, 3, make_generator(7)).item<double>();
  torch::NoGradGuard ng;
  const auto f = m.forward_standardized(xb, models::Mode::kMean);
  const double lnv = std::log(m.likelihood().noise_var_original());  // y_std = 1
  EXPECT_NEAR(lnv, -0.7, 1e-6);  // likelihood.init_log_noise_var (stored in float32 first)
  const double nll = (0.5 * (std::log(2 * M_PI) + lnv + (yb - f).square() / std::exp(lnv))).sum().item<double>();
  double kl = 0;
  for (const auto& l : m.layers()) kl += l->kl().item<double>();
  EXPECT_GT(kl, 0);
  EXPECT_NEAR(got, N / 5.0 * nll + kl, 1e-9 * std::fabs(got));
}

// KL annealing and the KL weight: the factor's schedule by hand, and the
// objective it weights is scale x NLL + w x KL with the same draws (an
// annealed weight applied to the likelihood instead, or applied twice, fails).
TEST(KlWeight, TheScheduleAndTheObjectiveItWeights) {
  infer::VariationalOptions o;
  EXPECT_TRUE(o.plain_elbo());
  EXPECT_EQ(o.kl_factor(0), 1.0);
  o.kl_warmup = 4;
  o.kl_weight = 0.5;
  EXPECT_FALSE(o.plain_elbo());
  EXPECT_DOUBLE_EQ(o.kl_factor(0), 0.125);
  EXPECT_DOUBLE_EQ(o.kl_factor(1), 0.25);
  EXPECT_DOUBLE_EQ(o.kl_factor(3), 0.5);
  EXPECT_DOUBLE_EQ(o.kl_factor(1000), 0.5);

  auto cfg = cfg_with({"model.kind=mfg", "model.width=8"});
  auto m_ptr = experiment::make_network(2, cfg, 0.0, 1.0, make_generator(4));
  auto& m = *m_ptr;
  m.to(torch::kFloat64);
  auto xb = torch::randn({5, 2}, make_generator(5), torch::kFloat64);
  auto yb = torch::randn({5}, make_generator(6), torch::kFloat64);
  const double l1 = infer::negative_elbo(m, xb, yb, 400, 2, make_generator(7)).item<double>();
  const double l0 = infer::negative_elbo(m, xb, yb, 400, 2, make_generator(7), 0.0).item<double>();
  const double lw = infer::negative_elbo(m, xb, yb, 400, 2, make_generator(7), 0.3).item<double>();
  torch::NoGradGuard ng;
  const double kl = m.kl().item<double>();
  EXPECT_GT(kl, 1.0);
  EXPECT_NEAR(l1 - l0, kl, 1e-9 * std::fabs(l1));
  EXPECT_NEAR(lw, l0 + 0.3 * kl, 1e-9 * std::fabs(l1));
}

// The training record of the objective: ~50 points, the last at the last
// step; its KL is the closed form at the trained parameters, its weight the
// schedule's; the auto engine leaves the fused step for an annealed run.
TEST(KlWeight, TheTraceRecordsTheKlAndItsWeight) {
  auto cfg = cfg_with({"model.kind=whvi", "training.steps=90", "training.steps_fixed_noise=10",
                       "training.log_every=1000000", "training.kl_warmup=40", "training.kl_weight=0.5"});
  EXPECT_EQ(experiment::engine_for(cfg), "autograd");
  auto x = torch::randn({50, 3}, make_generator(1), torch::kFloat64);
  auto y = x.sum(1);
  const auto m = experiment::make_inference(3, cfg, 0.0, 1.0, make_generator(2));
  const auto st = experiment::train(*m, x, y, cfg, make_generator(3), "t");
  EXPECT_EQ(m->engine(), "autograd");
  ASSERT_EQ(st.trace_step.size(), 50u);  // every 2nd step of 100
  EXPECT_EQ(st.trace_step.front(), 2.0);
  EXPECT_EQ(st.trace_step.back(), 100.0);
  EXPECT_DOUBLE_EQ(st.trace_kl_weight.front(), 0.5 * 2 / 40);
  EXPECT_DOUBLE_EQ(st.trace_kl_weight[19], 0.5);  // step 40
  EXPECT_DOUBLE_EQ(st.trace_kl_weight.back(), 0.5);
  EXPECT_EQ(st.trace_loss.back(), st.final_loss);
  torch::NoGradGuard ng;
  EXPECT_DOUBLE_EQ(st.trace_kl.back(), m->model().kl().item<double>());
  // an explicit fused engine cannot anneal; a method without a KL term refuses the keys
  auto fused = cfg_with({"training.engine=fused", "training.kl_warmup=10"});
  const auto f = experiment::make_inference(3, fused, 0.0, 1.0, make_generator(2));
  try {
    f->begin(50, 100, make_generator(3));
    ADD_FAILURE() << "an annealed fused run started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("training.engine: autograd"), std::string::npos) << e.what();
  }
  try {
    experiment::make_inference(3, cfg_with({"model.kind=sghmc", "training.kl_weight=0.5"}), 0.0, 1.0, make_generator(2));
    ADD_FAILURE() << "sghmc took a KL weight";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("remove them"), std::string::npos) << e.what();
  }
}

struct Fit {
  metrics::RegressionMetrics m;
  double noise_var;
};

// Trains on (x, a*y + b) for a few steps in float64 and returns the test metrics.
Fit fit_scaled(const data::RegressionData& d0, double a, double b, const std::string& kind) {
  data::RegressionData d = d0;
  d.y = d0.y * a + b;
  const auto splits = data::make_splits(d, "paper", 1, 3);
  const auto prep = data::prepare_split(d, splits[0]);
  auto cfg = cfg_with({"model.kind=" + kind, "training.steps=300", "training.steps_fixed_noise=20",
                       "training.dtype=float64", "training.log_every=1000000", "model.mcd.dropout=0.1"});
  const auto m = experiment::make_inference(d.x.size(1), cfg, prep.stats.y_mean.item<double>(),
                                       prep.stats.y_std.item<double>(), make_generator(1));
  experiment::train(*m, prep.x_train, prep.y_train.squeeze(1), cfg, make_generator(2), "t");
  const auto f = m->predict(prep.x_test, 16, make_generator(3));
  const double nv = m->likelihood().noise_var_original();
  return {metrics::regression_metrics(f, prep.y_test.squeeze(1), nv), nv};
}

// Metrics in original units: rescaling the targets by a rescales RMSE and CRPS by a,
// the noise variance by a^2, shifts MNLL by log a and leaves coverage alone. Fails if
// the noise variance is not converted back to original units, if the metrics get the
// standardised noise variance, or if predictions are not de-standardised.
TEST(Mutation, MetricsAreInOriginalUnits) {
  set_threads(1);
  const auto d = data::make_synthetic("synthetic:friedman", 2, 300);
  for (const char* kind : {"whvi", "mcd"}) {
    const auto u = fit_scaled(d, 1.0, 0.0, kind), s = fit_scaled(d, 1000.0, 7.0, kind);
    EXPECT_NEAR(s.m.rmse / u.m.rmse, 1000.0, 1e-4) << kind;
    EXPECT_NEAR(s.m.crps / u.m.crps, 1000.0, 1e-4) << kind;
    EXPECT_NEAR(s.noise_var / u.noise_var, 1e6, 1e-1) << kind;
    EXPECT_NEAR(s.m.mnll - u.m.mnll, std::log(1000.0), 1e-6) << kind;
    EXPECT_EQ(s.m.coverage_90, u.m.coverage_90) << kind;
  }
}

// Prediction averages Monte Carlo draws of the network (not the mean network):
// the samples differ, and the predictive density (log-mean-exp) is strictly better
// than the mean log density (Jensen) only when they do.
TEST(Mutation, PredictionAveragesMonteCarloSamples) {
  for (const char* kind : {"whvi", "mfg", "mcd"}) {
    auto cfg = cfg_with({"model.kind=" + std::string(kind), "model.mcd.dropout=0.2",
                         "model.whvi.init_g_logvar=-2", "model.mfg.init_logvar=-2"});
    auto m_ptr = experiment::make_network(3, cfg, 10.0, 2.0, make_generator(1));
    auto& m = *m_ptr;
    const auto x = torch::randn({20, 3}, make_generator(2));
    const auto f = infer::predict_with(m, x, 32, make_generator(3));
    ASSERT_EQ(f.sizes(), (std::vector<int64_t>{32, 20}));
    EXPECT_GT(f.var(0).min().item<double>(), 0.0) << kind;
    const auto met = metrics::regression_metrics(f, f.mean(0) + 0.3, 0.01);
    EXPECT_LT(met.mnll, met.mnll_paper - 1e-6) << kind;
    // the same generator state gives the same draws; another gives others
    EXPECT_TRUE(torch::equal(f, infer::predict_with(m, x, 32, make_generator(3))));
    EXPECT_FALSE(torch::equal(f, infer::predict_with(m, x, 32, make_generator(4))));
  }
}

}  // namespace

// The likelihood seam on its own: the Gaussian against densities written out
// here, its freeze rule, its units and its health check; the registry.
TEST(GaussianLikelihood, MatchesTheDensityItsRulesAndItsUnits) {
  likelihoods::GaussianOptions o;
  o.init_log_noise_var = std::log(0.3);
  o.steps_fixed = 7;
  o.lr_factor = 0.5;
  likelihoods::GaussianLikelihood g(o, 10.0, 2.0);
  g.to(torch::kFloat64);
  const auto f = torch::tensor({0.1, -0.4, 1.5, 2.0}, torch::kFloat64);
  const auto y = torch::tensor({0.0, 0.3, 1.0, -1.0}, torch::kFloat64);
  // the parameter starts in float32 (as every parameter), so σ² is log(0.3) rounded
  EXPECT_NEAR(g.noise_var_original(), 0.3 * 4.0, 1e-6);  // σ² y_std²
  const double s2 = g.noise_var_original() / 4.0;
  double want = 0;
  for (int i = 0; i < 4; ++i) {
    const double r = y[i].item<double>() - f[i].item<double>();
    want += -std::log(std::exp(-r * r / (2 * s2)) / std::sqrt(2 * M_PI * s2));
  }
  EXPECT_NEAR(g.nll_sum(f, y).item<double>(), want, 1e-12);
  EXPECT_TRUE(g.frozen(6));
  EXPECT_FALSE(g.frozen(7));
  EXPECT_EQ(g.lr_factor(), 0.5);
  EXPECT_TRUE(torch::allclose(g.to_original(f), f * 2.0 + 10.0));
  EXPECT_FALSE(g.health_problem().has_value());
  {
    torch::NoGradGuard ng;
    g.log_noise_var().fill_(std::log(500.0));
  }
  ASSERT_TRUE(g.health_problem().has_value());
  EXPECT_NE(g.health_problem()->find("noise variance grew to 500"), std::string::npos);
  // the model's likelihood comes from likelihood.kind with its options
  auto cfg = cfg_with({"likelihood.init_log_noise_var=-0.7", "training.steps_fixed_noise=3"});
  auto m_ptr = experiment::make_network(2, cfg, 1.0, 3.0, make_generator(4));
  auto& m = *m_ptr;
  EXPECT_NEAR(m.likelihood().noise_var_original(), std::exp(-0.7) * 9.0, 1e-6);
  EXPECT_TRUE(m.likelihood().frozen(2));
  EXPECT_FALSE(m.likelihood().frozen(3));
  EXPECT_EQ(likelihoods::registered_likelihoods(), (std::vector<std::string>{"gaussian", "hetero-gaussian", "student-t", "mixture", "softmax"}));
}

// Out-of-distribution AUROC and AUPR against values worked out by hand:
// in {0.1, 0.4, 0.35, 0.8}, out {0.9, 0.4, 0.7}: the out rows beat 4, 2.5 (a
// tie counts half) and 3 of the 4 in rows: AUROC 9.5 / 12. Ranked by score:
// out, in, out, {out, in} tied, in, in: precisions 1, 2/3 and (at the tie's
// end) 3/5, so AUPR = (1 + 2/3 + 3/5) / 3.
TEST(OodMetrics, AurocAndAuprByHand) {
  const auto s = whvi::metrics::ood_separation({0.1, 0.4, 0.35, 0.8}, {0.9, 0.4, 0.7});
  EXPECT_NEAR(s.auroc, 9.5 / 12.0, 1e-15);
  EXPECT_NEAR(s.aupr, (1.0 + 2.0 / 3.0 + 3.0 / 5.0) / 3.0, 1e-15);
  const auto perfect = whvi::metrics::ood_separation({0.1, 0.2}, {0.3, 0.4, 0.5});
  EXPECT_EQ(perfect.auroc, 1.0);
  EXPECT_EQ(perfect.aupr, 1.0);
  const auto reversed = whvi::metrics::ood_separation({0.3, 0.4}, {0.1, 0.2});
  EXPECT_EQ(reversed.auroc, 0.0);
  EXPECT_NEAR(reversed.aupr, (1.0 / 3.0 + 2.0 / 4.0) / 2.0, 1e-15);
  const auto ties = whvi::metrics::ood_separation({1, 1}, {1, 1});  // no information: 1/2 and the base rate
  EXPECT_EQ(ties.auroc, 0.5);
  EXPECT_EQ(ties.aupr, 0.5);
  EXPECT_THROW(whvi::metrics::ood_separation({}, {1.0}), whvi::Error);
}

// Entropy and mutual information against the closed form for two samples
// (0.9, 0.1) and (0.1, 0.9): H = ln 2, E[H_s] = H(0.9, 0.1), MI = the difference;
// one confident sample alone has MI 0.
TEST(OodMetrics, EntropyAndMutualInformation) {
  const auto lp = torch::tensor({0.9, 0.1, 0.1, 0.9}, torch::kFloat64).view({2, 1, 2}).log();
  const auto u = whvi::metrics::predictive_uncertainty(lp);
  const double h09 = -(0.9 * std::log(0.9) + 0.1 * std::log(0.1));
  ASSERT_EQ(u.entropy.size(), 1u);
  EXPECT_NEAR(u.entropy[0], std::log(2.0), 1e-12);
  EXPECT_NEAR(u.mutual_information[0], std::log(2.0) - h09, 1e-12);
  const auto one = whvi::metrics::predictive_uncertainty(lp.narrow(0, 0, 1));
  EXPECT_NEAR(one.entropy[0], h09, 1e-12);
  EXPECT_NEAR(one.mutual_information[0], 0.0, 1e-15);
}

// data.target_transform: log. The log-normal CRPS against its closed form
// (Baran & Lerch 2015): for LN(μ, σ²) at y, with w = (ln y − μ)/σ,
//   CRPS = y (2Φ(w) − 1) − 2 e^{μ + σ²/2} (Φ(w − σ) + Φ(σ/√2) − 1);
// a two-component mixture against the energy form E|Y − y| − ½E|Y − Y'| by
// simulation; the metrics in the target's units against hand computations.
namespace {
double phi_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double lognormal_crps(double mu, double sd, double y) {
  const double w = (std::log(y) - mu) / sd;
  return y * (2 * phi_cdf(w) - 1) - 2 * std::exp(mu + sd * sd / 2) * (phi_cdf(w - sd) + phi_cdf(sd / std::sqrt(2.0)) - 1);
}
}  // namespace

TEST(LogTarget, CrpsIsTheLogNormalClosedForm) {
  const std::vector<std::array<double, 3>> cases = {{0.0, 0.5, 1.3}, {2.0, 0.1, 5.0}, {1.0, 1.2, 0.2}, {-1.0, 0.3, 40.0}};
  auto mu = torch::empty({1, 4}, torch::kFloat64), var = torch::empty({1, 4}, torch::kFloat64),
       y = torch::empty({4}, torch::kFloat64);
  for (int i = 0; i < 4; ++i) mu[0][i] = cases[i][0], var[0][i] = cases[i][1] * cases[i][1], y[i] = std::log(cases[i][2]);
  const auto got = metrics::lognormal_mixture_crps(mu, var, y);
  for (int i = 0; i < 4; ++i) {
    const double want = lognormal_crps(cases[i][0], cases[i][1], cases[i][2]);
    EXPECT_NEAR(got[i].item<double>(), want, 1e-4 * std::abs(want) + 1e-9) << i;
  }
  // a mixture of two: the energy form by simulation (4e6 draws: about 0.1%)
  const auto mu2 = torch::tensor({{0.2}, {1.0}}, torch::kFloat64), var2 = torch::tensor({{0.09}, {0.25}}, torch::kFloat64);
  const double yv = 2.0;
  auto gen = at::detail::createCPUGenerator(3);
  const int64_t n = 4000000;
  const auto pick = torch::randint(0, 2, {n}, gen, torch::kInt64);
  const auto draw = [&](const torch::Tensor& k) {
    return (mu2.view({-1}).index_select(0, k) + var2.view({-1}).index_select(0, k).sqrt() * torch::randn({n}, gen, torch::kFloat64)).exp();
  };
  const auto a = draw(pick), b = draw(torch::randint(0, 2, {n}, gen, torch::kInt64));
  const double energy = ((a - yv).abs().mean() - 0.5 * (a - b).abs().mean()).item<double>();
  const double got2 = metrics::lognormal_mixture_crps(mu2, var2, torch::tensor({std::log(yv)}, torch::kFloat64)).item<double>();
  EXPECT_NEAR(got2, energy, 0.005 * energy);
}

TEST(LogTarget, MetricsReturnToTheTargetsUnits) {
  // one component per row (S = 1): the density of y is the log-scale density over y
  const auto mu = torch::tensor({{0.5, 2.0, -0.3}}, torch::kFloat64);
  const double v = 0.2;
  const auto var = torch::full({1, 3}, v, torch::kFloat64);
  const auto y = torch::tensor({1.5, 9.0, 0.8}, torch::kFloat64);
  const auto y_log = y.log();
  const auto log_scale = metrics::to_metrics(metrics::regression_metrics(mu, y_log, v));
  const auto m = metrics::in_target_units(log_scale, mu, var, y_log);
  const auto get = [](const metrics::Metrics& ms, const std::string& k) {
    for (const auto& [name, value] : ms)
      if (name == k) return value;
    return std::nan("");
  };
  double nll = 0, se = 0;
  for (int i = 0; i < 3; ++i) {
    const double yi = y[i].item<double>(), mi = mu[0][i].item<double>();
    // −ln LN(y; μ, v) = ln y + ½ ln(2πv) + (ln y − μ)²/(2v)
    nll += std::log(yi) + 0.5 * std::log(2 * M_PI * v) + std::pow(std::log(yi) - mi, 2) / (2 * v);
    se += std::pow(std::exp(mi + v / 2) - yi, 2);
  }
  EXPECT_NEAR(get(m, "mnll"), nll / 3, 1e-10);
  EXPECT_NEAR(get(m, "mnll_paper"), nll / 3, 1e-10);
  EXPECT_NEAR(get(m, "rmse"), std::sqrt(se / 3), 1e-10);
  for (const char* k : {"coverage_50", "coverage_90", "coverage_95", "calibration_error"})
    EXPECT_EQ(get(m, k), get(log_scale, k)) << k;
  double crps = 0;
  for (int i = 0; i < 3; ++i) crps += lognormal_crps(mu[0][i].item<double>(), std::sqrt(v), y[i].item<double>()) / 3;
  EXPECT_NEAR(get(m, "crps"), crps, 1e-4 * crps);
}
