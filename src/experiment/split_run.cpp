#include "experiment/experiment.h"
#include "experiment/internal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "common/errors.h"
#include "common/io.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/checkpoint.h"
#include "experiment/resolve.h"
#include "experiment/workers.h"
#include "common/rng.h"
#include "data/csv.h"
#include "data/dataset.h"
#include "data/source.h"
#include "data/synthetic.h"
#include "fwht.h"
#include "infer/fused_step.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/metrics.h"
#include "models/regression_model.h"
#include "nn/conv_filter.h"
#include "report/plot.h"
#include "train/batched.h"
#include "train/loop.h"
#include "train/stopping.h"

namespace whvi::experiment::detail {

// evaluation.ood_dataset's stored test rows (raw inputs), or an undefined tensor.
torch::Tensor load_ood_rows(const RunPlan& plan, const data::RegressionData& d) {
  const std::string name = plan.run.ood_dataset;
  if (name.empty()) return {};
  WHVI_CHECK(d.is_classification(), plan.origin, ": evaluation.ood_dataset scores a classifier's uncertainty, but ",
             d.name, " is a regression data set; set evaluation.ood_dataset: ''");
  auto c = *plan.config;
  c.set("data.dataset", name, "evaluation.ood_dataset");
  const auto o = [&] {
    try {
      return load_data(resolve_run(c));
    } catch (const Error& e) {
      throw Error(plan.origin + ": evaluation.ood_dataset '" + printable(name, 200) + "': " + e.what());
    }
  }();
  WHVI_CHECK(o.x.size(1) == d.x.size(1), plan.origin, ": evaluation.ood_dataset ", name, " has ", o.x.size(1),
             " inputs per row, the model reads ", d.x.size(1), " (", d.name, "); give a data set of the same input size");
  WHVI_CHECK(!o.std_test.empty() && !o.std_test[0].empty(), plan.origin, ": evaluation.ood_dataset ", name,
             " has no stored test rows to score");
  std::vector<int64_t> rows = o.std_test[0];
  return o.x.index_select(0, torch::tensor(rows, torch::kInt64)).to(torch::kFloat64);
}

// calibration.kind: a share of the training rows held out (Stream::kCalibration),
// never trained on (nor used to stop training), to fit the calibration after training.
void carve_calibration_rows(const RunPlan& plan, SplitRun& r, uint64_t seed) {
  const auto co = plan.calibration;
  if (co.kind == "none") return;
  auto& p = r.prep;
  const auto h = train::carve_holdout(p.x_train.size(0), co.fraction, derive_seed(seed, r.k, Stream::kCalibration),
                                      "calibration.fraction", "calibration.kind: none");
  const auto fit = torch::tensor(h.fit, torch::kInt64), cal = torch::tensor(h.validation, torch::kInt64);
  calibration::check_rows(co, cal.size(0));  // before training, not after
  r.cal_x = p.x_train.index_select(0, cal);
  r.cal_y = p.y_train_raw.index_select(0, cal).squeeze(1).to(torch::kFloat64);
  p.x_train = p.x_train.index_select(0, fit);
  p.y_train = p.y_train.index_select(0, fit);
  p.y_train_raw = p.y_train_raw.index_select(0, fit);
  spdlog::info("{}: {} of the training rows held out to fit the calibration ({})", r.label, cal.size(0), co.kind);
}

SplitRun prepare_split_run(const RunPlan& plan, const data::RegressionData& d, const data::SplitIndices& split,
                           size_t k, const std::string& stem, const std::string& label,
                           const torch::Tensor& ood_rows) {
  const auto seed = static_cast<uint64_t>(plan.run.seed);
  SplitRun r;
  r.k = k;
  r.test_rows = split.test;
  r.stem = stem;
  r.label = label;
  r.prep = data::prepare_split(d, split);
  // of the split as prepared, before any calibration rows are carved (the carve
  // follows from the config): what --resume and `whvi eval` recompute
  r.data_fp = data_fingerprint(r.prep);
  carve_calibration_rows(plan, r, seed);
  r.inf = infer::make_inference(d.x.size(1), plan.method, r.prep.stats.y_mean.item<double>(),
                                r.prep.stats.y_std.item<double>(), make_generator(seed, k, Stream::kInit),
                                d.num_classes);
  r.inf->likelihood().fit_targets(r.prep.y_train.squeeze(1), d.class_names);  // likelihood.class_weights
  spdlog::info("{}: {} train / {} {} rows, {} parameters, {}", label, r.prep.x_train.size(0), r.prep.x_test.size(0),
               plan.data.validation_fraction > 0 ? "validation" : "test", r.inf->num_params(),
               r.inf->method());
  r.y_test = r.prep.y_test.squeeze(1).to(torch::kFloat64);
  r.n_fit = r.prep.x_train.size(0);
  if (ood_rows.defined()) r.ood_x = (ood_rows - r.prep.stats.x_mean) / r.prep.stats.x_std;
  return r;
}

// One learning-curve point's metrics of rows x (targets y), keys prefixed.
static void add_curve_metrics(json& point, const RunPlan& plan, infer::Inference& inf, const torch::Tensor& x,
                              const torch::Tensor& y, const at::Generator& gen, const std::string& prefix,
                              const char* rows) {
  const auto f = inf.predict(x, plan.run.curve_mc_samples, gen);
  WHVI_CHECK_AS(NonFiniteError, f.isfinite().all().item<bool>(), "the predictions on the ", rows, " rows are not finite");
  for (const auto& [key, value] : evaluate_predictions(plan, inf.likelihood(), f, y).metrics)
    point[prefix + key] = std::isfinite(value) ? json(value) : json(nullptr);
}

// The record's `stopping`: where validation stopping stopped, what it kept,
// and what it refitted at the kept step.
json stopping_record(const train::StoppingOptions& so, const train::ValidationStopping& stopper, int64_t rows,
                     int64_t total, int64_t stopped_at, const std::optional<std::pair<double, double>>& noise_refit,
                     const std::optional<std::pair<double, double>>& temperature_fit) {
  json j = {{"validation_rows", rows},
            {"every", so.every},
            {"patience", so.patience},
            {"mc_samples", so.mc_samples},
            {"max_steps", total},
            {"stopped_at", stopped_at},
            {"stopped_because", stopped_at < total ? "patience: no better validation NLL in the last measurements"
                                                   : "budget: the configured steps ran out"},
            {"best_step", stopper.best_step()},
            {"best_validation_mnll", stopper.best_nll()},
            {"step", stopper.steps()},
            {"validation_mnll", stopper.nll()}};
  if (noise_refit) j["noise_refit"] = {{"from", noise_refit->first}, {"to", noise_refit->second}};
  if (temperature_fit) j["temperature_fit"] = {{"from", temperature_fit->first}, {"to", temperature_fit->second}};
  return j;
}

// Trains and evaluates split k; returns its record (also written to stem.json).
json run_split(const RunPlan& plan, const data::RegressionData& d, const data::SplitIndices& split,
               size_t k, const std::string& stem, const std::string& label, const std::string& fp,
               const torch::Tensor& ood_rows) {
  const auto seed = static_cast<uint64_t>(plan.run.seed);
  auto run = prepare_split_run(plan, d, split, k, stem, label, ood_rows);
  const auto& prep = run.prep;
  const auto& inf = run.inf;
  const auto& y_test = run.y_test;
  const int64_t total = plan.total_steps();
  // Stopping on validation rows (train/stopping.h): a share of the training
  // rows is held out from the steps, rows and draws from Stream::kStopping.
  auto so = plan.stopping;
  auto x_fit = prep.x_train;
  auto y_fit = prep.y_train.squeeze(1);
  auto y_fit_raw = prep.y_train_raw;
  std::unique_ptr<train::ValidationStopping> stopper;
  if (so.on && (so.asked || x_fit.size(0) >= train::kMinRows)) {
    const auto h = train::carve_holdout(x_fit.size(0), so.fraction, derive_seed(seed, k, Stream::kStopping));
    const auto fit = torch::tensor(h.fit, torch::kInt64), val = torch::tensor(h.validation, torch::kInt64);
    so.every = so.every_for(static_cast<int64_t>(h.fit.size()));
    stopper = std::make_unique<train::ValidationStopping>(
        *inf, x_fit.index_select(0, val), prep.y_train_raw.index_select(0, val).squeeze(1).to(torch::kFloat64), so,
        make_generator(derive_seed(seed, k, Stream::kStopping) + 1));
    x_fit = x_fit.index_select(0, fit);
    y_fit = y_fit.index_select(0, fit);
    y_fit_raw = y_fit_raw.index_select(0, fit);
    run.n_fit = x_fit.size(0);
    spdlog::info("{}: {} of the training rows held out to stop training (every {} steps, patience {})", label,
                 h.validation.size(), so.every, so.patience);
  }
  // The learning curve (evaluation.every): the held-out rows evaluated during
  // training, with draws from their own stream (Stream::kCurve), so the
  // trained model and its final numbers are those of a run without a curve.
  json curve = json::array();
  const int64_t curve_every = plan.run.every;
  const int64_t every = std::gcd(curve_every, stopper ? so.every : 0);
  const auto curve_gen = make_generator(seed, k, Stream::kCurve);
  // evaluation.curve_train_rows: the first N rows the steps fit, scored beside
  // the held-out rows (keys train_*), with draws of their own stream
  const int64_t n_ct = std::min<int64_t>(plan.run.curve_train_rows, x_fit.size(0));
  const auto x_ct = x_fit.slice(0, 0, n_ct);
  const auto y_ct = y_fit_raw.slice(0, 0, n_ct).squeeze(1).to(torch::kFloat64);
  const auto curve_train_gen = make_generator(seed, k, Stream::kCurveTrain);
  const auto on_every = [&](int64_t steps) {
    const bool last = steps == total;
    try {
      if (curve_every > 0 && (steps % curve_every == 0 || last)) {
        json point = {{"step", steps}};
        add_curve_metrics(point, plan, *inf, prep.x_test, y_test, curve_gen, "", "test");
        // the learned noise variance (target's units) beside the held-out error it should match
        if (!plan.classification)
          if (const double nv = inf->likelihood().noise_var_original(); std::isfinite(nv)) point["noise_var"] = nv;
        if (n_ct > 0) add_curve_metrics(point, plan, *inf, x_ct, y_ct, curve_train_gen, "train_", "training");
        curve.push_back(point);
      }
      return stopper && (steps % so.every == 0 || last) && stopper->measure(steps);
    } catch (const NonFiniteError& e) {
      throw Error(train::divergence_message(label, steps, e.what(), plan.loop.suspects));
    }
  };
  // training.stopping_noise and training.stopping_temperature (train/stopping.h)
  std::optional<std::pair<double, double>> noise_refit, temperature_fit;
  const auto ts = train::train(*inf, x_fit, y_fit, plan.loop, make_generator(seed, k, Stream::kTrain), label, every,
                               on_every, [&] {
                                 if (!stopper) return;
                                 stopper->restore_best();
                                 noise_refit = stopper->refit_noise();
                                 temperature_fit = stopper->refit_temperature();
                               });
  if (stopper)
    run.stopping = stopping_record(so, *stopper, prep.x_train.size(0) - run.n_fit, total, ts.steps, noise_refit,
                                   temperature_fit);
  return finish_split(plan, d, run, ts, curve_every > 0 ? curve : json(), 0, fp);
}

// Out-of-distribution detection: the OOD rows scored by the trained split,
// separated from the test rows by predictive entropy and mutual information.
void add_ood(json& r, const RunPlan& plan, const data::RegressionData& d, SplitRun& run,
             const torch::Tensor& f, uint64_t seed) {
  const auto& inf = run.inf;
  const size_t k = run.k;
  const auto& label = run.label;
  const auto& stem = run.stem;
  const auto fo = inf->predict(run.ood_x, plan.run.mc_samples, make_generator(seed, k, Stream::kOod));
  const auto ui = metrics::predictive_uncertainty(f), uo = metrics::predictive_uncertainty(fo);
  const auto by_h = metrics::ood_separation(ui.entropy, uo.entropy);
  const auto by_mi = metrics::ood_separation(ui.mutual_information, uo.mutual_information);
  r["ood"] = {{"dataset", plan.run.ood_dataset}, {"rows_in", ui.entropy.size()},
              {"rows_out", uo.entropy.size()},
              {"mean_entropy_in", metrics::summarize(ui.entropy).mean}, {"mean_entropy_out", metrics::summarize(uo.entropy).mean}};
  r["ood_auroc_entropy"] = by_h.auroc;
  r["ood_aupr_entropy"] = by_h.aupr;
  r["ood_auroc_mi"] = by_mi.auroc;
  r["ood_aupr_mi"] = by_mi.aupr;
  spdlog::info("{}: out-of-distribution ({}): AUROC {:.3f} by entropy, {:.3f} by mutual information", label,
               plan.run.ood_dataset, by_h.auroc, by_mi.auroc);
  write_ood_histograms(stem, ui, uo, d.num_classes, label + " vs " + plan.run.ood_dataset,
                       plan.run.plot);
  r["ood"]["histograms"] = fs::path(stem + "-ood.csv").filename().string();
}

void log_split(const std::string& label, const data::RegressionData& d, const likelihoods::Evaluation& m,
               const train::TrainStats& ts, int64_t n_test) {
  if (n_test == 0)  // the toy problem, a final model: nothing held out, so no metric to print
    spdlog::info("{}: trained ({:.1f} s, {:.4g} steps/s); no held-out rows, so no test metrics", label, ts.seconds,
                 ts.steps_per_second);
  else if (d.is_classification())
    spdlog::info("{}: error {:.4g}  MNLL {:.4g}  ECE {:.3g}  Brier {:.4g}  ({:.1f} s, {:.4g} steps/s)", label,
                 m.metric("error"), m.metric("mnll"), m.metric("ece"), m.metric("brier"), ts.seconds,
                 ts.steps_per_second);
  else
    spdlog::info("{}: RMSE {:.4g}  MNLL {:.4g}  cov95 {:.3g}  CRPS {:.4g}  ({:.1f} s, {:.4g} steps/s)", label,
                 m.metric("rmse"), m.metric("mnll"), m.metric("coverage_95"), m.metric("crps"), ts.seconds,
                 ts.steps_per_second);
  // far worse than predicting the mean: a result, but not one to use without a look
  const double y_std = d.is_classification() || d.y.numel() < 2 ? 0.0 : d.y.to(torch::kFloat64).std().item<double>();
  if (n_test > 0 && y_std > 0 && m.metric("rmse") > 10 * y_std)
    spdlog::warn("{}: RMSE {:.4g} is over 10 times the targets' standard deviation {:.4g}: the model predicts far "
                 "worse than their mean would; look for a diverged or extreme setting (a learning rate, an initial "
                 "variance such as model.mfg.init_logvar, model.width)", label, m.metric("rmse"), y_std);
}

// Evaluates a trained split and writes its record, checkpoint and grid.
// batched_with > 0: it was trained in a batched group of that many splits.
// calibration.kind: fitted on the held-out calibration rows' predictions
// (their own draws, Stream::kCalibration), then the test rows' numbers with and
// without it, for the record (and the fit for the checkpoint).
json calibrate(const RunPlan& plan, SplitRun& run, const torch::Tensor& f_test, uint64_t seed) {
  const auto co = plan.calibration;
  auto& lik = run.inf->likelihood();
  const auto fc = run.inf->predict(run.cal_x, plan.run.mc_samples,
                                   make_generator(seed, run.k, Stream::kCalibration));
  WHVI_CHECK(fc.isfinite().all().item<bool>(), run.label, ": the predictions on the calibration rows are not finite");
  run.calibration = calibration::fit(co, lik, fc, run.cal_y);
  auto j = calibration::evaluate(run.calibration, lik, f_test, run.y_test);
  if (j.contains("calibrated"))
    spdlog::info("{}: calibration {} on {} rows: test {}", run.label, co.kind, run.calibration.rows,
                 j.contains("uncalibrated") ? j["calibrated"].dump() + " (uncalibrated " + j["uncalibrated"].dump() + ")"
                                            : j["calibrated"].dump());
  return j;
}

// The objective over training. Its data term = loss - kl_weight x kl: the expected
// negative log likelihood scaled to the training set (plus any Monte Carlo KL
// terms, NF-WHVI's flows).
// A long evaluation (S samples of `rows` rows: a forward pass per sample,
// and scores over every sample, e.g. a mixture's quantiles, so even a few rows
// with 1e6 samples take a minute) says how long first, timed on a pilot of
// S/200 samples drawn from a copy of the generator and scored against y (the
// numbers are those of a run without it).
void announce_prediction(const RunPlan& plan, infer::Inference& inf, const torch::Tensor& x, const torch::Tensor& y,
                         int64_t S, const at::Generator& gen, const std::string& what, const char* key) {
  const int64_t rows = x.size(0);
  if (rows == 0 || static_cast<double>(S) * static_cast<double>(std::max<int64_t>(rows, 64)) < 1e7) return;
  const int64_t pilot = std::max<int64_t>(1, S / 200);
  const auto t0 = std::chrono::steady_clock::now();
  {
    torch::NoGradGuard ng;
    const QuietLog quiet(spdlog::level::off);  // the pilot's scores are not the run's
    (void)evaluate_predictions(plan, inf.likelihood(), inf.predict(x, pilot, gen.clone()), y);
  }
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("{}: {} rows with {} Monte Carlo samples each: about {} ({}; timed on {} samples)", what, rows, S,
               train::duration_text(t * static_cast<double>(S) / static_cast<double>(pilot)), key, pilot);
}

json objective_json(const train::TrainStats& ts) {
  return {{"step", ts.trace_step}, {"loss", ts.trace_loss}, {"kl", ts.trace_kl}, {"kl_weight", ts.trace_kl_weight}};
}

json finish_split(const RunPlan& plan, const data::RegressionData& d, SplitRun& run,
                  const train::TrainStats& ts, const json& curve, int64_t batched_with, const std::string& fp) {
  const auto seed = static_cast<uint64_t>(plan.run.seed);
  const size_t k = run.k;
  const auto& prep = run.prep;
  const auto& inf = run.inf;
  const auto& y_test = run.y_test;
  const auto& label = run.label;
  const auto& stem = run.stem;
  const auto t_eval = std::chrono::steady_clock::now();
  const auto eval_gen = make_generator(seed, k, Stream::kEval);
  announce_prediction(plan, *inf, prep.x_test, y_test, plan.run.mc_samples, eval_gen,
                      label + ": evaluating the held-out", "evaluation.mc_samples");
  const auto f = inf->predict(prep.x_test, plan.run.mc_samples, eval_gen);
  const double noise_var = inf->likelihood().noise_var_original();
  // a model that trained into non-finite predictions or a vanished noise is a
  // divergence, named with its step and settings, not an evaluator's complaint
  const auto m = [&] {
    try {
      WHVI_CHECK_AS(NonFiniteError, f.isfinite().all().item<bool>(), "the trained model's predictions are not finite");
      return evaluate_predictions(plan, inf->likelihood(), f, y_test);
    } catch (const NonFiniteError& e) {
      throw Error(train::divergence_message(label, ts.steps, e.what(), plan.loop.suspects));
    }
  }();
  const double eval_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_eval).count();
  if (y_test.size(0) > 0)
    for (const auto& [key, value] : m.metrics)
      WHVI_CHECK(std::isfinite(value), label, ": the test ", key, " is ", value, " over ", y_test.size(0),
                 " rows: the numbers overflow (largest |test target| ", y_test.abs().max().item<double>(),
                 ", noise variance ", noise_var, "); rescale the target column");
  json r = {{"split", k},
            {"n_train", run.n_fit},
            {"n_test", prep.x_test.size(0)},
            {"seed", seed},
            {"steps", ts.steps},
            {"train_seconds", ts.seconds},
            {"steps_per_second", ts.steps_per_second},
            {"eval_seconds", eval_s},
            {"predictive_samples", f.size(0)},
            {"peak_rss_mib", peak_rss_mib()},  // of the whole process so far
            {"threads", threads()},            // this split's (a parallel worker's share of --threads)
            {"final_neg_elbo", ts.final_loss},
            {"noise_var", std::isfinite(noise_var) ? json(noise_var) : json(nullptr)},  // null: no noise (softmax)
            {"params", {{"total", inf->num_params()}}},
            {"inference", inf->method()},
            {"engine", batched_with > 0 ? std::string("autograd") : inf->engine()},
            {"config_fingerprint", fp},
            {"data_fingerprint", run.data_fp},  // --resume keeps the split only for the same data
            {"whvi_commit", git_commit()}};
  r.update(metrics_json(m));
  if (plan.data.target_transform != "none") r["target_transform"] = plan.data.target_transform;
  for (const auto& [key, value] : inf->learned())
    r["hyperparameters"][key] = std::isfinite(value) ? json(value) : json(nullptr);
  for (const auto& [key, value] : inf->likelihood().learned())
    r["likelihood"][key] = std::isfinite(value) ? json(value) : json(nullptr);
  if (!curve.is_null()) r["curve"] = curve;
  if (!run.stopping.is_null()) r["stopping"] = run.stopping;
  if (run.cal_x.defined()) r["calibration"] = calibrate(plan, run, f, seed);
  if (!ts.trace_step.empty()) r["objective"] = objective_json(ts);
  if (batched_with > 0) r["batched_with"] = batched_with;  // splits in its batched group (steps/s is the group's)
  if (!m.reliability.empty()) r["reliability"] = reliability_json(m.reliability);
  if (run.ood_x.defined()) add_ood(r, plan, d, run, f, seed);
  if (plan.run.checkpoints) {
    save_split_checkpoint(plan, d, run);
    r["checkpoint_checksum"] = file_checksum(stem + ".ckpt");
  }
  if (plan.run.grid_points > 0) {
    const auto toy = write_grid(*inf, d, prep, plan, stem, make_generator(seed, k, Stream::kEval));
    if (!toy.is_null()) {
      r["toy_uncertainty"] = toy;
      log_toy_uncertainty(label, toy);
    }
  }
  if (!d.inputs.empty()) add_test_rows(r, d, run);
  r["record_digest"] = record_digest(r);
  write_file_atomic(stem + ".json", r.dump(2) + "\n");
  log_split(label, d, m, ts, prep.x_test.size(0));
  return r;
}

}  // namespace whvi::experiment::detail
