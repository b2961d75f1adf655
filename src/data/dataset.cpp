#include "data/dataset.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string_view>
#include <system_error>

#include "data/source.h"
#include "common/errors.h"
#include "common/io.h"
#include "data/csv.h"
#include "common/rng.h"

namespace fs = std::filesystem;

namespace whvi::data {
namespace {

struct Alias {
  const char* alias;
  const char* folder;
};
constexpr Alias kAliases[] = {
    {"boston", "bostonHousing"},
    {"concrete", "concrete"},
    {"energy", "energy"},
    {"kin8nm", "kin8nm"},
    {"naval", "naval-propulsion-plant"},
    {"power", "power-plant"},
    {"protein", "protein-tertiary-structure"},
    {"wine", "wine-quality-red"},
    {"yacht", "yacht"},
};

constexpr const char* kFetchHint =
    "Set data.dir in the config or the WHVI_DATA_DIR environment variable to the folder that "
    "holds uci/<data set>/, or run scripts/data/fetch.sh to download the UCI data sets into "
    "data/uci/.";

constexpr const char* kLayout =
    "data.txt, index_features.txt, index_target.txt, n_splits.txt, index_train_<k>.txt and "
    "index_test_<k>.txt for k < n_splits";

std::string known_data_sets() {
  std::string s;
  for (const auto& a : kAliases) {
    if (!s.empty()) s += ", ";
    s += a.alias;
    if (std::string_view(a.alias) != a.folder) s += std::string(" (") + a.folder + ")";
  }
  return s;
}

// "'p'" for messages, followed by its absolute form when that differs.
std::string describe_dir(const fs::path& p) {
  std::error_code ec;
  const auto a = fs::absolute(p, ec).lexically_normal();
  if (ec || a == p) return "'" + p.string() + "'";
  return "'" + p.string() + "' (" + a.string() + ")";
}

std::string read_text(const fs::path& p, const std::string& folder) {
  std::error_code ec;
  WHVI_CHECK(!fs::is_directory(p, ec), "'", p.string(), "' is a directory, not a file: the data set folder '",
             folder, "' must hold a plain file '", p.filename().string(), "' (standard UCI layout: ", kLayout, ").");
  return read_data_file(p.string(), ": the data set folder '" + folder + "' is not in the standard UCI layout (" +
                                        kLayout + "). Re-run scripts/data/fetch.sh or point data.dir / "
                                        "WHVI_DATA_DIR at a complete copy.");
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Calls f(line_number (1-based), tokens of that line) for every line of `text`,
// blank ones included (with no tokens). Tokens are views into `text`.
template <class F>
void for_each_line(const std::string& text, F&& f) {
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  int64_t line = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    ++line;
    tokens.clear();
    size_t i = pos;
    while (i < end) {
      while (i < end && is_space(text[i])) ++i;
      const size_t b = i;
      while (i < end && !is_space(text[i])) ++i;
      if (i > b) tokens.emplace_back(text.data() + b, i - b);
    }
    f(line, tokens);
    pos = end + 1;
  }
}

// One entry of an index file with the line it came from.
struct IndexEntry {
  int64_t value;
  int64_t line;
};

// Reads an index file: non-negative integers, any number per line, blank lines
// skipped. Integral decimals such as "3.0" or "3.000000e+00" are accepted too.
std::vector<IndexEntry> read_index_file(const fs::path& p, const std::string& folder) {
  const std::string text = read_text(p, folder);
  std::vector<IndexEntry> out;
  for_each_line(text, [&](int64_t line, const std::vector<std::string_view>& toks) {
    for (auto tok : toks) {
      const std::string s(tok);
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(s.c_str(), &end, 10);
      bool ok = end == s.c_str() + s.size() && errno == 0;
      if (!ok) {  // "3.0", "3.000000000000000000e+00" (numpy.savetxt)
        errno = 0;
        const double d = std::strtod(s.c_str(), &end);
        ok = end == s.c_str() + s.size() && errno == 0 && std::isfinite(d) && d == std::floor(d) &&
             std::fabs(d) < 9.0e15;
        v = ok ? static_cast<long long>(d) : 0;
      }
      // the text itself is never quoted: an index file may be anything (a linked secret)
      WHVI_CHECK(ok, "'", p.string(), "' line ", line,
                 ": not an integer index. Index files hold 0-based integers, one per line.");
      WHVI_CHECK(v >= 0, "'", p.string(), "' line ", line, ": index ", v,
                 " is negative. Indices are 0-based row or column numbers.");
      out.push_back({static_cast<int64_t>(v), line});
    }
  });
  return out;
}

// Checks that every entry is < limit and that none repeats. `what` is "row" or
// "column"; `limit_desc` says where the limit comes from.
void check_indices(const std::vector<IndexEntry>& idx, int64_t limit, const fs::path& p,
                   const char* what, const std::string& limit_desc) {
  std::vector<int64_t> seen(static_cast<size_t>(limit), -1);
  for (const auto& e : idx) {
    WHVI_CHECK(e.value < limit, "'", p.string(), "' line ", e.line, ": ", what, " index ", e.value,
               " is out of range: ", limit_desc, ", so valid ", what, " indices are 0..", limit - 1,
               ".");
    auto& first = seen[static_cast<size_t>(e.value)];
    WHVI_CHECK(first < 0, "'", p.string(), "' line ", e.line, ": duplicate ", what, " index ",
               e.value, " (already on line ", first, "). Each index may appear once.");
    first = e.line;
  }
}

std::vector<int64_t> values_of(const std::vector<IndexEntry>& idx) {
  std::vector<int64_t> v;
  v.reserve(idx.size());
  for (const auto& e : idx) v.push_back(e.value);
  return v;
}

// Resolves `dataset` to a folder (see load_uci).
fs::path resolve_folder(const std::string& dataset, const std::string& data_dir) {
  WHVI_CHECK(!dataset.empty(), "no data set given. Known data sets: ", known_data_sets(), ".");
  const std::string folder = uci_folder(dataset);
  const bool is_alias = folder != dataset;
  const fs::path in_dir = fs::path(data_dir) / "uci" / folder;
  std::error_code ec;
  if (fs::is_directory(in_dir, ec)) return in_dir;
  if (!is_alias && fs::is_directory(fs::path(dataset), ec)) return fs::path(dataset);
  if (fs::exists(fs::path(data_dir), ec) && !fs::is_directory(fs::path(data_dir), ec))
    throw Error(detail::concat("data directory ", describe_dir(data_dir),
                               " is a file, not a folder, so data set '", dataset,
                               "' cannot be read from '", in_dir.string(), "'. ", kFetchHint));
  if (!fs::is_directory(fs::path(data_dir), ec))
    throw Error(detail::concat("data directory ", describe_dir(data_dir),
                               " does not exist, so data set '", dataset, "' cannot be read from '",
                               in_dir.string(), "'. ", kFetchHint,
                               " Known data sets: ", known_data_sets(), "."));
  throw Error(detail::concat("data set '", dataset, "' not found: no folder '", in_dir.string(),
                             "'", is_alias ? std::string() : " and no folder '" + dataset + "'",
                             " (data directory ", describe_dir(data_dir), "). ", kFetchHint,
                             " Known data sets: ", known_data_sets(),
                             "; a folder name under <data dir>/uci/ or a path to a folder in the "
                             "standard UCI layout also works."));
}

void check_regression_data(const RegressionData& d) {
  WHVI_CHECK_AS(ShapeError,
                d.x.defined() && d.y.defined() && d.x.dim() == 2 && d.y.dim() == 2 &&
                    d.y.size(1) == 1 && d.x.size(0) == d.y.size(0),
                "data set '", d.name, "': x must be [N, D] and y [N, 1] with the same N.");
}

void check_split_rows(const std::vector<int64_t>& rows, int64_t n, const std::string& name,
                      const char* part) {
  for (int64_t r : rows)
    WHVI_CHECK(r >= 0 && r < n, "data set '", name, "': ", part, " row index ", r,
               " is out of range: the data set has ", n, " rows (valid 0..", n - 1, ").");
}

torch::Tensor to_index_tensor(const std::vector<int64_t>& v) {
  auto t = torch::empty({static_cast<int64_t>(v.size())}, torch::kInt64);
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return t;
}

}  // namespace

std::string resolve_data_dir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("WHVI_DATA_DIR"); env != nullptr && env[0] != '\0')
    return std::string(env);
  return "data";
}

