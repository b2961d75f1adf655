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

// "yacht-whvi split 3 (of 8)": the label of split k in logs and errors.
std::string split_label(const std::string& name, size_t k, size_t n) {
  return name + " split " + std::to_string(k) + " (of " + std::to_string(n) + ")";
}

std::string split_stem(const fs::path& dir, size_t k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "split-%02zu", k);
  return (dir / buf).string();
}

// stored: the data set's stored standard splits (protocol standard; 0 otherwise).
json protocol_json(const RunPlan& plan, size_t planned, size_t done, size_t stored) {
  const int64_t steps = plan.total_steps();
  const bool toy = plan.toy;
  const bool paper = plan.data.protocol == "paper" || plan.data.protocol == "stratified";
  const bool validation = plan.data.validation_fraction > 0;
  std::string note;
  bool shortened = false;
  // the WHVI paper's schedule is that of its regression benchmarks (data.protocol:
  // paper); stopping on held-out rows makes the steps a maximum, not a schedule
  if (!toy && steps < kPaperSteps && plan.data.protocol == "paper" && !plan.classification &&
      !plan.stopping.on) {
    shortened = true;
    note += "shortened: " + std::to_string(steps) + " of the paper's " + std::to_string(kPaperSteps) + " steps. ";
  }
  if (!toy && paper && planned < static_cast<size_t>(kPaperSplits)) {
    shortened = true;
    note += "shortened: " + std::to_string(planned) + " of the paper's 8 splits. ";
  }
  if (!toy && plan.data.protocol == "standard" && planned < stored) {
    shortened = true;
    note += "shortened: " + std::to_string(planned) + " of the data set's " + std::to_string(stored) +
            " standard splits. ";
  }
  if (validation)
    note += "metrics are on validation rows carved from each training split; the test rows were not read. ";
  return {{"name", toy ? "toy" : plan.data.protocol},
          {"splits_planned", planned},
          {"splits_done", done},
          {"steps", steps},
          {"evaluated_on", plan.no_test_rows ? "none" : validation ? "validation" : "test"},
          {"shortened", shortened},
          {"note", note}};
}

const std::vector<const char*>& metric_names(const RunPlan& plan) {
  return plan.classification ? metrics::classification_metric_names() : metrics::regression_metric_names();
}

json summary_json(const RunPlan& plan, const std::vector<json>& splits) {
  json s = json::object();
  std::vector<std::string> keys(metric_names(plan).begin(), metric_names(plan).end());
  if (!plan.classification) keys.push_back("noise_var");
  keys.insert(keys.end(), {"steps_per_second", "train_seconds"});
  if (!plan.run.ood_dataset.empty())
    keys.insert(keys.end(), {"ood_auroc_entropy", "ood_aupr_entropy", "ood_auroc_mi", "ood_aupr_mi"});
  for (const auto& key : keys) {
    std::vector<double> v;
    for (const auto& r : splits)
      if (r.contains(key) && r[key].is_number()) v.push_back(r[key].get<double>());
    const auto m = metrics::summarize(v);
    if (m.n == 0)  // the toy problem has no test rows
      s[key] = {{"mean", nullptr}, {"std", nullptr}, {"sem", nullptr}, {"n", 0}};
    else
      s[key] = {{"mean", m.mean}, {"std", m.std}, {"sem", m.sem}, {"n", m.n}};
  }
  return s;
}

json environment_json() {
  return {{"whvi_version", WHVI_VERSION},
          {"whvi_commit", git_commit()},
          {"torch_version", torch_version()},
          {"threads", threads()},
          {"denormals", denormals_flushed() ? "flushed to zero" : "kept"},
          {"simd_level", kernels::simd_level_name(kernels::active_simd_level())},
          {"blas", blas_info()},
          {"cpu_model", cpu_model()}};
}

