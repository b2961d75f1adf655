// Regression data sets: the UCI benchmarks in the standard layout of
// Hernandez-Lobato & Adams (2015) / Gal & Ghahramani (2016), their train/test
// splits, per-split standardisation, and the WHVI paper's 1-D toy problem.
//
// All tensors are torch::kFloat64 on the CPU. Every problem with the user's
// data (missing folders or files, malformed numbers, bad indices) throws
// whvi::Error with a message naming the file, the line and the fix.
//
// On-disk layout of one UCI data set (a folder, e.g. <data_dir>/uci/yacht/):
//   data.txt               whitespace-separated numbers (tabs or spaces), one row per
//                          example; blank lines are skipped (some files end in "\n\n")
//   index_features.txt     0-based column numbers of the features, one per line
//   index_target.txt       0-based column number of the target (exactly one)
//   n_splits.txt           the number of stored splits
//   index_train_<k>.txt    0-based row numbers of split k's training rows, k < n_splits
//   index_test_<k>.txt     0-based row numbers of split k's test rows
// Numbers are parsed with strtod in the "C" locale (whvi never calls setlocale).
// Every value must be finite with |value| <= kMaxAbsValue (1e150). A data.txt
// (or index file) that is a directory, or a data dir that is a regular file,
// is reported as such.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace whvi::data {

// The data directory: `configured` (data.dir in a config) if non-empty, else
// $WHVI_DATA_DIR if set and non-empty, else "data" (relative to the cwd).
// UCI data sets live in <data_dir>/uci/<folder>/.
std::string resolve_data_dir(const std::string& configured);

// The short names accepted by load_uci, in a fixed order:
//   boston -> bostonHousing, concrete, energy, kin8nm, naval -> naval-propulsion-plant,
//   power -> power-plant, protein -> protein-tertiary-structure,
//   wine -> wine-quality-red, yacht.
std::vector<std::string> uci_aliases();
// The folder name for an alias; a string that is not an alias is returned unchanged.
std::string uci_folder(const std::string& alias_or_folder);

// One named input column of the user's CSV data and how it becomes x:
// numeric (no categories: one x column) or text (one-hot: one x column per
// category, in this order).
struct InputColumn {
  std::string name;
  std::vector<std::string> categories;
  // An added 0/1 column: 1 where column `name` has a missing cell (data.missing:
  // impute adds one after the inputs for every column with a missing cell).
  bool missing_indicator = false;
  // A column of numbers that data.categorical declared a category.
  bool declared = false;
};

struct RegressionData {
  std::string name;    // the alias or folder name asked for ("toy" for make_toy)
  std::string source;  // the folder it was read from ("generated" for make_toy)
  torch::Tensor x;     // [N, D] raw features
  torch::Tensor y;     // [N, 1] raw targets; for classification the class index 0..C-1 (as a double)
  // Classification: the number of classes C (0 = regression) and their names
  // in class-index order.
  int64_t num_classes = 0;
  std::vector<std::string> class_names;
  // false: inputs are used as stored (already on a common scale, e.g. pixels
  // in [0, 1]); per-column standardisation would blow up rarely-lit pixels.
  bool standardize_x = true;
  bool is_classification() const { return num_classes > 0; }
  // The stored standard splits, train and test row numbers in file order
  // (make_toy: one split, train = all rows, test empty).
  std::vector<std::vector<int64_t>> std_train, std_test;
  // CSV data (data/csv.h): the input columns in x's order, the target's name,
  // per x column whether it belongs to a one-hot text column, and the rows
  // dropped for missing values (data.missing: drop). Empty for other data.
  std::vector<InputColumn> inputs;
  std::string target_name;
  std::vector<char> onehot;
  int64_t dropped_rows = 0;
  // data.missing: impute: missing cells are NaN in x (a text column's whole
  // one-hot group), filled per split from its training rows (prepare_split);
  // rows whose target is missing are dropped (dropped_rows).
  int64_t missing_cells = 0;
  std::vector<int64_t> source_rows;  // each row's 0-based data row in the file (the header is not a row)
  // The best any model can do on fresh data, in original units, where the
  // source knows it (a synthetic regression problem; data/synthetic.h): the
  // record's noise_floor. Unset for real data and for class labels.
  struct NoiseFloor {
    double rmse = 0, mnll = 0, mnll_homoscedastic = 0;
  };
  std::optional<NoiseFloor> noise_floor;
};

// The largest |value| load_uci accepts in data.txt: the square of anything
// larger could overflow the standardisation statistics.
inline constexpr double kMaxAbsValue = 1e150;

// Loads a UCI data set. `dataset` is an alias (see uci_aliases), a folder name
// under <data_dir>/uci/, or a path to a folder in the layout above; the first
// two are looked up in <data_dir>/uci/ first, a path is used only when no such
// folder exists there. Reads and checks the stored splits too: every index must
// be a non-negative in-range row number, without duplicates in a file, and the
// train and test rows of a split must be disjoint (a split need not cover all rows).
RegressionData load_uci(const std::string& dataset, const std::string& data_dir);

