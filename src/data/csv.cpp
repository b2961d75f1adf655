// CSV/TSV data sets with a header row (see csv.h).
#include "data/csv.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <mutex>
#include <set>
#include <sstream>

#include "data/source.h"
#include "common/errors.h"
#include "common/io.h"
#include "common/paths.h"
#include "common/runtime.h"

namespace whvi::data {
namespace {

// A warning about a file, said once per process: `auto` reads the same table
// for every candidate and the run after the choice.
void warn_once(const std::string& text) {
  static std::mutex m;
  static std::set<std::string> said;
  const std::lock_guard<std::mutex> lock(m);
  if (said.insert(text).second) spdlog::warn("{}", text);
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

// A column name in a message: at most 60 characters.
std::string col(const std::string& name) { return "'" + (name.size() > 60 ? name.substr(0, 60) + "..." : name) + "'"; }

// What parse_number found in a cell.
enum NumberKind {
  kText = 0,      // not a number: text
  kNumber = 1,    // a finite number within kMaxAbsValue
  kTooLarge = 2,  // a number (or infinity) beyond kMaxAbsValue
  kNaN = 3,       // a NaN strtod reads ("-NaN", "+nan", "nan(1)"; plain NaN is a missing cell)
  kTooSmall = 4,  // nonzero but below the smallest normal double (1e-320: subnormal; 1e-400: underflow)
};

int parse_number(const std::string& s, double& v) {
  if (s.empty()) return kText;
  // strtod also reads hexadecimal (0x1A) and "infinity": in a data file those are text, not numbers
  if (s.find_first_of("xXpP") != std::string::npos) return kText;
  errno = 0;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return kText;
  if (std::isnan(v)) return kNaN;
  if ((errno == ERANGE && std::fabs(v) < 1.0) || (v != 0 && std::fabs(v) < DBL_MIN))
    return kTooSmall;  // underflow: a subnormal or 0
  if (errno == ERANGE || !std::isfinite(v) || std::fabs(v) > kMaxAbsValue) return kTooLarge;
  return kNumber;
}

// Why a cell parse_number read as a number cannot be used, with the fix ("" when it can).
std::string unusable_number(int kind, const std::string& rescale) {
  std::ostringstream os;
  switch (kind) {
    case kTooLarge: os << "a number too large (or infinite) to use; at most " << kMaxAbsValue << " in magnitude: " << rescale; break;
    case kNaN: os << "not a number (NaN): leave the cell empty (or write NA) to mark it missing, or fix it"; break;
    case kTooSmall:  // under flush-to-zero (LibTorch's) strtod returns 0 for a subnormal: one message for both
      os << "a subnormal number too small to be represented (nonzero magnitudes start at 2.2e-308): use 0";
      break;
    default: break;
  }
  return os.str();
}

}  // namespace

bool is_csv_path(const std::string& p) {
  return ends_with(p, ".csv") || ends_with(p, ".tsv") || ends_with(p, ".csv.gz") || ends_with(p, ".tsv.gz");
}

bool is_missing_cell(const std::string& s) {
  std::string l;
  for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // R's and pandas' markers, UCI's '?', SAS's '.', a spreadsheet's '-' or #N/A
  static const std::set<std::string> markers = {"",     "na",   "nan", "n/a", "?",    "null",
                                                "none", "-",    ".",   "--",  "#n/a", "<na>"};
  return l.size() <= 4 && markers.count(l) > 0;
}

std::string category_key(const std::string& cell, bool declared) {
  double v = 0;
  if (!declared || parse_number(cell, v) != kNumber) return cell;
  if (v == 0) v = 0;  // -0 is 0
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {
// A file without a header row (its first data row taken for names): every
// name a number and one of them not an integer (integers alone can be names,
// e.g. pixel indices) is refused; most names numbers gets a warning.
void check_header_is_names(const std::vector<std::string>& h, const std::string& path) {
  size_t numbers = 0, fractional = 0;
  std::string example;
  for (const auto& name : h) {
    double v = 0;
    if (parse_number(name, v) != kNumber) continue;
    ++numbers;
    if (v != std::floor(v) || name.find_first_of(".eE") != std::string::npos) {
      ++fractional;
      if (example.empty()) example = name;
    }
  }
  if (h.size() < 2 || fractional == 0) return;
  WHVI_CHECK(numbers < h.size(), "'", path, "' row 1 looks like data, not a header: every column name is a number ",
             "(e.g. ", col(example), "); add a header row naming the columns (the target's among them)");
  if (numbers * 2 > h.size())
    warn_once(fmt::format("'{}' row 1 is read as the header, but {} of its {} column names are numbers (e.g. {}): if the "
                 "file has no header row, add one, or that row's values become column names",
                 path, numbers, h.size(), col(example)));
}
}  // namespace

struct CsvReader::Source {
  gzFile gz = nullptr;
  ~Source() {
    if (gz) gzclose(gz);
  }
};

CsvReader::CsvReader(const std::string& path) : src_(std::make_unique<Source>()), path_(path) {
  sep_ = ends_with(path, ".tsv") || ends_with(path, ".tsv.gz") ? '\t' : ',';
  int fd = -1;
  if (path == "-") {
    fd = ::dup(0);
  } else {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      const auto kind = describe_path_kind(path);
      WHVI_CHECK(!kind.empty(), "'", path, "' not found: no such file (check the path)");
      throw Error("'" + path + "' is " + kind + ": give the path of a CSV file");
    }
    WHVI_CHECK(S_ISREG(st.st_mode), "'", path, "' is ", describe_path_kind(path), ", not a regular file: give the "
               "path of a CSV file", S_ISFIFO(st.st_mode) ? " (rows from a pipe: whvi predict --input - reads them "
               "from standard input)" : "");
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  }
  WHVI_CHECK(fd >= 0, "cannot read '", path, "': ", std::strerror(errno));
  src_->gz = gzdopen(fd, "rb");  // reads plain files as they are
  if (!src_->gz) {
    ::close(fd);
    throw Error("cannot read '" + path + "': out of memory");
  }
  gzbuffer(src_->gz, 1 << 17);
  // a UTF-8 byte-order mark
  int c0 = gzgetc(src_->gz);
  WHVI_CHECK(c0 == -1 || !ends_with(path, ".gz") || gzdirect(src_->gz) == 0, "'", path, "' is not gzip-compressed, "
             "though its name ends in .gz: compress it (gzip), or name it without .gz if it is a plain CSV file");
  if (c0 == 0xEF) {
    const int c1 = gzgetc(src_->gz), c2 = gzgetc(src_->gz);
    WHVI_CHECK(c1 == 0xBB && c2 == 0xBF, "'", path, "' starts with bytes that are not a UTF-8 byte-order mark: "
               "is it a text CSV file?");
  } else if (c0 == 0xFF || c0 == 0xFE) {
    const int c1 = gzgetc(src_->gz);
    WHVI_CHECK(!((c0 == 0xFF && c1 == 0xFE) || (c0 == 0xFE && c1 == 0xFF)), "'", path, "' is UTF-16 text (its "
               "byte-order mark says so); whvi reads UTF-8: save it as UTF-8, e.g. iconv -f utf-16 -t utf-8");
    throw Error("'" + path + "' starts with a byte that no UTF-8 text starts with: is it a CSV text file?");
  } else if (c0 != -1) {
    gzungetc(c0, src_->gz);
  }
  std::vector<std::string> h;
  WHVI_CHECK(read_record(h), "'", path, "' is empty: a CSV file needs a header row and data rows");
  row_ = 1;
  for (auto& name : h) name = trim(name);
  check_utf8(h);
  std::set<std::string> seen;
  for (size_t i = 0; i < h.size(); ++i) {
    WHVI_CHECK(!h[i].empty(), "'", path, "' row 1 (the header): column ", i + 1,
               " has no name; every column needs a name in the header row");
    WHVI_CHECK(seen.insert(h[i]).second, "'", path, "' row 1 (the header): the column name ", col(h[i]),
               " appears twice; column names must be unique");
  }
  check_header_is_names(h, path);
  header_ = std::move(h);
}

CsvReader::~CsvReader() = default;

int CsvReader::get() {
  const int c = gzgetc(src_->gz);
  if (c == -1) {
    int err = 0;
    gzerror(src_->gz, &err);
    WHVI_CHECK(err == Z_OK || err == Z_STREAM_END, "'", path_, "' is damaged: its gzip stream ends early or is "
               "corrupt (near line ", line_, ")");
  }
  WHVI_CHECK(c != 0, "'", path_, "' holds a NUL byte (line ", line_, "): it is a binary file, or text in UTF-16 or UTF-32; "
             "whvi reads CSV text in UTF-8 (iconv -f utf-16 -t utf-8 converts UTF-16)");
  return c;
}

bool CsvReader::read_record(std::vector<std::string>& fields) {
  fields.clear();
  int c = get();
  if (c == -1) return false;
  std::string cur;
  bool quoted = false;
  const int64_t start_line = line_;
  for (;;) {
    if (c == '"' && cur.find_first_not_of(" \t") == std::string::npos) {
      cur.clear();
      quoted = true;
      for (;;) {
        c = get();
        WHVI_CHECK(c != -1, "'", path_, "': a quoted field opened on line ", start_line,
                   " is never closed (a missing '\"')");
        if (c == '\n') ++line_;
        if (c == '"') {
          c = get();
          if (c == '"') {
            cur += '"';
            continue;
          }
          break;
        }
        cur += static_cast<char>(c);
      }
      while (c == ' ' || c == '\t') {
        if (c == sep_) break;
        c = get();
      }
      WHVI_CHECK(c == sep_ || c == '\n' || c == '\r' || c == -1, "'", path_, "' line ", line_,
                 ": text after a closing quote; a quoted field ends at its closing quote");
      continue;
    }
    if (c == sep_ || c == '\n' || c == '\r' || c == -1) {
      fields.push_back(quoted ? cur : trim(cur));
      cur.clear();
      quoted = false;
      if (c == sep_) {
        c = get();
        continue;
      }
      if (c == '\r') {
        c = get();
        if (c != '\n' && c != -1) gzungetc(c, src_->gz);
      }
      ++line_;
      return true;
    }
    cur += static_cast<char>(c);
    c = get();
  }
}

namespace {

// The byte offset of the first byte of `s` that breaks UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF included), or npos when it is valid.
size_t invalid_utf8_at(const std::string& s) {
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned c = b[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n) return i;
    unsigned cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < len; ++k) {
      if ((b[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (b[i + k] & 0x3F);
    }
    const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += len;
  }
  return std::string::npos;
}

}  // namespace

// Every field UTF-8 text (names and categories go into JSON records), or one
// line naming the row, the column and the byte, never the field itself.
void CsvReader::check_utf8(const std::vector<std::string>& fields) const {
  for (size_t j = 0; j < fields.size(); ++j) {
    const size_t at = invalid_utf8_at(fields[j]);
    if (at == std::string::npos) continue;
    std::ostringstream byte;
    byte << "0x" << std::hex << std::uppercase << static_cast<unsigned>(static_cast<unsigned char>(fields[j][at]));
    throw Error("'" + path_ + "' row " + std::to_string(row_) + (row_ == 1 ? " (the header)" : "") + ", column " +
                std::to_string(j + 1) + ": not UTF-8 text (byte " + byte.str() + " at position " +
                std::to_string(at + 1) + " of the field): if it is text in another encoding, save it as UTF-8 "
                "(e.g. iconv -f latin1 -t utf-8); if it is not a CSV file, give the path of one");
  }
}

bool CsvReader::next(std::vector<std::string>& fields) {
  for (;;) {
    if (!read_record(fields)) return false;
    ++row_;
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    WHVI_CHECK(fields.size() == header_.size(), "'", path_, "' row ", row_, ": ", fields.size(),
               " fields, but the header has ", header_.size(), " columns; every row needs one field per column "
               "(quote fields that hold a '", sep_ == '\t' ? std::string("tab") : std::string(1, sep_), "')");
    check_utf8(fields);
    return true;
  }
}

namespace {

// Training holds the table in memory (as text, then as numbers): about 4x the
// file's bytes, more for a compressed one; refuses what cannot fit.
void refuse_too_large(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const double factor = ends_with(path, ".gz") ? 20.0 : 4.0;
  const double need = factor * static_cast<double>(st.st_size), have = usable_memory_bytes();
  WHVI_CHECK(have <= 0 || need <= have, "'", path, "' (", st.st_size >> 20, " MiB) would need about ",
             static_cast<int64_t>(need / (1 << 30)) + 1, " GiB of memory to train on, more than this machine's ",
             static_cast<int64_t>(have / (1 << 30)), " GiB: train on a sample of its rows (whvi predict streams "
             "files of any size)");
}

// The target's and the features' column numbers in the header.
std::pair<size_t, std::vector<size_t>> pick_columns(const std::vector<std::string>& header, const std::string& path,
                                                    const CsvOptions& o) {
  auto index_of = [&](const std::string& name, const char* what) {
    const auto it = std::find(header.begin(), header.end(), trim(name));
    if (it != header.end()) return static_cast<size_t>(it - header.begin());
    std::string all;
    for (size_t i = 0; i < header.size() && i < 20; ++i) all += (i ? ", " : "") + col(header[i]);
    if (header.size() > 20) all += ", ...";
    throw Error("'" + path + "' has no column " + col(name) + " (" + what + "); its columns: " + all);
  };
  WHVI_CHECK(header.size() >= 2 || header.empty() || header[0].rfind('#', 0) != 0, "'", path,
             "' starts with a comment line ('#'): the first line must be the header; remove the comment lines");
  WHVI_CHECK(header.size() >= 2, "'", path, "' has ", header.size(), " column(s); a data set needs a target "
             "column and at least one feature column (is the separator right? .csv: ',', .tsv: tab)");
  const size_t target = o.target.empty() ? header.size() - 1 : index_of(o.target, "data.target");
  std::vector<size_t> feats;
  if (o.features.empty()) {
    for (size_t i = 0; i < header.size(); ++i)
      if (i != target) feats.push_back(i);
    return {target, feats};
  }
  std::set<size_t> seen;
  for (const auto& f : o.features) {
    const size_t i = index_of(f, "data.features");
    WHVI_CHECK(i != target, "data.features: ", col(header[i]), " is the target column (data.target) of '", path,
               "'; a target must not be a feature: drop it from data.features");
    WHVI_CHECK(seen.insert(i).second, "data.features names ", col(header[i]), " twice");
    feats.push_back(i);
  }
  return {target, feats};
}

// The cells of the used columns, row by row (rows with a missing cell
// dropped and counted, or refused).
struct Cells {
  std::vector<std::vector<std::string>> features;  // per feature column
  std::vector<std::string> labels;
  std::vector<int64_t> rows;  // file row of each kept row
  int64_t dropped = 0;
};

Cells read_cells(CsvReader& r, const std::string& path, size_t target, const std::vector<size_t>& feats,
                 bool drop_missing, bool impute) {
  Cells c;
  c.features.resize(feats.size());
  const auto& header = r.header();
  std::vector<std::string> f;
  // What the kept cells hold (their text and a string each), watched as they
  // are read: a compressed file can expand far beyond what its size promised
  // (refuse_too_large), so the rows are refused once they outgrow memory, and a
  // long read says how far it got.
  const double have = static_cast<double>(usable_memory_bytes());
  double held = 0, next_note = 1 << 30;
  while (r.next(f)) {
    if ((r.row() & 4095) == 0) {
      // the columns' growth, the numbers and their encoded copies: about three times the text
      WHVI_CHECK(!(have > 0) || 3 * held <= have, "'", path, "': its first ", r.row(), " rows already hold about ",
                 static_cast<int64_t>(held / (1 << 20)), " MiB of text, and training needs about three times that, more "
                 "than the ", static_cast<int64_t>(have / (1 << 20)), " MiB this process can use (memory, cgroup "
                 "or ulimit -v)", ends_with(path, ".gz") ? "; the compressed file expands that much" : "",
                 ": train on a sample of its rows (whvi predict streams files of any size)");
      if (held >= next_note) {
        spdlog::info("reading '{}': {} rows so far ({:.1f} GiB of text)", path, r.row(), held / (1 << 30));
        next_note += 1 << 30;
      }
    }
    bool missing = false;
    // imputing, only a missing target drops a row (there is nothing to learn from it)
    for (size_t j = impute ? feats.size() : 0; j <= feats.size() && !missing; ++j) {
      const size_t k = j < feats.size() ? feats[j] : target;
      if (!is_missing_cell(f[k])) continue;
      WHVI_CHECK(drop_missing || impute, "'", path, "' row ", r.row(), ", column ", col(header[k]),
                 ": a missing value (empty, NA or NaN); fill it in, or set data.missing: impute (the default) or "
                 "drop");
      missing = true;
    }
    if (missing) {
      ++c.dropped;
      continue;
    }
    for (size_t j = 0; j < feats.size(); ++j) {
      held += static_cast<double>(sizeof(std::string) + (f[feats[j]].size() > 15 ? f[feats[j]].size() : 0));
      c.features[j].push_back(std::move(f[feats[j]]));
    }
    held += static_cast<double>(sizeof(std::string) + f[target].size());
    c.labels.push_back(std::move(f[target]));
    c.rows.push_back(r.row());
  }
  const auto n = static_cast<int64_t>(c.labels.size());
  WHVI_CHECK(n >= 2, "'", path, "' has ", n, " usable data row(s)", c.dropped ? " (" + std::to_string(c.dropped) +
             " dropped for missing values)" : std::string(), "; training and testing need at least 2");
  return c;
}


// A text column read as categories that is most likely something else, said
// (a warning; the column is used as read): a different value in every row (an
// identifier: its one-hot carries nothing over to new rows), or numbers
// written with thousands separators ("1,234", read as text).
void warn_unlikely_categories(const InputColumn& ic, const std::vector<std::string>& cells, int64_t present,
                              int64_t text_cells, const std::string& path) {
  const auto k = static_cast<int64_t>(ic.categories.size());
  if (present >= 20 && k == present)
    warn_once(fmt::format("'{}' column {} {}has a different value in each of its {} rows (an identifier{}?): its {} "
                 "one-hot inputs say nothing about new rows; {}",
                 path, col(ic.name), ic.declared ? "(declared categorical) " : "", present,
                 ic.declared ? " or a measurement" : "", k,
                 ic.declared ? "leave it out of data.categorical to read its numbers as numbers"
                             : "leave it out of data.features"));
  if (ic.declared) return;
  if (text_cells * 2 < present)  // mostly numbers: typos, or codes that are categories
    warn_once(fmt::format("'{}' column {}: {} of its {} cells are numbers and {} are text, so the whole column is "
                 "read as {} text categories; if the text cells are mistakes, fix them or leave them empty (or NA) "
                 "to mark them missing; if the column is a code, declare it (data.categorical) to say so",
                 path, col(ic.name), present - text_cells, present, text_cells, k));
  static const std::regex thousands(R"([+-]?[0-9]{1,3}([, ][0-9]{3})+(\.[0-9]*)?)");
  int64_t text = 0, grouped = 0;
  for (const auto& cell : cells) {
    double v = 0;
    if (is_missing_cell(cell) || parse_number(cell, v) == kNumber) continue;
    if (++text > 1000) break;  // a sample is enough
    if (cell.size() <= 40 && std::regex_match(cell, thousands)) ++grouped;
  }
  text = std::min<int64_t>(text, 1000);
  if (text > 0 && grouped * 2 > text)
    warn_once(fmt::format("'{}' column {}: {} of its {} text cells look like numbers with thousands separators (e.g. "
                 "1,234), so the column is read as {} text categories; write the numbers without separators",
                 path, col(ic.name), grouped, text, k));
}

// A column of numbers with a stray word (first at file row `row`) is most
// likely a typo, not a category: read as one-hot text it would turn every
// number into a category of its own, so it is refused with the fixes.
void refuse_stray_text(const std::string& name, int64_t present, int64_t text_cells, int64_t row,
                       const std::string& path) {
  const bool many = text_cells > 1;
  WHVI_CHECK(text_cells * 20 > present, "'", path, "' row ", row, ", column ", col(name), ": not a number, though ",
             present - text_cells, " of the column's ", present, " cells are (", text_cells, " are not); fix ",
             many ? "those cells" : "that cell", ", leave ", many ? "them" : "it", " empty (or NA) to mark ",
             many ? "them" : "it", " missing, or declare the column categorical (data.categorical: ", col(name), ")");
}

// The encoded inputs (rows x width doubles) and the copies training makes of
// them (standardised, float32, a split's rows: about 4 in all) are refused
// before they are made when they cannot fit, naming the widest category.
void refuse_wide_inputs(const RegressionData& d, int64_t n, int64_t width, const std::string& path) {
  const double need = 4.0 * 8.0 * static_cast<double>(n) * static_cast<double>(width);
  const double have = static_cast<double>(usable_memory_bytes());
  if (!(have > 0) || need <= have) return;
  const InputColumn* widest = nullptr;
  for (const auto& ic : d.inputs)
    if (!widest || ic.categories.size() > widest->categories.size()) widest = &ic;
  const bool category = widest && !widest->categories.empty();
  throw Error("'" + path + "': " + std::to_string(n) + " rows x " + std::to_string(width) + " encoded inputs" +
              (category ? " (column " + col(widest->name) + " alone is one-hot over " +
                              std::to_string(widest->categories.size()) + " categories)"
                        : std::string()) +
              " would need about " + std::to_string(static_cast<int64_t>(need / (1 << 20)) + 1) +
              " MiB of memory to train on, more than the " + std::to_string(static_cast<int64_t>(have / (1 << 20))) +
              " MiB this process can use (memory, cgroup or ulimit -v): " +
              (category ? "leave " + col(widest->name) + " out of data.features (or merge its rare categories), "
                        : std::string()) +
              "or train on a sample of the rows");
}

// The inputs: numeric columns as they are, text columns one-hot; a missing
// cell (data.missing: impute) is NaN (a text column's whole group), and every
// column with one gets a 0/1 missing-indicator column after all the inputs.
void encode_inputs(RegressionData& d, const Cells& c, const std::vector<std::string>& names,
                   const std::vector<char>& as_text, const std::string& path) {
  const auto n = static_cast<int64_t>(c.labels.size());
  std::vector<std::vector<double>> numeric(names.size());
  std::vector<int64_t> missing(names.size(), 0);
  int64_t width = 0;
  for (size_t j = 0; j < names.size(); ++j) {
    InputColumn ic;
    ic.name = names[j];
    ic.declared = as_text[j] != 0;
    numeric[j].resize(static_cast<size_t>(n));
    int64_t text_cells = 0, first_text = -1;
    std::set<std::string> cats;
    for (int64_t i = 0; i < n; ++i) {
      const std::string& cell = c.features[j][i];
      if (is_missing_cell(cell)) {
        numeric[j][i] = std::nan("");
        ++missing[j];
        continue;
      }
      const int kind = as_text[j] ? kText : parse_number(cell, numeric[j][i]);
      WHVI_CHECK(kind == kText || kind == kNumber, "'", path, "' row ", c.rows[i], ", column ", col(ic.name), ": ",
                 unusable_number(kind, "rescale the column"));
      if (kind == kText && text_cells++ == 0) first_text = i;
      cats.insert(category_key(cell, as_text[j] != 0));
    }
    if (text_cells > 0) {
      ic.categories.assign(cats.begin(), cats.end());
      WHVI_CHECK(ic.categories.size() <= 10000, "'", path, "' column ", col(ic.name), " is text with ",
                 ic.categories.size(), " different values; one-hot encoding takes at most 10,000: leave it out "
                 "of data.features");
      const int64_t present = n - missing[j];
      if (!as_text[j]) refuse_stray_text(ic.name, present, text_cells, c.rows[first_text], path);
      warn_unlikely_categories(ic, c.features[j], present, as_text[j] ? 0 : text_cells, path);
    }
    width += ic.categories.empty() ? 1 : static_cast<int64_t>(ic.categories.size());
    d.inputs.push_back(std::move(ic));
  }
  for (size_t j = 0; j < names.size(); ++j) {
    if (n > 0 && missing[j] == n)
      warn_once(fmt::format("'{}' column {} has no values (every cell is missing): it carries nothing; leave it out "
                            "of data.features", path, col(names[j])));
    d.missing_cells += missing[j];
    if (missing[j] > 0) width += 1;
  }
  refuse_wide_inputs(d, n, width, path);
  d.x = torch::zeros({n, width}, torch::kFloat64);
  auto xa = d.x.accessor<double, 2>();
  int64_t c0 = 0;
  for (size_t j = 0; j < names.size(); ++j) {
    const auto& cats = d.inputs[j].categories;
    if (cats.empty()) {
      for (int64_t i = 0; i < n; ++i) xa[i][c0] = numeric[j][i];
      d.onehot.push_back(0);
      ++c0;
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      const std::string& cell = c.features[j][i];
      if (is_missing_cell(cell)) {
        for (size_t k = 0; k < cats.size(); ++k) xa[i][c0 + static_cast<int64_t>(k)] = std::nan("");
        continue;
      }
      const auto it = std::lower_bound(cats.begin(), cats.end(), category_key(cell, d.inputs[j].declared));
      xa[i][c0 + (it - cats.begin())] = 1.0;
    }
    d.onehot.insert(d.onehot.end(), cats.size(), 1);
    c0 += static_cast<int64_t>(cats.size());
  }
  for (size_t j = 0; j < names.size(); ++j) {
    if (missing[j] == 0) continue;
    for (int64_t i = 0; i < n; ++i) xa[i][c0] = is_missing_cell(c.features[j][i]) ? 1.0 : 0.0;
    d.onehot.push_back(1);  // a 0/1 column: a test row's 1 is zeroed where no training row has one
    ++c0;
    InputColumn ind;
    ind.name = names[j];
    ind.missing_indicator = true;
    d.inputs.push_back(std::move(ind));
  }
}

// Real-valued targets.
void encode_numeric_target(RegressionData& d, const Cells& c, const std::string& path) {
  const auto n = static_cast<int64_t>(c.labels.size());
  d.y = torch::empty({n, 1}, torch::kFloat64);
  auto ya = d.y.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    const int kind = parse_number(c.labels[i], v);
    WHVI_CHECK(kind == kNumber, "'", path, "' row ", c.rows[i], ", target column ", col(d.target_name), ": ",
               kind == kText ? "not a number; for class labels set likelihood.kind: softmax"
                             : unusable_number(kind, "rescale the column"));
    ya[i][0] = v;
  }
  // training runs in float32 (about 1e-38 to 3e38): a target whose spread is below 1e-30 loses its digits there
  // (the range, not the standard deviation, whose squares would underflow to 0 first)
  const double spread = n > 1 ? (d.y.max() - d.y.min()).item<double>() : 0.0;
  WHVI_CHECK(!(spread > 0 && spread < 1e-30), "'", path, "' target column ", col(d.target_name), ": its values spread "
             "over only ", spread, " (largest minus smallest), too small to train on in float32; rescale the column "
             "(e.g. multiply it by 1e30 or give it in other units)");
}

// A numeric feature that gives a regression target exactly (an affine copy of
// it: |correlation| within 1e-9 of 1 over the rows where both are present) is
// most likely a leak, a value not known when a prediction is wanted: warned.
void warn_exact_predictors(const RegressionData& d, const std::string& path) {
  const auto y = d.y.reshape({-1});
  int64_t c0 = 0;
  for (const auto& ic : d.inputs) {
    if (ic.missing_indicator) break;  // they come after every input
    const int64_t w = ic.categories.empty() ? 1 : static_cast<int64_t>(ic.categories.size());
    if (ic.categories.empty()) {
      const auto x = d.x.select(1, c0);
      const auto ok = x.isnan().logical_not();
      const auto xs = x.masked_select(ok), ys = y.masked_select(ok);
      // a constant column (or target) has no correlation, whatever rounding makes of its centred values
      if (xs.numel() >= 3 && xs.max().item<double>() > xs.min().item<double>() &&
          ys.max().item<double>() > ys.min().item<double>()) {
        const auto xc = xs - xs.mean(), yc = ys - ys.mean();
        const double sxx = xc.square().sum().item<double>(), syy = yc.square().sum().item<double>();
        const double r = sxx > 0 && syy > 0 ? (xc * yc).sum().item<double>() / std::sqrt(sxx * syy) : 0.0;
        if (std::fabs(r) > 1 - 1e-9)
          warn_once(fmt::format("'{}' column {} gives the target {} exactly (correlation {:+.9f}): if it is a copy of the "
                       "target or known only after it, leave it out of data.features",
                       path, col(ic.name), col(d.target_name), r));
      }
    }
    c0 += w;
  }
}

// Features that are all constant (over the rows where they are present):
// nothing to learn from, said once; the model then predicts the target's spread alone.
void warn_constant_features(const RegressionData& d, const std::string& path) {
  if (d.x.size(0) < 2 || d.x.size(1) == 0) return;
  const auto x = d.x.nan_to_num(0.0);
  if ((std::get<0>(x.max(0)) == std::get<0>(x.min(0))).all().item<bool>())
    warn_once(fmt::format("'{}': every feature column is constant over its {} rows, so there is nothing to learn "
                          "from them (the model can only predict the target's overall spread); check data.features "
                          "and the file", path, d.x.size(0)));
}

// Numeric labels that are more likely a measurement than classes: more than
// ten of them, and fractions among them or more than half the rows distinct.
bool looks_continuous(const std::vector<double>& distinct, int64_t rows) {
  const bool fractions =
      std::any_of(distinct.begin(), distinct.end(), [](double x) { return std::isfinite(x) && x != std::floor(x); });
  return distinct.size() > 10 && (fractions || static_cast<int64_t>(distinct.size()) * 2 > rows);
}

// Class labels: classes sorted, numerically when every label is a number;
// each class needs two examples.
void encode_class_target(RegressionData& d, const Cells& c, const std::string& path) {
  const auto n = static_cast<int64_t>(c.labels.size());
  std::vector<std::string> names(c.labels.begin(), c.labels.end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  bool all_numbers = true;
  std::map<std::string, double> value;
  for (const auto& l : names) {
    double v = 0;
    all_numbers = all_numbers && parse_number(l, v) == kNumber;
    value[l] = v;
  }
  // Labels that are all numbers name a class by their value: 1, 1.0 and 01
  // are one class (named by its first spelling in sorted order).
  std::map<std::string, std::string> spelling;
  for (const auto& l : names) spelling[l] = l;
  if (all_numbers) {
    std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
      return value[a] < value[b];
    });
    std::vector<std::string> merged;
    for (const auto& l : names) {
      if (!merged.empty() && value[merged.back()] == value[l]) spelling[l] = merged.back();
      else merged.push_back(l);
    }
    names = merged;
  }
  WHVI_CHECK(names.size() >= 2, "'", path, "' target column ", col(d.target_name), " holds one class only",
             d.dropped_rows > 0 ? " in the " + std::to_string(n) + " rows kept (" + std::to_string(d.dropped_rows) +
                                      " row(s) were dropped for an empty or missing label or value)"
                                : std::string(),
             "; classification needs two or more");
  std::map<std::string, int64_t> index;
  for (size_t k = 0; k < names.size(); ++k) index[names[k]] = static_cast<int64_t>(k);
  for (const auto& [l, canonical] : spelling) index[l] = index[canonical];
  std::vector<int64_t> count(names.size(), 0), first_row(names.size(), 0);
  d.y = torch::empty({n, 1}, torch::kFloat64);
  auto ya = d.y.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = index[c.labels[i]];
    if (count[k]++ == 0) first_row[k] = c.rows[i];
    ya[i][0] = static_cast<double>(k);
  }
  std::vector<double> values;
  if (all_numbers)
    for (const auto& l : names) values.push_back(value[l]);
  for (size_t k = 0; k < names.size(); ++k) {
    WHVI_CHECK(count[k] >= 2 || !all_numbers || !looks_continuous(values, n), "'", path, "' target column ",
               col(d.target_name), " looks like a continuous quantity, not class labels (", names.size(),
               " different numbers in ", n, " rows; class ", col(names[k]), " is seen once): for regression remove "
               "likelihood.kind: softmax (gaussian is the default), or bin the target into classes first");
    WHVI_CHECK(count[k] >= 2, "'", path, "' target column ", col(d.target_name), ": class ", col(names[k]),
               " has one example only (row ", first_row[k], "); every class needs at least two (one to train, one "
               "to test): drop that row or merge the class with another");
  }
  d.num_classes = static_cast<int64_t>(names.size());
  d.class_names = names;
}

}  // namespace

