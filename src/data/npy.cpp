// A NumPy array file (.npy) of the user's: one 2-D array, one row per example,
// the last column the target, the others the features (named x1..xD, so
// `whvi predict` reads a CSV file with those columns).
//
//   data.dataset: path/to/table.npy
//   data.missing: impute | drop | error   (NaN cells, as for CSV data)
//
// The format (numpy.lib.format, versions 1.0, 2.0 and 3.0): the magic
// "\x93NUMPY", a version, the header's length, a Python dict literal with
// 'descr', 'fortran_order' and 'shape', then the array's bytes. Numbers of
// any of float32/64 and (un)signed 8- to 64-bit integers, either byte order,
// C or Fortran order, are read; anything else (objects, strings, complex
// numbers, a shape that is not 2-D, a file whose length does not match its
// shape) is an error naming the file and what it holds.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>

#include "common/errors.h"
#include "common/io.h"
#include "data/csv.h"
#include "data/source.h"

namespace whvi::data {
namespace {

bool is_npy_path(const std::string& p) {
  return p.size() > 4 && (p.compare(p.size() - 4, 4, ".npy") == 0 || p.compare(p.size() - 4, 4, ".NPY") == 0);
}

struct NpyHeader {
  char kind = 'f';  // f, i or u
  size_t item = 8;  // bytes per number
  bool big_endian = false, fortran = false;
  int64_t rows = 0, cols = 0;
  size_t data_at = 0;  // offset of the first number
};

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

NpyHeader parse_header(const std::string& bytes, const std::string& path) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  WHVI_CHECK(bytes.size() >= 10 && std::memcmp(b, "\x93NUMPY", 6) == 0, "'", path,
             "' is not a NumPy .npy file (no \\x93NUMPY magic); save the array with numpy.save");
  const int major = b[6];
  WHVI_CHECK(major >= 1 && major <= 3, "'", path, "' is .npy format version ", major,
             ", which whvi does not read (1, 2 or 3); save it again with numpy.save");
  const int len_bytes = major == 1 ? 2 : 4;
  WHVI_CHECK(bytes.size() >= static_cast<size_t>(8 + len_bytes), "'", path, "' ends inside its .npy header");
  const uint64_t hlen = le(b + 8, len_bytes);
  NpyHeader h;
  h.data_at = 8 + static_cast<size_t>(len_bytes) + static_cast<size_t>(hlen);
  // a plain 2-D array's header is under 128 bytes; 4 KiB bounds the parsing (a
  // structured dtype's long header is refused as a type whvi does not read)
  WHVI_CHECK(hlen <= 4096, "'", path, "' has a .npy header of ", hlen, " bytes, longer than a plain 2-D array's; "
             "save a plain numeric array (numpy.save(path, X.astype('float64')))");
  WHVI_CHECK(h.data_at <= bytes.size(), "'", path, "' ends inside its .npy header");
  const std::string dict = bytes.substr(8 + static_cast<size_t>(len_bytes), static_cast<size_t>(hlen));
  std::smatch m;
  static const std::regex descr(R"('descr'\s*:\s*'([<>|=])([fiu])([0-9]+)')");
  WHVI_CHECK(std::regex_search(dict, m, descr), "'", path, "' holds an array of a type whvi does not read (only "
             "real numbers and integers: float32/64, int8..64, uint8..64); convert it with .astype('float64')");
  h.big_endian = m[1] == ">";
  h.kind = m[2].str()[0];
  h.item = static_cast<size_t>(std::stoul(m[3].str().substr(0, 2)));
  const bool ok_size = h.kind == 'f' ? (h.item == 4 || h.item == 8) : (h.item == 1 || h.item == 2 || h.item == 4 || h.item == 8);
  WHVI_CHECK(ok_size, "'", path, "' holds ", m[2].str(), m[3].str(), " numbers, which whvi does not read; convert "
             "the array with .astype('float64')");
  static const std::regex fortran(R"('fortran_order'\s*:\s*(True|False))");
  WHVI_CHECK(std::regex_search(dict, m, fortran), "'", path, "' has a damaged .npy header (no fortran_order)");
  h.fortran = m[1] == "True";
  // a shape that is not sizes (negative, or beyond 12 digits) is a damaged header, not a wrong array
  static const std::regex any_shape(R"('shape'\s*:\s*\(([^)]*)\))");
  WHVI_CHECK(std::regex_search(dict, m, any_shape), "'", path, "' has a damaged .npy header (no shape); save it "
             "again with numpy.save");
  static const std::regex sizes(R"(\s*([0-9]{1,12}\s*,\s*)*([0-9]{1,12}\s*,?\s*)?)");
  WHVI_CHECK(std::regex_match(m[1].str(), sizes), "'", path, "' has a damaged .npy header: its shape holds ",
             "something other than sizes (a negative or implausibly large one); save the array again with numpy.save");
  static const std::regex shape(R"('shape'\s*:\s*\(\s*([0-9]{1,12})\s*,\s*([0-9]{1,12})\s*,?\s*\))");
  WHVI_CHECK(std::regex_search(dict, m, shape), "'", path, "' does not hold a 2-D array (rows x columns, the "
             "last column the target); reshape it, e.g. numpy.column_stack([X, y])");
  h.rows = std::stoll(m[1]);
  h.cols = std::stoll(m[2]);
  // the size first: a header whose shape the bytes cannot hold is damaged, whatever the shape says
  const double need = static_cast<double>(h.rows) * static_cast<double>(h.cols) * static_cast<double>(h.item);
  WHVI_CHECK(need == static_cast<double>(bytes.size() - h.data_at), "'", path, "' is ", bytes.size() - h.data_at,
             " bytes of numbers, but its header says ", h.rows, " x ", h.cols, " of ", h.item,
             " bytes: the file is truncated or damaged; save it again");
  WHVI_CHECK(h.cols >= 2 && h.cols <= 1000000, "'", path, "' has ", h.cols, " column(s); it needs the features "
             "and then the target in its last column (2 to 1,000,000 columns)");
  return h;
}

double number_at(const unsigned char* p, const NpyHeader& h) {
  unsigned char buf[8];
  for (size_t i = 0; i < h.item; ++i) buf[i] = h.big_endian ? p[h.item - 1 - i] : p[i];
  const uint64_t bits = le(buf, static_cast<int>(h.item));
  if (h.kind == 'f') {
    if (h.item == 8) {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    float f;
    const auto b32 = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b32, 4);
    return f;
  }
  if (h.kind == 'u') return static_cast<double>(bits);
  const int shift = 64 - 8 * static_cast<int>(h.item);  // sign-extend
  return static_cast<double>(static_cast<int64_t>(bits << shift) >> shift);
}

struct NpyOptions {
  std::string missing = "impute";
  template <class V>
  void visit(V& v) {
    v.use("data.missing", missing);
  }
};

RegressionData load_npy(const std::string& path, const NpyOptions& o) {
  const std::string bytes = read_data_file(path, "; check data.dataset (a path is relative to the working directory)");
  const NpyHeader h = parse_header(bytes, path);
  const auto* base = reinterpret_cast<const unsigned char*>(bytes.data()) + h.data_at;
  const int64_t feats = h.cols - 1;
  std::vector<double> x;
  std::vector<double> y;
  std::vector<int64_t> kept;
  std::vector<int64_t> missing(static_cast<size_t>(feats), 0);
  RegressionData d;
  std::vector<double> row(static_cast<size_t>(h.cols));
  for (int64_t i = 0; i < h.rows; ++i) {
    bool has_missing = false;
    for (int64_t j = 0; j < h.cols; ++j) {
      const int64_t at = h.fortran ? j * h.rows + i : i * h.cols + j;
      const double v = number_at(base + static_cast<size_t>(at) * h.item, h);
      WHVI_CHECK(std::isnan(v) || std::fabs(v) <= kMaxAbsValue, "'", path, "' row ", i, ", column ", j, " (0-based)",
                 ": a number too large (or infinite) to use; at most ", kMaxAbsValue, " in magnitude: rescale it");
      WHVI_CHECK(!std::isnan(v) || o.missing != "error", "'", path, "' row ", i, ", column ", j, " (0-based)",
                 ": a missing value (NaN); fill it in, or set data.missing: impute (the default) or drop");
      has_missing = has_missing || (std::isnan(v) && (j == feats || o.missing == "drop"));
      row[static_cast<size_t>(j)] = v;
    }
    if (has_missing) {  // drop, or impute with the target missing
      ++d.dropped_rows;
      continue;
    }
    for (int64_t j = 0; j < feats; ++j) {
      x.push_back(row[static_cast<size_t>(j)]);
      if (std::isnan(row[static_cast<size_t>(j)])) ++missing[static_cast<size_t>(j)];
    }
    y.push_back(row[static_cast<size_t>(feats)]);
    kept.push_back(i);
  }
  const auto n = static_cast<int64_t>(kept.size());
  WHVI_CHECK(n >= 2, "'", path, "' has ", n, " usable row(s)",
             d.dropped_rows ? " (" + std::to_string(d.dropped_rows) + " dropped for missing values)" : std::string(),
             "; training and testing need at least 2");
  int64_t indicators = 0;
  for (const auto m : missing) indicators += m > 0;
  d.x = torch::zeros({n, feats + indicators}, torch::kFloat64);
  auto xa = d.x.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < feats; ++j) xa[i][j] = x[static_cast<size_t>(i * feats + j)];
  d.y = torch::from_blob(y.data(), {n, 1}, torch::kFloat64).clone();
  for (int64_t j = 0; j < feats; ++j) {
    d.inputs.push_back({"x" + std::to_string(j + 1), {}, false});
    d.onehot.push_back(0);
  }
  int64_t c = feats;
  for (int64_t j = 0; j < feats; ++j) {
    if (missing[static_cast<size_t>(j)] == 0) continue;
    for (int64_t i = 0; i < n; ++i) xa[i][c] = std::isnan(xa[i][j]) ? 1.0 : 0.0;
    d.inputs.push_back({"x" + std::to_string(j + 1), {}, true});
    d.onehot.push_back(1);
    d.missing_cells += missing[static_cast<size_t>(j)];
    ++c;
  }
  d.name = std::filesystem::path(path).stem().string();
  d.source = path;
  d.target_name = "y";
  d.source_rows = kept;
  return d;
}

}  // namespace

DataSourceKind npy_data_source() {
  auto k = data_source<NpyOptions>(
      "npy", "a NumPy .npy file holding one 2-D array (the last column the target, the others the features x1..xD)",
      is_npy_path, [](const std::string&) { return false; },
      [](const NpyOptions& o, const DataRequest& r) {
        auto d = load_npy(r.dataset, o);
        if (r.classification) targets_to_classes(d);
        return d;
      });
  k.user_table = true;
  return k;
}

}  // namespace whvi::data
