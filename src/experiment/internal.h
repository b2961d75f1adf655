// The experiment's parts, shared by its files (not a public interface):
// checksums and the run fingerprint (fingerprint.cpp), the data and splits with the checks
// before training (plan.cpp), the records and figures (records.cpp), one
// split's training and record (split_run.cpp), and the experiment loop
// (experiment.cpp).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "calibration/calibration.h"
#include "common/rng.h"
#include "config/config.h"
#include "data/dataset.h"
#include "data/source.h"
#include "experiment/experiment.h"
#include "experiment/run_plan.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/metrics.h"
#include "train/loop.h"

namespace whvi::experiment::detail {
using experiment::RunPlan;
namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kPaperSteps = 50500;
constexpr int kPaperSplits = 8;

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
  std::string data_fp;         // data_fingerprint of the prepared split (before any calibration carve)
  torch::Tensor cal_x, cal_y;  // calibration.kind's held-out rows (standardised x, raw y; undefined when off)
  calibration::Fitted calibration;
};

std::string split_label(const std::string& name, size_t k, size_t n);
std::string split_stem(const fs::path& dir, size_t k);
std::string file_checksum(const std::string& path);
std::string record_digest(json r);
json read_json(const std::string& path);
data::RegressionData load_data(const RunPlan& plan);
// A validation carve: `fraction` of a split's training rows, block `block` of a
// shuffle from `stream` (blocks are disjoint; 0 the usual carve); the keys name it in errors.
struct Carve {
  double fraction;
  int64_t block;
  Stream stream;
  const char* key;
  const char* block_key;
};
Carve carve_of(const RunPlan& plan, bool inner);
void carve_validation(data::SplitIndices& s, const Carve& c, uint64_t split_seed, size_t k);
std::vector<data::SplitIndices> load_splits(const RunPlan& plan, const data::RegressionData& d);
void check_device(const RunPlan& plan);
void check_evaluation_memory(const RunPlan& plan, const data::RegressionData& d,
                             const std::vector<data::SplitIndices>& splits);
void check_before_training(const RunPlan& plan, const data::RegressionData& d,
                           const std::vector<data::SplitIndices>& splits);
json protocol_json(const RunPlan& plan, size_t planned, size_t done, size_t stored = 0);
const std::vector<const char*>& metric_names(const RunPlan& plan);
json summary_json(const RunPlan& plan, const std::vector<json>& splits);
json environment_json();
std::string data_fingerprint(const data::PreparedSplit& p);
json input_encoding(const data::RegressionData& d);
json write_grid(infer::Inference& inf, const data::RegressionData& d,
                const data::PreparedSplit& prep, const RunPlan& plan, const std::string& stem,
                const at::Generator& gen);
void log_toy_uncertainty(const std::string& label, const json& toy);
json read_split_file(const std::string& path, const std::string& fp);
// The likelihood's metrics of predictions f for targets y (as the model saw
// them), in the target's units: with data.target_transform: log, y is ln of
// the target and the metrics are returned to its units (metrics::in_target_units).
likelihoods::Evaluation evaluate_predictions(const RunPlan& plan, likelihoods::Likelihood& lik,
                                             const torch::Tensor& f, const torch::Tensor& y);
json metrics_json(const likelihoods::Evaluation& e);
json reliability_json(const std::vector<metrics::ReliabilityBin>& bins);
json pooled_reliability(const std::vector<json>& splits, const std::string& stem, const std::string& title,
                        bool plot);
void write_ood_histograms(const std::string& stem, const metrics::Uncertainty& in, const metrics::Uncertainty& out,
                          int64_t classes, const std::string& title, bool plot);
torch::Tensor load_ood_rows(const RunPlan& plan, const data::RegressionData& d);
SplitRun prepare_split_run(const RunPlan& plan, const data::RegressionData& d, const data::SplitIndices& split,
                           size_t k, const std::string& stem, const std::string& label,
                           const torch::Tensor& ood_rows);
// The console at `level` or quieter while it lives (a split worker loading the
// data its parent has described, warnings included; a rehearsal).
class QuietLog {
 public:
  explicit QuietLog(spdlog::level::level_enum level, bool on = true) : was_(spdlog::get_level()) {
    if (on && level > was_) spdlog::set_level(level);
  }
  ~QuietLog() { spdlog::set_level(was_); }
  QuietLog(const QuietLog&) = delete;
  QuietLog& operator=(const QuietLog&) = delete;

 private:
  spdlog::level::level_enum was_;
};
// Before S Monte Carlo samples of rows x (targets y) that take more than a few
// seconds to draw and score: a line saying how long (a pilot on a copy of
// gen), naming `key`.
void announce_prediction(const RunPlan& plan, infer::Inference& inf, const torch::Tensor& x, const torch::Tensor& y,
                         int64_t S, const at::Generator& gen, const std::string& what, const char* key);
// model.kind auto (experiment/auto_kind.cpp): trains each of model.auto.candidates
// on validation rows of every split (a run of its own, `<name>-auto-<kind>`),
// and returns the record's `auto` with `chosen`, the kind of the lowest mean
// validation NLL, and `settings`, the overrides that train it (its kind, and
// model.depth 0 for a closed-form one).
json choose_model_kind(const TrainOptions& o, const RunPlan& plan);
// The fingerprint of a model.kind auto config: model.auto.validation_fraction and
// each candidate's, as the run after the choice would be configured (its
// `settings` added to `overrides`), in order.
std::string auto_fingerprint(const std::string& config_path, const std::vector<std::string>& overrides,
                             const AutoOptions& a, const std::string& origin);
json run_split(const RunPlan& plan, const data::RegressionData& d, const data::SplitIndices& split,
               size_t k, const std::string& stem, const std::string& label, const std::string& fp,
               const torch::Tensor& ood_rows);
void add_ood(json& r, const RunPlan& plan, const data::RegressionData& d, SplitRun& run,
             const torch::Tensor& f, uint64_t seed);
void save_split_checkpoint(const RunPlan& plan, const data::RegressionData& d, SplitRun& run);
void add_test_rows(json& r, const data::RegressionData& d, const SplitRun& run);
std::string write_test_rows(const data::RegressionData& d, size_t k, const std::vector<int64_t>& test_rows,
                            const std::string& stem);
// --resume: the file written again when it is missing or differs from the split's held-out rows
void restore_test_rows(const data::RegressionData& d, size_t k, const std::vector<int64_t>& test_rows,
                       const std::string& stem);
void log_split(const std::string& label, const data::RegressionData& d, const likelihoods::Evaluation& m,
               const train::TrainStats& ts, int64_t n_test);
json finish_split(const RunPlan& plan, const data::RegressionData& d, SplitRun& run,
                  const train::TrainStats& ts, const json& curve, int64_t batched_with, const std::string& fp);
std::optional<json> finished_split(const RunPlan& plan, const std::string& stem, const std::string& fp,
                                   size_t k, const std::function<std::string()>& data_fp, bool resumed = true);
bool is_split_file_name(const std::string& f);
void remove_stale_split_files(const fs::path& exp_dir, const std::vector<std::string>& inputs);
void remove_stale_temporary_files(const fs::path& exp_dir, const fs::path& out_dir, const std::string& name);
std::string describe_table(const data::RegressionData& d, const std::string& missing);
void check_result_paths(const fs::path& out_dir, const std::string& name, const fs::path& exp_dir, size_t n,
                        const std::vector<std::string>& inputs);
std::vector<std::string> run_inputs(const RunPlan& plan, const data::RegressionData& d);
std::string run_fingerprint(const RunPlan& plan, const data::RegressionData& d);

}  // namespace whvi::experiment::detail
