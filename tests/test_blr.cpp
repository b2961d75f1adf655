// Bayesian linear regression (infer/blr.cpp) against independent references:
// the posterior from an explicit matrix inverse at fixed prior and noise, the
// evidence as an N-dimensional Gaussian density (maximised: zero gradient,
// lower everywhere around), and the exact Gaussian predictive and its metrics.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "closed_form_helpers.h"
#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "infer/inference.h"
#include "likelihoods/gaussian.h"

using whvi::testing::cfg_with;
using whvi::testing::error_of;
using whvi::testing::state_of;

using namespace whvi;

namespace {

struct Data {
  torch::Tensor x, y;
};
Data linear_data(int64_t n, int64_t d, double noise_sd) {
  torch::manual_seed(11);
  auto x = torch::randn({n, d}, torch::kFloat64);
  auto w = torch::linspace(-1.0, 1.5, d, torch::kFloat64);
  return {x, x.mv(w) + 0.3 + noise_sd * torch::randn({n}, torch::kFloat64)};
}

torch::Tensor design(const torch::Tensor& x) {
  return torch::cat({x, torch::ones({x.size(0), 1}, x.options())}, 1);
}

std::unique_ptr<infer::Inference> fitted(const std::vector<std::string>& sets, const Data& d, double y_mean = 0,
                                         double y_std = 1) {
  std::vector<std::string> all = {"model.kind=blr"};
  all.insert(all.end(), sets.begin(), sets.end());
  return whvi::testing::fitted_closed_form(all, d.x, d.y, y_mean, y_std);
}

// ln N(y; 0, ΦΦᵀ/α + I/β): the marginal likelihood written out over the N rows
double log_evidence(const Data& d, double alpha, double beta) {
  const auto phi = design(d.x);
  const int64_t n = d.x.size(0);
  const auto cov = phi.mm(phi.t()) / alpha + torch::eye(n, torch::kFloat64) / beta;
  const auto l = torch::linalg::cholesky(cov);
  const auto z = torch::linalg::solve_triangular(l, d.y.view({-1, 1}), /*upper=*/false, /*left=*/true, /*unitriangular=*/false).view({-1});
  return -0.5 * z.dot(z).item<double>() - l.diagonal().log().sum().item<double>() -
         0.5 * static_cast<double>(n) * std::log(2 * M_PI);
}

}  // namespace

// At a fixed prior variance 1/α and noise 1/β the posterior is N(m, A⁻¹),
// A = αI + βΦᵀΦ, m = βA⁻¹Φᵀy: the mean, the covariance factor and the noise
// against an explicit inverse; the exact predictive in original units
// (y_mean + y_std f) and its metrics.
TEST(Blr, PosteriorIsTheClosedFormAtAFixedPriorAndNoise) {
  const auto d = linear_data(30, 3, 0.5);
  auto inf = fitted({"model.blr.prior_var=0.5", "model.blr.noise_var=0.2"}, d, 2.0, 3.0);
  const auto phi = design(d.x);
  const auto a = 2.0 * torch::eye(4, torch::kFloat64) + 5.0 * phi.t().mm(phi);
  const auto cov = torch::inverse(a);
  const auto m = 5.0 * cov.mv(phi.t().mv(d.y));
  EXPECT_TRUE(torch::allclose(inf->mean_standardized(d.x).view({-1}), phi.mv(m), 1e-10, 1e-12));
  const auto l = state_of(*inf, "blr.chol");
  EXPECT_TRUE(torch::allclose(l.mm(l.t()), cov, 1e-10, 1e-13));
  EXPECT_DOUBLE_EQ(state_of(*inf, "blr.alpha").item<double>(), 2.0);
  EXPECT_DOUBLE_EQ(state_of(*inf, "blr.beta").item<double>(), 5.0);
  auto& lik = dynamic_cast<likelihoods::GaussianLikelihood&>(inf->likelihood());
  EXPECT_NEAR(std::exp(lik.log_noise_var().item<double>()), 0.2, 1e-12);
  // the predictive is exact: S identical components N(Φ*m, Φ* A⁻¹ Φ*ᵀ + 1/β) in original units
  const auto xs = d.x.narrow(0, 0, 5);
  const auto f = inf->predict(xs, 7, make_generator(7));
  ASSERT_EQ(f.sizes(), (torch::IntArrayRef{7, 5, 2}));
  const auto ps = design(xs);
  const auto want_mean = 2.0 + 3.0 * ps.mv(m);
  const auto want_var = 9.0 * ((ps.mm(cov) * ps).sum(1) + 0.2);
  for (int64_t s = 0; s < 7; ++s) {
    EXPECT_TRUE(torch::allclose(f[s].select(1, 0), want_mean, 1e-10, 1e-12)) << s;
    EXPECT_TRUE(torch::allclose(f[s].select(1, 1), want_var.log(), 1e-10, 1e-12)) << s;
  }
  // and scored as such: the NLL, RMSE and coverage of N(y; μ*, v*) written out
  const auto y = 2.0 + 3.0 * (ps.mv(m) + torch::tensor({-1.5, 0.1, 2.5, -0.3, 0.6}, torch::kFloat64));
  const auto nll = (0.5 * (2 * M_PI * want_var).log() + 0.5 * (y - want_mean).square() / want_var).mean();
  const auto e = inf->likelihood().evaluate(f, y);
  EXPECT_NEAR(e.metric("mnll"), nll.item<double>(), 1e-8);
  EXPECT_NEAR(e.metric("rmse"), (y - want_mean).square().mean().sqrt().item<double>(), 1e-8);
  const double cov95 = ((y - want_mean).abs() <= 1.959963984540054 * want_var.sqrt()).to(torch::kFloat64).mean().item<double>();
  EXPECT_DOUBLE_EQ(e.metric("coverage_95"), cov95);
}

