// Stopping on validation rows (train/stopping.h): the held-out rows are a
// deterministic partition of the training rows; the kept parameters are those
// of the best measurement, bit for bit those of a fixed-schedule run of that
// many steps (the measurements draw from their own stream and change nothing
// else); auto acts on CSV files only and refuses nothing; a kept step inside the
// frozen-noise phase gets the noise variance that fits the held-out rows.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "calibration/calibration.h"
#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/softmax.h"
#include "train/loop.h"
#include "train/stopping.h"

using whvi::testing::cfg_with;
using whvi::testing::error_of;

using namespace whvi;

namespace {



TEST(Stopping, TheHoldoutIsADeterministicPartitionOfTheTrainingRows) {
  const auto h = train::carve_holdout(100, 0.1, 7);
  EXPECT_EQ(h.validation.size(), 10u);
  EXPECT_EQ(h.fit.size(), 90u);
  std::set<int64_t> all(h.fit.begin(), h.fit.end());
  all.insert(h.validation.begin(), h.validation.end());
  EXPECT_EQ(all.size(), 100u);
  EXPECT_EQ(*all.begin(), 0);
  EXPECT_EQ(*all.rbegin(), 99);
  EXPECT_TRUE(std::is_sorted(h.fit.begin(), h.fit.end()));
  EXPECT_EQ(train::carve_holdout(100, 0.1, 7).validation, h.validation);
  EXPECT_NE(train::carve_holdout(100, 0.1, 8).validation, h.validation);
  // not the last rows: a file sorted by its target must not lose one end of it
  EXPECT_NE(h.validation.front(), 90);
  EXPECT_EQ(train::carve_holdout(5, 0.01, 1).validation.size(), 1u);  // at least one row
  EXPECT_NE(error_of([] { train::carve_holdout(2, 0.5, 1); }).find("training.stopping: off"), std::string::npos);
}

// training.stopping_every 0 (the default) measures every budget / 50 steps,
// rounded, at least 50, where the budget counts the frozen-noise phase too; an
// interval that is set is kept. A rule that forgot the frozen-noise phase, or
// truncated instead of rounding, fails here.
TEST(Stopping, TheDefaultIntervalScalesWithTheBudget) {
  EXPECT_EQ(train::auto_every(5500), 110);
  EXPECT_EQ(train::auto_every(50500), 1010);
  EXPECT_EQ(train::auto_every(5525), 111);  // 110.5 rounds up
  EXPECT_EQ(train::auto_every(5524), 110);
  EXPECT_EQ(train::auto_every(1000), 50);   // never below 50
  EXPECT_EQ(train::auto_every(0), 50);
  const auto read = [](std::vector<std::string> sets) {
    sets.push_back("data.dataset=mine.csv");
    return options::read<train::StoppingOptions>(cfg_with(sets));
  };
  const auto d = read({"training.steps_fixed_noise=500", "training.steps=5000"});
  EXPECT_EQ(d.every, 110);
  EXPECT_EQ(d.patience, 20);
  EXPECT_EQ(read({"training.steps_fixed_noise=0", "training.steps=20000"}).every, 400);
  EXPECT_EQ(read({"training.steps=5000", "training.stopping_every=7"}).every, 7);
}

// training.stopping_every_epochs caps the budget's interval at that many
// epochs of the split's rows (ceil(rows / batch) steps each), never below 50
// steps, and leaves an interval the config names alone.
TEST(Stopping, TheEpochCapShortensOnlyTheBudgetsInterval) {
  const auto read = [](std::vector<std::string> sets) {
    sets.push_back("data.dataset=mine.csv");
    sets.push_back("training.steps_fixed_noise=500");
    sets.push_back("training.steps=20000");
    sets.push_back("training.batch_size=64");
    return options::read<train::StoppingOptions>(cfg_with(sets));
  };
  const auto capped = read({"training.stopping_every_epochs=20"});
  ASSERT_EQ(capped.every, 410);
  EXPECT_EQ(capped.every_for(322), 20 * 6);     // 322 rows: 6 steps an epoch (5.03 rounded up)
  EXPECT_EQ(capped.every_for(320), 20 * 5);     // exactly 5
  EXPECT_EQ(capped.every_for(30000), 410);      // 469 steps an epoch: the budget's interval is shorter
  EXPECT_EQ(capped.every_for(10), 50);          // 1 step an epoch: never below 50
  EXPECT_EQ(read({}).every_for(322), 410);      // no cap by default
  EXPECT_EQ(read({"training.stopping_every_epochs=20", "training.stopping_every=300"}).every_for(322), 300);
}

TEST(Stopping, AutoActsOnCsvFilesAndValidationRefusesWhereItCannotAct) {
  EXPECT_FALSE(experiment::stopping_on(cfg_with({"data.dataset=boston"})));
  EXPECT_TRUE(experiment::stopping_on(cfg_with({"data.dataset=mine.csv"})));
  EXPECT_TRUE(experiment::stopping_on(cfg_with({"data.dataset=synthetic:friedman"})));
  EXPECT_FALSE(experiment::stopping_on(cfg_with({"data.dataset=cifar10-mini"})));
  EXPECT_FALSE(experiment::stopping_on(cfg_with({"data.dataset=mine.csv", "training.stopping=off"})));
  EXPECT_TRUE(experiment::stopping_on(cfg_with({"data.dataset=boston", "training.stopping=validation"})));
  // auto quietly keeps SGHMC's fixed schedule; an explicit request is refused
  std::string why;
  EXPECT_FALSE(experiment::stopping_on(cfg_with({"data.dataset=mine.csv", "model.kind=sghmc"}), &why));
  EXPECT_NE(why.find("SGHMC"), std::string::npos);
  EXPECT_NE(error_of([] { experiment::stopping_on(cfg_with({"model.kind=sghmc", "training.stopping=validation"})); })
                .find("training.stopping: off"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              experiment::stopping_on(cfg_with({"training.batched_splits=2", "training.stopping=validation"}));
            }).find("batched"),
            std::string::npos);
}

