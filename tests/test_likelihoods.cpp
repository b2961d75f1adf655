// The heteroscedastic Gaussian likelihood against closed forms and finite
// differences, its mixture metrics against numerical integration and against
// the homoscedastic forms they generalise, and a network that learns an
// input-dependent noise through the likelihood seam.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "infer/inference.h"
#include "likelihoods/hetero_gaussian.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/metrics.h"
#include "likelihoods/softmax.h"
#include "likelihoods/student_t.h"
#include "train/loop.h"

using whvi::testing::cfg_with;

using namespace whvi;

namespace {

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
  const auto m = metrics::regression_metrics(f, y, var);
  double mnll = 0;
  for (int64_t n = 0; n < N; ++n) {
    double p = 0;
    for (int64_t s = 0; s < S; ++s)
      p += std::exp(log_normal(y[n].item<double>(), f[s][n].item<double>(), var[s][n].item<double>())) / S;
    mnll -= std::log(p) / N;
  }
  EXPECT_NEAR(m.mnll, mnll, 1e-12);
  const auto crps = metrics::mixture_crps(f, y, var);
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
  const auto a = metrics::regression_metrics(f, y, v), b = metrics::regression_metrics(f, y, torch::full_like(f, v));
  EXPECT_NEAR(a.mnll, b.mnll, 1e-12);
  EXPECT_NEAR(a.mnll_paper, b.mnll_paper, 1e-12);
  EXPECT_NEAR(a.crps, b.crps, 1e-12);
  EXPECT_EQ(a.coverage_95, b.coverage_95);
  EXPECT_NEAR(a.calibration_error, b.calibration_error, 1e-12);
}

