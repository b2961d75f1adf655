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
#include "common/memory.h"
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

namespace whvi::experiment {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace detail;

namespace {

// One `whvi train`: the config, its data and splits, where results go, and
// the experiment record as it grows split by split.
struct ExperimentRun {
  ExperimentRun(RunPlan p, const TrainOptions& opt) : plan(std::move(p)), o(opt) {}
  const RunPlan plan;
  const TrainOptions& o;
  std::string name;
  fs::path out_dir, exp_dir;
  std::string exp_path;
  data::RegressionData d;
  std::vector<data::SplitIndices> splits;
  torch::Tensor ood_rows;
  std::string fp;
  std::string lock_token;  // the experiment lock's, for the split workers
  json doc;
  std::vector<json> done;

  // The experiment record, rewritten atomically after each split.
  void write_doc() {
    doc["protocol"] = protocol_json(plan, splits.size(), done.size(), d.std_train.size());
    doc["splits"] = done;
    doc["summary"] = summary_json(plan, done);
    doc["complete"] = done.size() == splits.size();
    if (d.is_classification())
      doc["reliability"] = pooled_reliability(done, (out_dir / name).string(), name, plan.run.plot);
    write_file_atomic(exp_path, doc.dump(2) + "\n");
  }
  std::string stem(size_t k) const { return split_stem(exp_dir, k); }
  std::string label(size_t k) const { return split_label(name, k, splits.size()); }
  std::optional<json> resumed(size_t k) const {
    if (!o.resume) return std::nullopt;
    auto r = finished_split(plan, stem(k), fp, k, [&] { return data_fingerprint(data::prepare_split(d, splits[k])); });
    // the held-out rows' file its record names, written again when it was removed or changed
    if (r && r->contains("test_rows_file")) restore_test_rows(d, k, splits[k].test, stem(k));
    return r;
  }
};

// What the record says before any split: the run's environment, data and config.
json experiment_header(const ExperimentRun& r) {
  const auto& plan = r.plan;
  const auto& d = r.d;
  json doc = environment_json();
  doc["experiment"] = r.name;
  doc["dataset"] = plan.data.dataset;
  doc["model"] = plan.method.label;
  doc["task"] = d.is_classification() ? "classification" : "regression";
  if (d.is_classification()) doc["classes"] = d.class_names;
  if (!d.inputs.empty()) {
    json cols = json::array();
    for (const auto& c : d.inputs)
      cols.push_back({{"name", c.name},
                      {"kind", c.missing_indicator      ? "missing indicator"
                               : c.categories.empty() ? "number"
                               : c.declared           ? "declared category (one-hot)"
                                                      : "text (one-hot)"},
                      {"categories", c.categories.size()}});
    doc["data"] = {{"file", d.source}, {"target", d.target_name}, {"features", cols},
                   {"rows", d.x.size(0)}, {"dropped_rows_missing", d.dropped_rows},
                   {"missing_cells_imputed", d.missing_cells}, {"missing", plan.uses.missing}};
  }
  doc["command"] = r.o.command_line;
  if (!r.o.auto_choice.is_null()) doc["auto"] = r.o.auto_choice;
  doc["config"] = r.plan.config->to_json();
  doc["config_file"] = r.o.config_path;
  if (plan.method.device != "cpu") {
    const auto gpu = cuda_device_name();
    doc["training_device"] = plan.method.device + (gpu.empty() ? "" : ": " + gpu);
  }
  if (const auto& fl = d.noise_floor)
    doc["noise_floor"] = {{"rmse", fl->rmse}, {"mnll", fl->mnll}, {"mnll_homoscedastic", fl->mnll_homoscedastic}};
  return doc;
}

// Batched splits (train/batched.h): the unfinished splits in groups of
// training.batched_splits, each group trained as one model; every split's
// files are written when its group finishes, in split order.
// A group of batched splits holds every split's network (parameters,
// gradients and Adam's two moments, in float64 at most) and rows at once:
// refused from the first split's sizes before the others are made.
void check_group_memory(const RunPlan& plan, const SplitRun& first, size_t splits) {
  const double params = static_cast<double>(first.inf->num_params());
  const double rows = 4.0 * 8.0 * static_cast<double>(first.prep.x_train.numel() + first.prep.x_test.numel());
  refuse_unless_room(static_cast<double>(splits) * (4.0 * 8.0 * params + rows),
                     whvi::detail::concat(plan.origin, ": training.batched_splits: ", splits, " splits trained at once, each a "
                                    "network of ", first.inf->num_params(), " parameters"),
                     "lower training.batched_splits (or model.width)");
}

void train_batched(ExperimentRun& r) {
  const auto& plan = r.plan;
  const auto group_size = static_cast<size_t>(plan.method.batched_splits);
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
  const auto seed = static_cast<uint64_t>(plan.run.seed);
  for (size_t g0 = 0; g0 < pending.size(); g0 += group_size) {
    const size_t g1 = std::min(pending.size(), g0 + group_size);
    std::vector<SplitRun> runs;
    std::vector<train::SplitTask> tasks;
    for (size_t i = g0; i < g1; ++i) {
      const size_t k = pending[i];
      runs.push_back(prepare_split_run(plan, r.d, r.splits[k], k, r.stem(k), r.label(k), r.ood_rows));
      if (i == g0) check_group_memory(plan, runs.front(), g1 - g0);  // before the group's other networks are made
    }
    if (const auto why = train::batched_unsupported(plan.group, *runs.front().inf); !why.empty())
      throw Error(plan.origin + ": " + why);
    for (auto& run : runs) {
      train::SplitTask t;
      t.inference = run.inf.get();
      t.x = run.prep.x_train;
      t.y = run.prep.y_train.squeeze(1);
      t.gen = make_generator(seed, run.k, Stream::kTrain);
      t.label = run.label;
      tasks.push_back(std::move(t));
    }
    train::train_group(tasks, plan.group);
    std::optional<std::pair<size_t, std::string>> failure;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (tasks[i].error) {
        if (!failure) failure.emplace(runs[i].k, *tasks[i].error);
        continue;
      }
      results[runs[i].k] = finish_split(plan, r.d, runs[i], tasks[i].stats, json(),
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

// Whether this run's pending splits go to workers: more than one of them,
// one at a time per process (not batched), on the CPU, and --parallel not 1.
// The workers read the config again by its path: a pipe (a FIFO, standard
// input) has been read already, so those splits train here, one by one.
bool parallel_splits(const ExperimentRun& r, size_t pending) {
  if (r.o.parallel == 1 || pending <= 1 || r.plan.method.batched_splits != 1 || r.plan.method.device != "cpu")
    return false;
  std::error_code ec;
  if (fs::is_regular_file(r.o.config_path, ec)) return true;
  spdlog::info("the config {} is not a regular file (a pipe can be read once), so the splits train one after "
               "another in this process; save it to a file to train them in parallel", r.o.config_path);
  return false;
}

// What split k checks before its first step (its rows, calibration rows, the
// method's set-up, the step's memory), without training and without a line on
// the console: a parallel run's parent does it before starting the workers, so
// a problem every split shares is said once.
void rehearse_split(const RunPlan& plan, const data::RegressionData& d, const data::SplitIndices& split, size_t k,
                    const std::string& label, const torch::Tensor& ood_rows) {
  const QuietLog quiet(spdlog::level::off);  // the worker says it all again
  auto run = prepare_split_run(plan, d, split, k, "", label, ood_rows);
  train::check_before_steps(*run.inf, run.prep.x_train, plan.loop, label);
}

// The final line of a parallel run whose workers failed: which splits (each
// worker's own error is above), and whether any finished.
std::string failed_in_workers(const ExperimentRun& r, const std::vector<size_t>& failed, size_t pending) {
  std::string which;
  for (size_t i = 0; i < failed.size() && i < 8; ++i) which += (i ? ", " : "") + r.label(failed[i]);
  if (failed.size() > 8) which += " and " + std::to_string(failed.size() - 8) + " more";
  const bool all = failed.size() == pending;
  return (all && pending > 1 ? "every split failed in its worker (" + which + "; the errors are above)"
                             : which + (failed.size() > 1 ? " failed in their workers" : " failed in its worker") +
                                   " (the error is above)") +
         (all ? ": fix the cause and run again" : "; the other splits' results are kept: fix the cause and run "
                                                  "again with --resume");
}

// The splits, one after another here or in parallel workers (the records
// they write are adopted with the checks of --resume); a failure is recorded
// in the record, then rethrown, the other splits' results kept.
void train_splits(ExperimentRun& r) {
  std::vector<std::optional<json>> prior(r.splits.size());
  std::vector<size_t> pending;
  for (size_t k = 0; k < r.splits.size(); ++k) {
    prior[k] = r.resumed(k);
    if (!prior[k]) pending.push_back(k);
  }
  std::vector<size_t> failed;
  if (parallel_splits(r, pending.size())) {
    const auto plan = plan_workers(r.o.parallel, pending.size());
    if (plan.workers > 1) {
      try {  // a problem every split shares, said once before any worker starts
        rehearse_split(r.plan, r.d, r.splits[pending.front()], pending.front(), r.label(pending.front()), r.ood_rows);
      } catch (const std::exception& e) {
        r.doc["failed_split"] = {{"split", pending.front()}, {"error", printable(e.what(), 2000)}};
        r.write_doc();
        throw;
      }
      r.doc["split_workers"] = {{"workers", plan.workers}, {"threads_each", plan.threads_each}};
      failed = run_split_workers(r.o, pending, plan, r.lock_token, [&](size_t k) { return r.label(k); });
      for (const size_t k : pending)
        if (!std::count(failed.begin(), failed.end(), k))
          prior[k] = finished_split(r.plan, r.stem(k), r.fp, k, [&] {
            return data_fingerprint(data::prepare_split(r.d, r.splits[k]));
          }, false);
    }
  }
  for (size_t k = 0; k < r.splits.size(); ++k) {
    if (prior[k]) {
      r.done.push_back(std::move(*prior[k]));
      continue;
    }
    try {
      WHVI_CHECK(failed.empty(), failed_in_workers(r, failed, pending.size()));
      r.done.push_back(run_split(r.plan, r.d, r.splits[k], k, r.stem(k), r.label(k), r.fp, r.ood_rows));
    } catch (const std::exception& e) {
      r.doc["failed_split"] = {{"split", failed.empty() ? k : failed.front()}, {"error", printable(e.what(), 2000)}};
      r.write_doc();
      throw;
    }
    r.doc.erase("failed_split");
    if (r.done.size() < r.splits.size()) r.write_doc();
  }
}

// A worker of a parallel run (experiment/workers.h): split o.worker_split
// only, its record and checkpoint written as in any run; the parent holds
// the experiment's lock and writes its record.
json run_worker(ExperimentRun& r) {
  const auto k = static_cast<size_t>(r.o.worker_split);
  WHVI_CHECK(k < r.splits.size(), "--worker-split ", k, " is not a split of this run (it has ", r.splits.size(),
             ")");
  r.fp = run_fingerprint(r.plan, r.d);
  return run_split(r.plan, r.d, r.splits[k], k, r.stem(k), r.label(k), r.fp, r.ood_rows);
}

void log_summary(const ExperimentRun& r) {
  const auto& s = r.doc["summary"];
  auto mean = [&](const char* k) { return s[k]["mean"].get<double>(); };
  auto sd = [&](const char* k) { return s[k]["std"].get<double>(); };
  const char* headline = r.d.is_classification() ? "error" : "rmse";
  if (!s.contains(headline) || !s[headline].contains("n") || s[headline]["n"].get<int64_t>() == 0)
    spdlog::info("{}: {} split(s) trained; {} no held-out rows -> {}", r.name, r.done.size(),
                 r.plan.toy ? "the toy problem has" : "a final model (data.protocol: all) has", r.exp_path);
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

json run_train(const TrainOptions& o) {
  const auto t_start = std::chrono::steady_clock::now();
  if (o.worker_split >= 0 || !o.worker_link.empty()) attach_worker(o);  // first: dies with the run that started it
  const auto cfg = load_config(o.config_path, o.overrides);
  auto plan = resolve_run(cfg);
  if (plan.method.kind == "auto") {  // chosen first, then trained as if named
    // the experiment's lock, held from before the candidates to the end: a
    // second run into it is refused at once, not after the choice
    const fs::path out_dir = plan.run.dir;
    const std::string name = plan.run.name;
    check_output_path((out_dir / (name + ".json")).string(), "the experiment record (output.dir/output.name.json)");
    std::optional<FileLock> lock;
    if (o.held_lock.empty()) lock.emplace((out_dir / (name + ".lock")).string(),
                                          "experiment '" + name + "' in " + out_dir.string());
    auto chosen = o;
    if (lock) chosen.held_lock = lock->token();
    chosen.auto_choice = choose_model_kind(o, plan);
    for (const auto& kv : chosen.auto_choice["settings"]) chosen.overrides.push_back(kv.get<std::string>());
    return run_train(chosen);
  }
  // the resolved config goes to the record; on the console only at --log-level debug
  if (spdlog::default_logger_raw()->should_log(spdlog::level::debug)) {
    spdlog::debug("config {} resolved:", o.config_path);
    std::istringstream lines(cfg.dump_yaml());
    for (std::string line; std::getline(lines, line);) spdlog::debug("  {}", line);
  }
  ExperimentRun r(std::move(plan), o);
  r.name = r.plan.run.name;
  r.out_dir = r.plan.run.dir;
  r.exp_dir = r.out_dir / r.name;
  r.exp_path = (r.out_dir / (r.name + ".json")).string();
  const std::string lock_path = (r.out_dir / (r.name + ".lock")).string();
  if (o.worker_split >= 0) guard_worker_writes(o, lock_path);

  // where the results go, checked before anything is loaded or trained
  check_output_path(r.exp_path, "the experiment record (output.dir/output.name.json)");
  if (const auto kind = describe_path_kind(r.exp_dir.string()); !kind.empty())
    WHVI_CHECK(kind == "a folder", "the results folder ", r.exp_dir.string(), " is ", kind,
               ", not a folder (whvi leaves it alone): choose another output.name (or output.dir)");
  {
    const QuietLog quiet(spdlog::level::err, o.worker_split >= 0);  // the parent has said what the data are
    r.d = load_data(r.plan);
    r.splits = load_splits(r.plan, r.d);
  }
  check_before_training(r.plan, r.d, r.splits);
  const auto inputs = run_inputs(r.plan, r.d);
  check_result_paths(r.out_dir, r.name, r.exp_dir, r.splits.size(), inputs);
  r.ood_rows = load_ood_rows(r.plan, r.d);
  if (o.worker_split >= 0) return run_worker(r);  // the parent has said what the data are
  spdlog::info("data {} ({}): {} rows x {} features; {} split(s)", r.d.name, r.d.source, r.d.x.size(0),
               r.d.x.size(1), r.splits.size());
  if (!r.d.inputs.empty()) spdlog::info("{}", describe_table(r.d, r.plan.uses.missing));
  std::optional<FileLock> lock;  // none when the caller holds it (model.kind auto)
  if (o.held_lock.empty()) lock.emplace(lock_path, "experiment '" + r.name + "' in " + r.out_dir.string());
  r.lock_token = lock ? lock->token() : o.held_lock;
  remove_stale_temporary_files(r.exp_dir, r.out_dir, r.name);  // a stopped writer's: never put in place
  if (!o.resume) remove_stale_split_files(r.exp_dir, inputs);
  r.doc = experiment_header(r);
  r.fp = run_fingerprint(r.plan, r.d);
  if (r.plan.method.batched_splits > 1) train_batched(r);
  else train_splits(r);
  // the whole command's time (data, every split, records), for speed comparisons of whole runs
  r.doc["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  r.write_doc();  // also when every split was resumed
  log_summary(r);
  return r.doc;
}

}  // namespace whvi::experiment