struct Problem {
  torch::Tensor x_fit, y_fit, x_val, y_val;
};

// 1-D regression with few rows and much noise, which a large network overfits.
Problem small_noisy_problem() {
  const auto g = make_generator(11);
  const auto x = torch::rand({48, 1}, g, torch::kFloat64) * 4 - 2;
  const auto y = torch::sin(2 * x.squeeze(1)) + 0.5 * torch::randn({48}, g, torch::kFloat64);
  const auto h = train::carve_holdout(48, 0.25, 3);
  const auto fit = torch::tensor(h.fit), val = torch::tensor(h.validation);
  return {x.index_select(0, fit), y.index_select(0, fit), x.index_select(0, val), y.index_select(0, val)};
}

struct Run {
  train::TrainStats stats;
  int64_t best_step = -1;
  double best_nll = 0;
  std::vector<torch::Tensor> state;
  double final_nll = 0;  // the kept model's NLL on the held-out rows (deterministic members only)
};

Run train_with_stopping(const std::vector<std::string>& sets, const Problem& p, bool stop) {
  const auto cfg = cfg_with(sets);
  const auto inf = experiment::make_inference(1, cfg, 0.0, 1.0, make_generator(2));
  train::StoppingOptions so;
  so.every = 25;
  so.patience = 4;
  so.mc_samples = 4;
  train::ValidationStopping stopper(*inf, p.x_val, p.y_val, so, make_generator(5));
  Run r;
  const auto total = cfg.get_int("training.steps") + cfg.get_int("training.steps_fixed_noise");
  r.stats = experiment::train(
      *inf, p.x_fit, p.y_fit, cfg, make_generator(3), "t", stop ? so.every : 0,
      [&](int64_t steps) { return (steps % so.every == 0 || steps == total) && stopper.measure(steps); },
      [&] {
        if (stop) stopper.restore_best();
      });
  r.best_step = stopper.best_step();
  r.best_nll = stopper.best_nll();
  for (const auto& [key, t] : inf->state()) r.state.push_back(t.clone());
  const auto f = inf->predict(p.x_val, 4, make_generator(9));
  for (const auto& [key, value] : inf->likelihood().evaluate(f, p.y_val).metrics)
    if (key == "mnll") r.final_nll = value;
  return r;
}