TEST(HeteroGaussian, IsRegisteredAndRefusedWhereItCannotWork) {
  const auto reg = likelihoods::registered_likelihoods();
  EXPECT_NE(std::find(reg.begin(), reg.end(), "hetero-gaussian"), reg.end());
  auto lik = experiment::make_likelihood(cfg_with({"likelihood.kind=hetero-gaussian"}), 0, 1);
  EXPECT_EQ(lik->out_dim(), 2);
  EXPECT_TRUE(std::isnan(lik->noise_var_original()));
  std::string msg;
  try {
    experiment::make_inference(2, cfg_with({"likelihood.kind=hetero-gaussian", "model.kind=sghmc"}), 0, 1,
                          make_generator(1));
  } catch (const std::exception& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("set likelihood.kind: gaussian"), std::string::npos) << msg;
  try {
    experiment::make_likelihood(cfg_with({"likelihood.kind=hetero-gaussian"}), 0, 1, 10);
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
  auto inf = experiment::make_inference(1, cfg, 0.0, 1.0, make_generator(8));
  inf->to(torch::kFloat64);
  experiment::train(*inf, x, y, cfg, make_generator(9), "hetero");
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

namespace {
// log t_nu(y; mu, s2), written out with std::lgamma (an independent reference)
double log_t(double y, double mu, double s2, double nu) {
  return std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * M_PI * s2) -
         (nu + 1) / 2 * std::log(1 + (y - mu) * (y - mu) / (nu * s2));
}
}  // namespace

// The t CDF against its closed forms at nu = 1 (Cauchy) and nu = 2, and the
// Gaussian limit; a wrong incomplete beta (or a swapped tail) fails here.
TEST(StudentT, CdfMatchesClosedForms) {
  const auto t = torch::tensor({-30.0, -3.0, -1.0, -0.2, 0.0, 0.5, 2.0, 40.0}, torch::kFloat64);
  const auto c1 = likelihoods::student_t_cdf(t, 1.0), c2 = likelihoods::student_t_cdf(t, 2.0);
  const auto cbig = likelihoods::student_t_cdf(t, 1e6);
  for (int64_t i = 0; i < t.size(0); ++i) {
    const double x = t[i].item<double>();
    EXPECT_NEAR(c1[i].item<double>(), 0.5 + std::atan(x) / M_PI, 1e-12) << x;
    EXPECT_NEAR(c2[i].item<double>(), 0.5 + x / (2 * std::sqrt(2 + x * x)), 1e-12) << x;
    EXPECT_NEAR(cbig[i].item<double>(), 0.5 * std::erfc(-x / std::sqrt(2.0)), 1e-5) << x;
  }
}

// The training term and its gradients (location, scale, degrees of freedom)
// against the density written out and central finite differences.
TEST(StudentT, NllAndGradientMatchTheClosedForm) {
  auto lik = experiment::make_likelihood(
      cfg_with({"likelihood.kind=student-t", "likelihood.init_log_noise_var=-0.4", "likelihood.student_t.init_df=3.5"}),
      0, 1);
  lik->to(torch::kFloat64);
  const auto f = torch::tensor({0.3, -1.2, 2.0}, torch::kFloat64).requires_grad_(true);
  const auto y = torch::tensor({0.1, 0.7, -3.0}, torch::kFloat64);
  const auto nll = lik->nll_sum(f, y);
  double ref = 0;
  for (int i = 0; i < 3; ++i) ref -= log_t(y[i].item<double>(), f[i].item<double>(), std::exp(-0.4), 3.5);
  EXPECT_NEAR(nll.item<double>(), ref, 1e-10);
  nll.backward();
  const double h = 1e-6;
  for (int i = 0; i < 3; ++i) {
    auto total = [&](double d) {
      double s = 0;
      for (int k = 0; k < 3; ++k)
        s -= log_t(y[k].item<double>(), f[k].item<double>() + (k == i ? d : 0), std::exp(-0.4), 3.5);
      return s;
    };
    EXPECT_NEAR(f.grad()[i].item<double>(), (total(h) - total(-h)) / (2 * h), 1e-6);
  }
  // d/d log s2 and d/d log(nu - 2), by differences of the written-out density
  auto at = [&](double ls2, double nu) {
    double s = 0;
    for (int k = 0; k < 3; ++k) s -= log_t(y[k].item<double>(), f[k].item<double>(), std::exp(ls2), nu);
    return s;
  };
  const auto params = lik->parameters();  // log_scale2, log_df_minus_2
  ASSERT_EQ(params.size(), 2u);
  EXPECT_NEAR(params[0].grad().item<double>(), (at(-0.4 + h, 3.5) - at(-0.4 - h, 3.5)) / (2 * h), 1e-6);
  const double r = std::log(1.5);
  EXPECT_NEAR(params[1].grad().item<double>(), (at(-0.4, 2 + std::exp(r + h)) - at(-0.4, 2 + std::exp(r - h))) / (2 * h),
              1e-6);
}

// The mixture's metrics: MNLL against the written-out density, coverage
// against the t quantile, CRPS against the closed form of one t (Jordan,
// Krueger and Lerch 2019), the 95% predictive interval at the t quantile.
TEST(StudentT, MixtureMetricsMatchIndependentReferences) {
  const double nu = 3.0, s2 = 0.49, mu = 1.5;
  // nu = 3: t_{0.975} = 3.182446305284263
  const double q = 3.182446305284263, s = std::sqrt(s2);
  const auto y = torch::tensor({mu - 1.01 * q * s, mu - 0.99 * q * s, mu, mu + 0.3, mu + 0.99 * q * s,
                                mu + 1.01 * q * s},
                               torch::kFloat64);
  const auto f = torch::full({1, 6}, mu, torch::kFloat64);
  const auto m = likelihoods::student_t_metrics(f, y, s2, nu);
  double mnll = 0;
  for (int i = 0; i < 6; ++i) mnll -= log_t(y[i].item<double>(), mu, s2, nu) / 6;
  EXPECT_NEAR(m.mnll, mnll, 1e-10);
  EXPECT_NEAR(m.mnll_paper, mnll, 1e-10);
  EXPECT_NEAR(m.coverage_95, 4.0 / 6.0, 1e-12);
  // CRPS of t_nu(mu, s2) at y: s [z (2F(z) - 1) + 2 f(z) (nu + z^2) / (nu - 1)
  //   - 2 sqrt(nu) B(1/2, nu - 1/2) / ((nu - 1) B(1/2, nu/2)^2)]
  auto beta = [](double a, double b) { return std::exp(std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b)); };
  double crps = 0;
  for (int i = 0; i < 6; ++i) {
    const double z = (y[i].item<double>() - mu) / s;
    const double F = likelihoods::student_t_cdf(torch::tensor({z}, torch::kFloat64), nu).item<double>();
    const double dens = std::exp(log_t(z, 0, 1, nu));
    crps += s * (z * (2 * F - 1) + 2 * dens * (nu + z * z) / (nu - 1) -
                 2 * std::sqrt(nu) * beta(0.5, nu - 0.5) / ((nu - 1) * beta(0.5, nu / 2) * beta(0.5, nu / 2))) /
            6;
  }
  EXPECT_NEAR(m.crps, crps, 0.01 * crps);
  // the likelihood's predictive interval (original units: y_std 2, y_mean 1)
  auto lik = std::static_pointer_cast<likelihoods::StudentTLikelihood>(experiment::make_likelihood(
      cfg_with({"likelihood.kind=student-t", "likelihood.init_log_noise_var=" + std::to_string(std::log(s2 / 4)),
                "likelihood.student_t.init_df=3"}),
      1.0, 2.0));
  EXPECT_NEAR(lik->df(), 3.0, 1e-6);
  EXPECT_NEAR(lik->scale2_original(), s2, 1e-6);
  EXPECT_NEAR(lik->noise_var_original(), s2 * 3.0, 1e-5);
  // what the split record's `likelihood` holds
  const auto learned = lik->learned();
  ASSERT_EQ(learned.size(), 2u);
  EXPECT_EQ(learned[0].first, "df");
  EXPECT_EQ(learned[0].second, lik->df());
  EXPECT_EQ(learned[1].first, "scale2");
  EXPECT_EQ(learned[1].second, lik->scale2_original());
  const auto [lo, hi] = lik->predictive_interval(torch::full({1, 2}, mu, torch::kFloat64), 0.95);
  EXPECT_NEAR(lo[0].item<double>(), mu - q * s, 1e-5);
  EXPECT_NEAR(hi[1].item<double>(), mu + q * s, 1e-5);
  // large nu: the Gaussian metrics
  const auto f3 = torch::randn({4, 6}, make_generator(3), torch::kFloat64);
  const auto g = metrics::regression_metrics(f3, y, s2);
  const auto t = likelihoods::student_t_metrics(f3, y, s2, 1e7);
  EXPECT_NEAR(t.mnll, g.mnll, 1e-5);
  EXPECT_NEAR(t.coverage_90, g.coverage_90, 1e-12);
  EXPECT_NEAR(t.crps, g.crps, 0.01 * g.crps);
}

