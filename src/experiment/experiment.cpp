#include "experiment/experiment.h"

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
#include "common/rng.h"
#include "data/csv.h"
#include "data/dataset.h"
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

namespace whvi::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int64_t kPaperSteps = 50500;
constexpr int kPaperSplits = 8;

// "yacht-whvi split 3 (of 8)": the label of split k in logs and errors.
std::string split_label(const std::string& name, size_t k, size_t n) {
  return name + " split " + std::to_string(k) + " (of " + std::to_string(n) + ")";
}

std::string split_stem(const fs::path& dir, size_t k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "split-%02zu", k);
  return (dir / buf).string();
}

// The FNV-1a checksum of a file's bytes (16 hex digits), "" when it cannot be read.
std::string file_checksum(const std::string& path) {
  try {
    const std::string bytes = read_user_file(path, "the checkpoint", max_checkpoint_bytes());
    return hex(Fnv1a64().add(bytes.data(), bytes.size()).value());
  } catch (const Error&) {
    return "";
  }
}

// A split record's digest: the checksum of the record without its digest, so
// --resume can tell a record whvi wrote from one edited or copied in.
std::string record_digest(json r) {
  r.erase("record_digest");
  const std::string text = r.dump();
  return hex(Fnv1a64().add(text.data(), text.size()).value());
}

// The data keys of a run's fingerprint, left out where they do not act.
void erase_idle_data_keys(const config::Config& cfg, json& dj) {
  // the CSV keys
  if (cfg.get_string("data.target").empty()) dj.erase("target");
  if (cfg.get_string("data.features").empty()) dj.erase("features");
  if (cfg.get_string("data.categorical").empty()) dj.erase("categorical");
  // impute (the default) and error give the same numbers wherever error runs
  // (data without missing cells), so records of either resume into the other
  if (cfg.get_string("data.missing") == "error" || cfg.get_string("data.missing") == "impute") dj.erase("missing");
  if (cfg.get_string("data.protocol") != "random" && !data::is_csv_path(cfg.get_string("data.dataset")))
    dj.erase("test_fraction");
  if (cfg.get_string("data.protocol") != "kfold") dj.erase("folds");
}

// The configuration that determines a split's numbers: everything but
// output.* and data.splits (split k does not depend on how many splits run, so
// a 4-split run can be extended to 8 with --resume).
// The options of layer kinds the network does not use are left out too, so a
// new default for MCD does not orphan finished WHVI runs.
std::string fingerprint(const config::Config& cfg) {
  auto j = cfg.to_json();
  j.erase("output");
  j["data"].erase("splits");
  const std::string kind = cfg.get_string("model.kind");
  // the model.<group> sections of the layers' and methods' options (model.whvi,
  // model.nng, ...), and those this run reads: its hidden and output layers'
  // and its method's (a layer reads its kind's group, NF-WHVI also WHVI's)
  auto groups_of = [](const std::vector<std::string>& keys, std::set<std::string>& out) {
    for (const auto& k : keys) {
      const auto a = k.find('.'), b = k.find('.', a + 1);
      if (k.rfind("model.", 0) == 0 && b != std::string::npos) out.insert(k.substr(a + 1, b - a - 1));
    }
  };
  std::set<std::string> groups, used;
  for (const auto& l : models::layer_kinds()) groups_of(l.reads(), groups);
  for (const auto& m : infer::method_kinds()) groups_of(m.reads(), groups);
  for (const auto& l : {models::hidden_layer_kind(kind),
                        models::output_layer_kind(kind, cfg.get_string("model.output_layer"))})
    for (const auto& k : models::layer_kinds())
      if (k.name == l) groups_of(k.reads(), used);
  for (const auto& m : infer::method_kinds())
    if (m.name == infer::method_of(kind)) groups_of(m.reads(), used);
  // convolutional filters read their kind's options too (lowrank-mcd: mcd's)
  if (cfg.get_string("model.architecture") != "mlp" && cfg.get_string("model.architecture") != "rff")
    for (const auto& f : models::filter_kinds())
      if (f.name == cfg.get_string("model.conv")) groups_of(f.reads(), used);
  for (const auto& g : groups)
    if (!used.count(g)) j["model"].erase(g);
  // keys added after results were committed, left out at their defaults so
  // those results still resume and extend
  if (cfg.get_string("inference.kind") == "auto") j.erase("inference");
  if (infer::method_of(cfg) != "ensemble") j.erase("ensemble");
  if (cfg.get_string("model.architecture") != "rff") j["model"].erase("rff");
  if (cfg.get_string("model.architecture") == "mlp")
    for (const char* k : {"architecture", "conv", "conv_dropout", "conv_rank", "batch_norm"}) j["model"].erase(k);
  if (cfg.get_string("model.conv") != "lowrank-mcd") j["model"].erase("conv_rank");
  if (cfg.get_string("model.batch_norm") == "auto") j["model"].erase("batch_norm");
  if (j["model"].contains("whvi") && cfg.get_string("model.whvi.structure") == "s1hghs2" &&
      cfg.get_string("model.whvi.s_posterior") == "optimised" && cfg.get_float("model.whvi.s_prior_var") == 0)
    for (const char* k : {"structure", "s_posterior", "s_prior_var"}) j["model"]["whvi"].erase(k);
  if (!cfg.get_bool("data.augment")) j["data"].erase("augment");
  erase_idle_data_keys(cfg, j["data"]);
  if (j["model"].contains("nng") && cfg.get_int("model.nng.stats_every") == 1) j["model"]["nng"].erase("stats_every");
  if (j["model"].contains("nng") && cfg.get_string("model.nng.sampling") == "weights") j["model"]["nng"].erase("sampling");
  if (j["model"].contains("nng") && cfg.get_string("model.nng.update") == "bias-corrected") j["model"]["nng"].erase("update");
  if (j["model"].contains("nng") && cfg.get_float("model.nng.kl_clip") == 0) j["model"]["nng"].erase("kl_clip");
  if (cfg.get_int("evaluation.every") == 0)
    for (const char* k : {"every", "curve_mc_samples"}) j["evaluation"].erase(k);
  j["evaluation"].erase("ood_dataset");  // scored after training, with draws of their own: the split's numbers do not depend on it
  // batched splits: a split's numbers depend on whether it was batched, not on its group
  if (cfg.get_int("training.batched_splits") == 1) j["training"].erase("batched_splits");
  else j["training"]["batched_splits"] = "batched";
  // the fused step agrees with autograd to float rounding, not to the bit: the
  // engine that runs counts (auto resolved), so auto and an explicit choice of
  // the same engine share their splits
  if (infer::engine_for(cfg) == "autograd") j["training"].erase("engine");
  else j["training"]["engine"] = "fused";
  // another device rounds differently: its splits are not resumed into a CPU run's
  if (cfg.get_string("training.device") == "cpu") j["training"].erase("device");
  if (cfg.get_string("likelihood.kind") != "student-t") j["likelihood"].erase("student_t");
  // stopping on validation rows: its keys only where it acts
  if (!train::stopping_on(cfg))
    for (const char* k : {"stopping", "stopping_fraction", "stopping_every", "stopping_patience", "stopping_mc_samples"})
      j["training"].erase(k);
  if (cfg.get_int("training.kl_warmup") == 0) j["training"].erase("kl_warmup");
  if (cfg.get_float("training.kl_weight") == 1.0) j["training"].erase("kl_weight");
  if (cfg.get_string("training.optimizer") == "adam") {
    j["training"].erase("optimizer");
    j["training"].erase("momentum");
  }
  return j.dump();
}

bool is_toy(const config::Config& cfg) { return cfg.get_string("data.dataset") == "toy"; }
// A run with no held-out rows: the toy problem, and the final model of
// data.protocol: all (every row trains it).
bool no_test_rows(const config::Config& cfg) { return is_toy(cfg) || cfg.get_string("data.protocol") == "all"; }