void expect_same_state(const Run& a, const Run& b, const std::string& what) {
  ASSERT_EQ(a.state.size(), b.state.size()) << what;
  for (size_t i = 0; i < a.state.size(); ++i) EXPECT_TRUE(torch::equal(a.state[i], b.state[i])) << what << " #" << i;
}

// The kept parameters are the best measurement's: a deterministic network's
// NLL on the held-out rows after training is the best recorded one, training
// stopped `patience` measurements after it, and a fixed-schedule run of
// best_step steps ends with the same parameters, bit for bit.
TEST(Stopping, KeepsTheBestMeasurementsParametersExactly) {
  set_threads(1);
  const auto p = small_noisy_problem();
  const std::vector<std::string> base = {"model.kind=ensemble", "ensemble.members=1", "model.width=64",
                                         "training.lr=0.01", "training.steps_fixed_noise=0",
                                         "training.log_every=1000000", "training.dtype=float64"};
  auto sets = base;
  sets.push_back("training.steps=4000");
  const auto r = train_with_stopping(sets, p, true);
  ASSERT_GT(r.best_step, 0);
  EXPECT_LT(r.stats.steps, 4000) << "the overfitting network never stopped";
  EXPECT_EQ(r.stats.steps - r.best_step, 4 * 25);
  EXPECT_NEAR(r.final_nll, r.best_nll, 1e-12 * std::abs(r.best_nll));
  auto fixed = base;
  fixed.push_back("training.steps=" + std::to_string(r.best_step));
  expect_same_state(r, train_with_stopping(fixed, p, false), "ensemble");
}

// The same for variational kinds, including the fused step's flat buffers
// (whvi and mfg take it by default) and autograd's (mcd with the KL weight).
TEST(Stopping, VariationalKindsRestoreTheBestStepsParameters) {
  set_threads(1);
  const auto p = small_noisy_problem();
  for (const std::vector<std::string>& kind :
       {std::vector<std::string>{"model.kind=whvi"}, {"model.kind=mfg"}, {"model.kind=mcd", "training.kl_weight=0.5"}}) {
    auto base = kind;
    for (const char* s : {"model.width=32", "training.lr=0.01", "training.steps_fixed_noise=0",
                          "training.log_every=1000000"})
      base.push_back(s);
    auto sets = base;
    sets.push_back("training.steps=600");
    const auto r = train_with_stopping(sets, p, true);
    ASSERT_GT(r.best_step, 0) << kind[0];
    auto fixed = base;
    fixed.push_back("training.steps=" + std::to_string(r.best_step));
    expect_same_state(r, train_with_stopping(fixed, p, false), kind[0]);
    if (r.best_step == r.stats.steps) ADD_FAILURE() << kind[0] << ": the test needs a best step before the last";
  }
}

// The noise variance that fits predictions f [S, N] of targets y best, against
// closed forms and a naive sum: with one sample (or S equal samples) the
// mean squared residual; with several, the naive NLL's derivative in ln v is 0
// there and no point of a wide grid is lower.
TEST(Stopping, TheNoiseFitMinimisesTheHeldOutNll) {
  const auto g = make_generator(21);
  const auto y = torch::randn({30}, g, torch::kFloat64) * 3 + 10;
  const auto f1 = (y + torch::randn({30}, g, torch::kFloat64) * 0.7).unsqueeze(0);
  const double m = (y - f1[0]).square().mean().item<double>();
  EXPECT_NEAR(train::fit_noise_var(f1, y), m, 1e-8 * m);
  EXPECT_NEAR(train::fit_noise_var(f1.repeat({4, 1}), y), m, 1e-8 * m);
  const auto f = y.unsqueeze(0) + torch::randn({5, 30}, g, torch::kFloat64) * 0.7;
  const auto naive = [&](double log_v) {  // −(1/N) Σ_i ln (1/S) Σ_s N(y_i; f_si, v)
    const double v = std::exp(log_v);
    double total = 0;
    for (int64_t i = 0; i < 30; ++i) {
      double p = 0;
      for (int64_t s = 0; s < 5; ++s) {
        const double r = y[i].item<double>() - f[s][i].item<double>();
        p += std::exp(-r * r / (2 * v)) / std::sqrt(2 * M_PI * v) / 5;
      }
      total -= std::log(p);
    }
    return total / 30;
  };
  const double lv = std::log(train::fit_noise_var(f, y));
  EXPECT_NEAR((naive(lv + 1e-4) - naive(lv - 1e-4)) / 2e-4, 0.0, 1e-5);
  for (double d = -6; d <= 6; d += 0.25) EXPECT_LE(naive(lv), naive(lv + d) + 1e-12) << d;
}