// The input columns a checkpoint's model reads, for whvi predict: the CSV
// columns by name (text columns with their categories), or x1..xD for the
// built-in data sets; the target's name and the classes.
json input_encoding(const data::RegressionData& d) {
  json cols = json::array();
  if (d.inputs.empty())
    for (int64_t j = 0; j < d.x.size(1); ++j) cols.push_back({{"name", "x" + std::to_string(j + 1)}, {"categories", json::array()}});
  else
    for (const auto& c : d.inputs) {
      json col = {{"name", c.name}, {"categories", c.categories}};
      if (c.missing_indicator) col["missing_indicator"] = true;  // older checkpoints have none
      if (c.declared) col["declared"] = true;  // its numbers are categories by value (data::category_key)
      cols.push_back(col);
    }
  return {{"dataset", d.name},
          {"columns", cols},
          {"target", d.target_name.empty() ? std::string("y") : d.target_name},
          {"classes", d.class_names},
          {"pixels", !d.standardize_x}};
}

// Predictions on a 1-D grid (CSV) and a PNG (report/plot.h). For the
// toy problem, returns the mean predictive std (noise included) at the data,
// inside the gap (its middle, [0.35, 0.75]) and outside the data (beyond 0.5
// of the domain's ends), as in the paper's Fig. 4; otherwise null.
json write_grid(infer::Inference& inf, const data::RegressionData& d,
                const data::PreparedSplit& prep, const RunPlan& plan, const std::string& stem,
                const at::Generator& gen) {
  const auto grid = data::grid_1d(plan.run.grid_lo, plan.run.grid_hi,
                                  static_cast<int>(plan.run.grid_points));
  const auto xs = (grid - prep.stats.x_mean) / prep.stats.x_std;
  const auto samples = inf.predict(xs, plan.run.mc_samples, gen);
  torch::Tensor f = samples, sd;
  if (samples.dim() == 3) {  // hetero-gaussian, mixture, a closed form: a variance per sample and point
    const auto [mu, var] = inf.likelihood().predictive_moments(samples);
    f = mu;
    sd = (mu.var(0, false) + var.mean(0)).sqrt();
  } else {
    sd = (f.var(0, false) + inf.likelihood().noise_var_original()).sqrt();
  }
  const auto mean = f.mean(0);
  std::ostringstream pred, dat;
  pred << "x,mean,std,lo95,hi95,lo75,hi75\n";
  for (int64_t i = 0; i < grid.size(0); ++i) {
    const double m = mean[i].item<double>(), s = sd[i].item<double>();
    pred << grid[i][0].item<double>() << ',' << m << ',' << s << ',' << m - 1.959964 * s << ','
         << m + 1.959964 * s << ',' << m - 1.150349 * s << ',' << m + 1.150349 * s << '\n';
  }
  dat << "x,y\n";
  for (int64_t i = 0; i < d.x.size(0); ++i)
    dat << d.x[i][0].item<double>() << ',' << d.y[i][0].item<double>() << '\n';
  write_file_atomic(stem + "-grid.csv", pred.str());
  write_file_atomic(stem + "-data.csv", dat.str());
  spdlog::info("wrote {}-grid.csv and {}-data.csv", stem, stem);
  json toy = nullptr;
  if (plan.toy) {
    double sum[3] = {0, 0, 0};
    int n[3] = {0, 0, 0};
    for (int64_t i = 0; i < grid.size(0); ++i) {
      const double x = grid[i][0].item<double>(), v = sd[i].item<double>();
      const int region = (x >= data::kToyLo && x <= data::kToyGapLo) || (x >= data::kToyGapHi && x <= data::kToyHi) ? 0
                         : (x >= 0.35 && x <= 0.75)                                                          ? 1
                         : (x < data::kToyLo - 0.5 || x > data::kToyHi + 0.5)                                ? 2
                                                                                                              : -1;
      if (region >= 0) sum[region] += v, ++n[region];
    }
    auto mean = [&](int r) { return n[r] ? json(sum[r] / n[r]) : json(nullptr); };
    toy = {{"std_at_data", mean(0)}, {"std_in_gap", mean(1)}, {"std_outside", mean(2)}};
    if (n[0] && n[1]) toy["gap_over_data"] = (sum[1] / n[1]) / (sum[0] / n[0]);
    if (n[0] && n[2]) toy["outside_over_data"] = (sum[2] / n[2]) / (sum[0] / n[0]);
  }
  if (!plan.run.plot) return toy;
  const std::string why = report::plot_toy(pred.str(), dat.str(), plan.run.name, stem + ".png");
  if (why.empty())
    spdlog::info("wrote {}.png", stem);
  else
    spdlog::warn("no plot {}.png: {}; the CSV files are written", stem, why);
  return toy;
}

