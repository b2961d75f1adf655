// Post-hoc calibration (calibration/calibration.cpp) against independent
// references: the conformal quantile by hand; the conformal coverage by
// simulation at its guaranteed level, for a deliberately over-confident
// regression model and a miscalibrated classifier; temperature scaling against
// a grid minimum; the refusals.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "calibration/calibration.h"
#include "common/errors.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "likelihoods/gaussian.h"
#include "likelihoods/likelihood.h"

using whvi::testing::cfg_with;
using whvi::testing::error_of;

using namespace whvi;

namespace {

calibration::CalibrationOptions options_of(const std::string& kind, double level = 0.9) {
  calibration::CalibrationOptions o;
  o.kind = kind;
  o.level = level;
  return o;
}

// An over-confident regression model of y = x + (0.5 + |x|) ε: S = 8 samples of
// its mean function scattered by 0.05 around x, and a noise variance 0.09.
struct Regression {
  std::shared_ptr<likelihoods::Likelihood> lik;
  Regression() : lik(experiment::make_likelihood(cfg_with({"likelihood.kind=gaussian"}), 0, 1)) {
    dynamic_cast<likelihoods::GaussianLikelihood&>(*lik).log_noise_var().detach().fill_(std::log(0.09));
  }
  std::pair<torch::Tensor, torch::Tensor> draw(int64_t n, at::Generator& gen) const {
    const auto x = torch::randn({n}, gen, torch::kFloat64);
    const auto y = x + (0.5 + x.abs()) * torch::randn({n}, gen, torch::kFloat64);
    const auto f = x.unsqueeze(0) + 0.05 * torch::randn({8, n}, gen, torch::kFloat64);
    return {f, y};
  }
};

}  // namespace

// The ⌈(n+1)·level⌉-th smallest score, by hand; +inf when that rank is past n.
TEST(Calibration, ConformalQuantileIsTheRankByHand) {
  const auto s = torch::tensor({5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 10.0, 4.0, 8.0, 6.0});
  EXPECT_EQ(calibration::conformal_quantile(s, 0.8), 9.0);   // ⌈8.8⌉ = 9
  EXPECT_EQ(calibration::conformal_quantile(s, 0.5), 6.0);   // ⌈5.5⌉ = 6
  EXPECT_EQ(calibration::conformal_quantile(s, 0.9), 10.0);  // ⌈9.9⌉ = 10
  EXPECT_TRUE(std::isinf(calibration::conformal_quantile(s, 0.95)));  // ⌈10.45⌉ = 11 > 10
}

// Split-conformal regression: over many calibration sets of n = 98 rows and
// fresh test rows, the mean coverage is ⌈(n+1)·level⌉/(n+1) = 90/99 exactly for
// continuous scores (a rank of ⌈n·level⌉ would give 89/99); the model's own 90%
// interval covers far less.
TEST(Calibration, ConformalRegressionCoversAtTheGuaranteedLevel) {
  Regression m;
  auto gen = at::detail::createCPUGenerator(17);
  const auto o = options_of("conformal", 0.9);
  double covered = 0, raw = 0;
  const int trials = 2000, n_test = 100;
  for (int t = 0; t < trials; ++t) {
    const auto [fc, yc] = m.draw(98, gen);
    const auto c = calibration::fit(o, *m.lik, fc, yc);
    const auto [ft, yt] = m.draw(n_test, gen);
    const auto [lo, hi] = calibration::conformal_interval(c, *m.lik, ft);
    covered += ((yt >= lo) & (yt <= hi)).to(torch::kFloat64).mean().item<double>();
    if (t < 50) {
      const auto [rlo, rhi] = m.lik->predictive_interval(ft, 0.9);
      raw += ((yt >= rlo) & (yt <= rhi)).to(torch::kFloat64).mean().item<double>() / 50;
    }
  }
  // per-trial coverage has sd about 0.042 (a Beta(90, 10) draw, sd 0.030, plus
  // 100 test rows' binomial noise, 0.030): within 4 standard errors (0.0038) of
  // 90/99, and 89/99 is 0.0101 away
  EXPECT_NEAR(covered / trials, 90.0 / 99.0, 4 * 0.042 / std::sqrt(trials)) << covered / trials;
  EXPECT_LT(raw, 0.75);
  // the record's side-by-side numbers
  const auto [fc, yc] = m.draw(99, gen);
  const auto c = calibration::fit(o, *m.lik, fc, yc);
  const auto [ft, yt] = m.draw(2000, gen);
  const auto j = calibration::evaluate(c, *m.lik, ft, yt);
  EXPECT_GT(j["calibrated"]["coverage"].get<double>(), j["uncalibrated"]["coverage"].get<double>());
  EXPECT_GT(j["calibrated"]["mean_width"].get<double>(), j["uncalibrated"]["mean_width"].get<double>());
  EXPECT_EQ(j["rows"].get<int64_t>(), 99);
}