std::vector<std::string> uci_aliases() {
  std::vector<std::string> v;
  for (const auto& a : kAliases) v.emplace_back(a.alias);
  return v;
}

std::string uci_folder(const std::string& alias_or_folder) {
  for (const auto& a : kAliases)
    if (alias_or_folder == a.alias) return a.folder;
  return alias_or_folder;
}

namespace {

// data.txt: rows of whitespace-separated numbers, all of one width.
struct Table {
  std::vector<double> values;  // row-major
  int64_t cols = -1, rows = 0;
};

Table read_data_txt(const fs::path& data_path, const std::string& folder) {
  const std::string text = read_text(data_path, folder);
  Table t;
  t.values.reserve(text.size() / 6);
  int64_t first_line = 0;
  for_each_line(text, [&](int64_t line, const std::vector<std::string_view>& toks) {
    if (toks.empty()) return;  // blank line
    if (t.cols < 0) {
      t.cols = static_cast<int64_t>(toks.size());
      first_line = line;
    }
    WHVI_CHECK(static_cast<int64_t>(toks.size()) == t.cols, "'", data_path.string(), "' line ",
               line, ": expected ", t.cols, " columns (as on line ", first_line, ") but got ",
               toks.size(), ". Every row of data.txt needs the same number of values.");
    for (size_t c = 0; c < toks.size(); ++c) {
      // The token is followed by whitespace or the end of `text`, so strtod stops at its end.
      const char* b = toks[c].data();
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(b, &end);
      // cells are never quoted in errors (the file may hold anything)
      WHVI_CHECK(end == b + toks[c].size(), "'", data_path.string(), "' line ", line, ", column ",
                 c + 1, ": not a number (data.txt holds numbers separated by spaces). Fix or remove that line.");
      WHVI_CHECK(std::isfinite(v), "'", data_path.string(), "' line ", line, ", column ", c + 1,
                 ": the value is not finite (NaN or infinity). whvi needs complete numeric data: remove "
                 "or impute that row.");
      WHVI_CHECK(std::fabs(v) <= kMaxAbsValue, "'", data_path.string(), "' line ", line,
                 ", column ", c + 1, ": value ", v, " is too large (|value| > ",
                 kMaxAbsValue, "): the column's statistics (sums of squares) would overflow. "
                 "Rescale column ", c + 1, " (e.g. change its units) so its values are below ",
                 kMaxAbsValue, ".");
      t.values.push_back(v);
    }
    ++t.rows;
  });
  WHVI_CHECK(t.rows > 0, "'", data_path.string(), "' holds no data rows.");
  return t;
}

// The stored splits (n_splits.txt, index_train_k.txt, index_test_k.txt),
// each checked to be in range and disjoint.
void read_stored_splits(RegressionData& d, const fs::path& dir, const std::string& folder, int64_t n_rows) {
  const std::string rows_desc = "data.txt has " + std::to_string(n_rows) + " rows";
  const fs::path ns_path = dir / "n_splits.txt";
  const auto ns = read_index_file(ns_path, folder);
  WHVI_CHECK(ns.size() == 1 && ns[0].value > 0, "'", ns_path.string(),
             "' must hold one positive integer (the number of stored splits).");
  const int64_t n_splits = ns[0].value;
  std::vector<int64_t> train_line(static_cast<size_t>(n_rows));
  for (int64_t k = 0; k < n_splits; ++k) {
    const fs::path tr_path = dir / ("index_train_" + std::to_string(k) + ".txt");
    const fs::path te_path = dir / ("index_test_" + std::to_string(k) + ".txt");
    std::error_code ec;
    for (const auto& p : {tr_path, te_path})
      WHVI_CHECK(fs::is_regular_file(p, ec), "'", p.string(), "' not found, but '",
                 ns_path.string(), "' says there are ", n_splits,
                 " stored splits. Fix n_splits.txt, or re-run scripts/data/fetch.sh or point "
                 "data.dir / WHVI_DATA_DIR at a complete copy.");
    const auto tr = read_index_file(tr_path, folder);
    const auto te = read_index_file(te_path, folder);
    WHVI_CHECK(!tr.empty(), "'", tr_path.string(), "' lists no rows: split ", k,
               " has an empty training set.");
    check_indices(tr, n_rows, tr_path, "row", rows_desc);
    check_indices(te, n_rows, te_path, "row", rows_desc);
    std::fill(train_line.begin(), train_line.end(), -1);
    for (const auto& e : tr) train_line[static_cast<size_t>(e.value)] = e.line;
    for (const auto& e : te)
      WHVI_CHECK(train_line[static_cast<size_t>(e.value)] < 0, "stored split ", k, " of '", folder,
                 "' is not disjoint: row ", e.value, " is in both '", tr_path.string(), "' (line ",
                 train_line[static_cast<size_t>(e.value)], ") and '", te_path.string(), "' (line ",
                 e.line, ").");
    d.std_train.push_back(values_of(tr));
    d.std_test.push_back(values_of(te));
  }
}

}  // namespace