RegressionData load_csv(const std::string& path, const CsvOptions& o) {
  refuse_too_large(path);
  CsvReader r(path);
  const auto& header = r.header();
  const auto [target, feats] = pick_columns(header, path, o);
  std::vector<char> as_text(feats.size(), 0);
  for (const auto& name : o.categorical) {
    const auto it = std::find(header.begin(), header.end(), trim(name));
    WHVI_CHECK(it != header.end(), "data.categorical: '", path, "' has no column ", col(name),
               "; name feature columns of its header line");
    const auto k = static_cast<size_t>(it - header.begin());
    WHVI_CHECK(k != target, "data.categorical: ", col(name), " is the target column (data.target); for class "
               "labels set likelihood.kind: softmax instead");
    const auto f = std::find(feats.begin(), feats.end(), k);
    WHVI_CHECK(f != feats.end(), "data.categorical: ", col(name), " is not one of the features (data.features): "
               "add it there or drop it here");
    as_text[static_cast<size_t>(f - feats.begin())] = 1;
  }
  const Cells cells = read_cells(r, path, target, feats, o.drop_missing, o.impute_missing);
  RegressionData d;
  d.name = std::filesystem::path(path).filename().string();
  if (ends_with(d.name, ".gz")) d.name.resize(d.name.size() - 3);
  if (ends_with(d.name, ".csv") || ends_with(d.name, ".tsv")) d.name.resize(d.name.size() - 4);
  d.source = path;
  d.target_name = header[target];
  d.dropped_rows = cells.dropped;
  for (const auto fr : cells.rows) d.source_rows.push_back(fr - 2);
  std::vector<std::string> names;
  for (const size_t j : feats) names.push_back(header[j]);
  encode_inputs(d, cells, names, as_text, path);
  warn_constant_features(d, path);
  if (o.classification) encode_class_target(d, cells, path);
  else {
    encode_numeric_target(d, cells, path);
    warn_exact_predictors(d, path);
  }
  return d;
}

