#include "report/selection.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/io.h"
#include "report/table.h"

namespace whvi::report {
using nlohmann::json;

void flatten_config(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) flatten_config(*it, key, out);
    else out[key] = *it;
  }
}

namespace {

std::string fmt(double v, int prec = 4) {
  std::ostringstream os;
  os.precision(prec);
  os << v;
  return os.str();
}

struct Run {
  std::string file, dataset, model, candidate;
  double mnll = NAN, rmse = NAN, cov95 = NAN, crps = NAN, error = NAN;
  bool complete = false;
  std::map<std::string, json> config;
};

// One experiment record, checked to be a validation run named
// <dataset>-<model>-<candidate>.
Run read_run_fields(const std::string& f, const json& j);
// Its summary's metrics and its config, into r.
Run read_run_metrics(const std::string& f, const json& j, Run r);

// Any field missing or of the wrong type is one error naming the file, not a
// library's type_error (nor undefined behaviour on a missing key).
Run read_run(const std::string& f) {
  const auto j = load_json_file(f);
  try {
    return read_run_fields(f, j);
  } catch (const json::exception&) {
    throw Error(f + " is not a complete whvi experiment record (a field is missing or of the wrong type): give a "
                "record written by whvi train, unedited");
  }
}

Run read_run_fields(const std::string& f, const json& j) {
  WHVI_CHECK(j.is_object() && j.contains("protocol") && j.contains("experiment"), f,
             " is not a whvi experiment record");
  WHVI_CHECK(j.at("protocol").value("evaluated_on", std::string()) == "validation", f,
             " was evaluated on ", j.at("protocol").value("evaluated_on", std::string("test")),
             " rows, not on validation rows; selection may only use runs with data.validation_fraction > 0");
  Run r;
  r.file = f;
  r.dataset = j.value("dataset", std::string());
  r.model = j.value("model", std::string());
  const std::string name = j.value("experiment", std::string());
  // a generated data set's name loses its "synthetic:" in file names, and a
  // tag may follow it (<dataset>-<tag>-<model>-<candidate>: a stage that runs a
  // synthetic problem both as regression and as classification names the
  // latter <name>-class); the tag then belongs to the data set's name
  const std::string base = r.dataset.substr(r.dataset.find(':') + 1), mid = "-" + r.model + "-";
  // a name that does not begin with the data set's (a run of a user's own file,
  // named by its config: mine-w8, mine-w32, ...) is a candidate by its whole name
  if (name.rfind(base, 0) != 0 && !name.empty()) {
    r.candidate = name;
    return read_run_metrics(f, j, r);
  }
  const auto at = name.rfind(base, 0) == 0 ? name.find(mid, base.size()) : std::string::npos;
  WHVI_CHECK(at != std::string::npos && (at == base.size() || name[base.size()] == '-') &&
                 name.size() > at + mid.size(),
             f, ": experiment name '", printable(name, 80), "' is not <dataset>-<model>-<candidate> (", plain_text(base + mid),
             "...)");
  r.dataset += name.substr(base.size(), at - base.size());
  r.candidate = name.substr(at + mid.size());
  return read_run_metrics(f, j, r);
}

Run read_run_metrics(const std::string& f, const json& j, Run r) {
  r.complete = j.value("complete", false);
  const auto& s = j.at("summary");
  WHVI_CHECK(s.is_object(), f, ": its 'summary' is ", s.is_null() ? "null" : "not a mapping of metrics",
             ", so the run has no validation MNLL to rank: give the record of a finished run (rerun it with whvi "
             "train)");
  auto mean = [&](const char* k) {
    return s.contains(k) && s.at(k).contains("mean") && s.at(k).at("mean").is_number() ? s.at(k).at("mean").get<double>()
                                                                                      : NAN;
  };
  r.mnll = mean("mnll"), r.rmse = mean("rmse"), r.cov95 = mean("coverage_95"), r.crps = mean("crps");
  r.error = mean("error");  // classifiers: no coverage; their error instead
  WHVI_CHECK(j.at("config").is_object(), f, ": its 'config' is not a mapping: give a record written by whvi train");
  flatten_config(j.at("config"), "", r.config);
  // training.engine auto names no engine: the one that ran (the record's splits say) is compared
  const auto eng = r.config.find("training.engine");
  if (eng != r.config.end() && eng->second == "auto" && j.contains("splits") && j["splits"].is_array() &&
      !j["splits"].empty() && j["splits"][0].is_object() && j["splits"][0].contains("engine") &&
      j["splits"][0]["engine"].is_string())
    eng->second = j["splits"][0]["engine"];
  return r;
}

using Candidates = std::map<std::string, std::map<std::string, Run>>;  // candidate -> data set -> run

// One model's candidates ranked by validation MNLL per data set.
struct Ranking {
  std::vector<std::string> used, skipped;  // data sets ranked / not (a candidate's run missing or incomplete)
  std::set<std::string> varying;           // settings that differ between candidates
  std::map<std::string, double> mean_rank, mean_excess;
  std::map<std::string, std::map<std::string, int>> rank;  // candidate -> data set -> rank
  std::string chosen;
};

Ranking rank_candidates(Candidates& cands) {
  Ranking k;
  // data sets where every candidate has a complete run with a finite MNLL
  std::set<std::string> all_ds;
  for (auto& [c, by_ds] : cands)
    for (auto& [ds, r] : by_ds) all_ds.insert(ds);
  for (const auto& ds : all_ds) {
    bool ok = true;
    for (auto& [c, by_ds] : cands) ok &= by_ds.count(ds) && by_ds[ds].complete && std::isfinite(by_ds[ds].mnll);
    (ok ? k.used : k.skipped).push_back(ds);
  }
  // A key one record lacks (an option added after that record was written) is
  // compared only among the records that have it.
  for (auto& [c, by_ds] : cands)
    for (auto& [c2, by_ds2] : cands) {
      const auto& other = by_ds2.begin()->second.config;
      for (auto& [key, v] : by_ds.begin()->second.config) {
        const auto it = other.find(key);
        if (key.rfind("output.", 0) != 0 && key != "data.dataset" && key != "data.dir" && it != other.end() &&
            it->second != v)
          k.varying.insert(key);
      }
    }
  for (const auto& ds : k.used) {
    std::vector<std::pair<double, std::string>> v;
    for (auto& [c, by_ds] : cands) v.push_back({by_ds[ds].mnll, c});
    std::sort(v.begin(), v.end());
    for (size_t i = 0; i < v.size(); ++i) {
      k.rank[v[i].second][ds] = static_cast<int>(i) + 1;
      k.mean_rank[v[i].second] += (i + 1.0) / k.used.size();
      k.mean_excess[v[i].second] += (v[i].first - v[0].first) / k.used.size();
    }
  }
  for (auto& [c, by_ds] : cands)
    if (!k.used.empty() && (k.chosen.empty() || k.mean_rank[c] < k.mean_rank[k.chosen] ||
                            (k.mean_rank[c] == k.mean_rank[k.chosen] && k.mean_excess[c] < k.mean_excess[k.chosen])))
      k.chosen = c;
  return k;
}

// The model's heading: the chosen candidate, its settings, the data sets ranked.
void write_heading(std::ostringstream& md, json& jm, const std::string& model, Candidates& cands, const Ranking& k) {
  jm["chosen"] = k.chosen.empty() ? json(nullptr) : json(k.chosen);
  jm["data_sets_ranked"] = k.used;
  jm["data_sets_incomplete"] = k.skipped;
  jm["varying_settings"] = std::vector<std::string>(k.varying.begin(), k.varying.end());
  md << "\n## " << plain_text(model) << "\n\nChosen: **"
     << (k.chosen.empty() ? "none (no complete data set)" : markdown_cell(k.chosen)) << "**";
  if (!k.chosen.empty()) {
    md << " (";
    bool first = true;
    for (const auto& key : k.varying) {
      md << (first ? "" : ", ") << "`" << markdown_cell(key)
         << "` = " << markdown_cell(cands[k.chosen].begin()->second.config[key].dump());
      jm["settings"][key] = cands[k.chosen].begin()->second.config[key];
      first = false;
    }
    md << ")";
  }
  md << ". Ranked on " << k.used.size() << " data set(s)";
  if (!k.skipped.empty()) {
    md << "; not ranked (a candidate's run missing or incomplete):";
    for (const auto& s : k.skipped) md << " " << markdown_cell(s);
  }
  md << ".\n\n";
}

// The model's table: one row per candidate, best mean rank first.
void write_table(std::ostringstream& md, json& jm, Candidates& cands, Ranking& k) {
  md << "| candidate |";
  for (const auto& key : k.varying) md << " `" << markdown_cell(key) << "` |";
  md << " mean rank | mean excess MNLL |";
  for (const auto& ds : k.used) md << " " << markdown_cell(ds) << " MNLL (rank) |";
  // classifiers have no coverage: their validation error instead
  bool classifier = true;
  for (auto& [c, by_ds] : cands)
    for (auto& [ds, r] : by_ds) classifier &= !std::isfinite(r.cov95) && std::isfinite(r.error);
  md << (classifier ? " mean error |\n|---|" : " mean coverage 95 |\n|---|");
  for (size_t i = 0; i < k.varying.size() + 3 + k.used.size(); ++i) md << "---|";
  md << "\n";
  std::vector<std::pair<double, std::string>> order;
  for (auto& [c, by_ds] : cands) order.push_back({k.mean_rank[c], c});
  std::sort(order.begin(), order.end());
  for (const auto& [r_, c] : order) {
    auto& by_ds = cands[c];
    md << "| " << (c == k.chosen ? "**" + markdown_cell(c) + "**" : markdown_cell(c)) << " |";
    json jc;
    for (const auto& key : k.varying) {
      md << " " << markdown_cell(by_ds.begin()->second.config[key].dump()) << " |";
      jc["settings"][key] = by_ds.begin()->second.config[key];
    }
    md << " " << fmt(k.mean_rank[c], 3) << " | " << fmt(k.mean_excess[c], 3) << " |";
    double cov = 0;
    for (const auto& ds : k.used) {
      const auto& r = by_ds[ds];
      md << " " << fmt(r.mnll) << " (" << k.rank[c][ds] << ") |";
      cov += (classifier ? r.error : r.cov95) / k.used.size();
      jc["per_data_set"][ds] = {{"mnll", r.mnll}, {"rmse", r.rmse}, {"coverage_95", r.cov95}, {"crps", r.crps},
                                {"rank", k.rank[c][ds]}, {"file", r.file}};
      if (classifier) jc["per_data_set"][ds]["error"] = r.error;
    }
    md << " " << fmt(cov, 3) << " |\n";
    jc["mean_rank"] = k.mean_rank[c];
    jc["mean_excess_mnll"] = k.mean_excess[c];
    jm["candidates"][c] = jc;
  }
}

}  // namespace

