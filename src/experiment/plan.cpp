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
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "data/csv.h"
#include "data/dataset.h"
#include "data/source.h"
#include "data/synthetic.h"
#include "experiment/checkpoint.h"
#include "experiment/resolve.h"
#include "experiment/workers.h"
#include "fwht.h"
#include "infer/fused_step.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/metrics.h"
#include "likelihoods/softmax.h"
#include "models/regression_model.h"
#include "nn/conv_filter.h"
#include "report/plot.h"
#include "train/batched.h"
#include "train/loop.h"
#include "train/stopping.h"

namespace whvi::experiment::detail {

json read_json(const std::string& path) {
  return read_json_file(path, "result file", "delete the file to recompute that split");
}

// data.target_transform: log: the targets become their natural log, checked
// positive first (the row named); the metrics return to the target's units
// (metrics::in_target_units).
void log_targets(const RunPlan& p, data::RegressionData& d) {
  WHVI_CHECK(!d.is_classification(), p.origin, ": data.target_transform: log transforms a regression target, "
             "but this is classification; remove data.target_transform");
  WHVI_CHECK(p.method.likelihood_kind != "student-t", p.origin, ": data.target_transform: log with "
             "likelihood.kind student-t has no predictive mean (a log-t distribution's mean is infinite); use "
             "likelihood.kind gaussian or hetero-gaussian");
  WHVI_CHECK(p.method.likelihood_kind != "mixture", p.origin, ": data.target_transform: log with "
             "likelihood.kind mixture is not built yet (the target's units' RMSE and CRPS would treat each sample's "
             "mixture as one Gaussian); train the mixture on the target as it is, or use likelihood.kind gaussian or "
             "hetero-gaussian with the log");
  const auto y = d.y.reshape({-1});
  const auto bad = (y <= 0).logical_or(y.isnan()).nonzero();
  if (bad.size(0) > 0) {
    const int64_t i = bad[0][0].item<int64_t>();
    std::ostringstream v;
    v << y[i].item<double>();
    throw Error(p.origin + ": data.target_transform: log needs every target > 0, but data row " +
                std::to_string(i) + " (0-based) has target " + v.str() +
                "; remove data.target_transform, or shift the target column to be positive");
  }
  d.y = d.y.log();
}

data::RegressionData load_data(const RunPlan& p) {
  data::DataRequest r;
  r.dataset = p.data.dataset;
  r.data_dir = data::resolve_data_dir(p.data.dir);
  r.seed = static_cast<uint64_t>(p.data.split_seed);
  r.classification = p.classification;
  auto d = data::load_data(p.data_plan, r);
  if (p.data.target_transform == "log") log_targets(p, d);
  return d;
}

// Replaces split k's test rows by a validation set carved from its training
// rows: they are shuffled by (split_seed, k, c.stream), and block c.block of
// c.fraction of them, counted from the end, is held out: rows
// [n - round((b+1) f n), n - round(b f n)) of the shuffle, so block 0 is its
// last round(f n) rows; the rest train, in shuffled order. The blocks of one
// shuffle are disjoint: with f = 1/K, blocks 0..K-1 are a K-fold
// cross-validation's folds. The test rows are dropped, so nothing downstream
// can read them.
void carve_validation(data::SplitIndices& s, const Carve& c, uint64_t split_seed, size_t k) {
  std::mt19937_64 g(derive_seed(split_seed, k, c.stream));
  auto& tr = s.train;
  const auto n = static_cast<int64_t>(tr.size());
  shuffle(tr, g);
  const auto edge = [&](int64_t b) {
    return n - std::llround(static_cast<double>(b) * c.fraction * static_cast<double>(n));
  };
  const int64_t hi = edge(c.block), lo = edge(c.block + 1), n_val = hi - lo;
  int64_t fit = 0;  // the blocks that fit, counted up to c.block + 1
  while (fit <= c.block && edge(fit + 1) >= 0) ++fit;
  WHVI_CHECK(lo >= 0, c.block_key, " = ", c.block, " with ", c.key, " = ", c.fraction, " needs ", c.block + 1,
             " disjoint blocks of split ", k, "'s ", n, " training rows, which hold ", fit, "; lower ", c.block_key,
             " (model.auto.folds sets it) or ", c.key);
  WHVI_CHECK(n_val >= 1 && n - n_val >= 2, c.key, " = ", c.fraction, " of split ", k, "'s ", n,
             " training rows leaves ", n_val, " validation and ", n - n_val,
             " training rows; at least 1 and 2 are needed");
  s.test.assign(tr.begin() + lo, tr.begin() + hi);
  tr.erase(tr.begin() + lo, tr.begin() + hi);
}

// A split left with a handful of training rows by the fractions held out
// (test, validation) trains, but learns next to nothing: said before it does.
void warn_few_training_rows(const std::vector<data::SplitIndices>& splits, int64_t rows) {
  size_t fewest = static_cast<size_t>(rows);
  for (const auto& sp : splits) fewest = std::min(fewest, sp.train.size());
  if (splits.empty() || fewest >= 10 || rows < 30) return;
  spdlog::warn("a split trains on only {} of the {} rows (the rest held out by data.test_fraction, "
               "data.train_fraction or data.validation_fraction): a model learns next to nothing from so few; "
               "hold out less", fewest, rows);
}

// The validation carve data.validation_* asks for, or with `inner` the nested
// one of data.inner_validation_* (a fraction of 0: none), checked against each other.
Carve carve_of(const RunPlan& p, bool inner) {
  const char* key = inner ? "data.inner_validation_fraction" : "data.validation_fraction";
  const char* block_key = inner ? "data.inner_validation_block" : "data.validation_block";
  const Carve c{inner ? p.data.inner_validation_fraction : p.data.validation_fraction,
                inner ? p.data.inner_validation_block : p.data.validation_block,
                inner ? Stream::kInnerSelection : Stream::kSelection, key, block_key};
  WHVI_CHECK(c.block == 0 || c.fraction > 0, p.origin, ": ", block_key, " picks one of the disjoint validation ",
             "sets of ", key, ", but that is 0; set it, or remove ", block_key);
  WHVI_CHECK(!inner || c.fraction == 0 || p.data.validation_fraction > 0, p.origin,
             ": data.inner_validation_fraction carves validation rows inside those data.validation_fraction leaves ",
             "to train, but data.validation_fraction is 0; set it, or use data.validation_fraction alone");
  return c;
}

std::vector<data::SplitIndices> load_splits(const RunPlan& p, const data::RegressionData& d) {
  const Carve outer = carve_of(p, false), inner = carve_of(p, true);  // checked before any protocol's branch
  std::vector<data::SplitIndices> out;
  if (p.toy) {
    WHVI_CHECK(p.data.splits == 1, p.origin, ": data.splits = ", p.data.splits,
               ", but the toy problem has exactly one split (all its points train the model); "
               "set data.splits: 1 (or --set data.splits=1)");
    data::SplitIndices s;
    for (int64_t i = 0; i < d.x.size(0); ++i) s.train.push_back(i);
    out.push_back(s);
  } else if (p.data.protocol == "all") {
    WHVI_CHECK(p.data.splits == 1 && p.data.validation_fraction == 0, p.origin,
               ": data.protocol: all trains one final model on every row, so it has exactly one split and no "
               "validation rows; set data.splits: 1 and data.validation_fraction: 0");
    data::SplitIndices s;
    for (int64_t i = 0; i < d.x.size(0); ++i) s.train.push_back(i);
    out.push_back(s);
    return out;
  } else {
    const std::string& protocol = p.data.protocol;
    // a table of the user's has no stored splits: the paper protocol means random splits there
    const bool csv = p.source->user_table;
    const bool random = protocol == "random" || (csv && protocol == "paper");
    static bool said = false;  // once per process (model.kind auto's candidates load the same splits)
    if (!said && (random || (protocol != "paper" && protocol != "stratified")) &&
        p.data.train_fraction != DataOptions().train_fraction) {
      said = true;
      spdlog::warn("{}: data.train_fraction {} is not used by these splits ({}); remove it{}", p.origin,
                   p.data.train_fraction, random ? "random splits hold out data.test_fraction" : "data.protocol " + protocol,
                   random ? " and set data.test_fraction instead" : "");
    }
    out = data::make_splits(d, random ? "random" : protocol,
                            static_cast<int>(protocol == "kfold" ? p.data.folds : p.data.splits),
                            static_cast<uint64_t>(p.data.split_seed),
                            random ? 1.0 - p.data.test_fraction : p.data.train_fraction);
  }
  const auto seed = static_cast<uint64_t>(p.data.split_seed);
  if (outer.fraction > 0)
    for (size_t k = 0; k < out.size(); ++k) {
      carve_validation(out[k], outer, seed, k);
      // nested: the outer validation rows are dropped as the test rows were
      if (inner.fraction > 0) carve_validation(out[k], inner, seed, k);
    }
  warn_few_training_rows(out, d.x.size(0));
  return out;
}

// training.device other than cpu: a device this build and machine have, and
// a run that can use it (docs/kernels.md "Training on a GPU").
void check_device(const RunPlan& p) {
  const std::string& dev = p.method.device;
  const std::string& why = p.can().cpu_only;
  WHVI_CHECK(why.empty(), p.origin, ": training.device ", dev, ": model.kind ", p.method.kind, " runs on the CPU only (",
             why, "); set training.device: cpu");
  WHVI_CHECK(p.method.variational.engine != "fused", p.origin, ": training.device ", dev,
             ": the fused step (training.engine: fused) runs on the CPU; set training.engine: autograd");
  WHVI_CHECK(p.method.batched_splits == 1, p.origin, ": training.device ", dev,
             ": batched splits (training.batched_splits) run on the CPU; set training.batched_splits: 1");
  WHVI_CHECK(p.run.every == 0, p.origin, ": training.device ", dev,
             ": a learning curve (evaluation.every) evaluates on the CPU during training; set evaluation.every: 0");
  WHVI_CHECK(torch::cuda::is_available(), p.origin, ": training.device is ", dev, ", but the LibTorch ",
             torch_version(), " of this whvi sees no CUDA device: a LibTorch built for the CPU only (as Debian's "
             "is), or no GPU visible (nvidia-smi, CUDA_VISIBLE_DEVICES). Build whvi with -DWHVI_CUDA=ON against a "
             "LibTorch with CUDA on a GPU machine (scripts/gpu_check.sh does), or set training.device: cpu");
}

// The predictive samples that evaluation holds at once (S x rows x outputs
// doubles, about 3 copies while scoring): refused before training, with the
// estimate and the setting to lower, when they cannot fit in this machine.
void check_evaluation_memory(const RunPlan& p, const data::RegressionData& d,
                             const std::vector<data::SplitIndices>& splits) {
  const auto& can = p.can();
  const bool sghmc = can.keeps_samples;
  const double S = static_cast<double>(sghmc ? p.uses.sghmc_samples : p.run.mc_samples);
  const double C = static_cast<double>(std::max<int64_t>(1, d.num_classes));
  size_t rows = 0, train_rows = 0;
  for (const auto& sp : splits) rows = std::max(rows, sp.test.size()), train_rows = std::max(train_rows, sp.train.size());
  const double grid = static_cast<double>(p.run.grid_points);
  // a learning curve's points score the held-out rows and, with
  // evaluation.curve_train_rows, that many training rows the same way
  const double curve_rows = p.run.every > 0
                                ? static_cast<double>(std::min<int64_t>(p.run.curve_train_rows,
                                                                        static_cast<int64_t>(train_rows)))
                                : 0.0;
  const double need = 3.0 * 8.0 * S * C * std::max({static_cast<double>(rows), grid, curve_rows});
  const double have = usable_memory_bytes();
  const auto gib = [](double b) { return std::to_string(static_cast<int64_t>(std::ceil(b / (1 << 30)))) + " GiB"; };
  // the stopping rule's measurements hold training.stopping_mc_samples x its held-out rows the same way
  if (p.stopping.mode != "off" && !sghmc) {
    const double S_stop = static_cast<double>(p.stopping.mc_samples);
    const double held = std::ceil(p.stopping.fraction * static_cast<double>(train_rows));
    const double stop_need = 3.0 * 8.0 * S_stop * C * held;
    WHVI_CHECK(have <= 0 || stop_need <= have, p.origin, ": the stopping rule's measurements would hold about ",
               gib(stop_need), " of predictive samples (training.stopping_mc_samples = ",
               static_cast<int64_t>(S_stop), " x ", static_cast<int64_t>(held), " held-out rows",
               C > 1 ? " x " + std::to_string(static_cast<int64_t>(C)) + " classes" : std::string(),
               "), more than the ", gib(have), " this process can use; lower training.stopping_mc_samples");
  }
  if (have <= 0 || need <= have) return;
  throw Error(p.origin + ": evaluation would hold about " + gib(need) + " of predictive samples (" +
              (sghmc ? can.samples_key : std::string("evaluation.mc_samples")) + " = " +
              std::to_string(static_cast<int64_t>(S)) + " x " +
              (curve_rows > std::max(grid, static_cast<double>(rows))
                   ? "evaluation.curve_train_rows = " + std::to_string(static_cast<int64_t>(curve_rows))
                   : grid > static_cast<double>(rows)
                         ? "output.grid_points = " + std::to_string(static_cast<int64_t>(grid))
                         : std::to_string(rows) + " test rows") +
              (C > 1 ? " x " + std::to_string(static_cast<int64_t>(C)) + " classes" : std::string()) +
              "), more than the " + gib(have) + " this process can use (memory, cgroup or ulimit -v); lower " +
              (sghmc ? can.samples_key : std::string("evaluation.mc_samples")) +
              (curve_rows > std::max(grid, static_cast<double>(rows)) ? " or evaluation.curve_train_rows"
               : grid > static_cast<double>(rows)                      ? " or output.grid_points"
                                                                         : ""));
}

// A learning curve that will take long says so before training: its points
// (one every evaluation.every steps) each draw evaluation.curve_mc_samples on
// the held-out rows and evaluation.curve_train_rows.
void say_curve_work(const RunPlan& p, const std::vector<data::SplitIndices>& splits) {
  if (p.run.every <= 0 || splits.empty()) return;
  const double points = std::ceil(static_cast<double>(p.total_steps()) / static_cast<double>(p.run.every));
  const double rows = static_cast<double>(splits.front().test.size() +
                                          std::min(p.run.curve_train_rows, static_cast<int64_t>(splits.front().train.size())));
  const double row_samples = points * static_cast<double>(p.run.curve_mc_samples) * rows;
  if (row_samples > 1e8)
    spdlog::info("{}: the learning curve scores {:.0f} points a split (evaluation.every = {}), each drawing "
                 "evaluation.curve_mc_samples = {} samples on {:.0f} rows: about {:.2g} row-samples a split, which takes "
                 "a long while; raise evaluation.every or lower evaluation.curve_mc_samples to finish sooner",
                 p.origin, points, p.run.every, p.run.curve_mc_samples, rows, row_samples);
}

// Everything that can be checked before the first split trains.
void check_before_training(const RunPlan& p, const data::RegressionData& d,
                           const std::vector<data::SplitIndices>& splits) {
  WHVI_CHECK(p.uses.class_weights == "none" || p.classification, p.origin,
             ": likelihood.class_weights weighs classes, but likelihood.kind is ", p.method.likelihood_kind,
             " (regression); remove likelihood.class_weights or set likelihood.kind: softmax");
  calibration::check_task(p.calibration, d.is_classification());
  if (d.is_classification())  // a class it names, and its weights, checked before any split trains
    likelihoods::SoftmaxLikelihood(d.num_classes, p.uses.class_weights)
        .fit_targets(d.y.squeeze(1), d.class_names);
  if (p.run.grid_points > 0) {
    WHVI_CHECK(d.x.size(1) == 1, p.origin, ": output.grid_points needs 1-D inputs, but ", d.name, " has ",
               d.x.size(1), " input columns; set output.grid_points: 0");
    const double lo = p.run.grid_lo, hi = p.run.grid_hi;
    WHVI_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo < hi && std::isfinite(hi - lo) &&
                   std::max(std::abs(lo), std::abs(hi)) <= 1e15,
               p.origin, ": the grid from output.grid_lo = ", lo, " to output.grid_hi = ", hi,
               " is not a finite interval with grid_lo < grid_hi (at most 1e15 in size); set both in the input's "
               "units, e.g. output.grid_lo: -2, output.grid_hi: 3");
    // the network sees the grid standardised: far beyond the data, its numbers overflow
    const double mean = d.x.mean().item<double>(), sd = std::max(d.x.std().item<double>(), 1e-300);
    WHVI_CHECK(std::max(std::abs(lo - mean), std::abs(hi - mean)) <= 1e6 * sd, p.origin,
               ": the grid from output.grid_lo = ", lo, " to output.grid_hi = ", hi, " reaches more than 1e6 "
               "standard deviations of the input (", sd, ") from its mean (", mean, "); keep the grid near the "
               "data, e.g. a few times its range");
  }
  if (p.data.augment)
    WHVI_CHECK(d.x.size(1) == 3 * 32 * 32 || d.x.size(1) == 28 * 28, p.origin, ": data.augment crops and flips "
               "images (CIFAR-10 3x32x32, MNIST 1x28x28), but ", d.name, " has ", d.x.size(1),
               " input columns; set data.augment: false");
  if (p.run.every > 0)
    WHVI_CHECK(!p.keeps_samples() && !p.no_test_rows, p.origin,
               ": evaluation.every (a learning curve) needs held-out rows and a model that predicts during "
               "training; ", p.toy ? "the toy problem has no test rows"
                             : p.no_test_rows ? "data.protocol: all holds no rows out"
                                                 : "SGHMC has no samples before its burn-in ends",
               "; set evaluation.every: 0");
  if (p.method.device != "cpu") check_device(p);
  for (size_t k = 0; k < splits.size(); ++k) {
    WHVI_CHECK(splits[k].train.size() >= 2, "data set '", d.name, "' (", d.source, "): split ", k, " has ",
               splits[k].train.size(), " training row(s); at least 2 are needed to standardise and train");
    if (!p.no_test_rows)
      WHVI_CHECK(!splits[k].test.empty(), "data set '", d.name, "' (", d.source, "): split ", k,
                 " has no test rows, so nothing could be measured. ",
                 p.data.protocol == "standard"
                     ? "Its stored index_test file is empty: fix it or use data.protocol: paper"
                 : p.data.protocol == "random" || (p.source->user_table && p.data.protocol == "paper")
                     ? "The data set is too small for data.test_fraction; raise it or add rows"
                     : "The data set is too small for data.train_fraction; lower it or add rows");
  }
  if (p.keeps_samples()) {
    const int64_t total = p.total_steps();
    const auto burn = static_cast<int64_t>(std::floor(p.uses.sghmc_burn_in * static_cast<double>(total)));
    const int64_t samples = p.uses.sghmc_samples;
    WHVI_CHECK(total - burn >= samples, p.origin, ": model.sghmc.samples = ", samples, " cannot be filled by the ",
               total - burn, " steps after the burn-in (", burn, " of ", total, " steps); lower model.sghmc.samples "
               "or model.sghmc.burn_in, or raise training.steps");
  }
  check_evaluation_memory(p, d, splits);
  say_curve_work(p, splits);
}

