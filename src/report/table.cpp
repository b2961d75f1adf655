#include "report/table.h"

#include "common/io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "common/errors.h"

namespace whvi::report {

using nlohmann::json;

namespace {

const std::vector<std::string> kPaperDatasetOrder = {"boston", "concrete", "energy", "kin8nm", "naval",
                                                     "power",  "protein",  "yacht",  "drive",  "eeg",
                                                     "letter", "magic",    "miniboo", "mocap"};
const char* const kDash = "–";
const char* const kDagger = "†";
const char* const kDoubleDagger = "‡";

// Position in `order`, or order.size() for names not in it (those then sort alphabetically).
std::vector<std::string> ordered(std::vector<std::string> names, const std::vector<std::string>& order) {
  auto rank = [&](const std::string& s) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), s) - order.begin());
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a < b;
  });
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<double> number(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string string_field(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_null()) return {};
  return it->dump();
}

const json& object_field(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  // "-0.00" reads as a sign that is not there.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

// Decimals that give 3 significant digits of the larger of |a| and |b|.
int decimals_for(double a, double b) {
  double m = 0;
  if (std::isfinite(a)) m = std::max(m, std::fabs(a));
  if (std::isfinite(b)) m = std::max(m, std::fabs(b));
  if (m == 0) return 2;
  const int e = static_cast<int>(std::floor(std::log10(m)));
  return std::clamp(2 - e, 0, 12);
}

std::string escape_cell(const std::string& s) { return markdown_cell(s); }

std::string code_span(const std::string& s) {
  if (s.empty()) return kDash;
  const std::string t = escape_cell(s);
  if (t.find('`') == std::string::npos) return "`" + t + "`";
  return "`` " + t + " ``";
}

struct Stat {
  double mean = 0;
  std::optional<double> std;
  std::optional<long> n;
};

// summary.<metric> when it has a mean, else computed from splits[*].<metric> (population std).
// A summary no run can produce (an edited record) is an error naming the file:
// a negative std or count, or a negative value of a metric that cannot be.
void check_stat(const json& r, const std::string& metric, const Stat& st) {
  static const std::set<std::string> nonneg = {"rmse", "error", "ece", "brier", "crps", "coverage_50",
                                               "coverage_90", "coverage_95", "calibration_error",
                                               "steps_per_second", "train_seconds"};
  const bool bad = !std::isfinite(st.mean) || (st.std && (*st.std < 0 || !std::isfinite(*st.std))) ||
                   (st.n && *st.n < 0) || (nonneg.count(metric) && st.mean < 0);
  if (!bad) return;
  const std::string file = string_field(r, "_source_path");
  throw Error("result " + (file.empty() ? string_field(r, "experiment") : "file '" + file + "'") + ": summary." +
              metric + " holds a value no run produces (a negative std, count or " + metric +
              "): the record was edited or damaged; give the record whvi train wrote");
}

std::optional<Stat> stat_of(const json& r, const std::string& metric) {
  const json& summary = object_field(r, "summary");
  const json& s = object_field(summary, metric.c_str());
  if (auto mean = number(s, "mean")) {
    Stat st;
    st.mean = *mean;
    st.std = number(s, "std");
    if (auto n = number(s, "n")) st.n = static_cast<long>(*n);
    check_stat(r, metric, st);
    return st;
  }
  auto it = r.find("splits");
  if (it == r.end() || !it->is_array()) return std::nullopt;
  std::vector<double> v;
  for (const auto& sp : *it)
    if (auto x = number(sp, metric.c_str())) v.push_back(*x);
  if (v.empty()) return std::nullopt;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
  return Stat{mean, std::sqrt(var), static_cast<long>(v.size())};
}

struct Entry {
  const json* r = nullptr;
  std::string dataset, model, label, source;
  long splits_done = -1, splits_planned = -1;
  bool incomplete = false, shortened = false;
  std::string protocol_name, protocol_note;
  std::size_t order = 0;  // position in the input
};

// How the run's training steps computed their gradients: the split records'
// "engine" (autograd, fused; more than one when they differ), else the
// configured training.engine of records written before splits recorded it.
std::string engine_text(const json& r) {
  std::vector<std::string> seen;
  if (auto it = r.find("splits"); it != r.end() && it->is_array())
    for (const auto& sp : *it)
      if (const std::string e = string_field(sp, "engine");
          !e.empty() && std::find(seen.begin(), seen.end(), e) == seen.end())
        seen.push_back(e);
  if (seen.empty()) {
    const std::string e = string_field(object_field(object_field(r, "config"), "training"), "engine");
    if (!e.empty()) seen.push_back(e == "auto" ? "auto (not recorded)" : e);
  }
  if (seen.empty()) return kDash;
  std::string out;
  for (const auto& e : seen) out += (out.empty() ? "" : ", ") + escape_cell(e);
  return out;
}

Entry make_entry(const json& r, std::size_t index) {
  const std::string source = string_field(r, "_source_path");
  const std::string where = source.empty() ? "result #" + std::to_string(index + 1) : "'" + source + "'";
  WHVI_CHECK(r.is_object(), "result file ", where, " is not a JSON object");

  Entry e;
  e.r = &r;
  e.order = index;
  e.source = source;
  e.dataset = string_field(r, "dataset");
  e.model = string_field(r, "model");
  e.label = string_field(r, "experiment");
  std::string stem = e.label;
  if (stem.empty() && !source.empty()) stem = std::filesystem::path(source).stem().string();
  if (e.label.empty()) e.label = stem;
  const auto dash = stem.rfind('-');
  if (dash != std::string::npos && dash > 0 && dash + 1 < stem.size()) {
    if (e.dataset.empty()) e.dataset = stem.substr(0, dash);
    if (e.model.empty()) e.model = stem.substr(dash + 1);
  }
  WHVI_CHECK(!e.dataset.empty() && !e.model.empty(), "result ", where,
             " names no dataset/model: expected \"dataset\" and \"model\" fields, or an "
             "\"experiment\" (or file name) of the form <dataset>-<model>");
  if (e.label.empty()) e.label = e.dataset + "-" + e.model;

  const json& protocol = object_field(r, "protocol");
  if (auto d = number(protocol, "splits_done")) {
    e.splits_done = static_cast<long>(*d);
  } else if (auto it = r.find("splits"); it != r.end() && it->is_array()) {
    e.splits_done = static_cast<long>(it->size());
  }
  if (auto p = number(protocol, "splits_planned")) {
    e.splits_planned = static_cast<long>(*p);
  } else if (auto p2 = number(object_field(object_field(r, "config"), "data"), "splits")) {
    e.splits_planned = static_cast<long>(*p2);
  }
  auto complete = r.find("complete");
  const bool marked_incomplete = complete != r.end() && complete->is_boolean() && !complete->get<bool>();
  e.incomplete = marked_incomplete ||
                 (e.splits_done >= 0 && e.splits_planned >= 0 && e.splits_done < e.splits_planned);
  auto sh = protocol.find("shortened");
  e.shortened = sh != protocol.end() && sh->is_boolean() && sh->get<bool>();
  e.protocol_name = string_field(protocol, "name");
  e.protocol_note = string_field(protocol, "note");
  return e;
}

std::string splits_text(const Entry& e) {
  if (e.splits_done < 0 && e.splits_planned < 0) return "?";
  const std::string done = e.splits_done >= 0 ? std::to_string(e.splits_done) : "?";
  const std::string planned = e.splits_planned >= 0 ? std::to_string(e.splits_planned) : "?";
  return done + "/" + planned;
}

std::string marks(const Entry& e) {
  std::string m;
  if (e.incomplete) m += std::string(" ") + kDagger;
  if (e.shortened) m += std::string(" ") + kDoubleDagger;
  return m;
}

std::string ours_cell(const Entry* e, const std::string& metric) {
  if (!e) return kDash;
  auto st = stat_of(*e->r, metric);
  std::string s = kDash;
  if (st) s = st->std ? format_mean_std(st->mean, *st->std) : fixed(st->mean, decimals_for(st->mean, 0));
  return s + marks(*e);
}

std::string paper_cell(const json& paper, const std::string& dataset, const std::string& model,
                       const std::string& metric) {
  const json& cell = object_field(object_field(object_field(paper, "results"), dataset.c_str()), model.c_str());
  auto it = cell.find(metric);
  if (it == cell.end() || !it->is_array() || it->empty() || !(*it)[0].is_number()) return kDash;
  int decimals = 2;
  if (auto d = number(paper, "decimals")) decimals = static_cast<int>(*d);
  std::string s = fixed((*it)[0].get<double>(), decimals);
  if (it->size() > 1 && (*it)[1].is_number()) s += " (" + fixed((*it)[1].get<double>(), decimals) + ")";
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void row(std::ostringstream& os, const std::vector<std::string>& cells) {
  os << '|';
  for (const auto& c : cells) os << ' ' << c << " |";
  os << '\n';
}


// The noise floor of a synthetic problem (result field "noise_floor"), if any.
std::optional<double> floor_of(const Entry* e, const char* metric) {
  if (!e) return std::nullopt;
  return number(object_field(*e->r, "noise_floor"), metric);
}

// Calibration of the predictive distribution: coverage of the central 95%
// interval, mean calibration error over 19 levels, CRPS.
void calibration_table(std::ostringstream& os, const std::vector<std::string>& datasets,
                       const std::vector<std::string>& models,
                       const std::function<const Entry*(const std::string&, const std::string&)>& find) {
  os << "\n## Calibration (test rows)\n\n"
     << "*cov95*: fraction of test targets inside the central 95% interval of the predictive mixture "
        "(nominal 0.95); *cal.err*: mean |nominal - empirical| coverage over the levels 0.05, ..., 0.95 "
        "(0 is perfect); *CRPS*: continuous ranked probability score in the target's units (lower is better).\n\n";
  std::vector<std::string> head = {"dataset"}, rule = {"---"};
  for (const auto& m : models) {
    for (const char* c : {" cov95", " cal.err", " CRPS"}) head.push_back(escape_cell(upper(m)) + c);
    rule.insert(rule.end(), {"---:", "---:", "---:"});
  }
  row(os, head);
  row(os, rule);
  for (const auto& d : datasets) {
    std::vector<std::string> cells = {escape_cell(d)};
    for (const auto& m : models)
      for (const char* metric : {"coverage_95", "calibration_error", "crps"}) cells.push_back(ours_cell(find(d, m), metric));
    row(os, cells);
  }
}

// Classification: test error and MNLL beside the paper, then calibration (ECE, Brier).
void classification_tables(std::ostringstream& os, const std::vector<std::string>& datasets,
                           const std::vector<std::string>& models,
                           const std::function<const Entry*(const std::string&, const std::string&)>& find,
                           const json& paper) {
  auto section = [&](const std::string& heading, const std::string& note,
                     const std::vector<std::pair<std::string, std::string>>& cols) {
    os << "## " << heading << "\n\n";
    if (!note.empty()) os << note << "\n\n";
    const bool has_paper = paper.is_object() && paper.contains("results");
    std::vector<std::pair<std::string, std::string>> shown;
    for (const auto& c : cols)
      if (has_paper || c.first != "paper") shown.push_back(c);
    std::vector<std::string> head = {"dataset"}, rule = {"---"};
    for (const auto& m : models)
      for (const auto& c : shown) head.push_back(escape_cell(upper(m)) + " " + c.first), rule.push_back("---:");
    row(os, head);
    row(os, rule);
    for (const auto& d : datasets) {
      std::vector<std::string> cells = {escape_cell(d)};
      for (const auto& m : models)
        for (const auto& c : shown)
          cells.push_back(c.first == "paper" ? paper_cell(paper, d, m, c.second) : ours_cell(find(d, m), c.second));
      row(os, cells);
    }
    os << "\n";
  };
  section("Test error", "Fraction of test points whose most probable class (of the Monte Carlo average of the "
          "class probabilities) is wrong.", {{"ours", "error"}, {"paper", "error"}});
  if (paper.is_object() && paper.contains("results"))
    section("Test MNLL (nats per test point)",
            "*ours* is `mnll_paper`, the authors' convention (mean over Monte Carlo samples of -log p_s(y|x)), "
            "comparable with *paper*; *ours pred.* is -log of the Monte Carlo average of p_s(y|x), the "
            "predictive MNLL, which is lower.",
            {{"ours", "mnll_paper"}, {"paper", "mnll"}, {"ours pred.", "mnll"}});
  else
    section("Test MNLL (nats per test point)",
            "The predictive MNLL: -log of the Monte Carlo average of p_s(y|x), the number `whvi train` logs "
            "(the papers' convention, `mnll_paper`, appears only beside a paper's table).",
            {{"ours", "mnll"}});
  section("Calibration (test rows)",
          "*ECE*: expected calibration error over 15 equal-width confidence bins (0 is perfect); *Brier*: "
          "mean over test points of the squared distance between the predicted probabilities and the "
          "one-hot label (0 to 2, lower is better). The paper reports neither. Each result's reliability "
          "diagram is the PNG beside its JSON.",
          {{"ECE", "ece"}, {"Brier", "brier"}});
  // out-of-distribution detection (evaluation.ood_dataset), where the records have it
  std::set<std::string> ood_sets;
  for (const auto& d : datasets)
    for (const auto& m : models)
      if (const Entry* e = find(d, m); e && e->r->contains("splits") && (*e->r)["splits"].is_array())
        for (const auto& sp : (*e->r)["splits"])
          if (sp.is_object() && sp.contains("ood") && sp["ood"].is_object() && sp["ood"].contains("dataset") &&
              sp["ood"]["dataset"].is_string())
            ood_sets.insert(sp["ood"]["dataset"].get<std::string>());
  if (ood_sets.empty()) return;
  std::string names;
  for (const auto& n : ood_sets) names += (names.empty() ? "" : ", ") + escape_cell(n);
  section("Out-of-distribution detection",
          "How well each model tells the test rows from the stored test rows of " + names +
              " (out of distribution, the positives) by its predictive entropy (*H*: total uncertainty) and by "
              "the mutual information between prediction and weights (*MI*: epistemic uncertainty). AUROC: 0.5 "
              "is chance, 1 perfect; AUPR: average precision, chance is the out-of-distribution share of the rows.",
          {{"AUROC H", "ood_auroc_entropy"}, {"AUPR H", "ood_aupr_entropy"}, {"AUROC MI", "ood_auroc_mi"},
           {"AUPR MI", "ood_aupr_mi"}});
}

// Which model has the lowest mean, per data set and metric: where the baselines beat WHVI.
void best_per_dataset(std::ostringstream& os, const std::vector<std::string>& datasets,
                      const std::vector<std::string>& models,
                      const std::function<const Entry*(const std::string&, const std::string&)>& find) {
  if (models.size() < 2) return;
  os << "\n## Lowest mean per data set (ours)\n\n";
  row(os, {"dataset", "RMSE", "MNLL (predictive)", "CRPS"});
  row(os, {"---", "---", "---", "---"});
  std::map<std::string, int> wins_rmse, wins_mnll;
  for (const auto& d : datasets) {
    std::vector<std::string> cells = {escape_cell(d)};
    for (const char* metric : {"rmse", "mnll", "crps"}) {
      std::string best;
      double best_v = 0;
      for (const auto& m : models)
        if (const Entry* e = find(d, m))
          if (auto st = stat_of(*e->r, metric); st && std::isfinite(st->mean) && (best.empty() || st->mean < best_v))
            best = m, best_v = st->mean;
      cells.push_back(best.empty() ? kDash : escape_cell(upper(best)));
      if (!best.empty() && std::string(metric) == "rmse") ++wins_rmse[best];
      if (!best.empty() && std::string(metric) == "mnll") ++wins_mnll[best];
    }
    row(os, cells);
  }
  os << "\nLowest mean RMSE on:";
  for (const auto& m : models) os << " " << escape_cell(upper(m)) << " " << wins_rmse[m] << ",";
  os << " of " << datasets.size() << " data sets; lowest predictive MNLL on:";
  for (const auto& m : models) os << " " << escape_cell(upper(m)) << " " << wins_mnll[m] << ",";
  os << " of " << datasets.size() << ". Differences within a split-to-split std are not significant.\n";
}

}  // namespace

std::string plain_text(const std::string& s) {
  static const char* const kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // a UTF-8 sequence: its length by the lead byte, then continuation bytes
    const std::size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    std::uint32_t cp = len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3Fu);
    }
    ok = ok && !(len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) &&
         !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF));
    if (!ok) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (cp == 0x2028 || cp == 0x2029) {
      out += ' ';  // line and paragraph separators
    } else if (cp <= 0x9F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
      out += kReplacement;  // C1 controls (U+0080..U+009F: 0x9B is CSI), bidirectional overrides
    } else {
      out.append(s, i, len);
    }
    i += len;
  }
  return out;
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : plain_text(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string format_mean_std(double mean, double std) {
  const int d = decimals_for(mean, std);
  return fixed(mean, d) + " ± " + fixed(std, d);
}

json load_json_file(const std::string& path) {
  return read_json_file(path, "JSON file", "give a result file written by whvi train");
}

json load_paper_table(const std::string& paper_path) {
  const std::string stem = std::filesystem::path(paper_path).stem().string();
  std::error_code ec;
  const bool is_builtin_name =
      std::filesystem::path(paper_path).extension() != ".json" || !std::filesystem::exists(paper_path, ec);
  std::string names;
  for (const auto& [name, text] : embedded_paper_tables()) {
    if (is_builtin_name && name == stem) return json::parse(text);
    names += (names.empty() ? "" : ", ") + name;
  }
  if (!is_builtin_name || !describe_path_kind(paper_path).empty()) {
    json paper = load_json_file(paper_path);
    WHVI_CHECK(paper.is_object(), "paper file '", paper_path, "' is not a JSON object");
    // a paper's table has its numbers under "results"; a record of ours is no paper
    WHVI_CHECK(paper.contains("results") && paper["results"].is_object(), "--paper '", paper_path, "' is not a "
               "paper's table (it has no \"results\" object", paper.contains("summary") || paper.contains("splits")
               ? "; it is an experiment record: give it without --paper" : "", "); give one like "
               "results/paper/whvi-neurips2020-table3.json, a built-in table's name (", names, "), or '' for none");
    return paper;
  }
  throw Error("--paper '" + paper_path + "': no such file, and no built-in table of that name (built in: " +
              names + "; '' for none)");
}

namespace {
// A split's own record (split-KK.json) has no table of its own: say which file has.
void check_not_split_record(const json& r, const std::string& path) {
  const bool split_record = r.is_object() && r.contains("split") && r.contains("config_fingerprint") &&
                            !r.contains("splits");
  WHVI_CHECK(!split_record, "'", path, "' is the record of one split (output.dir/NAME/split-KK.json); "
             "whvi table reads experiment records: give output.dir/NAME.json, the file beside that folder");
}
}  // namespace

namespace {
using Finder = std::function<const Entry*(const std::string&, const std::string&)>;

std::string name_of(const Entry& e) {
  return e.source.empty() ? "result #" + std::to_string(e.order + 1) + " ('" + plain_text(e.label) + "')"
                          : "'" + e.source + "'";
}

// The table's cells: one result per (dataset, model), rows and columns in the
// papers' order. Two results for one cell are an error naming both.
struct Grid {
  std::vector<Entry> entries;
  std::map<std::pair<std::string, std::string>, std::size_t> chosen;
  std::vector<std::string> datasets, models;

  const Entry* find(const std::string& d, const std::string& m) const {
    auto it = chosen.find({d, m});
    return it == chosen.end() ? nullptr : &entries[it->second];
  }
  Finder finder() const {
    return [this](const std::string& d, const std::string& m) { return find(d, m); };
  }
};

Grid make_grid(const std::vector<json>& results, const std::vector<std::string>& model_order) {
  Grid g;
  for (std::size_t i = 0; i < results.size(); ++i) g.entries.push_back(make_entry(results[i], i));
  for (std::size_t i = 0; i < g.entries.size(); ++i) {
    const auto key = std::make_pair(g.entries[i].dataset, g.entries[i].model);
    auto it = g.chosen.find(key);
    if (it == g.chosen.end()) {
      g.chosen[key] = i;
      continue;
    }
    const Entry& first = g.entries[it->second];
    throw Error("two results for the same cell (dataset '" + plain_text(key.first) + "', model '" + plain_text(key.second) +
                "'): " + name_of(first) + " and " + name_of(g.entries[i]) +
                ". Pass one result file per (dataset, model): drop one of them from the command line");
  }
  for (const auto& [key, idx] : g.chosen) {
    g.datasets.push_back(key.first);
    g.models.push_back(key.second);
  }
  g.datasets = ordered(g.datasets, kPaperDatasetOrder);
  g.models = ordered(g.models, model_order);
  return g;
}

// A synthetic problem's noise floor (the first model's record that has one), or a dash.
std::string floor_cell(const Grid& g, const std::string& d, const char* metric) {
  for (const auto& m : g.models)
    if (auto f = floor_of(g.find(d, m), metric)) return fixed(*f, decimals_for(*f, 0));
  return kDash;
}

void intro(std::ostringstream& os, const json& paper) {
  os << "*ours*: mean ± std over the splits done (population std, ddof 0). ";
  if (paper.is_object() && paper.contains("results"))
    os << "*paper*: "
       << (paper.contains("format") && paper["format"].is_string() ? plain_text(paper["format"].get<std::string>())
                                                                   : std::string("mean (std) over 8 random 90/10 splits"))
       << ", as printed in the paper (" << kDash << " where it has no value).\n\n";
  else
    os << "No paper values are given for this table.\n\n";
}

bool has_paper(const json& paper) { return paper.is_object() && paper.contains("results"); }

void rmse_table(std::ostringstream& os, const Grid& g, const json& paper, bool any_floor) {
  os << "## Test RMSE\n\n";
  const bool with_paper = has_paper(paper);  // the user's own data: no paper columns
  std::vector<std::string> head = {"dataset"}, rule = {"---"};
  if (any_floor) head.push_back("noise floor"), rule.push_back("---:");
  for (const auto& m : g.models) {
    head.push_back(escape_cell(upper(m)) + " ours");
    rule.push_back("---:");
    if (!with_paper) continue;
    head.push_back(escape_cell(upper(m)) + " paper");
    rule.push_back("---:");
  }
  row(os, head);
  row(os, rule);
  for (const auto& d : g.datasets) {
    std::vector<std::string> cells = {escape_cell(d)};
    if (any_floor) cells.push_back(floor_cell(g, d, "rmse"));
    for (const auto& m : g.models) {
      cells.push_back(ours_cell(g.find(d, m), "rmse"));
      if (with_paper) cells.push_back(paper_cell(paper, d, m, "rmse"));
    }
    row(os, cells);
  }
}

void mnll_table(std::ostringstream& os, const Grid& g, const json& paper, bool any_floor) {
  const bool with_paper = has_paper(paper);
  os << "\n## Test MNLL (nats per test point)\n\n"
     << (with_paper ? "*ours* is `mnll_paper`, the authors' convention (mean over Monte Carlo samples of "
                      "-log p(y|f_s)), comparable with *paper*; *ours pred.* is our predictive MNLL "
                      "(-log of the mean over samples of p(y|f_s)), which is lower."
                    : "The predictive MNLL: -log of the mean over Monte Carlo samples of p(y|f_s), the number "
                      "`whvi train` logs (the papers' convention, `mnll_paper`, appears only beside a paper's "
                      "table).")
     << (any_floor ? " *noise floor*: the best predictive MNLL any model can reach on fresh data of a "
                     "synthetic problem (for input-dependent noise, *homosc. floor* is the best a model "
                     "with one noise variance can reach)."
                   : "")
     << "\n\n";
  std::vector<std::string> head = {"dataset"}, rule = {"---"};
  if (any_floor) {
    head.insert(head.end(), {"noise floor", "homosc. floor"});
    rule.insert(rule.end(), {"---:", "---:"});
  }
  for (const auto& m : g.models) {
    if (with_paper) {
      const std::string M = escape_cell(upper(m));
      head.insert(head.end(), {M + " ours", M + " paper", M + " ours pred."});
      rule.insert(rule.end(), {"---:", "---:", "---:"});
    } else {
      head.push_back(escape_cell(upper(m)) + " ours");
      rule.push_back("---:");
    }
  }
  row(os, head);
  row(os, rule);
  for (const auto& d : g.datasets) {
    std::vector<std::string> cells = {escape_cell(d)};
    if (any_floor) {
      cells.push_back(floor_cell(g, d, "mnll"));
      cells.push_back(floor_cell(g, d, "mnll_homoscedastic"));
    }
    for (const auto& m : g.models) {
      const Entry* e = g.find(d, m);
      if (with_paper) {
        cells.push_back(ours_cell(e, "mnll_paper"));
        cells.push_back(paper_cell(paper, d, m, "mnll"));
      }
      cells.push_back(ours_cell(e, "mnll"));
    }
    row(os, cells);
  }
}

// Incomplete (†) and shortened (‡) runs, in table order.
void footnotes(std::ostringstream& os, const Grid& g) {
  std::vector<std::string> notes;
  for (const auto& d : g.datasets)
    for (const auto& m : g.models)
      if (const Entry* e = g.find(d, m); e && e->incomplete)
        notes.push_back(std::string(kDagger) + " " + code_span(e->label) + ": incomplete, " + splits_text(*e) +
                        " splits done");
  for (const auto& d : g.datasets)
    for (const auto& m : g.models)
      if (const Entry* e = g.find(d, m); e && e->shortened) {
        std::string note = e->protocol_note.empty() ? "no note recorded" : escape_cell(e->protocol_note);
        std::string name = e->protocol_name.empty() ? "" : " '" + escape_cell(e->protocol_name) + "'";
        notes.push_back(std::string(kDoubleDagger) + " " + code_span(e->label) + ": shortened protocol" + name +
                        ": " + note);
      }
  if (notes.empty()) return;
  os << '\n';
  for (const auto& f : notes) os << "- " << f << '\n';
}

// The runs behind the numbers, by experiment name.
void runs_table(std::ostringstream& os, const std::vector<Entry>& entries) {
  os << "\n## Runs\n\n";
  row(os, {"experiment", "splits", "protocol", "engine", "steps/s", "whvi", "commit", "command"});
  row(os, {"---", "---:", "---", "---", "---:", "---", "---", "---"});
  std::vector<const Entry*> runs;
  for (const auto& e : entries) runs.push_back(&e);
  std::stable_sort(runs.begin(), runs.end(), [](const Entry* a, const Entry* b) { return a->label < b->label; });
  for (const Entry* e : runs) {
    const json& r = *e->r;
    std::string sps = kDash;
    if (auto st = stat_of(r, "steps_per_second")) sps = fixed(st->mean, st->mean >= 100 ? 0 : 1);
    std::string protocol = e->protocol_name.empty() ? kDash : escape_cell(e->protocol_name);
    if (e->shortened) protocol += std::string(" ") + kDoubleDagger;
    std::string splits = splits_text(*e) + (e->incomplete ? std::string(" ") + kDagger : "");
    const std::string version = string_field(r, "whvi_version");
    row(os, {code_span(e->label), splits, protocol, engine_text(r), sps, version.empty() ? kDash : escape_cell(version),
             code_span(string_field(r, "whvi_commit")), code_span(string_field(r, "command"))});
  }
}

// Where the paper's numbers come from.
void paper_section(std::ostringstream& os, const json& paper) {
  if (!paper.is_object() || paper.empty()) return;
  os << "\n## Paper\n\n";
  const std::string citation = string_field(paper, "citation");
  if (!citation.empty()) os << plain_text(citation) << "\n\n";
  const std::string source = string_field(paper, "source");
  if (!source.empty()) os << "Source: " << plain_text(source) << "\n\n";
  auto notes = paper.find("notes");
  if (notes != paper.end() && notes->is_array() && !notes->empty()) {
    os << "Notes:\n\n";
    for (const auto& n : *notes)
      if (n.is_string()) os << "- " << plain_text(n.get<std::string>()) << '\n';
  }
}
}  // namespace

std::string render_markdown_table(const std::vector<json>& results, const json& paper, const std::string& title,
                                  const std::vector<std::string>& model_order) {
  const Grid g = make_grid(results, model_order);
  std::ostringstream os;
  os << "# " << plain_text(title) << "\n\n";
  if (g.entries.empty()) {
    os << "No result files.\n";
    return os.str();
  }
  intro(os, paper);
  // A table mixes no tasks: classification results must all be classification results.
  auto task_of = [](const Entry& e) { return string_field(*e.r, "task") == "classification"; };
  if (std::any_of(g.entries.begin(), g.entries.end(), task_of)) {
    for (const auto& e : g.entries)
      WHVI_CHECK(task_of(e), "result ", name_of(e), " is a regression result, but others are classification "
                 "results; render each task in its own table");
    classification_tables(os, g.datasets, g.models, g.finder(), paper);
  } else {
    bool any_floor = false;  // synthetic problems carry their noise floor: an extra column
    for (const auto& d : g.datasets) any_floor |= floor_cell(g, d, "rmse") != kDash;
    rmse_table(os, g, paper, any_floor);
    mnll_table(os, g, paper, any_floor);
    calibration_table(os, g.datasets, g.models, g.finder());
    best_per_dataset(os, g.datasets, g.models, g.finder());
  }
  footnotes(os, g);
  runs_table(os, g.entries);
  paper_section(os, paper);
  return os.str();
}

namespace {
// Beside a paper's table, its title (else "UCI regression", the papers' first
// table); for the user's own data, its data sets and task ("diabetes:
// regression").
std::string default_title(const std::vector<json>& results, const json& paper) {
  if (paper.is_object() && paper.contains("results"))
    return string_field(paper, "title").empty() ? "UCI regression" : string_field(paper, "title");
  std::set<std::string> sets, tasks;
  for (const auto& r : results) {
    sets.insert(string_field(r, "dataset"));
    tasks.insert(string_field(r, "task") == "classification" ? "classification" : "regression");
  }
  std::string t;
  for (const auto& s : sets) t += (t.empty() ? "" : ", ") + s;
  std::string k;
  for (const auto& s : tasks) k += (k.empty() ? "" : " and ") + s;
  return t + ": " + k;
}
}  // namespace

std::string render_from_files(const std::vector<std::string>& result_paths, const std::string& paper_path,
                              const std::string& title, const std::vector<std::string>& model_order) {
  std::vector<json> results;
  results.reserve(result_paths.size());
  // The same file twice (under any spelling of its path) is refused up front.
  std::map<std::string, std::string> canonical_to_arg;
  for (const auto& p : result_paths) {
    std::error_code ec;
    const auto canon = std::filesystem::weakly_canonical(p, ec);
    const std::string key = ec ? p : canon.string();
    const auto [it, inserted] = canonical_to_arg.emplace(key, p);
    WHVI_CHECK(inserted, "result file '", p, "' is given twice (also as '", it->second,
               "'): each result file may appear once; drop the repeated argument");
  }
  for (const auto& p : result_paths) {
    json r = load_json_file(p);
    check_not_split_record(r, p);
    if (r.is_object()) r["_source_path"] = p;
    WHVI_CHECK(r.is_object(), "result file '", p, "' is not a JSON object");
    results.push_back(std::move(r));
  }
  json paper = json::object();
  if (!paper_path.empty()) paper = load_paper_table(paper_path);
  // a paper table none of whose data sets is among the results (the user's own data): no paper columns
  bool any = false;
  if (paper.is_object() && paper.contains("results") && paper["results"].is_object())
    for (const auto& r : results)
      any = any || (r.contains("dataset") && r["dataset"].is_string() &&
                    paper["results"].contains(r["dataset"].get<std::string>()));
  if (!any) paper = json::object();
  return render_markdown_table(results, paper, title.empty() ? default_title(results, paper) : title, model_order);
}

namespace {
// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
// break, its quotes doubled.
std::string csv_quoted(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

std::string render_csv_from_files(const std::vector<std::string>& result_paths) {
  std::ostringstream os;
  os << "file,dataset,model,depth,width,params,splits,rmse_mean,rmse_std,mnll_mean,mnll_std,"
        "mnll_paper_mean,mnll_paper_std,error_mean,error_std,ece_mean,ece_std\n";
  auto num = [](const std::optional<double>& v) { return v ? fixed(*v, 12) : std::string(); };
  // a count (depth, width, parameters) as the integer it is: 2, not 2.000000000000
  auto count = [&](const std::optional<double>& v) {
    if (v && std::isfinite(*v) && *v == std::floor(*v) && std::fabs(*v) < 9007199254740992.0)
      return std::to_string(static_cast<long long>(*v));
    return num(v);
  };
  for (const auto& p : result_paths) {
    const json r = load_json_file(p);
    check_not_split_record(r, p);
    WHVI_CHECK(r.is_object(), "result file '", p, "' is not a JSON object");
    const json& model = object_field(object_field(r, "config"), "model");
    std::optional<double> params;
    if (auto it = r.find("splits"); it != r.end() && it->is_array() && !it->empty())
      params = number(object_field((*it)[0], "params"), "total");
    os << csv_quoted(plain_text(p)) << ',' << csv_quoted(plain_text(string_field(r, "dataset"))) << ','
       << csv_quoted(plain_text(string_field(r, "model"))) << ',' << count(number(model, "depth")) << ','
       << count(number(model, "width")) << ',' << count(params) << ',';
    const auto n_of = stat_of(r, "mnll");
    os << (n_of && n_of->n ? std::to_string(*n_of->n) : std::string());
    for (const char* m : {"rmse", "mnll", "mnll_paper", "error", "ece"}) {
      const auto st = stat_of(r, m);
      os << ',' << (st ? fixed(st->mean, 12) : std::string()) << ',' << (st ? num(st->std) : std::string());
    }
    os << '\n';
  }
  return os.str();
}

}  // namespace whvi::report