// write_grid's toy summary in one line; a region no grid point falls in
// (output.grid_points small, or the grid elsewhere) is null in it: "n/a".
void log_toy_uncertainty(const std::string& label, const json& toy) {
  bool missing = false;
  const auto num = [&](const char* key, const char* fmt) {
    if (!toy.contains(key) || !toy[key].is_number()) return missing = true, std::string("n/a");
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, toy[key].get<double>());
    return std::string(buf);
  };
  const auto at = num("std_at_data", "%.3g"), gap = num("gap_over_data", "%.2fx"),
             out = num("outside_over_data", "%.2fx");
  spdlog::info("{}: predictive std {} at the data; {} that in the gap, {} outside the data{}", label, at, gap, out,
               missing ? " (too few grid points there: raise output.grid_points)" : "");
}

// A finished split's file, checked before --resume trusts it.
json read_split_file(const std::string& path, const std::string& fp) {
  const auto r = read_json(path);
  const std::string fix = " Delete it to recompute that split.";
  WHVI_CHECK(r.is_object(), path, " is not a split result (expected a JSON object)." + fix);
  WHVI_CHECK(r.contains("config_fingerprint") && r["config_fingerprint"].is_string(), path,
             " has no configuration fingerprint (it was written by an older whvi, or edited), so it "
             "cannot be matched to this configuration.", fix);
  WHVI_CHECK(r["config_fingerprint"].get<std::string>() == fp, path,
             " was produced by a different configuration; delete ", fs::path(path).parent_path().string(),
             " or choose another output.name to keep both");
  std::vector<const char*> keys(metrics::regression_metric_names());
  keys.insert(keys.end(), metrics::classification_metric_names().begin(), metrics::classification_metric_names().end());
  for (const char* key : keys) {
    if (!r.contains(key)) continue;
    const auto& v = r[key];
    WHVI_CHECK(v.is_null() || v.is_number(), path, ": '", key, "' is not a number.", fix);
    if (v.is_null()) continue;
    const double x = v.get<double>();
    const bool nonneg = std::string(key) != "mnll" && std::string(key) != "mnll_paper";
    WHVI_CHECK(std::isfinite(x) && (!nonneg || x >= 0), path, ": '", key, "' = ", x,
               " is not a possible value.", fix);
  }
  return r;
}

likelihoods::Evaluation evaluate_predictions(const RunPlan& plan, likelihoods::Likelihood& lik,
                                             const torch::Tensor& f, const torch::Tensor& y) {
  auto e = lik.evaluate(f, y);
  if (plan.data.target_transform == "log") {
    const auto [mu, var] = lik.predictive_moments(f);
    e.metrics = metrics::in_target_units(e.metrics, mu, var, y);
  }
  return e;
}

json metrics_json(const likelihoods::Evaluation& e) {
  json j = json::object();
  for (const auto& [key, v] : e.metrics) j[key] = std::isfinite(v) ? json(v) : json(nullptr);
  return j;
}

json reliability_json(const std::vector<metrics::ReliabilityBin>& bins) {
  json a = json::array();
  for (const auto& b : bins)
    a.push_back({{"lo", b.lo},
                 {"hi", b.hi},
                 {"count", b.count},
                 {"accuracy", std::isfinite(b.accuracy) ? json(b.accuracy) : json(nullptr)},
                 {"confidence", std::isfinite(b.confidence) ? json(b.confidence) : json(nullptr)}});
  return a;
}