// One line on what became of a CSV file's columns and missing cells: the
// categorical columns one-hot encoded (each marked text, or declared in
// data.categorical), the cells imputed, the rows dropped.
std::string describe_table(const data::RegressionData& d, const std::string& missing) {
  int64_t numbers = 0;
  std::string text, imputed;
  for (const auto& c : d.inputs) {
    if (c.missing_indicator) imputed += (imputed.empty() ? "" : ", ") + c.name;
    else if (c.categories.empty()) ++numbers;
    else
      text += (text.empty() ? "" : ", ") + c.name + " (" + std::to_string(c.categories.size()) +
              (c.declared ? ", data.categorical" : ", text") + ")";
  }
  std::ostringstream os;
  os << d.source << ": " << numbers << " numeric column(s)";
  os << (text.empty() ? std::string(", no categorical column") : "; categories, one-hot: " + text);
  if (d.missing_cells > 0)
    os << "; " << d.missing_cells << " missing cell(s) in " << imputed
       << " imputed per split from its training rows (median / most frequent), with a missing-indicator column each";
  if (d.dropped_rows > 0) {
    const double share = 100.0 * static_cast<double>(d.dropped_rows) /
                         static_cast<double>(d.dropped_rows + d.x.size(0));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", share);
    os << "; " << d.dropped_rows << " row(s) dropped (" << buf << "% of the file) for "
       << (missing == "drop" ? "a missing value (data.missing: drop; impute keeps them)" : "a missing target");
  }
  return os.str();
}

// The files a run reads: its config and base files, and its data (a CSV file,
// or the files of a UCI-layout folder).
std::vector<std::string> run_inputs(const RunPlan& p, const data::RegressionData& d) {
  std::vector<std::string> in(p.config->files().begin(), p.config->files().end());
  std::error_code ec;
  if (fs::is_regular_file(d.source, ec)) in.push_back(d.source);
  else if (fs::is_directory(d.source, ec))
    for (const auto& f : list_dir(d.source)) in.push_back(f);
  return in;
}

}  // namespace whvi::experiment::detail