RegressionData load_uci(const std::string& dataset, const std::string& data_dir) {
  const fs::path dir = resolve_folder(dataset, data_dir);
  const std::string folder = dir.string();
  const Table t = read_data_txt(dir / "data.txt", folder);
  const std::string cols_desc = "data.txt has " + std::to_string(t.cols) + " columns";

  // Feature and target columns.
  const fs::path feat_path = dir / "index_features.txt";
  const fs::path targ_path = dir / "index_target.txt";
  const auto feat = read_index_file(feat_path, folder);
  const auto targ = read_index_file(targ_path, folder);
  WHVI_CHECK(!feat.empty(), "'", feat_path.string(), "' lists no feature columns.");
  WHVI_CHECK(targ.size() == 1, "'", targ_path.string(), "' must hold exactly one column index (",
             "the target) but holds ", targ.size(), ".");
  check_indices(feat, t.cols, feat_path, "column", cols_desc);
  check_indices(targ, t.cols, targ_path, "column", cols_desc);
  for (const auto& f : feat)
    WHVI_CHECK(f.value != targ[0].value, "'", feat_path.string(), "' line ", f.line, ": column ",
               f.value, " is also the target ('", targ_path.string(),
               "'). A target column must not be a feature.");

  RegressionData d;
  d.name = dataset;
  if (dir == fs::path(dataset)) {  // given as a path: name it after its folder
    fs::path p = fs::path(dataset).lexically_normal();
    if (!p.has_filename()) p = p.parent_path();
    if (!p.filename().empty() && p.filename() != "." && p.filename() != "..")
      d.name = p.filename().string();
  }
  d.source = folder;
  const int64_t n_feat = static_cast<int64_t>(feat.size());
  d.x = torch::empty({t.rows, n_feat}, torch::kFloat64);
  d.y = torch::empty({t.rows, 1}, torch::kFloat64);
  double* px = d.x.data_ptr<double>();
  double* py = d.y.data_ptr<double>();
  for (int64_t r = 0; r < t.rows; ++r) {
    const double* row = t.values.data() + r * t.cols;
    for (int64_t j = 0; j < n_feat; ++j) px[r * n_feat + j] = row[feat[j].value];
    py[r] = row[targ[0].value];
  }
  read_stored_splits(d, dir, folder, t.rows);
  return d;
}