std::string to_csv(const RegressionData& d, int classes) {
  const auto x = d.x.to(torch::kFloat64).contiguous();
  const auto y = d.y.to(torch::kFloat64).contiguous().view({-1});
  const int64_t n = x.size(0), D = x.size(1);
  const std::vector<double> cuts = quantile_cuts(y, classes);
  std::string out;
  for (int64_t j = 0; j < D; ++j) out += "x" + std::to_string(j + 1) + ",";
  out += classes > 1 ? "label\n" : "y\n";
  char buf[40];
  auto xa = x.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < D; ++j) {
      std::snprintf(buf, sizeof buf, "%.10g,", xa[i][j]);
      out += buf;
    }
    const double v = y[i].item<double>();
    if (classes > 1) {
      const auto bin = std::upper_bound(cuts.begin(), cuts.end(), v) - cuts.begin();
      out += "q" + std::to_string(bin + 1) + "\n";
    } else {
      std::snprintf(buf, sizeof buf, "%.10g\n", v);
      out += buf;
    }
  }
  return out;
}

std::vector<double> quantile_cuts(const torch::Tensor& y_in, int classes) {
  std::vector<double> cuts;
  if (classes < 2) return cuts;
  const auto y = y_in.to(torch::kFloat64).contiguous().view({-1});
  const int64_t n = y.size(0);
  WHVI_CHECK(n >= 1, "quantile bins of an empty target");
  const auto sorted = std::get<0>(y.sort());
  for (int k = 1; k < classes; ++k) cuts.push_back(sorted[std::min<int64_t>(n - 1, k * n / classes)].item<double>());
  return cuts;
}

