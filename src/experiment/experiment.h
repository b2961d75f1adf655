// The whole job behind `whvi train` and `whvi eval`: config -> data ->
// model -> training -> metrics -> result files.
//
// Files (output.dir = O, output.name = E):
//   O/E.json              the experiment: resolved config, versions, command,
//                         per-split results and the summary; rewritten
//                         atomically after every split ("complete": false
//                         until the last one).
//   O/E/split-KK.json     one split's results, written atomically as soon as
//                         the split finishes.
//   O/E/split-KK.ckpt     its model (output.checkpoints), for `whvi eval`.
// With resume, splits whose split file exists (for the same configuration)
// are loaded instead of re-run, so a killed sweep loses only the split that
// was running.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace whvi::experiment {

struct TrainOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // "section.key=value"
  bool resume = false;
  std::string command_line;
};

// Returns the experiment JSON document (also written to O/E.json).
nlohmann::json run_train(const TrainOptions& options);

struct EvalOptions {
  std::string checkpoint;
  int64_t mc_samples = 0;  // 0: the config's evaluation.mc_samples
  std::string command_line;
};

// Re-evaluates a checkpoint on its test split; returns the metrics.
nlohmann::json run_eval(const EvalOptions& options);

}  // namespace whvi::experiment