// With both chosen by the evidence, (α, β) is its maximum: the evidence
// written as an N-dimensional Gaussian has zero gradient in (ln α, ln β) there
// and is lower a step away in every direction; the noise found is near the truth.
TEST(Blr, PriorAndNoiseMaximiseTheEvidence) {
  const auto d = linear_data(200, 4, 0.5);
  auto inf = fitted({}, d);
  const double alpha = state_of(*inf, "blr.alpha").item<double>(), beta = state_of(*inf, "blr.beta").item<double>();
  const double best = log_evidence(d, alpha, beta);
  const double h = 1e-4;
  const double ga = (log_evidence(d, alpha * std::exp(h), beta) - log_evidence(d, alpha * std::exp(-h), beta)) / (2 * h);
  const double gb = (log_evidence(d, alpha, beta * std::exp(h)) - log_evidence(d, alpha, beta * std::exp(-h))) / (2 * h);
  EXPECT_NEAR(ga, 0, 1e-5);
  EXPECT_NEAR(gb, 0, 1e-5);
  for (double fa : {0.8, 1.0, 1.25})
    for (double fb : {0.8, 1.0, 1.25})
      if (fa != 1.0 || fb != 1.0) EXPECT_LT(log_evidence(d, alpha * fa, beta * fb), best) << fa << " " << fb;
  EXPECT_NEAR(1 / beta, 0.25, 0.06);
  // the record's hyperparameters: α, β and the evidence at them
  const auto learned = inf->learned();
  ASSERT_EQ(learned.size(), 3u);
  EXPECT_EQ(learned[0].second, alpha);
  EXPECT_EQ(learned[1].second, beta);
  EXPECT_NEAR(learned[2].second, best, 1e-8 * std::abs(best));
  // the fitted mean is the posterior mean at those (α, β)
  const auto phi = design(d.x);
  const auto m = torch::linalg::solve(alpha * torch::eye(5, torch::kFloat64) + beta * phi.t().mm(phi),
                                      beta * phi.t().mv(d.y), true);
  EXPECT_TRUE(torch::allclose(inf->mean_standardized(d.x).view({-1}), phi.mv(m), 1e-9, 1e-12));
}

// Inputs that explain nothing linearly (Φᵀy = 0): the evidence grows without
// bound in α, which stops at its cap; the fit is the constant 0 and the noise
// variance the targets' mean square.
TEST(Blr, NoLinearSignalGivesTheConstantPredictor) {
  const int64_t n = 40;
  auto x = torch::linspace(-1.0, 1.0, n, torch::kFloat64).view({n, 1});
  auto y = (x.view({-1}) * 6.0).cos();
  y = y - y.mean();
  y = y - x.view({-1}) * (x.view({-1}).dot(y) / x.view({-1}).dot(x.view({-1})));  // orthogonal to x and to 1
  ASSERT_LT(design(x).t().mv(y).abs().max().item<double>(), 1e-12);
  auto inf = fitted({}, {x, y});
  EXPECT_EQ(state_of(*inf, "blr.alpha").item<double>(), 1e12);
  EXPECT_LT(inf->mean_standardized(x).abs().max().item<double>(), 1e-9);
  EXPECT_NEAR(1 / state_of(*inf, "blr.beta").item<double>(), y.square().mean().item<double>(), 1e-9);
}

TEST(Blr, RefusesWhatItCannotFit) {
  const auto d = linear_data(10, 2, 0.1);
  const auto init = make_generator(1, 0, Stream::kInit);
  auto msg = error_of([&] { experiment::make_inference(2, cfg_with({"model.kind=blr"}), 0, 1, init); });
  EXPECT_NE(msg.find("set model.depth: 0"), std::string::npos) << msg;
  msg = error_of([&] {
    experiment::make_inference(2, cfg_with({"model.kind=blr", "model.depth=0", "likelihood.kind=hetero-gaussian"}), 0, 1, init);
  });
  EXPECT_NE(msg.find("likelihood.kind: gaussian"), std::string::npos) << msg;
  msg = error_of([&] {
    experiment::make_inference(2, cfg_with({"model.kind=blr", "model.depth=0", "likelihood.kind=softmax"}), 0, 1, init, 3);
  });
  EXPECT_NE(msg.find("gaussian"), std::string::npos) << msg;
  // no steps: it is fitted, never stepped
  auto inf = experiment::make_inference(2, cfg_with({"model.kind=blr", "model.depth=0"}), 0, 1, init);
  msg = error_of([&] { inf->step(d.x.to(torch::kFloat32), d.y.to(torch::kFloat32), 0, make_generator(1)); });
  EXPECT_NE(msg.find("closed form"), std::string::npos) << msg;
  EXPECT_TRUE(experiment::fits_in_closed_form(cfg_with({"model.kind=blr", "model.depth=0"})));
  EXPECT_FALSE(experiment::fits_in_closed_form(cfg_with({"model.kind=whvi"})));
}