struct SplitIndices {
  std::vector<int64_t> train, test;
};

// protocol "stratified" (classification only): n_splits random splits that
//   keep each class's share. Split k draws from std::mt19937_64(seed +
//   1000003*k): for each class in index order, its rows (in file order) are
//   shuffled and the first round(train_fraction * n_c) go to training, the
//   rest to test; then the training and the test rows are shuffled again.
// protocol "standard": the stored splits, the first n_splits of them
//   (n_splits <= 0: all of them; more than stored is an error naming the count).
// protocol "paper": n_splits (> 0) random splits. Split k is a permutation of
//   0..N-1 drawn from std::mt19937_64(seed + 1000003*k) (unsigned wrap-around)
//   by a Fisher-Yates shuffle with unbiased bounded draws written here (so
//   the splits are the same on every platform and standard library); its first
//   round(train_fraction*N) entries are the training rows, the rest the test
//   rows, both in permutation order. train_fraction must be in (0, 1].
// protocol "random": "stratified" for a classification data set, else "paper".
// protocol "kfold": make_folds(d, n_splits, seed).
std::vector<SplitIndices> make_splits(const RegressionData& d, const std::string& protocol,
                                      int n_splits, uint64_t seed, double train_fraction = 0.9);

// `folds` folds: the rows in an order drawn from std::mt19937_64(seed) (for
// classification then sorted by class, stably), row i of that order tested in
// fold i mod folds; every row is tested exactly once; fold k trains on the rest.
std::vector<SplitIndices> make_folds(const RegressionData& d, int folds, uint64_t seed);

// Per-column standardisation statistics, from training rows only.
// x_mean, x_std: [D]; y_mean, y_std: [1]. Population std (ddof 0). A constant
// column gets mean 0 and std 1, so it is left completely untouched (naval's
// feature columns 8 and 11). "Constant" is scale-free: max - min <= 4 ulps of
// max(|max|, |min|) (4 * DBL_EPSILON * that), so a column of tiny but distinct
// values (std 1e-19) is standardised like any other. Values must be finite
// and at most kMaxAbsValue in magnitude (load_uci refuses larger ones, naming
// the file, line and column); a mean or std that is not finite is an error.
struct Standardizer {
  torch::Tensor x_mean, x_std, y_mean, y_std;
};

// Computes the statistics of (x [N, D], y [N, 1]) as described above; N >= 1.
Standardizer fit_standardizer(const torch::Tensor& x, const torch::Tensor& y);

// Classification splits standardise x only: y keeps the class index (y_mean 0, y_std 1).
struct PreparedSplit {
  torch::Tensor x_train, y_train;  // standardised x [Ntr, D]; standardised y [Ntr, 1]
  torch::Tensor x_test, y_test;    // standardised x [Nte, D] (train stats); RAW y [Nte, 1]
  torch::Tensor y_train_raw;       // [Ntr, 1] original units
  Standardizer stats;              // from the training rows only
  int64_t unseen_category_rows = 0;  // test rows with a text category the training rows lack (zeroed)
  // Where x has missing cells (NaN): the raw value put in each x column's
  // missing cells, learned from the training rows (a numeric column's median,
  // a text column's most frequent category); undefined when nothing is missing.
  torch::Tensor x_fill;
};

// The values prepare_split fills missing cells with, from the training rows
// x_train [N, D] (raw, NaN where missing): per input column of d.inputs, the
// median of a numeric column's present cells (0 when none is), for a text
// column its most frequent category's one-hot (ties: the first in sorted order),
// 0 for an indicator column. For data without named inputs, the per-column
// median.
torch::Tensor missing_fill_values(const RegressionData& d, const torch::Tensor& x_train);

// Selects and standardises one split. The training set must not be empty; the
// test set may be (then x_test is [0, D] and y_test [0, 1]). Indices are checked.
PreparedSplit prepare_split(const RegressionData& d, const SplitIndices& s);

// ---- UCI classification (the WHVI paper's Table 13) -----------------------------
//
// Data sets in <data_dir>/uci-class/<name>/, as the UCI repository ships them:
//   eeg     EEG_Eye_State.arff        ARFF: 14 numeric attributes, class {0,1} last
//   magic   magic04.data              CSV, no header: 10 features, class g|h last
//   letter  letter-recognition.data   CSV, no header: class A..Z first, 16 features
// Blank lines, CR line ends and ARFF comments (%) are skipped. Classes are
// numbered in the order the ARFF header declares them, otherwise in sorted
// order of their labels. They have no stored splits: use data.protocol
// stratified (or paper).
std::vector<std::string> classification_aliases();
bool is_classification_dataset(const std::string& name);
RegressionData load_uci_class(const std::string& name, const std::string& data_dir);
// The parser behind it, for a file's text: `label_col` 0 = first column,
// -1 = last; `arff` skips the header up to @data and takes the class order
// from the last @attribute's {...} list. `what` names the file in errors.
// `known`: the data set's classes (MAGIC's g, h; LETTER's A-Z); a label outside them is an
// error naming the line and the label, never a new class. Empty: the ARFF header's classes, or
// (no header) the labels found.
RegressionData parse_class_table(const std::string& text, int label_col, bool arff, const std::string& what,
                                 const std::vector<std::string>& known = {});