json read_json(const std::string& path) {
  return read_json_file(path, "result file", "delete the file to recompute that split");
}

data::RegressionData load_data(const config::Config& cfg) {
  const std::string& ds = cfg.get_string("data.dataset");
  WHVI_CHECK(!ds.empty(), cfg.source(),
             ": data.dataset is not set (a UCI alias such as yacht, 'toy', synthetic:<name>, or a folder)");
  const auto seed = static_cast<uint64_t>(cfg.get_int("data.split_seed"));
  if (ds == "toy") return data::make_toy(seed, static_cast<int>(cfg.get_int("data.toy_points")));
  if (data::is_synthetic(ds)) return data::make_synthetic(ds, seed, cfg.get_int("data.synthetic_rows"));
  if (data::is_classification_dataset(ds)) return data::load_uci_class(ds, data::resolve_data_dir(cfg.get_string("data.dir")));
  if (data::is_mnist_dataset(ds)) return data::load_mnist(ds, data::resolve_data_dir(cfg.get_string("data.dir")));
  if (data::is_cifar_dataset(ds)) return data::load_cifar10(ds, data::resolve_data_dir(cfg.get_string("data.dir")));
  const bool softmax = cfg.get_string("likelihood.kind") == "softmax";
  if (data::is_csv_path(ds)) {
    data::CsvOptions o;
    o.target = cfg.get_string("data.target");
    std::stringstream names(cfg.get_string("data.features"));
    for (std::string f; std::getline(names, f, ',');)
      if (!f.empty()) o.features.push_back(f);
    std::stringstream cats(cfg.get_string("data.categorical"));
    for (std::string f; std::getline(cats, f, ',');)
      if (!f.empty()) o.categorical.push_back(f);
    o.drop_missing = cfg.get_string("data.missing") == "drop";
    o.impute_missing = cfg.get_string("data.missing") == "impute";
    o.classification = softmax;
    return data::load_csv(ds, o);
  }
  WHVI_CHECK(cfg.get_string("data.target").empty() && cfg.get_string("data.features").empty() &&
                 cfg.get_string("data.categorical").empty(),
             cfg.source(), ": data.target, data.features and data.categorical name the columns of a CSV file, "
             "but data.dataset '", ds,
             "' is not one (a path ending .csv, .tsv, .csv.gz or .tsv.gz)");
  auto d = data::load_uci(ds, data::resolve_data_dir(cfg.get_string("data.dir")));
  if (softmax) data::targets_to_classes(d);  // a folder of the user's whose target is a class label
  return d;
}

// Replaces split k's test rows by a validation set carved from its training
// rows (a random data.validation_fraction of them, drawn from (split_seed, k));
// the test rows are dropped, so nothing downstream can read them.
void carve_validation(data::SplitIndices& s, double fraction, uint64_t split_seed, size_t k) {
  std::mt19937_64 g(derive_seed(split_seed, k, Stream::kSelection));
  auto& tr = s.train;
  const auto n = static_cast<int64_t>(tr.size());
  shuffle(tr, g);
  const int64_t n_val = std::llround(fraction * static_cast<double>(n));
  WHVI_CHECK(n_val >= 1 && n - n_val >= 2, "data.validation_fraction = ", fraction, " of split ", k,
             "'s ", n, " training rows leaves ", n_val, " validation and ", n - n_val,
             " training rows; at least 1 and 2 are needed");
  s.test.assign(tr.end() - n_val, tr.end());
  tr.resize(static_cast<size_t>(n - n_val));
}

std::vector<data::SplitIndices> load_splits(const config::Config& cfg, const data::RegressionData& d) {
  std::vector<data::SplitIndices> out;
  if (is_toy(cfg)) {
    WHVI_CHECK(cfg.get_int("data.splits") == 1, cfg.source(), ": data.splits = ", cfg.get_int("data.splits"),
               ", but the toy problem has exactly one split (all its points train the model); "
               "set data.splits: 1 (or --set data.splits=1)");
    data::SplitIndices s;
    for (int64_t i = 0; i < d.x.size(0); ++i) s.train.push_back(i);
    out.push_back(s);
  } else if (cfg.get_string("data.protocol") == "all") {
    WHVI_CHECK(cfg.get_int("data.splits") == 1 && cfg.get_float("data.validation_fraction") == 0, cfg.source(),
               ": data.protocol: all trains one final model on every row, so it has exactly one split and no "
               "validation rows; set data.splits: 1 and data.validation_fraction: 0");
    data::SplitIndices s;
    for (int64_t i = 0; i < d.x.size(0); ++i) s.train.push_back(i);
    out.push_back(s);
    return out;
  } else {
    const std::string protocol = cfg.get_string("data.protocol");
    // a CSV file has no stored splits: the paper protocol means random splits there
    const bool csv = data::is_csv_path(cfg.get_string("data.dataset"));
    const bool random = protocol == "random" || (csv && protocol == "paper");
    out = data::make_splits(d, random ? "random" : protocol,
                            static_cast<int>(protocol == "kfold" ? cfg.get_int("data.folds") : cfg.get_int("data.splits")),
                            static_cast<uint64_t>(cfg.get_int("data.split_seed")),
                            random ? 1.0 - cfg.get_float("data.test_fraction") : cfg.get_float("data.train_fraction"));
  }
  const double vf = cfg.get_float("data.validation_fraction");
  if (vf > 0)
    for (size_t k = 0; k < out.size(); ++k)
      carve_validation(out[k], vf, static_cast<uint64_t>(cfg.get_int("data.split_seed")), k);
  return out;
}

// training.device other than cpu: a device this build and machine have, and
// a run that can use it (docs/kernels.md "Training on a GPU").
void check_device(const config::Config& cfg) {
  const std::string dev = cfg.get_string("training.device");
  const std::string kind = cfg.get_string("model.kind");
  WHVI_CHECK(kind != "nng" && kind != "sghmc", cfg.source(), ": training.device ", dev, ": model.kind ", kind,
             " runs on the CPU only (its optimiser is its own); set training.device: cpu");
  WHVI_CHECK(cfg.get_string("training.engine") != "fused", cfg.source(), ": training.device ", dev,
             ": the fused step (training.engine: fused) runs on the CPU; set training.engine: autograd");
  WHVI_CHECK(cfg.get_int("training.batched_splits") == 1, cfg.source(), ": training.device ", dev,
             ": batched splits (training.batched_splits) run on the CPU; set training.batched_splits: 1");
  WHVI_CHECK(cfg.get_int("evaluation.every") == 0, cfg.source(), ": training.device ", dev,
             ": a learning curve (evaluation.every) evaluates on the CPU during training; set evaluation.every: 0");
  WHVI_CHECK(torch::cuda::is_available(), cfg.source(), ": training.device is ", dev, ", but the LibTorch ",
             torch_version(), " of this whvi sees no CUDA device: a LibTorch built for the CPU only (as Debian's "
             "is), or no GPU visible (nvidia-smi, CUDA_VISIBLE_DEVICES). Build whvi with -DWHVI_CUDA=ON against a "
             "LibTorch with CUDA on a GPU machine (scripts/gpu_check.sh does), or set training.device: cpu");
}