// The reliability diagram of all finished splits together (their bins
// pooled: counts added, accuracy and confidence weighted by count), as a JSON
// array, a CSV and a PNG (report/plot.h) beside the experiment's record.
json pooled_reliability(const std::vector<json>& splits, const std::string& stem, const std::string& title,
                        bool plot) {
  std::vector<double> lo, hi, n, acc, conf;
  for (const auto& r : splits) {
    if (!r.contains("reliability") || !r["reliability"].is_array()) continue;
    const auto& bins = r["reliability"];
    if (lo.empty())
      for (const auto& b : bins) {
        lo.push_back(b["lo"].get<double>()), hi.push_back(b["hi"].get<double>());
        n.push_back(0), acc.push_back(0), conf.push_back(0);
      }
    if (bins.size() != lo.size()) continue;
    for (size_t i = 0; i < bins.size(); ++i) {
      const double c = bins[i]["count"].get<double>();
      if (c <= 0) continue;
      n[i] += c;
      acc[i] += c * bins[i]["accuracy"].get<double>();
      conf[i] += c * bins[i]["confidence"].get<double>();
    }
  }
  if (lo.empty()) return nullptr;
  json out = json::array();
  std::ostringstream csv;
  csv << "lo,hi,count,accuracy,confidence\n";
  double total = 0, ece = 0;
  for (double c : n) total += c;
  for (size_t i = 0; i < lo.size(); ++i) {
    const bool any = n[i] > 0;
    const double a = any ? acc[i] / n[i] : std::nan(""), f = any ? conf[i] / n[i] : std::nan("");
    if (any) ece += n[i] / total * std::fabs(a - f);
    out.push_back({{"lo", lo[i]}, {"hi", hi[i]}, {"count", n[i]},
                   {"accuracy", any ? json(a) : json(nullptr)}, {"confidence", any ? json(f) : json(nullptr)}});
    csv << lo[i] << ',' << hi[i] << ',' << n[i] << ',';
    if (any) csv << a << ',' << f;
    else csv << "NaN,NaN";
    csv << '\n';
  }
  std::string file = csv.str();  // an empty bin has no accuracy: empty cells in the file
  for (size_t at; (at = file.find(",NaN,NaN\n")) != std::string::npos;) file.replace(at, 9, ",,\n");
  write_file_atomic(stem + "-reliability.csv", file);
  if (plot) {
    char e[32];
    std::snprintf(e, sizeof e, "%.4f", ece);
    const std::string why = report::plot_reliability(
        csv.str(), title + ": ECE " + e + " (" + std::to_string(splits.size()) + " split(s) pooled)",
        stem + "-reliability.png");
    if (!why.empty()) spdlog::warn("no reliability diagram {}-reliability.png: {}", stem, why);
  }
  return {{"bins", out}, {"ece_pooled", ece}, {"csv", fs::path(stem + "-reliability.csv").filename().string()}};
}

// The shares of the in- and out-of-distribution rows per bin of predictive
// entropy (30 bins over [0, ln C]) and of mutual information (30 bins over
// [0, the largest value]) as stem-ood.csv (score,lo,hi,in,out), and their
// histograms as stem-ood.png (report/plot.h) when plotting is on.
void write_ood_histograms(const std::string& stem, const metrics::Uncertainty& in, const metrics::Uncertainty& out,
                          int64_t classes, const std::string& title, bool plot) {
  constexpr int kBins = 30;
  std::ostringstream csv;
  csv.precision(9);
  csv << "score,lo,hi,in,out\n";
  auto bins = [&](const char* name, const std::vector<double>& a, const std::vector<double>& b, double top) {
    top = std::max(top, 1e-12);
    std::vector<double> ca(kBins, 0), cb(kBins, 0);
    auto bin = [&](double v) { return std::clamp(static_cast<int>(v / top * kBins), 0, kBins - 1); };
    for (double v : a) ca[static_cast<size_t>(bin(v))] += 1.0 / static_cast<double>(a.size());
    for (double v : b) cb[static_cast<size_t>(bin(v))] += 1.0 / static_cast<double>(b.size());
    for (int i = 0; i < kBins; ++i)
      csv << name << ',' << top * i / kBins << ',' << top * (i + 1) / kBins << ',' << ca[static_cast<size_t>(i)] << ','
          << cb[static_cast<size_t>(i)] << '\n';
  };
  bins("entropy", in.entropy, out.entropy, std::log(static_cast<double>(std::max<int64_t>(classes, 2))));
  double top_mi = 0;
  for (const auto* v : {&in.mutual_information, &out.mutual_information})
    for (double x : *v) top_mi = std::max(top_mi, x);
  bins("mutual_information", in.mutual_information, out.mutual_information, top_mi);
  write_file_atomic(stem + "-ood.csv", csv.str());
  if (!plot) return;
  const std::string why = report::plot_ood(csv.str(), title, stem + "-ood.png");
  if (!why.empty()) spdlog::warn("no out-of-distribution histograms {}-ood.png: {}", stem, why);
}

}  // namespace whvi::experiment::detail
