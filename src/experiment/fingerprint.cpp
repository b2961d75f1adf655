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
  // impute (the default) and error give the same numbers wherever error runs
  // (data without missing cells), so records of either resume into the other
  if (cfg.get_string("data.missing") == "error" || cfg.get_string("data.missing") == "impute") dj.erase("missing");
  if (cfg.get_string("data.protocol") != "random" && !data::data_source_for(cfg.get_string("data.dataset")).user_table)
    dj.erase("test_fraction");
  if (cfg.get_string("data.protocol") != "kfold") dj.erase("folds");
}

namespace {

// Erases the dotted `key` from j where present, and the groups it leaves empty.
void erase_key(json& j, const std::string& key) {
  const auto dot = key.find('.');
  if (!j.is_object() || !j.contains(key.substr(0, dot))) return;
  if (dot == std::string::npos) {
    j.erase(key);
    return;
  }
  auto& sub = j[key.substr(0, dot)];
  erase_key(sub, key.substr(dot + 1));
  if (sub.is_object() && sub.empty()) j.erase(key.substr(0, dot));
}

}  // namespace

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
  // keys added after results were committed (declared late), left out at
  // their defaults so those results still resume and extend
  for (const auto& spec : cfg.declared())
    if (spec.late && options::at_default(cfg, spec)) erase_key(j, spec.key);
  // and those left out where they do not act
  // model.auto.* choose the kind before a run (experiment/auto_kind.cpp); a run's splits are of its named kind
  j["model"].erase("auto");
  if (method_of(cfg) != "ensemble") j.erase("ensemble");
  if (cfg.get_string("model.architecture") != "rff") j["model"].erase("rff");
  if (cfg.get_string("model.architecture") == "mlp")
    for (const char* k : {"architecture", "conv", "conv_dropout", "conv_rank", "batch_norm"}) j["model"].erase(k);
  if (cfg.get_string("model.conv") != "lowrank-mcd") j["model"].erase("conv_rank");
  if (j["model"].contains("whvi") && cfg.get_string("model.whvi.structure") == "s1hghs2" &&
      cfg.get_string("model.whvi.s_posterior") == "optimised" && cfg.get_float("model.whvi.s_prior_var") == 0)
    for (const char* k : {"structure", "s_posterior", "s_prior_var"}) j["model"]["whvi"].erase(k);
  erase_idle_data_keys(cfg, j["data"]);
  if (cfg.get_int("evaluation.every") == 0)
    for (const char* k : {"every", "curve_mc_samples"}) j["evaluation"].erase(k);
  j["evaluation"].erase("ood_dataset");  // scored after training, with draws of their own: the split's numbers do not depend on it
  // batched splits: a split's numbers depend on whether it was batched, not on its group
  if (cfg.get_int("training.batched_splits") == 1) j["training"].erase("batched_splits");
  else j["training"]["batched_splits"] = "batched";
  // the fused step agrees with autograd to float rounding, not to the bit: the
  // engine that runs counts (auto resolved), so auto and an explicit choice of
  // the same engine share their splits
  if (engine_for(cfg) == "autograd") j["training"].erase("engine");
  else j["training"]["engine"] = "fused";
  // (training.device is late: another device rounds differently, so its splits are not resumed into a CPU run's)
  if (cfg.get_string("likelihood.kind") != "student-t") j["likelihood"].erase("student_t");
  if (cfg.get_string("calibration.kind") == "none") j.erase("calibration");
  // stopping on validation rows: its keys only where it acts
  if (!stopping_on(cfg))
    for (const char* k : {"stopping", "stopping_fraction", "stopping_every", "stopping_patience", "stopping_mc_samples"})
      j["training"].erase(k);
  if (cfg.get_string("training.optimizer") == "adam") j["training"].erase("momentum");
  return j.dump();
}

// The split's data as the model saw it: a checkpoint is only valid for these bits.
std::string data_fingerprint(const data::PreparedSplit& p) {
  Fnv1a64 h;
  for (const auto* t : {&p.x_train, &p.y_train, &p.x_test, &p.y_test}) hash_tensor(h, *t);
  return hex(h.value());
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

}  // namespace whvi::experiment::detail