// The noise variance at the kept step (training.stopping_noise): refit sets it
// to the held-out rows' best fit at any kept step, for a deterministic network
// their mean squared residual at the kept parameters (target's units); frozen
// only when the kept step lies inside the frozen-noise phase (the steps before
// min_steps), where it is still its initial value; keep never.
TEST(Stopping, TheNoiseIsRefittedAtTheKeptStepAsAsked) {
  set_threads(1);
  const auto p = small_noisy_problem();
  for (const bool inside : {true, false})
    for (const std::string noise : {"refit", "frozen", "keep"}) {
      SCOPED_TRACE(noise + (inside ? ", kept step inside the phase" : ", no frozen phase"));
      const int64_t frozen = inside ? 1000 : 0;
      const auto cfg = cfg_with({"model.kind=ensemble", "ensemble.members=1", "model.width=64", "training.lr=0.01",
                                 "training.steps_fixed_noise=" + std::to_string(frozen),
                                 "training.steps=" + std::to_string(1000 - frozen), "training.log_every=1000000",
                                 "training.dtype=float64", "likelihood.init_log_noise_var=-3"});
      const auto inf = experiment::make_inference(1, cfg, 0.0, 2.0, make_generator(2));
      train::StoppingOptions so;
      so.every = 25;
      so.patience = 4;
      so.mc_samples = 4;
      so.min_steps = frozen;
      so.noise = noise;
      train::ValidationStopping stopper(*inf, p.x_val, p.y_val, so, make_generator(5));
      std::optional<std::pair<double, double>> refit;
      double trained = 0;  // the noise variance at the end of training, after the kept parameters are back
      experiment::train(
          *inf, p.x_fit, p.y_fit / 2.0, cfg, make_generator(3), "t", so.every,  // standardised: sd 2
          [&](int64_t steps) { return steps % so.every == 0 && stopper.measure(steps); },
          [&] {
            stopper.restore_best();
            trained = inf->likelihood().noise_var_original();
            refit = stopper.refit_noise();
          });
      ASSERT_GT(stopper.best_step(), 0);
      if (inside) ASSERT_LT(stopper.best_step(), 1000) << "the test needs the overfitting network's best step inside";
      const double initial = std::exp(-3.0) * 4.0;  // the target's variance
      if (inside) EXPECT_NEAR(trained, initial, 1e-6 * initial);
      const double now = inf->likelihood().noise_var_original();
      if (noise == "keep" || (noise == "frozen" && !inside)) {
        EXPECT_FALSE(refit.has_value());
        EXPECT_EQ(now, trained);
        continue;
      }
      ASSERT_TRUE(refit.has_value());
      EXPECT_NEAR(refit->first, trained, 1e-9 * trained);
      const auto fv = inf->predict(p.x_val, 1, make_generator(9));
      const double m = (p.y_val - fv[0]).square().mean().item<double>();
      EXPECT_NEAR(refit->second, m, 1e-6 * m);
      EXPECT_NEAR(now, m, 1e-6 * m);
      EXPECT_GT(std::abs(std::log(m / trained)), 0.1);  // the refit changed something
    }
}