SelectionResult select_defaults(const std::vector<std::string>& files) {
  WHVI_CHECK(!files.empty(), "whvi select: no result files given");
  std::map<std::string, Candidates> runs;  // model -> candidate -> data set
  for (const auto& f : files) {
    Run r = read_run(f);
    auto& slot = runs[r.model][r.candidate][r.dataset];
    WHVI_CHECK(slot.file.empty(), "two runs for ", plain_text(r.model), " candidate ", plain_text(r.candidate), " on ",
               plain_text(r.dataset), ": ",
               slot.file, " and ", f);
    slot = std::move(r);
  }
  SelectionResult out;
  std::ostringstream md;
  md << "# Default selection on validation data\n\n"
     << "Every number below is a mean over splits of a metric measured on validation rows carved out of the "
        "training split (the test rows were never read). Candidates are ranked per data set by validation "
        "MNLL (1 = best); the chosen candidate has the lowest mean rank.\n";
  bool any_chosen = false;
  std::string unranked;
  for (auto& [model, cands] : runs) {
    auto k = rank_candidates(cands);
    json jm;
    write_heading(md, jm, model, cands, k);
    write_table(md, jm, cands, k);
    out.summary[model] = jm;
    any_chosen |= !k.chosen.empty();
    if (k.chosen.empty()) unranked += (unranked.empty() ? "" : ", ") + plain_text(model);
  }
  // Nothing chosen for any model is no answer: an error, not "Chosen: none".
  WHVI_CHECK(any_chosen, "whvi select: no candidate can be chosen (model ", unranked,
             "): no data set has a complete run with a finite validation MNLL for every candidate; finish the "
             "incomplete runs (whvi train --resume) or leave out the candidates that lack them");
  out.markdown = md.str();
  return out;
}

}  // namespace whvi::report