// Robustness, the reason to have it: with 10% gross outliers in the targets,
// a network with the t likelihood fits the clean function better than with
// the Gaussian, and learns few degrees of freedom.
TEST(StudentT, ANetworkIgnoresOutliersTheGaussianChases) {
  set_threads(1);
  const int64_t N = 300;
  const auto gen = make_generator(11);
  const auto x = torch::rand({N, 1}, gen, torch::kFloat64) * 2 - 1;
  const auto clean = (2 * x.squeeze(1)).sin();
  const auto outlier = torch::rand({N}, gen, torch::kFloat64) < 0.1;
  const auto y = clean + 0.05 * torch::randn({N}, gen, torch::kFloat64) +
                 torch::where(outlier, 4 * torch::ones({N}, torch::kFloat64), torch::zeros({N}, torch::kFloat64));
  auto fit = [&](const std::string& kind) {
    const auto cfg = cfg_with({"model.kind=mcd", "model.mcd.dropout=0.01", "likelihood.kind=" + kind, "model.width=32",
                               "training.steps=2000", "training.steps_fixed_noise=100", "training.lr=0.005",
                               "training.log_every=1000000", "training.dtype=float64"});
    auto inf = experiment::make_inference(1, cfg, 0.0, 1.0, make_generator(12));
    inf->to(torch::kFloat64);
    experiment::train(*inf, x, y, cfg, make_generator(13), kind);
    const auto grid = torch::linspace(-0.9, 0.9, 50, torch::kFloat64).unsqueeze(1);
    const auto f = inf->predict(grid, 8, make_generator(14)).mean(0);
    const double err = (f - (2 * grid.squeeze(1)).sin()).square().mean().sqrt().item<double>();
    double nu = 0;
    if (auto* t = dynamic_cast<likelihoods::StudentTLikelihood*>(&inf->likelihood())) nu = t->df();
    return std::make_pair(err, nu);
  };
  const auto [err_t, nu] = fit("student-t");
  const auto [err_g, unused] = fit("gaussian");
  EXPECT_LT(err_t, 0.5 * err_g) << err_t << " " << err_g;
  EXPECT_LT(nu, 4.0);
}