// The temperature that fits S samples' log class probabilities lp [S, N, C]
// best: against a naive triple sum of the tempered mixture's NLL (each
// sample's logits divided by T, then the samples' probabilities averaged, not
// the mixture's log-probabilities tempered): its derivative in ln T is 0 there
// and no point of a wide grid is lower; one sample whose logits are a
// calibrated model's times 3 gets T near 3.
TEST(Stopping, TheTemperatureFitMinimisesTheTemperedMixturesNll) {
  const auto g = make_generator(23);
  const int64_t S = 4, N = 60, C = 3;
  // labels drawn from softmax(base); the samples over-confident (2 base) and scattered
  const auto base = torch::randn({N, C}, g, torch::kFloat64);
  const auto y = torch::multinomial(torch::softmax(base, 1), 1, true, g).squeeze(1);
  const auto logits = 2 * base.unsqueeze(0) + torch::randn({S, N, C}, g, torch::kFloat64) * 1.5;
  const auto lp = torch::log_softmax(logits, 2);
  const auto naive = [&](double log_t) {  // −(1/N) Σ_i ln (1/S) Σ_s softmax(logits_s / T)_{y_i}
    const double t = std::exp(log_t);
    double total = 0;
    for (int64_t i = 0; i < N; ++i) {
      double p = 0;
      for (int64_t s = 0; s < S; ++s) {
        double z = 0;
        for (int64_t c = 0; c < C; ++c) z += std::exp(logits[s][i][c].item<double>() / t);
        p += std::exp(logits[s][i][y[i].item<int64_t>()].item<double>() / t) / z / S;
      }
      total -= std::log(p);
    }
    return total / N;
  };
  const double lt = std::log(train::fit_sample_temperature(lp, y));
  ASSERT_GT(lt, std::log(0.05) + 0.5);  // inside the range: a minimum, not a bound
  ASSERT_LT(lt, std::log(20.0) - 0.5);
  EXPECT_NEAR((naive(lt + 1e-4) - naive(lt - 1e-4)) / 2e-4, 0.0, 1e-5);
  for (double d = -3; d <= 3; d += 0.1) EXPECT_LE(naive(lt), naive(lt + d) + 1e-12) << d;
  // the mixture's probabilities tempered instead (calibration.kind temperature)
  // have another minimum here: the two readings are told apart
  const auto pbar = (torch::logsumexp(lp, 0) - std::log(double(S))).exp();
  EXPECT_GT(std::abs(std::log(calibration::fit_temperature(pbar, y)) - lt), 0.02);
  // labels drawn from softmax(z), logits 3 z: T near 3 (20,000 rows)
  const auto z = torch::randn({1, 20000, C}, g, torch::kFloat64);
  const auto labels = torch::multinomial(torch::softmax(z[0], 1), 1, true, g).squeeze(1);
  EXPECT_NEAR(train::fit_sample_temperature(torch::log_softmax(3 * z, 2), labels), 3.0, 0.15);
  EXPECT_NEAR(train::fit_sample_temperature(torch::log_softmax(3 * z, 2), labels, 1.0),
              train::fit_sample_temperature(torch::log_softmax(3 * z, 2), labels), 1e-6);
  // under-confident logits z / 3: fit sharpens to T near 1/3, soften (T >= 1) leaves 1
  EXPECT_NEAR(train::fit_sample_temperature(torch::log_softmax(z / 3, 2), labels), 1.0 / 3, 0.02);
  EXPECT_EQ(train::fit_sample_temperature(torch::log_softmax(z / 3, 2), labels, 1.0), 1.0);
  // the MAP under a N(0, 1) prior on ln T: the penalised naive sum's derivative is 0 there
  const double lm = std::log(train::fit_sample_temperature(lp, y, 0.05, 1.0));
  const auto map = [&](double l) { return naive(l) + l * l / (2.0 * N); };
  EXPECT_NEAR((map(lm + 1e-4) - map(lm - 1e-4)) / 2e-4, 0.0, 1e-5);
  EXPECT_GT(std::abs(lm - lt), 1e-3);  // and it is another point than the fit's
  // rows classified right with margin: the fit runs to the range's end, the MAP stays inside
  const auto sep = torch::log_softmax(torch::randn({2, 40, C}, g, torch::kFloat64) +
                                          5 * torch::one_hot(labels.slice(0, 0, 40), C).to(torch::kFloat64).unsqueeze(0),
                                      2);
  EXPECT_LT(train::fit_sample_temperature(sep, labels.slice(0, 0, 40)), 0.0521);  // within a grid step of the end
  const double t_map = train::fit_sample_temperature(sep, labels.slice(0, 0, 40), 0.05, 1.0);
  EXPECT_GT(t_map, 0.1);
  EXPECT_LT(t_map, 1.0);
}