std::vector<SplitIndices> make_folds(const RegressionData& d, int folds, uint64_t seed) {
  const int64_t n = d.x.size(0);
  WHVI_CHECK(folds >= 2 && folds <= n, "protocol 'kfold': ", folds, " folds of ", n, " rows; data.folds must be "
             "from 2 to the number of rows");
  std::mt19937_64 gen(seed);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  shuffle(perm, gen);
  if (d.is_classification()) {  // dealt out class by class, so each fold keeps the classes' shares
    const auto y = d.y.to(torch::kFloat64).contiguous();
    const double* yv = y.data_ptr<double>();
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return yv[a] < yv[b]; });
  }
  std::vector<SplitIndices> out(static_cast<size_t>(folds));
  for (int64_t i = 0; i < n; ++i) {
    const auto f = static_cast<size_t>(i % folds);
    for (size_t k = 0; k < out.size(); ++k) (k == f ? out[k].test : out[k].train).push_back(perm[i]);
  }
  return out;
}

std::vector<SplitIndices> make_splits(const RegressionData& d, const std::string& protocol,
                                      int n_splits, uint64_t seed, double train_fraction) {
  check_regression_data(d);
  std::vector<SplitIndices> out;
  if (protocol == "standard") {
    const int64_t stored = static_cast<int64_t>(d.std_train.size());
    WHVI_ASSERT(d.std_test.size() == d.std_train.size());
    WHVI_CHECK(stored > 0, "data set '", d.name, "' has no stored splits; use protocol 'paper'.");
    const int64_t n = n_splits <= 0 ? stored : n_splits;
    WHVI_CHECK(n <= stored, "asked for ", n_splits,
               " splits with protocol 'standard' but data set '", d.name, "' (", d.source,
               ") stores only ", stored, " splits. Ask for at most ", stored,
               " (or 0 for all of them), or use protocol 'paper'.");
    for (int64_t k = 0; k < n; ++k) out.push_back({d.std_train[k], d.std_test[k]});
    return out;
  }
  if (protocol == "paper") {
    WHVI_CHECK(n_splits > 0, "protocol 'paper' needs a positive number of splits, got ", n_splits,
               ".");
    WHVI_CHECK(train_fraction > 0.0 && train_fraction <= 1.0, "train fraction ", train_fraction,
               " is not in (0, 1].");
    const int64_t n = d.x.size(0);
    const int64_t n_train = std::llround(train_fraction * static_cast<double>(n));
    WHVI_CHECK(n_train >= 1, "data set '", d.name, "' has ", n, " rows: a train fraction of ",
               train_fraction, " leaves no training rows.");
    for (int k = 0; k < n_splits; ++k) {
      std::mt19937_64 gen(seed + 1000003ULL * static_cast<uint64_t>(k));
      std::vector<int64_t> perm(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) perm[i] = i;
      shuffle(perm, gen);
      SplitIndices s;
      s.train.assign(perm.begin(), perm.begin() + n_train);
      s.test.assign(perm.begin() + n_train, perm.end());
      out.push_back(std::move(s));
    }
    return out;
  }
  if (protocol == "random") {  // the user's data: stratified for classification, else the paper's random splits
    WHVI_CHECK(n_splits > 0, "data.splits is ", n_splits, ": protocol 'random' needs at least 1 split (e.g. "
               "data.splits: 8)");
    return make_splits(d, d.is_classification() ? "stratified" : "paper", n_splits, seed, train_fraction);
  }
  if (protocol == "kfold") return make_folds(d, n_splits, seed);
  if (protocol == "stratified") {
    WHVI_CHECK(d.is_classification(), "protocol 'stratified' keeps each class's share and needs a "
               "classification data set, but '", d.name, "' is a regression data set; use 'paper' or 'standard'.");
    WHVI_CHECK(n_splits > 0, "protocol 'stratified' needs a positive number of splits, got ", n_splits, ".");
    WHVI_CHECK(train_fraction > 0.0 && train_fraction < 1.0, "train fraction ", train_fraction,
               " is not in (0, 1) (protocol 'stratified').");
    std::vector<std::vector<int64_t>> by_class(static_cast<size_t>(d.num_classes));
    const auto y = d.y.to(torch::kFloat64).contiguous();
    for (int64_t i = 0; i < y.size(0); ++i) {
      const double c = y[i][0].item<double>();
      WHVI_CHECK(c >= 0 && c < static_cast<double>(d.num_classes) && c == std::floor(c), "data set '", d.name,
                 "': row ", i, " has class ", c, ", not an index below ", d.num_classes, ".");
      by_class[static_cast<size_t>(c)].push_back(i);
    }
    for (int k = 0; k < n_splits; ++k) {
      std::mt19937_64 gen(seed + 1000003ULL * static_cast<uint64_t>(k));
      SplitIndices s;
      for (auto rows : by_class) {
        shuffle(rows, gen);
        const auto n_tr = static_cast<size_t>(std::llround(train_fraction * static_cast<double>(rows.size())));
        s.train.insert(s.train.end(), rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n_tr));
        s.test.insert(s.test.end(), rows.begin() + static_cast<std::ptrdiff_t>(n_tr), rows.end());
      }
      shuffle(s.train, gen);
      shuffle(s.test, gen);
      out.push_back(std::move(s));
    }
    return out;
  }
  throw Error(detail::concat("unknown split protocol '", protocol,
                             "'. Use 'standard' (the stored splits of the data set), 'paper' (",
                             "random 90/10 splits drawn from the seed), 'random', 'kfold' or, for classification, 'stratified'."));
}

