// The config a run reads: the file (with its bases and --set overrides), then
// the defaults that depend on the data set (a data set of the user's own) and
// on the model kind (models::recipe_defaults), for the keys it leaves unset.
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "config/config.h"
#include "data/source.h"
#include "experiment/experiment.h"
#include "infer/inference.h"
#include "models/regression_model.h"

namespace whvi::experiment {

namespace {

// Defaults for a data set of the user's own (a CSV or .npy file, a folder in
// the UCI layout, a synthetic problem: not one of the papers' benchmarks, not
// the toy), for the keys its config leaves unset: a file and its target are a
// complete config. The model is chosen on validation rows (auto); the
// networks' sizes and budgets are the CSV examples', chosen on validation rows.
struct OwnDataDefault {
  const char* key;
  const char* value;
  const char* task;  // "regression", "classification" or "" (both)
  const char* why;
};
const std::vector<OwnDataDefault>& own_data_defaults() {
  static const std::vector<OwnDataDefault> d = {
      {"model.kind", "auto", "", "the model chosen on validation rows of each split (not with data.protocol: all)"},
      {"output.dir", "out", "", "beside your data, as the examples do (results/ holds the project's own records)"},
      {"model.width", "64", "regression", "the regression example's (results/selection/README.md)"},
      {"training.steps", "20000", "regression", "the regression example's maximum; validation stopping ends most runs sooner"},
      {"model.width", "128", "classification", "results/selection/class-width"},
      {"training.steps", "80000", "classification", "the classification example's maximum; validation stopping ends most runs sooner"},
      {"training.steps_fixed_noise", "0", "classification", "a softmax has no noise variance to freeze"},
  };
  return d;
}

bool own_data(const config::Config& cfg) {
  const std::string& ds = cfg.get_string("data.dataset");
  return !ds.empty() && !data::is_benchmark(ds) && !data::data_source_for(ds).all_rows_train;
}

void apply_own_data_defaults(config::Config& cfg) {
  if (!own_data(cfg)) return;
  const std::string task = cfg.get_string("likelihood.kind") == "softmax" ? "classification" : "regression";
  for (const auto& d : own_data_defaults()) {
    if (*d.task && task != d.task) continue;
    if (std::string(d.key) == "model.kind" && cfg.get_string("data.protocol") == "all") continue;
    cfg.set_default(d.key, d.value, std::string("the default for a data set of your own (") + d.why + ")");
  }
}

}  // namespace

config::Config load_config(const std::string& config_path, const std::vector<std::string>& overrides) {
  auto cfg = config::Config::load(config_path, overrides);
  apply_own_data_defaults(cfg);
  const std::string kind = cfg.get_string("model.kind");
  for (const auto& d : models::recipe_defaults())
    if (d.kind == kind && cfg.get_string(d.when_key) == d.when_value)
      cfg.set_default(d.key, d.value, "the default of model.kind " + kind);
  // A closed form (blr, gp) has no hidden layers: a network's depth in the
  // config (the examples', when --set model.kind=gp names the kind) does not
  // block it; it is set aside, and said so.
  if (kind != "auto" && infer::fits_in_closed_form(infer::method_of(kind)) && cfg.get_int("model.depth") != 0) {
    spdlog::info("model.kind {} has no hidden layers: model.depth {} (for a network) does not apply and is set to 0",
                 kind, cfg.get_int("model.depth"));
    cfg.set("model.depth", "0", "model.kind " + kind + " (a closed form, no hidden layers)");
  }
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
  md += "\n## Defaults for a data set of your own\n\nWhere `data.dataset` is a file or folder of yours (CSV, `.npy`, "
        "the UCI layout) or a `synthetic:` problem, not one of the papers' benchmarks or the toy, these keys "
        "default as below when the config leaves them unset (before the model kind's own defaults above), so a "
        "file and its target are a complete config.\n\n| key | default | task | why |\n|---|---|---|---|\n";
  for (const auto& d : own_data_defaults())
    md += std::string("| `") + d.key + "` | `" + d.value + "` | " + (*d.task ? d.task : "both") + " | " + d.why + " |\n";
  return md;
}

}  // namespace whvi::experiment