// The temperature at the kept step (training.stopping_temperature) of a
// classifier: fit (soften: at least 1) sets every member's to the held-out rows' best fit at the
// kept parameters, after which predict() divides each sample's logits by it;
// keep leaves 1. A 2-member deterministic ensemble, so the held-out
// predictions do not depend on the draws.
TEST(Stopping, TheTemperatureIsFittedAtTheKeptStepAsAsked) {
  set_threads(1);
  const auto g = make_generator(13);
  const auto x = torch::randn({80, 2}, g, torch::kFloat64);
  // noisy labels: a network that overfits them is over-confident on new rows
  const auto y = ((x.select(1, 0) + 0.8 * torch::randn({80}, g, torch::kFloat64)) > 0).to(torch::kFloat64);
  const auto h = train::carve_holdout(80, 0.3, 3);
  const auto fit = torch::tensor(h.fit), val = torch::tensor(h.validation);
  const auto x_val = x.index_select(0, val), y_val = y.index_select(0, val);
  for (const std::string temperature : {"fit", "soften", "prior", "keep"}) {
    SCOPED_TRACE(temperature);
    const auto cfg = cfg_with({"model.kind=ensemble", "ensemble.members=2", "model.width=32", "training.lr=0.01",
                               "likelihood.kind=softmax", "training.steps_fixed_noise=0", "training.steps=800",
                               "training.log_every=1000000", "training.dtype=float64"});
    const auto inf = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(2), 2);
    train::StoppingOptions so;
    so.every = 25;
    so.patience = 40;  // to the end: the kept step is the best one, wherever it lies
    so.mc_samples = 4;
    so.temperature = temperature;
    train::ValidationStopping stopper(*inf, x_val, y_val, so, make_generator(5));
    std::optional<std::pair<double, double>> refit;
    experiment::train(
        *inf, x.index_select(0, fit), y.index_select(0, fit), cfg, make_generator(3), "t", so.every,
        [&](int64_t steps) { return steps % so.every == 0 && stopper.measure(steps); },
        [&] {
          stopper.restore_best();
          refit = stopper.refit_temperature();
        });
    ASSERT_GT(stopper.best_step(), 0);
    const auto lik = inf->predicting_likelihoods();
    ASSERT_EQ(lik.size(), 2u);
    if (temperature == "keep") {
      EXPECT_FALSE(refit.has_value());
      EXPECT_EQ(train::temperature_of(*inf), 1.0);
      continue;
    }
    ASSERT_TRUE(refit.has_value());
    EXPECT_EQ(refit->first, 1.0);
    for (auto* l : lik) EXPECT_EQ(dynamic_cast<likelihoods::SoftmaxLikelihood&>(*l).temperature(), refit->second);
    const auto tempered = inf->predict(x_val, 2, make_generator(9));
    train::set_temperature(*inf, 1.0);
    const auto plain = inf->predict(x_val, 2, make_generator(9));
    EXPECT_NEAR(refit->second,
                train::fit_sample_temperature(plain, y_val, temperature == "soften" ? 1.0 : 0.05,
                                              temperature == "prior" ? 1.0 : 0.0),
                1e-9);
    EXPECT_TRUE(torch::allclose(tempered, torch::log_softmax(plain / refit->second, 2), 1e-12, 1e-12));
    EXPECT_GT(std::abs(std::log(refit->second)), 0.05);  // the fit changed something
  }
}

}  // namespace