Standardizer fit_standardizer(const torch::Tensor& x_in, const torch::Tensor& y_in) {
  WHVI_CHECK_AS(ShapeError,
                x_in.dim() == 2 && y_in.dim() == 2 && y_in.size(1) == 1 &&
                    x_in.size(0) == y_in.size(0) && x_in.size(0) >= 1,
                "fit_standardizer needs x [N, D] and y [N, 1] with N >= 1.");
  auto stats = [](const torch::Tensor& t, torch::Tensor& mean, torch::Tensor& sd) {
    const auto v = t.to(torch::kFloat64).contiguous();
    mean = v.mean(0);
    const auto dev = v - mean;
    sd = dev.square().mean(0).sqrt();  // population std (ddof 0)
    // Where the squares underflow (tiny spreads, e.g. values ~1e-170), compute
    // it again on deviations scaled by their largest magnitude.
    const auto scale = dev.abs().amax(0);
    const auto safe = torch::where(scale > 0, scale, torch::ones_like(scale));
    const auto sd_scaled = safe * (dev / safe).square().mean(0).sqrt();
    sd = torch::where(sd < 1e-140, sd_scaled, sd);
    // Scale-free: a column is constant when its spread is within rounding of
    // its magnitude (max - min <= 4 ulps of max(|max|, |min|)), whatever its units.
    const auto hi = v.amax(0), lo = v.amin(0);
    const auto constant =
        (hi - lo) <= 4.0 * std::numeric_limits<double>::epsilon() * torch::maximum(hi.abs(), lo.abs());
    WHVI_CHECK(torch::isfinite(sd).all().item<bool>() && torch::isfinite(mean).all().item<bool>(),
               "fit_standardizer: the mean or std of a column overflows; values must be at most ",
               kMaxAbsValue, " in magnitude (rescale the column).");
    // A constant column is centred (to 0) and not scaled (std 1), as the UCI
    // code of Hernandez-Lobato & Adams does. (Until 2026-11-23 it was left
    // raw: naval's column 8, all 288, entered the network as 288, which made
    // the initial -ELBO ~1e8 and NNG diverge.)
    mean = torch::where(constant, hi, mean);  // exactly the value, so the column becomes exactly 0
    sd = sd.masked_fill(constant, 1.0);
  };
  Standardizer s;
  stats(x_in, s.x_mean, s.x_std);
  stats(y_in, s.y_mean, s.y_std);
  return s;
}