// The predictive samples that evaluation holds at once (S x rows x outputs
// doubles, about 3 copies while scoring): refused before training, with the
// estimate and the setting to lower, when they cannot fit in this machine.
void check_evaluation_memory(const config::Config& cfg, const data::RegressionData& d,
                             const std::vector<data::SplitIndices>& splits) {
  const bool sghmc = cfg.get_string("model.kind") == "sghmc";
  const double S = static_cast<double>(sghmc ? cfg.get_int("model.sghmc.samples") : cfg.get_int("evaluation.mc_samples"));
  const double C = static_cast<double>(std::max<int64_t>(1, d.num_classes));
  size_t rows = 0;
  for (const auto& sp : splits) rows = std::max(rows, sp.test.size());
  const double grid = static_cast<double>(cfg.get_int("output.grid_points"));
  const double need = 3.0 * 8.0 * S * C * std::max(static_cast<double>(rows), grid);
  const double have = physical_memory_bytes();
  if (have <= 0 || need <= have) return;
  const auto gib = [](double b) { return std::to_string(static_cast<int64_t>(std::ceil(b / (1 << 30)))) + " GiB"; };
  throw Error(cfg.source() + ": evaluation would hold about " + gib(need) + " of predictive samples (" +
              (sghmc ? "model.sghmc.samples" : std::string("evaluation.mc_samples")) + " = " +
              std::to_string(static_cast<int64_t>(S)) + " x " +
              (grid > static_cast<double>(rows) ? "output.grid_points = " + std::to_string(static_cast<int64_t>(grid))
                                                : std::to_string(rows) + " test rows") +
              (C > 1 ? " x " + std::to_string(static_cast<int64_t>(C)) + " classes" : std::string()) +
              "), more than this machine's " + gib(have) + "; lower " +
              (sghmc ? "model.sghmc.samples" : std::string("evaluation.mc_samples")) +
              (grid > static_cast<double>(rows) ? " or output.grid_points" : ""));
}

// Everything that can be checked before the first split trains.
void check_before_training(const config::Config& cfg, const data::RegressionData& d,
                           const std::vector<data::SplitIndices>& splits) {
  if (cfg.get_int("output.grid_points") > 0) {
    WHVI_CHECK(d.x.size(1) == 1, cfg.source(), ": output.grid_points needs 1-D inputs, but ", d.name, " has ",
               d.x.size(1), " input columns; set output.grid_points: 0");
    const double lo = cfg.get_float("output.grid_lo"), hi = cfg.get_float("output.grid_hi");
    WHVI_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo < hi && std::isfinite(hi - lo) &&
                   std::max(std::abs(lo), std::abs(hi)) <= 1e15,
               cfg.source(), ": the grid from output.grid_lo = ", lo, " to output.grid_hi = ", hi,
               " is not a finite interval with grid_lo < grid_hi (at most 1e15 in size); set both in the input's "
               "units, e.g. output.grid_lo: -2, output.grid_hi: 3");
    // the network sees the grid standardised: far beyond the data, its numbers overflow
    const double mean = d.x.mean().item<double>(), sd = std::max(d.x.std().item<double>(), 1e-300);
    WHVI_CHECK(std::max(std::abs(lo - mean), std::abs(hi - mean)) <= 1e6 * sd, cfg.source(),
               ": the grid from output.grid_lo = ", lo, " to output.grid_hi = ", hi, " reaches more than 1e6 "
               "standard deviations of the input (", sd, ") from its mean (", mean, "); keep the grid near the "
               "data, e.g. a few times its range");
  }
  if (cfg.get_bool("data.augment"))
    WHVI_CHECK(d.x.size(1) == 3 * 32 * 32 || d.x.size(1) == 28 * 28, cfg.source(), ": data.augment crops and flips "
               "images (CIFAR-10 3x32x32, MNIST 1x28x28), but ", d.name, " has ", d.x.size(1),
               " input columns; set data.augment: false");
  if (cfg.get_int("evaluation.every") > 0)
    WHVI_CHECK(cfg.get_string("model.kind") != "sghmc" && !no_test_rows(cfg), cfg.source(),
               ": evaluation.every (a learning curve) needs held-out rows and a model that predicts during "
               "training; ", is_toy(cfg) ? "the toy problem has no test rows"
                             : no_test_rows(cfg) ? "data.protocol: all holds no rows out"
                                                 : "SGHMC has no samples before its burn-in ends",
               "; set evaluation.every: 0");
  if (cfg.get_string("training.device") != "cpu") check_device(cfg);
  train::stopping_on(cfg);  // throws where training.stopping: validation cannot act
  for (size_t k = 0; k < splits.size(); ++k) {
    WHVI_CHECK(splits[k].train.size() >= 2, "data set '", d.name, "' (", d.source, "): split ", k, " has ",
               splits[k].train.size(), " training row(s); at least 2 are needed to standardise and train");
    if (!no_test_rows(cfg))
      WHVI_CHECK(!splits[k].test.empty(), "data set '", d.name, "' (", d.source, "): split ", k,
                 " has no test rows, so nothing could be measured. ",
                 cfg.get_string("data.protocol") == "standard"
                     ? "Its stored index_test file is empty: fix it or use data.protocol: paper"
                 : cfg.get_string("data.protocol") == "random" ||
                           (data::is_csv_path(cfg.get_string("data.dataset")) && cfg.get_string("data.protocol") == "paper")
                     ? "The data set is too small for data.test_fraction; raise it or add rows"
                     : "The data set is too small for data.train_fraction; lower it or add rows");
  }
  if (cfg.get_string("model.kind") == "sghmc") {
    const int64_t total = cfg.get_int("training.steps_fixed_noise") + cfg.get_int("training.steps");
    const auto burn = static_cast<int64_t>(std::floor(cfg.get_float("model.sghmc.burn_in") * static_cast<double>(total)));
    const int64_t samples = cfg.get_int("model.sghmc.samples");
    WHVI_CHECK(total - burn >= samples, cfg.source(), ": model.sghmc.samples = ", samples, " cannot be filled by the ",
               total - burn, " steps after the burn-in (", burn, " of ", total, " steps); lower model.sghmc.samples "
               "or model.sghmc.burn_in, or raise training.steps");
  }
  check_evaluation_memory(cfg, d, splits);
}

// stored: the data set's stored standard splits (protocol standard; 0 otherwise).
json protocol_json(const config::Config& cfg, size_t planned, size_t done, size_t stored = 0) {
  const int64_t steps = cfg.get_int("training.steps_fixed_noise") + cfg.get_int("training.steps");
  const bool toy = is_toy(cfg);
  const bool paper = cfg.get_string("data.protocol") == "paper" || cfg.get_string("data.protocol") == "stratified";
  const bool validation = cfg.get_float("data.validation_fraction") > 0;
  std::string note;
  bool shortened = false;
  // the WHVI paper's schedule is that of its regression benchmarks (data.protocol:
  // paper); stopping on held-out rows makes the steps a maximum, not a schedule
  if (!toy && steps < kPaperSteps && cfg.get_string("data.protocol") == "paper" && cfg.get_string("likelihood.kind") != "softmax" &&
      !train::stopping_on(cfg)) {
    shortened = true;
    note += "shortened: " + std::to_string(steps) + " of the paper's " + std::to_string(kPaperSteps) + " steps. ";
  }
  if (!toy && paper && planned < static_cast<size_t>(kPaperSplits)) {
    shortened = true;
    note += "shortened: " + std::to_string(planned) + " of the paper's 8 splits. ";
  }
  if (!toy && cfg.get_string("data.protocol") == "standard" && planned < stored) {
    shortened = true;
    note += "shortened: " + std::to_string(planned) + " of the data set's " + std::to_string(stored) +
            " standard splits. ";
  }
  if (validation)
    note += "metrics are on validation rows carved from each training split; the test rows were not read. ";
  return {{"name", toy ? "toy" : cfg.get_string("data.protocol")},
          {"splits_planned", planned},
          {"splits_done", done},
          {"steps", steps},
          {"evaluated_on", no_test_rows(cfg) ? "none" : validation ? "validation" : "test"},
          {"shortened", shortened},
          {"note", note}};
}