// Conformalized quantile regression on the same over-confident model, whose
// noise grows with |x|: over many calibration sets of n = 98 rows the mean
// coverage is 90/99 (the guarantee, exact for continuous scores), and, unlike
// μ ± qσ with one q for every row, the interval's width follows the model's
// own interval [lo, hi] shifted by one Q: each row's CQR width is its model
// width + 2Q, checked row by row. By decile of width, the record's conditional
// coverage is computed by hand.
TEST(Calibration, CqrCoversAtTheGuaranteedLevelAndKeepsTheModelsWidths) {
  Regression m;
  auto gen = at::detail::createCPUGenerator(23);
  const auto o = options_of("cqr", 0.9);
  double covered = 0;
  const int trials = 300, n_test = 100;  // its interval's quantiles are found by bisection: fewer trials
  for (int t = 0; t < trials; ++t) {
    const auto [fc, yc] = m.draw(98, gen);
    const auto c = calibration::fit(o, *m.lik, fc, yc);
    const auto [ft, yt] = m.draw(n_test, gen);
    const auto [lo, hi] = calibration::conformal_interval(c, *m.lik, ft);
    covered += ((yt >= lo) & (yt <= hi)).to(torch::kFloat64).mean().item<double>();
    if (t == 0) {
      const auto [rlo, rhi] = m.lik->predictive_interval(ft, 0.9);
      EXPECT_TRUE(torch::allclose(lo, rlo - c.value, 0, 1e-12));
      EXPECT_TRUE(torch::allclose(hi, rhi + c.value, 0, 1e-12));
      // Q by hand: the ⌈99·0.9⌉ = 90th smallest of max(lo − y, y − hi) on the calibration rows
      const auto [clo, chi] = m.lik->predictive_interval(fc, 0.9);
      const auto scores = std::get<0>(torch::maximum(clo - yc, yc - chi).sort());
      EXPECT_DOUBLE_EQ(c.value, scores[89].item<double>());
    }
  }
  // as ConformalRegressionCoversAtTheGuaranteedLevel: within 4 standard errors (0.0097) of 90/99
  // (the rank itself is checked by hand above)
  EXPECT_NEAR(covered / trials, 90.0 / 99.0, 4 * 0.042 / std::sqrt(trials)) << covered / trials;
  // the record: coverage by decile of width, by hand
  const auto [fc, yc] = m.draw(99, gen);
  const auto c = calibration::fit(o, *m.lik, fc, yc);
  const auto [ft, yt] = m.draw(1000, gen);
  const auto j = calibration::evaluate(c, *m.lik, ft, yt);
  const auto [lo, hi] = calibration::conformal_interval(c, *m.lik, ft);
  const auto order = std::get<1>((hi - lo).sort(true, 0, false));
  const auto& dec = j["calibrated"]["by_width_decile"];
  ASSERT_EQ(dec.size(), 10u);
  for (int d = 0; d < 10; ++d) {
    const auto idx = order.slice(0, 100 * d, 100 * (d + 1));
    const auto hit = ((yt.index_select(0, idx) >= lo.index_select(0, idx)) &
                      (yt.index_select(0, idx) <= hi.index_select(0, idx))).to(torch::kFloat64).mean().item<double>();
    EXPECT_EQ(dec[d]["rows"].get<int64_t>(), 100);
    EXPECT_DOUBLE_EQ(dec[d]["coverage"].get<double>(), hit);
    EXPECT_NEAR(dec[d]["mean_width"].get<double>(), (hi - lo).index_select(0, idx).mean().item<double>(), 1e-12);
  }
  EXPECT_EQ(j["uncalibrated"]["by_width_decile"].size(), 10u);
  // a stored negative Q (an interval narrowed) is valid for cqr, not for conformal's q
  auto stored = c.to_json();
  stored["value"] = -0.5;
  EXPECT_EQ(calibration::Fitted::from_json(stored).value, -0.5);
}

