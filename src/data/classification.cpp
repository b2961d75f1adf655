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

#include "data/source.h"
#include "common/errors.h"
#include "common/io.h"

#include <zlib.h>
#include "data/dataset.h"

namespace fs = std::filesystem;

namespace whvi::data {
namespace {

struct ClassSet {
  const char* alias;
  const char* file;
  int label_col;  // 0 = first, -1 = last
  bool arff;
  const char* classes;  // the data set's known classes, comma-separated ("": the ARFF header's)
};
constexpr ClassSet kClassSets[] = {
    {"eeg", "EEG_Eye_State.arff", -1, true, ""},
    {"magic", "magic04.data", -1, false, "g,h"},
    {"letter", "letter-recognition.data", 0, false, "A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,Q,R,S,T,U,V,W,X,Y,Z"},
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

namespace {
// One data row's features: every cell but the label's, each a finite number.
std::vector<double> parse_features(const std::vector<std::string_view>& cells, size_t lc, const std::string& what,
                                   int64_t line) {
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
  return feats;
}

// The parsed rows as a data set: the classes are the declared ones (ARFF, or
// the data set's known classes), else the labels seen, sorted; each must have rows.
RegressionData class_data(const std::vector<std::vector<double>>& rows, const std::vector<std::string>& labels,
                          const std::vector<int64_t>& label_lines, const std::vector<std::string>& declared,
                          int64_t dim, const std::string& what) {
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
  const int64_t n = static_cast<int64_t>(rows.size());
  d.x = torch::empty({n, dim}, torch::kFloat64);
  d.y = torch::empty({n, 1}, torch::kFloat64);
  auto xa = d.x.accessor<double, 2>();
  auto ya = d.y.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < dim; ++j) xa[i][j] = rows[i][j];
    auto it = index.find(labels[i]);
    if (it == index.end()) {
      std::string all;
      for (size_t c = 0; c < names.size() && c < 30; ++c) all += (c ? ", " : "") + names[c];
      throw Error(what + " line " + std::to_string(label_lines[i]) + ": label '" + labels[i].substr(0, 40) +
                  "' is not one of the data set's " + std::to_string(names.size()) + " classes (" + all +
                  "): fix or drop that row");
    }
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
}  // namespace

RegressionData parse_class_table(const std::string& text, int label_col, bool arff, const std::string& what,
                                 const std::vector<std::string>& known) {
  std::vector<std::string> declared = known;  // ARFF class order, or the data set's known classes
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
    auto feats = parse_features(cells, lc, what, line);
    WHVI_CHECK(!cells[lc].empty(), what, " line ", line, ": the class label (column ", lc + 1, ") is empty");
    rows.push_back(std::move(feats));
    labels.emplace_back(cells[lc]);
    label_lines.push_back(line);
  }
  WHVI_CHECK(arff ? in_data : true, what, ": no @data line, so the file holds no rows (is it an ARFF file?)");
  WHVI_CHECK(!rows.empty(), what, ": no data rows");
  return class_data(rows, labels, label_lines, declared, width - 1, what);
}

RegressionData load_uci_class(const std::string& name, const std::string& data_dir) {
  const ClassSet* set = nullptr;
  for (const auto& c : kClassSets)
    if (name == c.alias) set = &c;
  WHVI_CHECK(set != nullptr, "'", name, "' is not a classification data set; known: eeg, magic, letter");
  const fs::path path = fs::path(data_dir) / "uci-class" / set->alias / set->file;
  const std::string text = read_data_file(
      path.string(), ". Point data.dir or WHVI_DATA_DIR at the folder that holds uci-class/" + std::string(set->alias) +
                         "/, or run scripts/data/fetch.sh to download it into data/uci-class/");
  std::vector<std::string> known;
  for (std::string_view c : split_commas(set->classes))
    if (!c.empty()) known.emplace_back(c);
  auto d = parse_class_table(text, set->label_col, set->arff, "'" + path.string() + "'", known);
  d.name = name;
  d.source = path.parent_path().string();
  return d;
}

namespace {

uint32_t be32(const std::string& b, size_t off) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(b[off])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[off + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[off + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[off + 3]));
}

std::string read_bytes(const fs::path& p) {
  return read_data_file(p.string(), ". Point data.dir or WHVI_DATA_DIR at the folder that holds it (MNIST's IDX "
                        "files: train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
                        "t10k-labels-idx1-ubyte)");
}

}  // namespace

namespace {
// The one stored split of a data set shipped as a training and a test file:
// rows [0, ntr) train, [ntr, ntr + nte) test.
void add_fixed_split(RegressionData& d, int64_t ntr, int64_t nte) {
  std::vector<int64_t> a(static_cast<size_t>(ntr)), b(static_cast<size_t>(nte));
  for (int64_t i = 0; i < ntr; ++i) a[i] = i;
  for (int64_t i = 0; i < nte; ++i) b[i] = ntr + i;
  d.std_train.push_back(std::move(a));
  d.std_test.push_back(std::move(b));
}
}  // namespace

bool is_mnist_dataset(const std::string& name) {
  return name == "mnist" || name == "mnist-mini" || name == "fashion-mnist";
}

const char* const kFashionMnistPackageDir = "/usr/share/datasets/fashion-mnist";

const std::vector<std::string>& fashion_mnist_classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

std::string read_maybe_gzip(const std::string& path) {
  const std::string bytes = read_data_file(path, "");
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f || static_cast<unsigned char>(bytes[1]) != 0x8b)
    return bytes;
  std::string out;
  z_stream z{};
  WHVI_CHECK(inflateInit2(&z, 15 + 32) == Z_OK, "cannot decompress '", path, "': out of memory");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      throw Error("'" + path + "' is not a valid gzip file (damaged or truncated): download or reinstall it");
    }
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      throw Error("'" + path + "' is truncated: its gzip stream ends early");
    }
  }
  inflateEnd(&z);
  return out;
}