bool is_classification(const config::Config& cfg) { return cfg.get_string("likelihood.kind") == "softmax"; }

const std::vector<const char*>& metric_names(const config::Config& cfg) {
  return is_classification(cfg) ? metrics::classification_metric_names() : metrics::regression_metric_names();
}

json summary_json(const config::Config& cfg, const std::vector<json>& splits) {
  json s = json::object();
  std::vector<std::string> keys(metric_names(cfg).begin(), metric_names(cfg).end());
  if (!is_classification(cfg)) keys.push_back("noise_var");
  keys.insert(keys.end(), {"steps_per_second", "train_seconds"});
  if (!cfg.get_string("evaluation.ood_dataset").empty())
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
          {"simd_level", kernels::simd_level_name(kernels::active_simd_level())},
          {"blas", blas_info()},
          {"cpu_model", cpu_model()}};
}

// ---- checkpoints ----------------------------------------------------------------

// The split's data as the model saw it: a checkpoint is only valid for these bits.
std::string data_fingerprint(const data::PreparedSplit& p) {
  Fnv1a64 h;
  for (const auto* t : {&p.x_train, &p.y_train, &p.x_test, &p.y_test}) hash_tensor(h, *t);
  return hex(h.value());
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
      cols.push_back(col);
    }
  return {{"dataset", d.name},
          {"columns", cols},
          {"target", d.target_name.empty() ? std::string("y") : d.target_name},
          {"classes", d.class_names},
          {"pixels", !d.standardize_x}};
}

// ---- results ----------------------------------------------------------------------