TEST(StudentT, IsRegisteredAndRefusedWhereItCannotWork) {
  const auto kinds = likelihoods::registered_likelihoods();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "student-t"), kinds.end());
  try {
    experiment::make_likelihood(cfg_with({"likelihood.kind=student-t"}), 0, 1, 10);
    ADD_FAILURE() << "student-t took class labels";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("likelihood.kind: softmax"), std::string::npos) << e.what();
  }
  auto lik = experiment::make_likelihood(cfg_with({"likelihood.kind=student-t"}), 0, 1);
  try {
    lik->sample(torch::zeros({2}), make_generator(0));
    ADD_FAILURE() << "student-t drew targets";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.nng.fisher: empirical"), std::string::npos) << e.what();
  }
}

// likelihood.class_weights: the training term is Σ_i w[y_i] (−log softmax(f_i)_{y_i}),
// checked against that sum written out here; balanced is n / (C n_c).
TEST(SoftmaxClassWeights, WeighRowsByClassAsWrittenOut) {
  const auto f = torch::tensor({{0.5, -1.0, 2.0}, {1.0, 0.0, 0.0}, {-0.3, 0.2, 0.1}, {2.0, 1.0, -1.0}},
                               torch::kFloat64);
  const auto y = torch::tensor({2.0, 0.0, 1.0, 0.0}, torch::kFloat64);
  const std::vector<std::string> names = {"a", "b", "c"};
  auto hand = [&](const std::vector<double>& w) {
    double s = 0;
    for (int64_t i = 0; i < 4; ++i) {
      const auto k = static_cast<int64_t>(y[i].item<double>());
      double z = 0;
      for (int64_t j = 0; j < 3; ++j) z += std::exp(f[i][j].item<double>());
      s += w[static_cast<size_t>(k)] * -(f[i][k].item<double>() - std::log(z));
    }
    return s;
  };
  likelihoods::SoftmaxLikelihood none(3);
  none.fit_targets(y, names);
  EXPECT_NEAR(none.nll_sum(f, y).item<double>(), hand({1, 1, 1}), 1e-12);
  EXPECT_TRUE(none.learned().empty());
  likelihoods::SoftmaxLikelihood bal(3, "balanced");
  bal.fit_targets(y, names);  // counts 2, 1, 1 of n = 4: weights 4/6, 4/3, 4/3
  EXPECT_NEAR(bal.nll_sum(f, y).item<double>(), hand({4.0 / 6, 4.0 / 3, 4.0 / 3}), 1e-12);
  ASSERT_EQ(bal.learned().size(), 3u);
  EXPECT_EQ(bal.learned()[1].first, "class_weight/b");
  EXPECT_NEAR(bal.learned()[0].second, 4.0 / 6, 1e-15);
  likelihoods::SoftmaxLikelihood ex(3, "c:3,a:0.5");
  ex.fit_targets(y, names);
  EXPECT_NEAR(ex.nll_sum(f, y).item<double>(), hand({0.5, 1, 3}), 1e-12);
  // a class the data do not have, or a weight that is no positive number, is named
  for (const auto& [spec, want] : std::vector<std::pair<std::string, std::string>>{
           {"d:2", "no class 'd' (classes: a, b, c)"},
           {"a:0", "give a number in (0, 1e6]"},
           {"a:x", "give a number in (0, 1e6]"},
           {"a:nan", "give a number in (0, 1e6]"},
           {"heavy", "is not class:weight"}}) {
    likelihoods::SoftmaxLikelihood bad(3, spec);
    const auto msg = whvi::testing::error_of([&] { bad.fit_targets(y, names); });
    EXPECT_NE(msg.find(want), std::string::npos) << spec << ": " << msg;
  }
}