RegressionData parse_idx(const std::string& im, const std::string& lb, const std::string& what) {
  WHVI_CHECK(im.size() >= 16 && be32(im, 0) == 0x00000803, what, ": the image file does not start with the IDX "
             "magic number 0x00000803 (unsigned bytes, 3 dimensions); is it gzip-compressed? (gunzip it)");
  WHVI_CHECK(lb.size() >= 8 && be32(lb, 0) == 0x00000801, what, ": the label file does not start with the IDX "
             "magic number 0x00000801 (unsigned bytes, 1 dimension); is it gzip-compressed? (gunzip it)");
  const uint64_t n = be32(im, 4), rows = be32(im, 8), cols = be32(im, 12), nl = be32(lb, 4);
  WHVI_CHECK(n == nl, what, ": ", n, " images but ", nl, " labels");
  WHVI_CHECK(n >= 1 && rows >= 1 && cols >= 1 && rows * cols <= (1u << 20), what, ": a header of ", n, " images of ",
             rows, " x ", cols, " pixels is not usable");
  WHVI_CHECK(im.size() == 16 + n * rows * cols, what, ": the image file has ", im.size(), " bytes, its header (", n,
             " images of ", rows, " x ", cols, ") needs ", 16 + n * rows * cols, "; the file is truncated or padded");
  WHVI_CHECK(lb.size() == 8 + n, what, ": the label file has ", lb.size(), " bytes, its header (", n,
             " labels) needs ", 8 + n);
  RegressionData d;
  const auto N = static_cast<int64_t>(n), P = static_cast<int64_t>(rows * cols);
  d.x = torch::from_blob(const_cast<char*>(im.data() + 16), {N, P}, torch::kUInt8).to(torch::kFloat64) / 255.0;
  d.y = torch::empty({N, 1}, torch::kFloat64);
  for (int64_t i = 0; i < N; ++i) {
    const int c = static_cast<unsigned char>(lb[8 + static_cast<size_t>(i)]);
    WHVI_CHECK(c <= 9, what, ": label ", i, " is ", c, "; MNIST labels are 0..9");
    d.y[i][0] = static_cast<double>(c);
  }
  d.num_classes = 10;
  for (int c = 0; c < 10; ++c) d.class_names.push_back(std::to_string(c));
  d.standardize_x = false;
  return d;
}

