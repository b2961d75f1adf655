// The whole job behind `whvi train` and `whvi eval`: config -> data ->
// model -> training -> metrics -> result files.
//
// Files (output.dir = O, output.name = E):
//   O/E.json              the experiment: resolved config, versions, command,
//                         per-split results and the summary; rewritten
//                         atomically after every split ("complete": false
//                         until the last one; a split that failed is named in
//                         "failed_split").
//   O/E/split-KK.json     one split's results, written atomically as soon as
//                         the split finishes.
//   O/E/split-KK.ckpt     its model (output.checkpoints), for `whvi eval`,
//                         with a checksum of its contents and a fingerprint
//                         of the split's data, both verified on loading.
//   O/E.lock              held while the experiment runs: a second run into
//                         the same experiment is refused.
// With resume, splits whose split file exists (for the same configuration)
// are loaded instead of re-run, so a killed sweep loses only the split that
// was running. Without resume, split files of an earlier run are removed
// first.
//
// Randomness: split k's initialisation, mini-batches and training noise come
// from generators seeded from (training.seed, k) only, and its test-time
// samples from another stream of the same pair, so a split gives the same
// bits whether it runs alone, after other splits or after --resume, and
// `whvi eval` of its checkpoint reproduces its metrics exactly (same thread
// count).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace whvi::experiment {

struct TrainOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // "section.key=value"
  bool resume = false;
  std::string command_line;
  // Splits trained at once, each in its own process (experiment/workers.h):
  // 0 = as many as the cores and --threads allow, 1 = one after another here
  // (the default of the library, whose caller may not be whvi; `whvi train`'s is 0).
  int parallel = 1;
  // A worker of a parallel run: trains split `worker_split` only (>= 0),
  // writing its record and checkpoint, without the experiment record or lock.
  int worker_split = -1;
  std::string worker_link;  // "PID:FD:TOKEN": the run that started this worker (experiment/workers.h)
  // The token of the experiment's lock when the caller already holds it
  // (model.kind auto holds it over its candidates and the chosen run).
  std::string held_lock;
  std::vector<std::string> worker_globals;  // the global options a worker gets (--log-level, --simd)
  // model.kind auto: the choice made before this run (experiment/auto_kind.cpp), for its record
  nlohmann::json auto_choice;
};

// A config file with `overrides`, then the defaults of its model kind
// (models::recipe_defaults) for the keys neither names: what every command
// that runs an experiment reads.
config::Config load_config(const std::string& config_path, const std::vector<std::string>& overrides = {});
// Those defaults as a Markdown section (the end of `whvi config --describe`).
std::string recipe_defaults_markdown();

// Returns the experiment JSON document (also written to O/E.json).
nlohmann::json run_train(const TrainOptions& options);

// The configuration fingerprint of a config file (with `overrides`): what a
// finished split's record must match for --resume to keep it. Data-dependent
// parts (constant input columns) are added by run_train. model.kind auto: every
// candidate's, under the settings that would train it.
std::string config_fingerprint(const std::string& config_path, const std::vector<std::string>& overrides = {});

struct EvalOptions {
  std::string checkpoint;
  int64_t mc_samples = 0;  // 0: the config's evaluation.mc_samples
  std::string command_line;
};

// Re-evaluates a checkpoint on its test split; returns the metrics.
nlohmann::json run_eval(const EvalOptions& options);

struct PredictOptions {
  std::string checkpoint;
  std::string input;        // a CSV/TSV file (gzip or plain) with a header naming the input columns; "-": stdin
  std::string out = "-";    // "-": standard output
  int64_t mc_samples = 0;   // 0: the config's evaluation.mc_samples
  double interval = 0.95;   // the central predictive interval's mass (regression)
  int64_t chunk_rows = 65536;  // rows read, predicted and written at a time
  std::vector<std::string> keep;  // input columns copied to the output, before the predictions
};

// whvi predict: the checkpoint's model on new rows, one CSV row out per row in,
// in the input's order, in the target's units. Each line starts with `row` (1
// for the first data row after the header) and the --keep columns as they are
// in the input. Regression: mean, std, epistemic_std, aleatoric_std,
// lower, upper (the central interval of the predictive Gaussian mixture);
// classification: p_<class> for every class, predicted, confidence, entropy,
// mutual_information. Input columns are found by name (extra columns ignored),
// standardised with the training split's statistics stored in the checkpoint;
// a text category unseen in training is encoded as zeros and counted. Each
// row is predicted alone from the split's evaluation stream, reset for every
// row, so a row's numbers depend only on the checkpoint, the row, S and the
// seed. Returns a summary (rows, unseen categories).
nlohmann::json run_predict(const PredictOptions& options);
// A CSV field as whvi writes it: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

struct LoadedCheckpoint;  // experiment/checkpoint.h
// The same for a checkpoint already loaded (the library's whvi::Predictor,
// whvi/predictor.h): the output's text goes to `write`, piece by piece, in
// order (options.out is not read); nothing is written for a refused input.
nlohmann::json predict_with(LoadedCheckpoint& loaded, const PredictOptions& options,
                            const std::function<void(const std::string&)>& write);

struct ExportOptions {
  std::string checkpoint;
  std::string format = "onnx";
  std::string out;
  int64_t mc_samples = 0;  // samples drawn per call of the graph; 0: the config's evaluation.mc_samples
  double interval = 0.95;  // the central predictive interval's mass (regression)
};

// whvi export: the checkpoint's model as a self-contained ONNX graph
// (docs/export.md): input `x` [N, inputs] (the encoded input columns, in the
// order the graph's metadata `whvi.inputs` lists; NaN for a missing cell),
// outputs the columns of `whvi predict` (regression: mean, std,
// epistemic_std, aleatoric_std, lower, upper; classification: probabilities
// [N, C], predicted (class index), confidence, entropy, mutual_information),
// the posterior's sampling in the graph (S draws at every call). A model that
// does not export is refused with the reason. Returns a summary.
nlohmann::json run_export(const ExportOptions& options);

}  // namespace whvi::experiment
