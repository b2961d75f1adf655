// The files of a run's splits: a split's checkpoint and held-out rows, a
// finished split's record taken back by --resume, and the housekeeping of the
// output folder (stale split files and temporaries, paths that must not be
// written over).
#include "experiment/internal.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/io.h"
#include "config/config.h"
#include "data/dataset.h"
#include "experiment/checkpoint.h"
#include "infer/inference.h"
#include "likelihoods/likelihood.h"

namespace whvi::experiment::detail {

void save_split_checkpoint(const RunPlan& plan, const data::RegressionData& d, SplitRun& run) {
  const auto& prep = run.prep;
  CheckpointMeta meta;
  meta.config_yaml = plan.config->dump_yaml();
  meta.source = plan.origin;
  meta.data_fp = run.data_fp;
  meta.split = static_cast<int64_t>(run.k);
  meta.d_in = d.x.size(1);
  meta.y_mean = prep.stats.y_mean.item<double>();
  meta.y_std = prep.stats.y_std.item<double>();
  meta.num_classes = d.num_classes;
  meta.inputs_json = input_encoding(d).dump();
  meta.x_mean = prep.stats.x_mean;
  meta.x_std = prep.stats.x_std;
  meta.x_fill = prep.x_fill;
  if (run.calibration.on()) meta.calibration_json = run.calibration.to_json().dump();
  meta.likelihood_fitted = run.inf->likelihood().fitted();
  save_checkpoint(run.stem + ".ckpt", *run.inf, meta);
}

// The user's CSV data: split k's held-out rows (`test_rows`, indices into
// d's rows) in a file beside its record, for another tool that needs the same
// split; returns the file's name.
std::string test_rows_text(const data::RegressionData& d, size_t k, const std::vector<int64_t>& test_rows) {
  std::string rows = "# the rows of " + d.source + " held out by split " + std::to_string(k) +
                     " (0-based data rows: the header is not a row)\n";
  for (const auto i : test_rows)
    rows += std::to_string(d.source_rows.empty() ? i : d.source_rows[static_cast<size_t>(i)]) + "\n";
  return rows;
}

std::string write_test_rows(const data::RegressionData& d, size_t k, const std::vector<int64_t>& test_rows,
                            const std::string& stem) {
  write_file_atomic(stem + "-test-rows.txt", test_rows_text(d, k, test_rows));
  return fs::path(stem + "-test-rows.txt").filename().string();
}

void restore_test_rows(const data::RegressionData& d, size_t k, const std::vector<int64_t>& test_rows,
                       const std::string& stem) {
  const std::string path = stem + "-test-rows.txt", kind = describe_path_kind(path);
  if (!kind.empty() && kind != "a regular file") return;  // not ours to replace: the record check names it
  const std::string want = test_rows_text(d, k, test_rows);
  std::string have;
  if (!kind.empty()) try {
      have = read_user_file(path, "a split's held-out rows", want.size() + 1);
    } catch (const Error&) {
      have.clear();
    }
  if (!kind.empty() && have == want) return;
  write_file_atomic(path, want);
  spdlog::warn("split {}: {}-test-rows.txt {}: written again", k, stem, kind.empty() ? "was missing" : "had been changed");
}

void add_test_rows(json& r, const data::RegressionData& d, const SplitRun& run) {
  r["unseen_category_rows"] = run.prep.unseen_category_rows;
  r["test_rows_file"] = write_test_rows(d, run.k, run.test_rows, run.stem);
}

// --resume: split k's record when the split is finished, else nothing. With
// output.checkpoints on, a split is finished only when its checkpoint exists
// and passes its checksum; otherwise it is retrained, and the log says why.
std::optional<json> finished_split(const RunPlan& plan, const std::string& stem, const std::string& fp,
                                   size_t k, const std::function<std::string()>& data_fp, bool resumed) {
  if (describe_path_kind(stem + ".json").empty()) return std::nullopt;
  if (plan.run.checkpoints) {
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
  if (plan.run.checkpoints &&
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
  if (resumed) spdlog::info("split {}: done already ({}), skipped", k, stem + ".json");
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

// The temporary files a writer stopped mid-write leaves (AtomicFile's
// ".NAME.tmp.XXXXXX" beside a split file in exp_dir, or beside the run's record
// `name`.json and its reliability files in out_dir): never put in place, so
// removed when the lock is taken, with or without --resume. Only regular files
// under such a name; anything else is left.
void remove_stale_temporary_files(const fs::path& exp_dir, const fs::path& out_dir, const std::string& name) {
  static const std::regex tmp(R"(\.(.+)\.tmp\.[A-Za-z0-9]{6})");
  const auto record_file = [&](const std::string& f) {
    return f == name + ".json" || f == name + "-reliability.csv" || f == name + "-reliability.png";
  };
  size_t removed = 0;
  std::error_code ec;
  for (const auto& [dir, ours] : {std::pair<fs::path, bool>{exp_dir, true}, {out_dir, false}}) {
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : list_dir(dir.string())) {
      std::smatch m;
      const std::string f = fs::path(e).filename().string();
      if (!std::regex_match(f, m, tmp) || !(ours ? is_split_file_name(m[1].str()) : record_file(m[1].str())) ||
          !fs::is_regular_file(fs::symlink_status(e, ec)))
        continue;
      if (fs::remove(e, ec)) ++removed;
    }
  }
  if (removed) spdlog::warn("removed {} temporary file(s) a stopped run left in {}", removed, out_dir.string());
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

}  // namespace whvi::experiment::detail