RegressionData load_mnist(const std::string& name, const std::string& data_dir) {
  fs::path dir = fs::path(data_dir) / name;
  // each IDX file plain or gzip-compressed (.gz), as the Fashion-MNIST package ships them
  auto file = [&](const fs::path& d, const std::string& stem) -> std::string {
    std::error_code ec;
    for (const std::string& f : {stem, stem + ".gz"})
      if (fs::exists(d / f, ec)) return (d / f).string();
    return {};
  };
  if (name == "fashion-mnist" && file(dir, "train-images-idx3-ubyte").empty() &&
      !file(kFashionMnistPackageDir, "train-images-idx3-ubyte").empty())
    dir = kFashionMnistPackageDir;  // Debian's dataset-fashion-mnist
  auto bytes = [&](const std::string& stem) {
    const std::string f = file(dir, stem);
    WHVI_CHECK(!f.empty(), "'", (dir / stem).string(), "' (or .gz) not found. Point data.dir or WHVI_DATA_DIR at "
               "the folder that holds ", name, "/", name == "fashion-mnist" ? std::string(", or install Debian's "
               "dataset-fashion-mnist (scripts/setup.sh does)") : std::string(" (MNIST's IDX files)"));
    return read_maybe_gzip(f);
  };
  auto tr = parse_idx(bytes("train-images-idx3-ubyte"), bytes("train-labels-idx1-ubyte"),
                      "'" + (dir / "train-*-ubyte").string() + "'");
  auto te = parse_idx(bytes("t10k-images-idx3-ubyte"), bytes("t10k-labels-idx1-ubyte"),
                      "'" + (dir / "t10k-*-ubyte").string() + "'");
  WHVI_CHECK(tr.x.size(1) == te.x.size(1), "'", dir.string(), "': training images have ", tr.x.size(1),
             " pixels, test images ", te.x.size(1));
  RegressionData d;
  d.name = name;
  d.source = dir.string();
  const int64_t ntr = tr.x.size(0), nte = te.x.size(0);
  d.x = torch::cat({tr.x, te.x});
  d.y = torch::cat({tr.y, te.y});
  d.num_classes = 10;
  d.class_names = name == "fashion-mnist" ? fashion_mnist_classes() : tr.class_names;
  d.standardize_x = false;
  add_fixed_split(d, ntr, nte);
  return d;
}

bool is_cifar_dataset(const std::string& name) { return name == "cifar10" || name == "cifar10-mini"; }

RegressionData parse_cifar_batch(const std::string& b, const std::string& what) {
  constexpr size_t kRecord = 1 + 3 * 32 * 32;
  WHVI_CHECK(!b.empty() && b.size() % kRecord == 0, what, ": ", b.size(), " bytes is not a whole number of CIFAR-10 "
             "records (3,073 bytes each: a label byte and 3,072 pixel bytes); is it the binary version "
             "(cifar-10-binary.tar.gz), not the python or Matlab one, and complete?");
  const auto n = static_cast<int64_t>(b.size() / kRecord);
  auto raw = torch::from_blob(const_cast<char*>(b.data()), {n, static_cast<int64_t>(kRecord)}, torch::kUInt8);
  RegressionData d;
  d.x = raw.narrow(1, 1, kRecord - 1).to(torch::kFloat64) / 255.0;
  const auto labels = raw.select(1, 0).to(torch::kInt64);
  const int64_t bad = labels.gt(9).nonzero().numel() ? labels.gt(9).nonzero()[0][0].item<int64_t>() : -1;
  WHVI_CHECK(bad < 0, what, ": record ", bad, " has label ", bad < 0 ? 0 : labels[bad].item<int64_t>(),
             "; CIFAR-10 labels are 0..9 (a CIFAR-100 file has two label bytes per record)");
  d.y = labels.to(torch::kFloat64).unsqueeze(1);
  d.num_classes = 10;
  return d;
}

