// Markdown comparison tables: our UCI result files (results/uci/<dataset>-<model>.json, written
// by `whvi train`) next to the paper's Table 3 (results/paper/whvi-neurips2020-table3.json).
// Torch-free: only nlohmann/json and the standard library.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace whvi::report {

// Reads and parses one JSON file. Throws whvi::Error naming `path` when the file is missing,
// unreadable or not valid JSON.
nlohmann::json load_json_file(const std::string& path);

// Renders a Markdown report: a "# title" heading, an RMSE table and an MNLL table (rows =
// datasets in the paper's order boston, concrete, energy, kin8nm, naval, power, protein, yacht,
// then others alphabetically; for each model present in `results`, in `model_order` (the
// model kinds' registry order, models::model_kinds(), which `whvi table` passes), then others
// alphabetically: our "mean ± std" over splits and the paper's "mean (std)"; the MNLL
// table shows our per-sample `mnll_paper` next to the paper and our predictive `mnll` apart),
// footnotes († incomplete runs, ‡ shortened protocols), a list of the runs (experiment, commit,
// command) and the paper's citation and notes.
//
// Each result is one result file's JSON. "dataset" and "model" come from those fields, else from
// "experiment" ("<dataset>-<model>"), else from the stem of "_source_path" (set by
// render_from_files). Statistics come from "summary", else are computed from "splits".
// `paper` may be null or empty: the paper columns then show "–". Throws whvi::Error when a result
// is not a JSON object or names no dataset/model, or when two results are for the same
// (dataset, model) cell (the message names both).
std::string render_markdown_table(const std::vector<nlohmann::json>& results, const nlohmann::json& paper,
                                  const std::string& title, const std::vector<std::string>& model_order = {});

// The papers' tables built into the binary (results/paper/*.json at build time): name (the
// file's stem, e.g. "whvi-neurips2020-table3") and JSON text.
const std::vector<std::pair<std::string, std::string>>& embedded_paper_tables();

// The paper's table for `paper_path`: the file when it exists; else, when its stem names a
// built-in table ("whvi-neurips2020-table6", "results/paper/whvi-neurips2020-table6.json" from
// another folder), that table. Throws whvi::Error naming the path and the built-in names.
nlohmann::json load_paper_table(const std::string& paper_path);

// load_json_file on every path (each result gets "_source_path"), then render_markdown_table.
// A per-split record (output.dir/NAME/split-KK.json) is refused, naming the experiment record.
// The same file given twice (by any path that resolves to it) is an error naming both arguments.
// An empty `paper_path` renders without paper columns' values.
std::string render_from_files(const std::vector<std::string>& result_paths, const std::string& paper_path,
                              const std::string& title, const std::vector<std::string>& model_order = {});

// One CSV row per result file: file, dataset, model, depth, width, params (of split 0), splits,
// then mean and std of rmse, mnll and mnll_paper (for plots such as the paper's Fig. 5).
std::string render_csv_from_files(const std::vector<std::string>& result_paths);

// A string a record (or a command line) supplies, safe to print in Markdown or
// CSV: line breaks and tabs become spaces, other control characters (C0, DEL,
// the C1 range, bidirectional overrides) and bytes that are not UTF-8 become
// U+FFFD, so a name can neither drive the terminal nor start a line of its own.
std::string plain_text(const std::string& s);
// plain_text, with '|' escaped: safe in a Markdown table's cell.
std::string markdown_cell(const std::string& s);

// "mean ± std" with 3 significant digits of the larger of |mean| and std, both to the same
// decimals (e.g. "3.14 ± 0.71", "0.00123 ± 0.00016", "-6.25 ± 0.01"). Exposed for tests.
std::string format_mean_std(double mean, double std);

}  // namespace whvi::report