void targets_to_quantile_classes(RegressionData& d, int classes) {
  WHVI_CHECK(classes >= 2, "quantile classes: needs 2 or more classes, got ", classes);
  const auto cuts = quantile_cuts(d.y, classes);
  auto ya = d.y.accessor<double, 2>();
  std::vector<int64_t> count(static_cast<size_t>(classes), 0);
  for (int64_t i = 0; i < d.y.size(0); ++i) {
    const auto bin = std::upper_bound(cuts.begin(), cuts.end(), ya[i][0]) - cuts.begin();
    ++count[static_cast<size_t>(bin)];
    ya[i][0] = static_cast<double>(bin);
  }
  d.class_names.clear();
  for (int k = 0; k < classes; ++k) {
    WHVI_CHECK(count[static_cast<size_t>(k)] >= 2, "data set '", d.name, "': quantile class q", k + 1, " has ",
               count[static_cast<size_t>(k)], " rows; every class needs at least two: ask for fewer classes or more rows");
    d.class_names.push_back("q" + std::to_string(k + 1));
  }
  d.num_classes = classes;
  d.noise_floor.reset();  // a regression problem's floor says nothing about its class labels
}

void targets_to_classes(RegressionData& d) {
  const auto y = d.y.to(torch::kFloat64).contiguous();
  std::vector<double> v(y.data_ptr<double>(), y.data_ptr<double>() + y.numel());
  std::vector<double> u = v;
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  WHVI_CHECK(u.size() >= 2, "data set '", d.name, "': the target holds one value only; classification needs two or "
             "more classes");
  WHVI_CHECK(u.size() <= 10000, "data set '", d.name, "': the target holds ", u.size(), " different values: is it "
             "really a class label? (likelihood.kind softmax)");
  std::vector<int64_t> count(u.size(), 0);
  auto ya = d.y.accessor<double, 2>();
  for (size_t i = 0; i < v.size(); ++i) {
    const auto c = std::lower_bound(u.begin(), u.end(), v[i]) - u.begin();
    ++count[static_cast<size_t>(c)];
    ya[static_cast<int64_t>(i)][0] = static_cast<double>(c);
  }
  d.class_names.clear();
  for (size_t c = 0; c < u.size(); ++c) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", u[c]);
    WHVI_CHECK(count[c] >= 2 || !looks_continuous(u, static_cast<int64_t>(v.size())), "data set '", d.name,
               "': the target looks like a continuous quantity, not class labels (", u.size(), " different numbers "
               "in ", v.size(), " rows; class ", buf, " is seen once): for regression remove likelihood.kind: "
               "softmax (gaussian is the default), or bin the target into classes first");
    WHVI_CHECK(count[c] >= 2, "data set '", d.name, "': class ", buf, " has one example only; every class needs "
               "at least two (one to train, one to test)");
    d.class_names.emplace_back(buf);
  }
  d.num_classes = static_cast<int64_t>(u.size());
}