// Conformal prediction sets {c : p_c >= 1 − q} for a classifier whose
// probabilities are too sharp (labels drawn from softmax(z / 3), the model says
// softmax(z)): mean coverage 90/99 at level 0.9 over calibration sets of 98 rows.
TEST(Calibration, ConformalSetsCoverAtTheGuaranteedLevel) {
  auto lik = experiment::make_likelihood(cfg_with({"likelihood.kind=softmax"}), 0, 1, 4);
  auto gen = at::detail::createCPUGenerator(23);
  const auto draw = [&](int64_t n) {
    const auto z = 2.0 * torch::randn({n, 4}, gen, torch::kFloat64);
    const auto y = torch::multinomial(torch::softmax(z / 3.0, 1), 1, true, gen).squeeze(1);
    return std::make_pair(torch::log_softmax(z, 1).unsqueeze(0), y);  // one sample [1, n, 4]
  };
  const auto o = options_of("conformal", 0.9);
  double covered = 0, size = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    const auto [fc, yc] = draw(98);
    const auto c = calibration::fit(o, *lik, fc, yc);
    const auto [ft, yt] = draw(100);
    const auto sets = calibration::conformal_sets(c, ft);
    covered += sets.gather(1, yt.unsqueeze(1)).to(torch::kFloat64).mean().item<double>();
    size += sets.to(torch::kFloat64).sum(1).mean().item<double>();
  }
  EXPECT_NEAR(covered / trials, 90.0 / 99.0, 4 * 0.042 / std::sqrt(trials)) << covered / trials;
  EXPECT_GT(size / trials, 1.0);
  EXPECT_LT(size / trials, 4.0);
}

// Temperature scaling: T minimises the NLL of softmax(ln p / T) on a fine grid
// (labels drawn at temperature 2, so T is near 2).
TEST(Calibration, TemperatureIsTheGridMinimum) {
  auto gen = at::detail::createCPUGenerator(5);
  const auto z = 1.5 * torch::randn({2000, 5}, gen, torch::kFloat64);
  const auto y = torch::multinomial(torch::softmax(z / 2.0, 1), 1, true, gen).squeeze(1);
  const auto p = torch::softmax(z, 1);
  const double t = calibration::fit_temperature(p, y);
  const auto nll = [&](double temp) {
    return -torch::log_softmax(p.log() / temp, 1).gather(1, y.unsqueeze(1)).mean().item<double>();
  };
  double best_t = 0, best = 1e300;
  for (int i = 0; i <= 2000; ++i) {
    const double temp = 0.05 * std::pow(400.0, i / 2000.0);
    if (nll(temp) < best) best = nll(temp), best_t = temp;
  }
  EXPECT_LE(nll(t), best + 1e-12);
  EXPECT_NEAR(t, best_t, 0.01);
  EXPECT_NEAR(t, 2.0, 0.3);
  // the calibrated probabilities are those of the scaled mixture, and the
  // record's calibrated NLL is at most the uncalibrated one
  auto lik = experiment::make_likelihood(cfg_with({"likelihood.kind=softmax"}), 0, 1, 5);
  const auto c = calibration::fit(options_of("temperature"), *lik, p.log().unsqueeze(0), y);
  EXPECT_NEAR(c.value, t, 1e-8);
  EXPECT_TRUE(torch::allclose(calibration::probabilities(c, p.log().unsqueeze(0)), torch::softmax(p.log() / t, 1)));
  const auto j = calibration::evaluate(c, *lik, p.log().unsqueeze(0), y);
  EXPECT_LT(j["calibrated"]["mnll"].get<double>(), j["uncalibrated"]["mnll"].get<double>());
  EXPECT_EQ(j["calibrated"]["error"].get<double>(), j["uncalibrated"]["error"].get<double>());
}

TEST(Calibration, RefusesWhatItCannotDo) {
  Regression m;
  auto gen = at::detail::createCPUGenerator(3);
  const auto [f, y] = m.draw(50, gen);
  auto msg = error_of([&] { calibration::fit(options_of("temperature"), *m.lik, f, y); });
  EXPECT_NE(msg.find("calibration.kind: conformal"), std::string::npos) << msg;
  msg = error_of([&] { calibration::check_task(options_of("cqr"), /*classification=*/true); });
  EXPECT_NE(msg.find("calibration.kind: conformal"), std::string::npos) << msg;
  msg = error_of([&] { calibration::fit(options_of("conformal", 0.99), *m.lik, f, y); });
  EXPECT_NE(msg.find("at least 99 calibration rows"), std::string::npos) << msg;
  // the stored form round-trips, and a damaged one is an error
  const auto c = calibration::fit(options_of("conformal", 0.9), *m.lik, f, y);
  const auto back = calibration::Fitted::from_json(c.to_json());
  EXPECT_EQ(back.kind, "conformal");
  EXPECT_EQ(back.value, c.value);
  EXPECT_EQ(back.rows, 50);
  auto bad = c.to_json();
  bad["kind"] = "magic";
  EXPECT_NE(error_of([&] { calibration::Fitted::from_json(bad); }), "");
  bad = c.to_json();
  bad["value"] = -1.0;
  EXPECT_NE(error_of([&] { calibration::Fitted::from_json(bad); }).find("damaged"), std::string::npos);
}