PreparedSplit prepare_split(const RegressionData& d, const SplitIndices& s) {
  check_regression_data(d);
  const int64_t n = d.x.size(0);
  WHVI_CHECK(!s.train.empty(), "data set '", d.name, "': the split has no training rows.");
  check_split_rows(s.train, n, d.name, "training");
  check_split_rows(s.test, n, d.name, "test");
  const auto x = d.x.to(torch::kFloat64).contiguous();
  const auto y = d.y.to(torch::kFloat64).contiguous();
  const auto tr = to_index_tensor(s.train);
  const auto te = to_index_tensor(s.test);

  PreparedSplit p;
  auto x_tr = x.index_select(0, tr);
  auto x_te = x.index_select(0, te);
  if (d.missing_cells > 0) {
    p.x_fill = missing_fill_values(d, x_tr);
    x_tr = torch::where(x_tr.isnan(), p.x_fill.unsqueeze(0).expand_as(x_tr), x_tr);
    x_te = torch::where(x_te.isnan(), p.x_fill.unsqueeze(0).expand_as(x_te), x_te);
  }
  p.y_train_raw = y.index_select(0, tr);
  if (!d.is_classification()) {
    // a constant target: nothing to learn, and a likelihood whose noise can
    // shrink without bound (an NLL that runs to minus infinity, exit 0)
    const double hi = p.y_train_raw.max().item<double>(), lo = p.y_train_raw.min().item<double>();
    WHVI_CHECK(hi - lo > 4.0 * std::numeric_limits<double>::epsilon() * std::max(std::fabs(hi), std::fabs(lo)),
               "data set '", printable(d.name, 80), "': the target is the same in every training row of a split (",
               hi, "): there is nothing to learn and no spread to predict; check data.target names the column you "
               "mean, or that the rows are not all one group");
  }
  p.stats = fit_standardizer(x_tr, p.y_train_raw);
  if (!d.standardize_x) {
    p.stats.x_mean = torch::zeros_like(p.stats.x_mean);
    p.stats.x_std = torch::ones_like(p.stats.x_std);
  }
  if (d.is_classification()) {  // class indices are not standardised
    p.stats.y_mean = torch::zeros({1}, torch::kFloat64);
    p.stats.y_std = torch::ones({1}, torch::kFloat64);
  }
  p.x_train = (x_tr - p.stats.x_mean) / p.stats.x_std;
  p.y_train = (p.y_train_raw - p.stats.y_mean) / p.stats.y_std;
  if (!d.onehot.empty()) p.unseen_category_rows = zero_unseen_categories(d, x_te, x_tr);
  p.x_test = (x_te - p.stats.x_mean) / p.stats.x_std;
  p.y_test = y.index_select(0, te);
  return p;
}