int64_t zero_unseen_categories(const RegressionData& d, torch::Tensor& x_test, const torch::Tensor& x_train) {
  if (x_test.size(0) == 0 || x_train.size(0) == 0) return 0;
  const auto seen = std::get<0>(x_train.max(0));  // a one-hot column is 0 or 1
  auto unseen = torch::zeros({x_test.size(1)}, torch::kBool);
  for (int64_t j = 0; j < x_test.size(1) && j < static_cast<int64_t>(d.onehot.size()); ++j)
    if (d.onehot[j] && seen[j].item<double>() == 0) unseen[j] = true;
  if (!unseen.any().item<bool>()) return 0;
  const auto hit = (x_test.index({torch::indexing::Slice(), unseen}) != 0).any(1);
  x_test = x_test.clone();
  x_test.index_put_({torch::indexing::Slice(), unseen}, 0.0);
  return hit.sum().item<int64_t>();
}

namespace {

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream names(list);
  for (std::string f; std::getline(names, f, ',');)
    if (!f.empty()) out.push_back(f);
  return out;
}

// The options of a table of the user's: CSV declares them, .npy reads data.missing.
struct CsvSourceOptions {
  std::string target, features, categorical, missing = "impute";
  template <class V>
  void visit(V& v) {
    v.text("data.target", target, "CSV data: the target column's name (default: the last column)");
    v.late();
    v.text("data.features", features, "CSV data: the feature columns' names, a list or comma-separated (default: every column but the target)");
    v.late();
    v.text("data.categorical", categorical, "CSV data: feature columns to one-hot encode as categories although their values are numbers (a month, a weekday, an ordinal scale, a code), a list or comma-separated; a column with any text is a category anyway");
    v.late();
    v.pick("data.missing", missing, {"impute", "drop", "error"}, "CSV and .npy data: an empty cell, NA, N/A, NaN, ?, null, None, -, ., --, #N/A or <NA> (any case) in a feature is filled per split from its training rows (a numeric column's median, a text column's most frequent category) with a 0/1 missing-indicator column added for each column that has one, and rows missing the target are dropped (impute); or every row with a missing cell is dropped and counted (drop); or it is an error naming row and column (error)");
    v.idle_when("data.missing", {"impute", "error"});  // the same numbers wherever error runs (no missing cells)
  }
};

}  // namespace

DataSourceKind csv_data_source() {
  auto k = data_source<CsvSourceOptions>(
      "csv", "a CSV/TSV file with a header row (a path ending .csv, .tsv, .csv.gz or .tsv.gz; see data.target)",
      [](const std::string& ds) { return is_csv_path(ds); }, [](const std::string&) { return false; },
      [](const CsvSourceOptions& c, const DataRequest& r) {
        CsvOptions o;
        o.target = c.target;
        o.features = split_names(c.features);
        o.categorical = split_names(c.categorical);
        o.drop_missing = c.missing == "drop";
        o.impute_missing = c.missing == "impute";
        o.classification = r.classification;
        return load_csv(r.dataset, o);
      });
  k.user_table = true;
  return k;
}

}  // namespace whvi::data
