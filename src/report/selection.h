// `whvi select`: ranks hyper-parameter candidates by their validation MNLL.
//
// Input: experiment records of runs with data.validation_fraction > 0 (every
// file must say "evaluated_on": "validation"; a file evaluated on test rows is
// refused, so test data can never choose a default). Runs are grouped by model
// kind; a candidate is what its experiment name adds to "<dataset>-<model>-",
// and the keys that differ between a model's candidates are reported as its
// settings. Per data set the candidates are ranked by mean validation MNLL
// (lower is better); the chosen candidate has the lowest mean rank over the
// data sets where every candidate of its model has a complete run (ties: the
// lower mean excess MNLL over the per-data-set best).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace whvi::report {

struct SelectionResult {
  nlohmann::json summary;  // per model: chosen candidate, its settings, every candidate's ranks
  std::string markdown;
};

SelectionResult select_defaults(const std::vector<std::string>& run_files);

// A record's nested config as dotted keys ("model.mcd.dropout") and their
// values, the form in which `whvi select` compares candidates' settings.
void flatten_config(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out);

}  // namespace whvi::report