RegressionData load_cifar10(const std::string& name, const std::string& data_dir) {
  const fs::path dir = fs::path(data_dir) / name;
  std::vector<fs::path> train_files;
  fs::path test_file;
  if (name == "cifar10-mini") {
    train_files = {dir / "train.bin"};
    test_file = dir / "test.bin";
  } else {
    for (int i = 1; i <= 5; ++i) train_files.push_back(dir / ("data_batch_" + std::to_string(i) + ".bin"));
    test_file = dir / "test_batch.bin";
  }
  std::vector<torch::Tensor> xs, ys;
  for (const auto& f : train_files) {
    auto part = parse_cifar_batch(read_bytes(f), "'" + f.string() + "'");
    xs.push_back(part.x), ys.push_back(part.y);
  }
  auto te = parse_cifar_batch(read_bytes(test_file), "'" + test_file.string() + "'");
  RegressionData d;
  d.name = name;
  d.source = dir.string();
  auto xtr = torch::cat(xs);
  const int64_t ntr = xtr.size(0), nte = te.x.size(0);
  // per-channel statistics of the training images only
  const auto ch = xtr.view({ntr, 3, 1024});
  const std::vector<int64_t> dims = {0, 2};
  const auto mean = ch.mean(dims, true);
  const auto sd = (ch - mean).square().mean(dims, true).sqrt();
  auto norm = [&](const torch::Tensor& x) { return ((x.view({x.size(0), 3, 1024}) - mean) / sd).view({x.size(0), 3072}); };
  d.x = torch::cat(std::vector<torch::Tensor>{norm(xtr), norm(te.x)});
  d.y = torch::cat(std::vector<torch::Tensor>{torch::cat(ys), te.y});
  d.num_classes = 10;
  d.standardize_x = false;
  // class names from batches.meta.txt when present (one per line)
  std::error_code ec;
  if (fs::is_regular_file(dir / "batches.meta.txt", ec)) {
    std::istringstream in(read_bytes(dir / "batches.meta.txt"));
    for (std::string line; std::getline(in, line);)
      if (!trim(line).empty()) d.class_names.emplace_back(trim(line));
    WHVI_CHECK(d.class_names.size() == 10, "'", (dir / "batches.meta.txt").string(), "' names ",
               d.class_names.size(), " classes; CIFAR-10 has 10 (one per line)");
  } else {
    for (int c = 0; c < 10; ++c) d.class_names.push_back(std::to_string(c));
  }
  add_fixed_split(d, ntr, nte);
  return d;
}

namespace {
bool always(const std::string&) { return true; }
}  // namespace

DataSourceKind uci_classification_data_source() {
  return data_source<NoDataOptions>(
      "uci-classification", "a UCI classification benchmark (eeg, magic, letter; needs likelihood.kind softmax)",
      [](const std::string& ds) { return is_classification_dataset(ds); }, always,
      [](const NoDataOptions&, const DataRequest& r) { return load_uci_class(r.dataset, r.data_dir); });
}

DataSourceKind mnist_data_source() {
  return data_source<NoDataOptions>(
      "mnist", "MNIST (mnist-mini, mnist) or Fashion-MNIST (fashion-mnist; Debian's dataset-fashion-mnist is "
      "found by itself)",
      [](const std::string& ds) { return is_mnist_dataset(ds); }, always,
      [](const NoDataOptions&, const DataRequest& r) { return load_mnist(r.dataset, r.data_dir); });
}

DataSourceKind cifar_data_source() {
  return data_source<NoDataOptions>(
      "cifar", "CIFAR-10 (cifar10-mini, cifar10)", [](const std::string& ds) { return is_cifar_dataset(ds); },
      always, [](const NoDataOptions&, const DataRequest& r) { return load_cifar10(r.dataset, r.data_dir); });
}

}  // namespace whvi::data
