// UCI classification data sets (the WHVI paper's Table 13): EEG, MAGIC and
// LETTER as the UCI repository ships them (see dataset.h).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include "common/errors.h"
#include "data/dataset.h"

namespace fs = std::filesystem;

namespace whvi::data {
namespace {

struct ClassSet {
  const char* alias;
  const char* file;
  int label_col;  // 0 = first, -1 = last
  bool arff;
};
constexpr ClassSet kClassSets[] = {
    {"eeg", "EEG_Eye_State.arff", -1, true},
    {"magic", "magic04.data", -1, false},
    {"letter", "letter-recognition.data", 0, false},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == ',') {
      out.push_back(trim(s.substr(b, i - b)));
      b = i + 1;
    }
  return out;
}

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

}  // namespace

std::vector<std::string> classification_aliases() {
  std::vector<std::string> v;
  for (const auto& c : kClassSets) v.emplace_back(c.alias);
  return v;
}

bool is_classification_dataset(const std::string& name) {
  return std::any_of(std::begin(kClassSets), std::end(kClassSets),
                     [&](const ClassSet& c) { return name == c.alias; });
}

RegressionData parse_class_table(const std::string& text, int label_col, bool arff, const std::string& what) {
  std::vector<std::string> declared;  // ARFF class order
  std::vector<std::vector<double>> rows;
  std::vector<std::string> labels;
  std::vector<int64_t> label_lines;
  bool in_data = !arff;
  int64_t width = -1;
  size_t pos = 0;
  int64_t line = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    ++line;
    const std::string_view raw = trim(std::string_view(text).substr(pos, end - pos));
    pos = end + 1;
    if (raw.empty() || (arff && raw.front() == '%')) continue;
    if (!in_data) {
      const std::string l = lower(raw.substr(0, std::min<size_t>(raw.size(), 10)));
      if (l.rfind("@data", 0) == 0) {
        in_data = true;
      } else if (l.rfind("@attribute", 0) == 0) {
        declared.clear();
        const auto open = raw.find('{'), close = raw.rfind('}');
        if (open != std::string_view::npos && close != std::string_view::npos && close > open)
          for (auto v : split_commas(raw.substr(open + 1, close - open - 1))) declared.emplace_back(v);
      } else {
        WHVI_CHECK(raw.front() == '@', what, " line ", line, ": '", std::string(raw.substr(0, 60)),
                   "' is neither an ARFF header line (@relation, @attribute, @data) nor a comment; "
                   "the data rows must follow @data");
      }
      continue;
    }
    const auto cells = split_commas(raw);
    WHVI_CHECK(cells.size() >= 2, what, " line ", line, ": one column only; rows are comma-separated "
               "features and a class label");
    if (width < 0) width = static_cast<int64_t>(cells.size());
    WHVI_CHECK(static_cast<int64_t>(cells.size()) == width, what, " line ", line, ": ", cells.size(),
               " columns, but the first row has ", width, "; every row needs the same number");
    const size_t lc = label_col < 0 ? cells.size() - 1 : static_cast<size_t>(label_col);
    std::vector<double> feats;
    feats.reserve(cells.size() - 1);
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c == lc) continue;
      const std::string s(cells[c]);
      errno = 0;
      char* e = nullptr;
      const double v = std::strtod(s.c_str(), &e);
      WHVI_CHECK(!s.empty() && e == s.c_str() + s.size() && errno != ERANGE && std::isfinite(v) &&
                     std::fabs(v) <= kMaxAbsValue,
                 what, " line ", line, ", column ", c + 1, ": '", s.substr(0, 40),
                 "' is not a finite number (missing values are not supported: drop or impute that row)");
      feats.push_back(v);
    }
    WHVI_CHECK(!cells[lc].empty(), what, " line ", line, ": the class label (column ", lc + 1, ") is empty");
    rows.push_back(std::move(feats));
    labels.emplace_back(cells[lc]);
    label_lines.push_back(line);
  }
  WHVI_CHECK(arff ? in_data : true, what, ": no @data line, so the file holds no rows (is it an ARFF file?)");
  WHVI_CHECK(!rows.empty(), what, ": no data rows");
  std::vector<std::string> names = declared;
  if (names.empty()) {
    names = labels;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < names.size(); ++i) index[names[i]] = static_cast<int64_t>(i);
  WHVI_CHECK(names.size() >= 2, what, ": only one class ('", names.front(), "'); classification needs two or more");
  RegressionData d;
  const int64_t n = static_cast<int64_t>(rows.size()), dim = width - 1;
  d.x = torch::empty({n, dim}, torch::kFloat64);
  d.y = torch::empty({n, 1}, torch::kFloat64);
  auto xa = d.x.accessor<double, 2>();
  auto ya = d.y.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < dim; ++j) xa[i][j] = rows[i][j];
    auto it = index.find(labels[i]);
    WHVI_CHECK(it != index.end(), what, " line ", label_lines[i], ": class '", labels[i].substr(0, 40),
               "' is not among the classes the header declares (", names.size(), " of them)");
    ya[i][0] = static_cast<double>(it->second);
  }
  std::vector<int64_t> count(names.size(), 0);
  for (const auto& l : labels) ++count[index[l]];
  for (size_t c = 0; c < names.size(); ++c)
    WHVI_CHECK(count[c] > 0, what, ": class '", names[c], "' is declared but has no rows");
  d.num_classes = static_cast<int64_t>(names.size());
  d.class_names = names;
  return d;
}

RegressionData load_uci_class(const std::string& name, const std::string& data_dir) {
  const ClassSet* set = nullptr;
  for (const auto& c : kClassSets)
    if (name == c.alias) set = &c;
  WHVI_CHECK(set != nullptr, "'", name, "' is not a classification data set; known: eeg, magic, letter");
  const fs::path path = fs::path(data_dir) / "uci-class" / set->alias / set->file;
  std::error_code ec;
  WHVI_CHECK(fs::is_regular_file(path, ec), "classification data set '", name, "': '", path.string(),
             "' not found. Point data.dir or WHVI_DATA_DIR at the folder that holds uci-class/", set->alias,
             "/, or run scripts/fetch_data.sh to download it into data/uci-class/");
  std::ifstream f(path, std::ios::binary);
  WHVI_CHECK(f.good(), "cannot open '", path.string(), "' for reading; check its permissions");
  std::ostringstream ss;
  ss << f.rdbuf();
  auto d = parse_class_table(ss.str(), set->label_col, set->arff, "'" + path.string() + "'");
  d.name = name;
  d.source = path.parent_path().string();
  return d;
}

}  // namespace whvi::data