torch::Tensor missing_fill_values(const RegressionData& d, const torch::Tensor& x_train) {
  const int64_t D = x_train.size(1);
  auto fill = torch::zeros({D}, torch::kFloat64);
  auto median = [&](int64_t j) {
    const auto c = x_train.select(1, j);
    const auto present = c.masked_select(c.isnan().logical_not());
    // the lower median of the present cells, a value that occurs in the data
    return present.numel() == 0 ? 0.0 : std::get<0>(present.sort()).index({(present.numel() - 1) / 2}).item<double>();
  };
  if (d.inputs.empty()) {
    for (int64_t j = 0; j < D; ++j) fill[j] = median(j);
    return fill;
  }
  int64_t c0 = 0;
  for (const auto& in : d.inputs) {
    const auto w = static_cast<int64_t>(std::max<size_t>(in.categories.size(), 1));
    if (in.missing_indicator) {
      fill[c0] = 0.0;
    } else if (in.categories.empty()) {
      fill[c0] = median(c0);
    } else {
      const auto counts = x_train.narrow(1, c0, w).nan_to_num(0.0).sum(0);
      fill[c0 + counts.argmax().item<int64_t>()] = 1.0;  // argmax: the first of equal counts
    }
    c0 += w;
  }
  return fill;
}

double toy_function(double x) { return std::sin(3.0 * x) + 0.3 * std::cos(9.0 * x) + 0.5 * x; }

double toy_noise_variance() { return std::exp(-3.0); }

RegressionData make_toy(uint64_t seed, int n) {
  WHVI_CHECK(n >= 1, "the toy data set needs at least 1 point, got n = ", n, ".");
  std::mt19937_64 gen(seed);
  const double noise_sd = std::sqrt(toy_noise_variance());
  const double two_pi = 6.283185307179586476925286766559;
  RegressionData d;
  d.name = "toy";
  d.source = "generated";
  d.x = torch::empty({n, 1}, torch::kFloat64);
  d.y = torch::empty({n, 1}, torch::kFloat64);
  double* px = d.x.data_ptr<double>();
  double* py = d.y.data_ptr<double>();
  for (int i = 0; i < n; ++i) {
    double x;
    do {
      // One rounding, whether or not the compiler contracts a*b+c into an FMA.
      x = std::fma(kToyHi - kToyLo, uniform01(gen), kToyLo);
    } while (x >= kToyGapLo && x <= kToyGapHi);
    const double u1 = uniform01(gen), u2 = uniform01(gen);
    const double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(two_pi * u2);
    px[i] = x;
    py[i] = toy_function(x) + noise_sd * z;
  }
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) all[i] = i;
  d.std_train.push_back(std::move(all));
  d.std_test.emplace_back();
  return d;
}

torch::Tensor grid_1d(double lo, double hi, int n) {
  WHVI_CHECK(n >= 1, "a plotting grid needs at least 1 point, got n = ", n, ".");
  WHVI_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, "plotting grid bounds [", lo, ", ",
             hi, "] must be finite with lo <= hi.");
  auto g = torch::empty({n, 1}, torch::kFloat64);
  double* p = g.data_ptr<double>();
  for (int i = 0; i < n; ++i) p[i] = n == 1 ? lo : lo + (hi - lo) * (double(i) / double(n - 1));
  if (n > 1) p[n - 1] = hi;
  return g;
}