// Predictions on a 1-D grid (CSV) and a PNG (report/plot.h). For the
// toy problem, returns the mean predictive std (noise included) at the data,
// inside the gap (its middle, [0.35, 0.75]) and outside the data (beyond 0.5
// of the domain's ends), as in the paper's Fig. 4; otherwise null.
json write_grid(infer::Inference& inf, const data::RegressionData& d,
                const data::PreparedSplit& prep, const config::Config& cfg, const std::string& stem,
                const at::Generator& gen) {
  const auto grid = data::grid_1d(cfg.get_float("output.grid_lo"), cfg.get_float("output.grid_hi"),
                                  static_cast<int>(cfg.get_int("output.grid_points")));
  const auto xs = (grid - prep.stats.x_mean) / prep.stats.x_std;
  const auto samples = inf.predict(xs, cfg.get_int("evaluation.mc_samples"), gen);
  torch::Tensor f = samples, sd;
  if (samples.dim() == 3) {  // hetero-gaussian: a variance per sample and point
    const auto [mu, var] = likelihoods::regression_samples(samples, 0.0);
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
  if (is_toy(cfg)) {
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
  if (!cfg.get_bool("output.plot")) return toy;
  const std::string why = report::plot_toy(pred.str(), dat.str(), cfg.get_string("output.name"), stem + ".png");
  if (why.empty())
    spdlog::info("wrote {}.png", stem);
  else
    spdlog::warn("no plot {}.png: {}; the CSV files are written", stem, why);
  return toy;
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
  write_file_atomic(stem + "-reliability.csv", csv.str());
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

// A split before training: its data, its model and inference method.
struct SplitRun {
  size_t k = 0;
  std::vector<int64_t> test_rows;  // the data set's rows held out (test or validation)
  torch::Tensor ood_x;             // evaluation.ood_dataset's rows, standardised as this split's inputs (or undefined)
  std::string stem, label;
  data::PreparedSplit prep;
  std::unique_ptr<infer::Inference> inf;
  torch::Tensor y_test;
  int64_t n_fit = 0;          // training rows the steps saw (fewer than prep's when some stop training)
  json stopping = json();     // training.stopping's record (null when off)
};

// evaluation.ood_dataset's stored test rows (raw inputs), or an undefined tensor.
torch::Tensor load_ood_rows(const config::Config& cfg, const data::RegressionData& d) {
  const std::string name = cfg.get_string("evaluation.ood_dataset");
  if (name.empty()) return {};
  WHVI_CHECK(d.is_classification(), cfg.source(), ": evaluation.ood_dataset scores a classifier's uncertainty, but ",
             d.name, " is a regression data set; set evaluation.ood_dataset: ''");
  auto c = cfg;
  c.set("data.dataset", name, "evaluation.ood_dataset");
  const auto o = load_data(c);
  WHVI_CHECK(o.x.size(1) == d.x.size(1), cfg.source(), ": evaluation.ood_dataset ", name, " has ", o.x.size(1),
             " inputs per row, the model reads ", d.x.size(1), " (", d.name, "); give a data set of the same input size");
  WHVI_CHECK(!o.std_test.empty() && !o.std_test[0].empty(), cfg.source(), ": evaluation.ood_dataset ", name,
             " has no stored test rows to score");
  std::vector<int64_t> rows = o.std_test[0];
  return o.x.index_select(0, torch::tensor(rows, torch::kInt64)).to(torch::kFloat64);
}

SplitRun prepare_split_run(const config::Config& cfg, const data::RegressionData& d, const data::SplitIndices& split,
                           size_t k, const std::string& stem, const std::string& label,
                           const torch::Tensor& ood_rows) {
  const auto seed = static_cast<uint64_t>(cfg.get_int("training.seed"));
  SplitRun r;
  r.k = k;
  r.test_rows = split.test;
  r.stem = stem;
  r.label = label;
  r.prep = data::prepare_split(d, split);
  r.inf = infer::make_inference(d.x.size(1), cfg, r.prep.stats.y_mean.item<double>(),
                                r.prep.stats.y_std.item<double>(), make_generator(seed, k, Stream::kInit),
                                d.num_classes);
  spdlog::info("{}: {} train / {} {} rows, {} parameters, {}", label, r.prep.x_train.size(0), r.prep.x_test.size(0),
               cfg.get_float("data.validation_fraction") > 0 ? "validation" : "test", r.inf->num_params(),
               r.inf->method());
  r.y_test = r.prep.y_test.squeeze(1).to(torch::kFloat64);
  r.n_fit = r.prep.x_train.size(0);
  if (ood_rows.defined()) r.ood_x = (ood_rows - r.prep.stats.x_mean) / r.prep.stats.x_std;
  return r;
}

json finish_split(const config::Config& cfg, const data::RegressionData& d, SplitRun& run,
                  const train::TrainStats& ts, const json& curve, int64_t batched_with, const std::string& fp);

// Trains and evaluates split k; returns its record (also written to stem.json).
json run_split(const config::Config& cfg, const data::RegressionData& d, const data::SplitIndices& split,
               size_t k, const std::string& stem, const std::string& label, const std::string& fp,
               const torch::Tensor& ood_rows) {
  const auto seed = static_cast<uint64_t>(cfg.get_int("training.seed"));
  auto run = prepare_split_run(cfg, d, split, k, stem, label, ood_rows);
  const auto& prep = run.prep;
  const auto& inf = run.inf;
  const auto& y_test = run.y_test;
  const int64_t total = cfg.get_int("training.steps_fixed_noise") + cfg.get_int("training.steps");
  // Stopping on validation rows (train/stopping.h): a share of the training
  // rows is held out from the steps, rows and draws from Stream::kStopping.
  const auto so = options::read<train::StoppingOptions>(cfg);
  auto x_fit = prep.x_train;
  auto y_fit = prep.y_train.squeeze(1);
  std::unique_ptr<train::ValidationStopping> stopper;
  if (so.on && (so.asked || x_fit.size(0) >= train::kMinRows)) {
    const auto h = train::carve_holdout(x_fit.size(0), so.fraction, derive_seed(seed, k, Stream::kStopping));
    const auto fit = torch::tensor(h.fit, torch::kInt64), val = torch::tensor(h.validation, torch::kInt64);
    stopper = std::make_unique<train::ValidationStopping>(
        *inf, x_fit.index_select(0, val), prep.y_train_raw.index_select(0, val).squeeze(1).to(torch::kFloat64), so,
        make_generator(derive_seed(seed, k, Stream::kStopping) + 1));
    x_fit = x_fit.index_select(0, fit);
    y_fit = y_fit.index_select(0, fit);
    run.n_fit = x_fit.size(0);
    spdlog::info("{}: {} of the training rows held out to stop training (every {} steps, patience {})", label,
                 h.validation.size(), so.every, so.patience);
  }
  // The learning curve (evaluation.every): the held-out rows evaluated during
  // training, with draws from their own stream (Stream::kCurve), so the
  // trained model and its final numbers are those of a run without a curve.
  json curve = json::array();
  const int64_t curve_every = cfg.get_int("evaluation.every");
  const int64_t every = std::gcd(curve_every, stopper ? so.every : 0);
  const auto curve_gen = make_generator(seed, k, Stream::kCurve);
  const auto on_every = [&](int64_t steps) {
    const bool last = steps == total;
    try {
      if (curve_every > 0 && (steps % curve_every == 0 || last)) {
        const auto fc = inf->predict(prep.x_test, cfg.get_int("evaluation.curve_mc_samples"), curve_gen);
        WHVI_CHECK_AS(NonFiniteError, fc.isfinite().all().item<bool>(), "the predictions on the test rows are not finite");
        const auto mc = inf->likelihood().evaluate(fc, y_test);
        json point = {{"step", steps}};
        for (const auto& [key, value] : mc.metrics) point[key] = std::isfinite(value) ? json(value) : json(nullptr);
        curve.push_back(point);
      }
      return stopper && (steps % so.every == 0 || last) && stopper->measure(steps);
    } catch (const NonFiniteError& e) {
      throw Error(train::divergence_message(label, steps, e.what(), cfg));
    }
  };
  const auto ts = train::train(*inf, x_fit, y_fit, cfg, make_generator(seed, k, Stream::kTrain), label, every,
                               on_every, [&] {
                                 if (stopper) stopper->restore_best();
                               });
  if (stopper)
    run.stopping = {{"validation_rows", prep.x_train.size(0) - run.n_fit},
                    {"every", so.every},
                    {"patience", so.patience},
                    {"mc_samples", so.mc_samples},
                    {"max_steps", total},
                    {"stopped_at", ts.steps},
                    {"best_step", stopper->best_step()},
                    {"best_validation_mnll", stopper->best_nll()},
                    {"step", stopper->steps()},
                    {"validation_mnll", stopper->nll()}};
  return finish_split(cfg, d, run, ts, curve_every > 0 ? curve : json(), 0, fp);
}

// Out-of-distribution detection: the OOD rows scored by the trained split,
// separated from the test rows by predictive entropy and mutual information.
void add_ood(json& r, const config::Config& cfg, const data::RegressionData& d, SplitRun& run,
             const torch::Tensor& f, uint64_t seed) {
  const auto& inf = run.inf;
  const size_t k = run.k;
  const auto& label = run.label;
  const auto& stem = run.stem;
  const auto fo = inf->predict(run.ood_x, cfg.get_int("evaluation.mc_samples"), make_generator(seed, k, Stream::kOod));
  const auto ui = metrics::predictive_uncertainty(f), uo = metrics::predictive_uncertainty(fo);
  const auto by_h = metrics::ood_separation(ui.entropy, uo.entropy);
  const auto by_mi = metrics::ood_separation(ui.mutual_information, uo.mutual_information);
  r["ood"] = {{"dataset", cfg.get_string("evaluation.ood_dataset")}, {"rows_in", ui.entropy.size()},
              {"rows_out", uo.entropy.size()},
              {"mean_entropy_in", metrics::summarize(ui.entropy).mean}, {"mean_entropy_out", metrics::summarize(uo.entropy).mean}};
  r["ood_auroc_entropy"] = by_h.auroc;
  r["ood_aupr_entropy"] = by_h.aupr;
  r["ood_auroc_mi"] = by_mi.auroc;
  r["ood_aupr_mi"] = by_mi.aupr;
  spdlog::info("{}: out-of-distribution ({}): AUROC {:.3f} by entropy, {:.3f} by mutual information", label,
               cfg.get_string("evaluation.ood_dataset"), by_h.auroc, by_mi.auroc);
  write_ood_histograms(stem, ui, uo, d.num_classes, label + " vs " + cfg.get_string("evaluation.ood_dataset"),
                       cfg.get_bool("output.plot"));
  r["ood"]["histograms"] = fs::path(stem + "-ood.csv").filename().string();
}

void save_split_checkpoint(const config::Config& cfg, const data::RegressionData& d, SplitRun& run) {
  const auto& prep = run.prep;
  CheckpointMeta meta;
  meta.config_yaml = cfg.dump_yaml();
  meta.source = cfg.source();
  meta.data_fp = data_fingerprint(prep);
  meta.split = static_cast<int64_t>(run.k);
  meta.d_in = d.x.size(1);
  meta.y_mean = prep.stats.y_mean.item<double>();
  meta.y_std = prep.stats.y_std.item<double>();
  meta.num_classes = d.num_classes;
  meta.inputs_json = input_encoding(d).dump();
  meta.x_mean = prep.stats.x_mean;
  meta.x_std = prep.stats.x_std;
  meta.x_fill = prep.x_fill;
  save_checkpoint(run.stem + ".ckpt", *run.inf, meta);
}

// The user's CSV data: the held-out rows in a file beside the record, for
// another tool that needs the same split.
void add_test_rows(json& r, const data::RegressionData& d, const SplitRun& run) {
  const size_t k = run.k;
  const auto& stem = run.stem;
  r["unseen_category_rows"] = run.prep.unseen_category_rows;
  std::string rows = "# the rows of " + d.source + " held out by split " + std::to_string(k) +
                     " (0-based data rows: the header is not a row)\n";
  for (const auto i : run.test_rows)
    rows += std::to_string(d.source_rows.empty() ? i : d.source_rows[static_cast<size_t>(i)]) + "\n";
  write_file_atomic(stem + "-test-rows.txt", rows);
  r["test_rows_file"] = fs::path(stem + "-test-rows.txt").filename().string();
}

void log_split(const std::string& label, const data::RegressionData& d, const likelihoods::Evaluation& m,
               const train::TrainStats& ts) {
  if (d.is_classification())
    spdlog::info("{}: error {:.4g}  MNLL {:.4g}  ECE {:.3g}  Brier {:.4g}  ({:.1f} s, {:.4g} steps/s)", label,
                 m.metric("error"), m.metric("mnll"), m.metric("ece"), m.metric("brier"), ts.seconds,
                 ts.steps_per_second);
  else
    spdlog::info("{}: RMSE {:.4g}  MNLL {:.4g}  cov95 {:.3g}  CRPS {:.4g}  ({:.1f} s, {:.4g} steps/s)", label,
                 m.metric("rmse"), m.metric("mnll"), m.metric("coverage_95"), m.metric("crps"), ts.seconds,
                 ts.steps_per_second);
}

// Evaluates a trained split and writes its record, checkpoint and grid.
// batched_with > 0: it was trained in a batched group of that many splits.
json finish_split(const config::Config& cfg, const data::RegressionData& d, SplitRun& run,
                  const train::TrainStats& ts, const json& curve, int64_t batched_with, const std::string& fp) {
  const auto seed = static_cast<uint64_t>(cfg.get_int("training.seed"));
  const size_t k = run.k;
  const auto& prep = run.prep;
  const auto& inf = run.inf;
  const auto& y_test = run.y_test;
  const auto& label = run.label;
  const auto& stem = run.stem;
  const auto t_eval = std::chrono::steady_clock::now();
  const auto f = inf->predict(prep.x_test, cfg.get_int("evaluation.mc_samples"),
                               make_generator(seed, k, Stream::kEval));
  const double noise_var = inf->likelihood().noise_var_original();
  // a model that trained into non-finite predictions or a vanished noise is a
  // divergence, named with its step and settings, not an evaluator's complaint
  const auto m = [&] {
    try {
      WHVI_CHECK_AS(NonFiniteError, f.isfinite().all().item<bool>(), "the trained model's predictions are not finite");
      return inf->likelihood().evaluate(f, y_test);
    } catch (const NonFiniteError& e) {
      throw Error(train::divergence_message(label, ts.steps, e.what(), cfg));
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
            {"final_neg_elbo", ts.final_loss},
            {"noise_var", std::isfinite(noise_var) ? json(noise_var) : json(nullptr)},  // null: no noise (softmax)
            {"params", {{"total", inf->num_params()}}},
            {"inference", inf->method()},
            {"engine", batched_with > 0 ? std::string("autograd") : inf->engine()},
            {"config_fingerprint", fp},
            {"data_fingerprint", data_fingerprint(prep)},  // --resume keeps the split only for the same data
            {"whvi_commit", git_commit()}};
  r.update(metrics_json(m));
  for (const auto& [key, value] : inf->likelihood().learned())
    r["likelihood"][key] = std::isfinite(value) ? json(value) : json(nullptr);
  if (!curve.is_null()) r["curve"] = curve;
  if (!run.stopping.is_null()) r["stopping"] = run.stopping;
  if (!ts.trace_step.empty())
    // data term = loss - kl_weight x kl: the expected negative log likelihood scaled to the
    // training set (plus any Monte Carlo KL terms, NF-WHVI's flows)
    r["objective"] = {{"step", ts.trace_step},
                      {"loss", ts.trace_loss},
                      {"kl", ts.trace_kl},
                      {"kl_weight", ts.trace_kl_weight}};
  if (batched_with > 0) r["batched_with"] = batched_with;  // splits in its batched group (steps/s is the group's)
  if (!m.reliability.empty()) r["reliability"] = reliability_json(m.reliability);
  if (run.ood_x.defined()) add_ood(r, cfg, d, run, f, seed);
  if (cfg.get_bool("output.checkpoints")) {
    save_split_checkpoint(cfg, d, run);
    r["checkpoint_checksum"] = file_checksum(stem + ".ckpt");
  }
  if (cfg.get_int("output.grid_points") > 0) {
    const auto toy = write_grid(*inf, d, prep, cfg, stem, make_generator(seed, k, Stream::kEval));
    if (!toy.is_null()) {
      r["toy_uncertainty"] = toy;
      spdlog::info("{}: predictive std {:.3g} at the data; {:.2f}x that in the gap, {:.2f}x outside the data", label,
                   toy["std_at_data"].get<double>(), toy.value("gap_over_data", 0.0), toy.value("outside_over_data", 0.0));
    }
  }
  if (!d.inputs.empty()) add_test_rows(r, d, run);
  r["record_digest"] = record_digest(r);
  write_file_atomic(stem + ".json", r.dump(2) + "\n");
  log_split(label, d, m, ts);
  return r;
}

// --resume: split k's record when the split is finished, else nothing. With
// output.checkpoints on, a split is finished only when its checkpoint exists
// and passes its checksum; otherwise it is retrained, and the log says why.
std::optional<json> finished_split(const config::Config& cfg, const std::string& stem, const std::string& fp,
                                   size_t k, const std::function<std::string()>& data_fp) {
  if (describe_path_kind(stem + ".json").empty()) return std::nullopt;
  if (cfg.get_bool("output.checkpoints")) {
    try {
      load_checkpoint(stem + ".ckpt");
    } catch (const Error& e) {
      spdlog::warn("split {}: its result file exists, but not a sound checkpoint ({}): training it again", k,
                   printable(e.what(), 300));
      return std::nullopt;
    }
  }
  auto r = read_split_file(stem + ".json", fp);
  // Kept only when provably this run's own and complete: the record unedited,
  // and its checkpoint the very file it was written with.
  const std::string again = ": training it again";
  if (!r.contains("record_digest") || !r["record_digest"].is_string() ||
      r["record_digest"].get<std::string>() != record_digest(r)) {
    spdlog::warn("split {}: {} was edited, or written by a whvi that did not sign its records{}", k, stem + ".json",
                 again);
    return std::nullopt;
  }
  if (cfg.get_bool("output.checkpoints") &&
      (!r.contains("checkpoint_checksum") || !r["checkpoint_checksum"].is_string() ||
       r["checkpoint_checksum"].get<std::string>() != file_checksum(stem + ".ckpt"))) {
    spdlog::warn("split {}: {} is not the checkpoint its record was written with{}", k, stem + ".ckpt", again);
    return std::nullopt;
  }
  if (!r.contains("data_fingerprint") || !r["data_fingerprint"].is_string() ||
      r["data_fingerprint"].get<std::string>() != data_fp()) {
    spdlog::warn("split {}: {} was trained on other data (the data set's rows or split changed since){}", k,
                 stem + ".json", again);
    return std::nullopt;
  }
  spdlog::info("split {}: done already ({}), skipped", k, stem + ".json");
  return r;
}

// A name whvi gives a split's files: split-KK followed by one of its suffixes
// (a user's split-notes.txt beside them is not whvi's to remove).
bool is_split_file_name(const std::string& f) {
  static const std::regex re(R"(split-[0-9]{2,}(\.json|\.ckpt|\.png|-grid\.csv|-data\.csv|-ood\.csv|-ood\.png|-test-rows\.txt))");
  return std::regex_match(f, re);
}

// Without --resume, files of an earlier run of this experiment would sit
// beside the new record: remove them first.
void remove_stale_split_files(const fs::path& exp_dir, const std::vector<std::string>& inputs) {
  std::error_code ec;
  if (!fs::is_directory(exp_dir, ec)) return;
  std::vector<fs::path> stale;
  for (const auto& e : list_dir(exp_dir.string())) {
    if (!is_split_file_name(fs::path(e).filename().string()) || !fs::is_regular_file(e, ec)) continue;
    const bool input = std::any_of(inputs.begin(), inputs.end(), [&](const std::string& i) { return same_file(e, i); });
    if (input) spdlog::warn("{} has a split file's name but is one of this run's inputs: kept", e);
    else stale.push_back(e);
  }
  if (stale.empty()) return;
  spdlog::warn("removing {} file(s) of an earlier run in {} (use --resume to keep finished splits)",
               stale.size(), exp_dir.string());
  for (const auto& p : stale) fs::remove(p, ec);
}

// One line on what became of a CSV file's columns and missing cells: the
// text columns one-hot encoded, the cells imputed, the rows dropped.
std::string describe_table(const data::RegressionData& d, const std::string& missing) {
  int64_t numbers = 0;
  std::string text, imputed;
  for (const auto& c : d.inputs) {
    if (c.missing_indicator) imputed += (imputed.empty() ? "" : ", ") + c.name;
    else if (c.categories.empty()) ++numbers;
    else text += (text.empty() ? "" : ", ") + c.name + " (" + std::to_string(c.categories.size()) + ")";
  }
  std::ostringstream os;
  os << d.source << ": " << numbers << " numeric column(s)";
  os << (text.empty() ? std::string(", no text column") : "; text, one-hot: " + text);
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

// Every file a run may write, checked before anything is trained: a planted
// link, device or folder at any of them costs nothing (common/io.h).
void check_result_paths(const fs::path& out_dir, const std::string& name, const fs::path& exp_dir, size_t n,
                        const std::vector<std::string>& inputs) {
  std::vector<std::string> paths = {(out_dir / (name + ".json")).string()};
  for (const char* suffix : {"-reliability.csv", "-reliability.png"}) paths.push_back((out_dir / name).string() + suffix);
  for (size_t k = 0; k < n; ++k)
    for (const char* suffix : {".json", ".ckpt", ".png", "-grid.csv", "-data.csv", "-ood.csv", "-ood.png",
                               "-test-rows.txt"})
      paths.push_back(split_stem(exp_dir, k) + suffix);
  for (const auto& p : paths) {
    check_output_path(p, "a result file");
    for (const auto& in : inputs)
      WHVI_CHECK(!same_file(p, in), "the result file ", p, " would be written over '", in,
                 "', one of this run's inputs (its config, a base file or its data); whvi never writes over its "
                 "own input: choose another output.dir or output.name");
  }
}

// The files a run reads: its config and base files, and its data (a CSV file,
// or the files of a UCI-layout folder).
std::vector<std::string> run_inputs(const config::Config& cfg, const data::RegressionData& d) {
  std::vector<std::string> in(cfg.files().begin(), cfg.files().end());
  std::error_code ec;
  if (fs::is_regular_file(d.source, ec)) in.push_back(d.source);
  else if (fs::is_directory(d.source, ec))
    for (const auto& f : list_dir(d.source)) in.push_back(f);
  return in;
}

// One `whvi train`: the config, its data and splits, where results go, and
// the experiment record as it grows split by split.
struct ExperimentRun {
  ExperimentRun(const config::Config& c, const TrainOptions& opt) : cfg(c), o(opt) {}
  const config::Config& cfg;
  const TrainOptions& o;
  std::string name;
  fs::path out_dir, exp_dir;
  std::string exp_path;
  data::RegressionData d;
  std::vector<data::SplitIndices> splits;
  torch::Tensor ood_rows;
  std::string fp;
  json doc;
  std::vector<json> done;

  // The experiment record, rewritten atomically after each split.
  void write_doc() {
    doc["protocol"] = protocol_json(cfg, splits.size(), done.size(), d.std_train.size());
    doc["splits"] = done;
    doc["summary"] = summary_json(cfg, done);
    doc["complete"] = done.size() == splits.size();
    if (d.is_classification())
      doc["reliability"] = pooled_reliability(done, (out_dir / name).string(), name, cfg.get_bool("output.plot"));
    write_file_atomic(exp_path, doc.dump(2) + "\n");
  }
  std::string stem(size_t k) const { return split_stem(exp_dir, k); }
  std::string label(size_t k) const { return split_label(name, k, splits.size()); }
  std::optional<json> resumed(size_t k) const {
    if (!o.resume) return std::nullopt;
    return finished_split(cfg, stem(k), fp, k, [&] { return data_fingerprint(data::prepare_split(d, splits[k])); });
  }
};

// What the record says before any split: the run's environment, data and config.
json experiment_header(const ExperimentRun& r) {
  const auto& cfg = r.cfg;
  const auto& d = r.d;
  json doc = environment_json();
  doc["experiment"] = r.name;
  doc["dataset"] = cfg.get_string("data.dataset");
  doc["model"] = infer::model_label(cfg);
  doc["task"] = d.is_classification() ? "classification" : "regression";
  if (d.is_classification()) doc["classes"] = d.class_names;
  if (!d.inputs.empty()) {
    json cols = json::array();
    for (const auto& c : d.inputs)
      cols.push_back({{"name", c.name},
                      {"kind", c.missing_indicator      ? "missing indicator"
                               : c.categories.empty() ? "number"
                                                      : "text (one-hot)"},
                      {"categories", c.categories.size()}});
    doc["data"] = {{"file", d.source}, {"target", d.target_name}, {"features", cols},
                   {"rows", d.x.size(0)}, {"dropped_rows_missing", d.dropped_rows},
                   {"missing_cells_imputed", d.missing_cells}, {"missing", cfg.get_string("data.missing")}};
  }
  doc["command"] = r.o.command_line;
  doc["config"] = cfg.to_json();
  doc["config_file"] = r.o.config_path;
  if (cfg.get_string("training.device") != "cpu") {
    const auto gpu = cuda_device_name();
    doc["training_device"] = cfg.get_string("training.device") + (gpu.empty() ? "" : ": " + gpu);
  }
  if (data::is_synthetic(cfg.get_string("data.dataset"))) {
    const auto fl = data::synthetic_floor(cfg.get_string("data.dataset").substr(10));
    doc["noise_floor"] = {{"rmse", fl.rmse}, {"mnll", fl.mnll}, {"mnll_homoscedastic", fl.mnll_homoscedastic}};
  }
  return doc;
}

// The fingerprint of this run's splits. Data with a constant non-zero input
// column are prepared differently since constant columns are centred: results
// from before must not be resumed into, so their fingerprint says so.
std::string run_fingerprint(const config::Config& cfg, const data::RegressionData& d) {
  std::string fp = fingerprint(cfg);
  if (d.standardize_x && d.x.size(0) > 0) {
    const auto hi = std::get<0>(d.x.max(0)), lo = std::get<0>(d.x.min(0));
    if (((hi == lo) & (hi != 0)).any().item<bool>()) fp += "|constant-input-columns-centred";
  }
  return fp;
}

// Batched splits (train/batched.h): the unfinished splits in groups of
// training.batched_splits, each group trained as one model; every split's
// files are written when its group finishes, in split order.
void train_batched(ExperimentRun& r) {
  const auto& cfg = r.cfg;
  const auto group_size = static_cast<size_t>(cfg.get_int("training.batched_splits"));
  std::vector<std::optional<json>> results(r.splits.size());
  std::vector<size_t> pending;
  for (size_t k = 0; k < r.splits.size(); ++k) {
    if (auto done = r.resumed(k)) results[k] = std::move(*done);
    else pending.push_back(k);
  }
  auto collect = [&] {
    r.done.clear();
    for (const auto& x : results)
      if (x) r.done.push_back(*x);
  };
  const auto seed = static_cast<uint64_t>(cfg.get_int("training.seed"));
  for (size_t g0 = 0; g0 < pending.size(); g0 += group_size) {
    const size_t g1 = std::min(pending.size(), g0 + group_size);
    std::vector<SplitRun> runs;
    std::vector<train::SplitTask> tasks;
    for (size_t i = g0; i < g1; ++i) {
      const size_t k = pending[i];
      runs.push_back(prepare_split_run(cfg, r.d, r.splits[k], k, r.stem(k), r.label(k), r.ood_rows));
    }
    if (const auto why = train::batched_unsupported(cfg, *runs.front().inf); !why.empty())
      throw Error(cfg.source() + ": " + why);
    for (auto& run : runs) {
      train::SplitTask t;
      t.inference = run.inf.get();
      t.x = run.prep.x_train;
      t.y = run.prep.y_train.squeeze(1);
      t.gen = make_generator(seed, run.k, Stream::kTrain);
      t.label = run.label;
      tasks.push_back(std::move(t));
    }
    train::train_group(tasks, cfg);
    std::optional<std::pair<size_t, std::string>> failure;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (tasks[i].error) {
        if (!failure) failure.emplace(runs[i].k, *tasks[i].error);
        continue;
      }
      results[runs[i].k] = finish_split(cfg, r.d, runs[i], tasks[i].stats, json(),
                                        static_cast<int64_t>(runs.size()), r.fp);
    }
    collect();
    if (failure) {
      r.doc["failed_split"] = {{"split", failure->first}, {"error", printable(failure->second, 2000)}};
      r.write_doc();
      throw Error(failure->second);
    }
    if (r.done.size() < r.splits.size()) r.write_doc();
  }
  collect();
}

// One split after another; a failure is recorded in the record, then rethrown.
void train_one_by_one(ExperimentRun& r) {
  for (size_t k = 0; k < r.splits.size(); ++k) {
    if (auto done = r.resumed(k)) {
      r.done.push_back(std::move(*done));
      continue;
    }
    try {
      r.done.push_back(run_split(r.cfg, r.d, r.splits[k], k, r.stem(k), r.label(k), r.fp, r.ood_rows));
    } catch (const std::exception& e) {
      r.doc["failed_split"] = {{"split", k}, {"error", printable(e.what(), 2000)}};
      r.write_doc();
      throw;
    }
    r.doc.erase("failed_split");
    if (r.done.size() < r.splits.size()) r.write_doc();
  }
}

void log_summary(const ExperimentRun& r) {
  const auto& s = r.doc["summary"];
  auto mean = [&](const char* k) { return s[k]["mean"].get<double>(); };
  auto sd = [&](const char* k) { return s[k]["std"].get<double>(); };
  const char* headline = r.d.is_classification() ? "error" : "rmse";
  if (!s.contains(headline) || !s[headline].contains("n") || s[headline]["n"].get<int64_t>() == 0)
    spdlog::info("{}: {} split(s) trained; {} no held-out rows -> {}", r.name, r.done.size(),
                 is_toy(r.cfg) ? "the toy problem has" : "a final model (data.protocol: all) has", r.exp_path);
  else if (r.d.is_classification())
    spdlog::info("{}: {} split(s): error {:.4g} ± {:.2g}, MNLL {:.4g} ± {:.2g}, ECE {:.3g}, Brier {:.4g} -> {}", r.name,
                 r.done.size(), mean("error"), sd("error"), mean("mnll"), sd("mnll"), mean("ece"), mean("brier"),
                 r.exp_path);
  else
    spdlog::info("{}: {} split(s): RMSE {:.4g} ± {:.2g}, MNLL {:.4g} ± {:.2g}, coverage95 {:.3g}, CRPS {:.4g} -> {}",
                 r.name, r.done.size(), mean("rmse"), sd("rmse"), mean("mnll"), sd("mnll"), mean("coverage_95"),
                 mean("crps"), r.exp_path);
}

}  // namespace

config::Config load_config(const std::string& config_path, const std::vector<std::string>& overrides) {
  auto cfg = config::Config::load(config_path, overrides);
  const std::string kind = cfg.get_string("model.kind");
  for (const auto& d : models::recipe_defaults())
    if (d.kind == kind && cfg.get_string(d.when_key) == d.when_value)
      cfg.set_default(d.key, d.value, "the default of model.kind " + kind);
  return cfg;
}

std::string recipe_defaults_markdown() {
  std::string md =
      "\n## Defaults that depend on the model kind\n\nWhere a config (its file, a base or `--set`) leaves "
      "one of these keys unset, the model kind sets it (`recipe_defaults()` in `src/models/recipes.cpp`); "
      "setting the key, even to the value in the table above, overrides it.\n\n"
      "| model.kind | key | default | when | chosen by |\n|---|---|---|---|---|\n";
  for (const auto& d : models::recipe_defaults())
    md += "| `" + d.kind + "` | `" + d.key + "` | `" + d.value + "` | `" + d.when_key + ": " + d.when_value + "` | " +
          d.why + " |\n";
  return md;
}

std::string config_fingerprint(const std::string& config_path, const std::vector<std::string>& overrides) {
  return fingerprint(load_config(config_path, overrides));
}

json run_train(const TrainOptions& o) {
  const auto cfg = load_config(o.config_path, o.overrides);
  // the resolved config goes to the record; on the console only at --log-level debug
  if (spdlog::default_logger_raw()->should_log(spdlog::level::debug)) {
    spdlog::debug("config {} resolved:", o.config_path);
    std::istringstream lines(cfg.dump_yaml());
    for (std::string line; std::getline(lines, line);) spdlog::debug("  {}", line);
  }
  ExperimentRun r(cfg, o);
  r.name = cfg.get_string("output.name");
  r.out_dir = cfg.get_string("output.dir");
  r.exp_dir = r.out_dir / r.name;
  r.exp_path = (r.out_dir / (r.name + ".json")).string();

  // where the results go, checked before anything is loaded or trained
  check_output_path(r.exp_path, "the experiment record (output.dir/output.name.json)");
  if (const auto kind = describe_path_kind(r.exp_dir.string()); !kind.empty())
    WHVI_CHECK(kind == "a folder", "the results folder ", r.exp_dir.string(), " is ", kind,
               ", not a folder: remove it or choose another output.name");
  r.d = load_data(cfg);
  r.splits = load_splits(cfg, r.d);
  check_before_training(cfg, r.d, r.splits);
  const auto inputs = run_inputs(cfg, r.d);
  check_result_paths(r.out_dir, r.name, r.exp_dir, r.splits.size(), inputs);
  r.ood_rows = load_ood_rows(cfg, r.d);
  spdlog::info("data {} ({}): {} rows x {} features; {} split(s)", r.d.name, r.d.source, r.d.x.size(0),
               r.d.x.size(1), r.splits.size());
  if (!r.d.inputs.empty()) spdlog::info("{}", describe_table(r.d, cfg.get_string("data.missing")));
  const FileLock lock((r.out_dir / (r.name + ".lock")).string(),
                      "experiment '" + r.name + "' in " + r.out_dir.string());
  if (!o.resume) remove_stale_split_files(r.exp_dir, inputs);
  r.doc = experiment_header(r);
  r.fp = run_fingerprint(cfg, r.d);
  if (cfg.get_int("training.batched_splits") > 1) train_batched(r);
  else train_one_by_one(r);
  r.write_doc();  // also when every split was resumed
  log_summary(r);
  return r.doc;
}


json run_eval(const EvalOptions& o) {
  auto loaded = load_checkpoint(o.checkpoint);
  const auto& meta = loaded.meta;
  const auto& cfg = loaded.cfg;
  auto& inf = loaded.inf;
  const auto split = static_cast<size_t>(meta.split);
  const uint64_t seed = static_cast<uint64_t>(cfg.get_int("training.seed"));

  const auto d = load_data(cfg);
  const auto splits = load_splits(cfg, d);
  WHVI_CHECK(split < splits.size() && d.x.size(1) == meta.d_in && d.num_classes == meta.num_classes, o.checkpoint,
             ": its split or input size no longer matches the data (", d.source, ")");
  const auto prep = data::prepare_split(d, splits[split]);
  WHVI_CHECK(data_fingerprint(prep) == meta.data_fp, "the data of split ", split, " (", d.source,
             ") changed since ", o.checkpoint,
             " was trained, so its metrics would not be comparable; retrain on the current data, or "
             "restore the data the model was trained on");
  const int64_t S = o.mc_samples > 0 ? o.mc_samples : cfg.get_int("evaluation.mc_samples");
  const auto f = inf->predict(prep.x_test, S, make_generator(seed, split, Stream::kEval));
  const auto m = inf->likelihood().evaluate(f, prep.y_test.squeeze(1).to(torch::kFloat64));
  json r = environment_json();
  r["checkpoint"] = o.checkpoint;
  r["data_source"] = d.source;  // read too: --json must not be it
  r["command"] = o.command_line;
  r["split"] = split;
  r["mc_samples"] = S;
  r["predictive_samples"] = f.size(0);  // SGHMC: its whole bank, whatever S
  r["n_test"] = prep.x_test.size(0);
  r["evaluated_on"] = cfg.get_float("data.validation_fraction") > 0 ? "validation" : "test";
  r.update(metrics_json(m));
  if (!m.reliability.empty()) r["reliability"] = reliability_json(m.reliability);
  return r;
}

}  // namespace whvi::experiment