// ---- MNIST in the IDX format (LeCun et al.) ---------------------------------------
//
// <data_dir>/<folder>/{train,t10k}-{images-idx3,labels-idx1}-ubyte, e.g. the
// repository's mnist-mini (2,000 training and 1,000 test images; folder
// "mnist-mini") or the full set (folder "mnist"). Pixels are scaled to [0, 1]
// and not standardised; 10 classes "0".."9". One stored split: the training
// file's images train, the test file's images test (data.protocol standard).
// Bad files (wrong magic number, a header count the file is too short for,
// image and label counts that differ, a label above 9) are errors naming the file.
//
// "fashion-mnist" (Xiao et al. 2017; 60,000 training and 10,000 test images, the
// same IDX layout) is read from <data_dir>/fashion-mnist/ or, when that folder
// lacks it, from Debian's dataset-fashion-mnist (kFashionMnistPackageDir). Every
// IDX file may be plain or gzip-compressed (name + ".gz", as Debian ships them).
// Its classes are named (fashion_mnist_classes: T-shirt/top, Trouser, ...).
bool is_mnist_dataset(const std::string& name);  // "mnist", "mnist-mini" or "fashion-mnist"
extern const char* const kFashionMnistPackageDir;  // /usr/share/datasets/fashion-mnist
const std::vector<std::string>& fashion_mnist_classes();
// A file's bytes, gunzipped when it starts with the gzip magic bytes (1f 8b).
std::string read_maybe_gzip(const std::string& path);
RegressionData load_mnist(const std::string& name, const std::string& data_dir);
// The parser behind it, for the bytes of one image file and one label file.
RegressionData parse_idx(const std::string& images, const std::string& labels, const std::string& what);

// ---- CIFAR-10 in the official binary format (Krizhevsky 2009) ------------------
//
// <data_dir>/<folder>/: the full set (folder "cifar10": data_batch_1.bin ..
// data_batch_5.bin and test_batch.bin) or the repository's subset (folder
// "cifar10-mini": train.bin, test.bin), each record one label byte (0..9) and
// 3,072 pixel bytes (the R, G, B planes of a 32 x 32 image, row-major);
// batches.meta.txt names the classes. x is [N, 3072] in that CHW order, scaled
// to [0, 1] and standardised per channel with the training images' mean and
// std (population), so x_std of the split stays 1; one stored split (train
// files / test file). Augmentation is not applied here. Errors name the file:
// a size that is not a multiple of 3,073 bytes, a label above 9, a missing file.
bool is_cifar_dataset(const std::string& name);  // "cifar10" or "cifar10-mini"
RegressionData load_cifar10(const std::string& name, const std::string& data_dir);
// Parses the bytes of one binary batch file into x [N, 3072] in [0, 1] and y [N, 1].
RegressionData parse_cifar_batch(const std::string& bytes, const std::string& what);

// ---- the toy problem of the WHVI paper (Rossi et al. 2020, section 3.1) -------
//
// The paper uses "a random function" on inputs with a gap; the function is not
// published, so whvi fixes
//   f(x) = sin(3x) + 0.3 cos(9x) + 0.5 x,
// inputs drawn from U[-1, 2] until n are kept, rejecting those in the gap
// [kToyGapLo, kToyGapHi] = [0.25, 0.85] (20% of the domain width 3), and
//   y = f(x) + eps,  eps ~ N(0, exp(-3))   (variance exp(-3), std exp(-1.5)).
// Random numbers: std::mt19937_64(seed) (fully specified by the C++ standard);
// uniforms in [0, 1) from the top 53 bits of each draw; normals by Box-Muller
// (z = sqrt(-2 log(1 - u1)) cos(2 pi u2), one normal per pair of uniforms), all
// written here, so the data do not depend on the standard library's
// distributions. Each point is drawn in turn: uniforms until one falls outside
// the gap (x), then two uniforms for its noise; points are not sorted, and the
// first n points of make_toy(seed, m) for m > n are make_toy(seed, n). The
// inputs are exact everywhere; the targets depend on the platform only through
// the last-ulp rounding of libm's sin/cos/log/sqrt.
// The result has one stored split: train = all n rows, test = no rows.
inline constexpr double kToyLo = -1.0, kToyHi = 2.0;
inline constexpr double kToyGapLo = 0.25, kToyGapHi = 0.85;
double toy_function(double x);  // f above
double toy_noise_variance();    // exp(-3)
RegressionData make_toy(uint64_t seed, int n = 128);

// n points evenly spaced over [lo, hi] (both included), as [n, 1]; n == 1 gives [lo].
torch::Tensor grid_1d(double lo, double hi, int n);

}  // namespace whvi::data