// The WHVI paper's 1-D toy problem: data.dataset: toy.
namespace {
struct ToyOptions {
  int64_t points = 128;
  template <class V>
  void visit(V& v) {
    v.num("data.toy_points", points, 8, 1000000, "number of toy inputs (paper: 128)");
  }
};
}  // namespace

DataSourceKind toy_data_source() {
  auto k = data_source<ToyOptions>(
      "toy", "'toy' (the WHVI paper's 1-D toy problem; every point trains the model)",
      [](const std::string& ds) { return ds == "toy"; }, [](const std::string&) { return true; },
      [](const ToyOptions& o, const DataRequest& r) { return make_toy(r.seed, static_cast<int>(o.points)); });
  k.all_rows_train = true;
  return k;
}

// Why data.dataset names no folder in the UCI layout (this source takes every
// name no other source claims): a file or device given where a folder is read,
// a folder without data.txt, or a name that is nowhere; "" when it may be one.
static std::string uci_folder_not_this(const std::string& ds, const std::string& data_dir) {
  if (ds.empty() || uci_folder(ds) != ds) return "";  // an alias: resolve_folder says what is missing
  std::error_code ec;
  if (std::any_of(std::begin(kAliases), std::end(kAliases), [&](const Alias& a) { return ds == a.folder; }) ||
      fs::is_directory(fs::path(data_dir) / "uci" / ds, ec))
    return "";
  const std::string kind = describe_path_kind(ds);
  const std::string forms = "whvi reads a table from a file named *.csv, *.tsv (or either .gz) or *.npy, and a data "
                            "set in the UCI layout from a folder (docs/reference.md, Data)";
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  if (kind.empty() && !ds.empty() && (blank(ds.front()) || blank(ds.back()))) {
    // a quote left open swallows the config's next lines into the name: show its first word only
    const char* space = " \t\r\n";
    const size_t b = ds.find_first_not_of(space), e = b == std::string::npos ? b : ds.find_first_of(space, b);
    std::string shown = b == std::string::npos ? "" : ds.substr(b, e - b);
    if (e != std::string::npos && ds.find_first_not_of(space, e) != std::string::npos) shown += " ...";
    return "data set '" + printable(shown, 200) + "' not found: the name begins or ends with a space (a quote left "
           "open in the config, or a stray space?); write the name without it";
  }
  if (kind.empty())
    return "data set '" + printable(ds, 200) + "' not found: there is no file or folder '" + printable(ds, 200) +
           "' here and no folder '" + (fs::path(data_dir) / "uci" / ds).string() + "'; " + forms + ". Known data "
           "sets: " + known_data_sets();
  if (!fs::is_directory(ds, ec))
    return "data.dataset '" + printable(ds, 200) + "' is " + kind + ", which is not data whvi reads: " + forms +
           (kind == "a regular file" ? "; if it is a CSV table, give it a .csv name" : "");
  if (describe_path_kind((fs::path(ds) / "data.txt").string()).empty())  // anything there (a link): the loader says
    return "data.dataset '" + printable(ds, 200) + "' is a folder, but not in the UCI layout: it has no data.txt "
           "(with index_features.txt and index_target.txt beside it; docs/reference.md, Data); give such a folder, "
           "or a .csv file";
  return "";
}

// A folder in the UCI layout: the papers' benchmarks by alias or folder name
// under <data_dir>/uci/, or any folder of the user's in that layout (a
// classifier's target column holds class labels).
DataSourceKind uci_folder_data_source() {
  std::string aliases;
  for (const auto& a : kAliases) aliases += std::string(aliases.empty() ? "" : ", ") + a.alias;
  static const std::string help = "a UCI regression benchmark (" + aliases +
                                  "; under <data.dir>/uci/), or a path to any folder in the UCI layout "
                                  "(docs/reference.md, Data), the user's own data";
  auto k = data_source<NoDataOptions>(
      "uci-folder", help.c_str(), [](const std::string&) { return true; },
      [](const std::string& ds) {
        return std::any_of(std::begin(kAliases), std::end(kAliases),
                           [&](const Alias& a) { return ds == a.alias || ds == a.folder; });
      },
      [](const NoDataOptions&, const DataRequest& r) {
        auto d = load_uci(r.dataset, r.data_dir);
        if (r.classification) targets_to_classes(d);
        return d;
      });
  k.not_this = uci_folder_not_this;
  return k;
}

}  // namespace whvi::data
