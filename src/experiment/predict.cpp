// whvi predict: a trained split's model on new rows (experiment.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "calibration/calibration.h"
#include "common/errors.h"
#include "common/io.h"
#include "likelihoods/likelihood.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "data/csv.h"
#include "experiment/checkpoint.h"
#include "experiment/encoding.h"
#include "experiment/experiment.h"
#include "experiment/predict_output.h"
#include "infer/inference.h"
#include "train/loop.h"

namespace whvi::experiment {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

namespace {
using nlohmann::json;
using namespace predict_output;

struct Column {
  std::string name;
  std::vector<std::string> categories;  // empty: numeric
  size_t input_index = 0;               // its position in the input file's header
  bool missing_indicator = false;       // 1 where column `name` is missing
  bool declared = false;                // data.categorical: its numbers are categories by value
};

// The model's input columns found in the input file's header; `width` gets
// the number of inputs they make (one-hot columns count their categories).
std::vector<Column> match_columns(const json& enc, const data::CsvReader& in, const std::string& input,
                                  int64_t& width) {
  std::vector<Column> cols;
  width = 0;
  for (const auto& c : enc["columns"]) {
    Column col{c["name"].get<std::string>(), c["categories"].get<std::vector<std::string>>(), 0,
               c.value("missing_indicator", false), c.value("declared", false)};
    const auto& h = in.header();
    const auto it = std::find(h.begin(), h.end(), col.name);
    if (it == h.end()) {
      std::string all;
      for (const auto& x : enc["columns"]) all += (all.empty() ? "" : ", ") + x["name"].get<std::string>();
      if (all.size() > 300) all = all.substr(0, 300) + "...";
      throw Error("the input file '" + input + "' has no column '" + col.name.substr(0, 60) +
                  "'; the model reads the columns: " + all + " (other columns, such as the target, are ignored)");
    }
    col.input_index = static_cast<size_t>(it - h.begin());
    width += col.categories.empty() || col.missing_indicator ? 1 : static_cast<int64_t>(col.categories.size());
    cols.push_back(std::move(col));
  }
  return cols;
}

// One input row encoded as the model's inputs (x, zeroed, of the width the
// columns make; a missing cell NaN, filled later as in training); true when a
// text cell holds a category training never saw. `missing` counts the row's
// missing cells.
bool encode_row(const std::vector<std::string>& fields, const std::vector<Column>& cols, std::vector<double>& x,
                const std::string& input, int64_t row, int64_t& missing) {
  size_t c0 = 0;
  bool row_unseen = false;
  for (const auto& col : cols) {
    const std::string& cell = fields[col.input_index];
    const bool absent = data::is_missing_cell(cell);
    if (col.missing_indicator) {
      x[c0++] = absent ? 1.0 : 0.0;
      continue;
    }
    const size_t w = std::max<size_t>(col.categories.size(), 1);
    if (absent) {
      for (size_t k = 0; k < w; ++k) x[c0 + k] = std::nan("");
      c0 += w;
      ++missing;
      continue;
    }
    if (col.categories.empty()) {
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      WHVI_CHECK(end == cell.c_str() + cell.size() && std::isfinite(v), "'", input, "' row ", row, ", column '",
                 col.name.substr(0, 60), "': not a number (text) or not finite; the model was trained on numbers there");
      x[c0++] = v;
      continue;
    }
    const std::string key = data::category_key(cell, col.declared);
    const auto it = std::lower_bound(col.categories.begin(), col.categories.end(), key);
    if (it != col.categories.end() && *it == key) x[c0 + static_cast<size_t>(it - col.categories.begin())] = 1;
    else row_unseen = true;
    c0 += col.categories.size();
  }
  return row_unseen;
}

// The model's S samples for each row of xs, each row predicted alone from the
// same generator state: a row's prediction depends only on the checkpoint, the
// row, S and the seed, never on the rows around it (every row sees the same
// draws, as if S weight samples were drawn once and applied to all rows).
// With several threads and a method whose predict() changes no state
// (Inference::predicts_concurrently), the rows are shared among the threads,
// each row computed whole on one of them with single-threaded operations (as
// on one thread): the same numbers for every thread count.
// A closed form's exact predictive (the GP, Bayesian linear regression) draws
// nothing and does not depend on S (S would be identical copies of it, so one
// is computed), and a method whose draws are of the weights only
// (Inference::draws_weights_only: NNG's particles) gives every row of a call
// the same draws; so rows need not be predicted one at a time: they go in blocks of
// exactly kRowBlock rows, each from the same generator state, the last one
// padded with zero rows, so every block is the same shape and a row meets the
// same draws and the same arithmetic wherever it sits (BLAS kernels tile a
// fixed shape the same way); the blocks are shared among the threads as rows
// are below.
constexpr int64_t kRowBlock = 256;
torch::Tensor predict_blocks(infer::Inference& inf, const torch::Tensor& xs, int64_t S, uint64_t seed,
                             uint64_t split) {
  const int64_t n = xs.size(0), nb = (n + kRowBlock - 1) / kRowBlock;
  // the exact predictive is the same for any S: one copy of it, not S identical ones
  const int64_t draws = inf.closed_form() != nullptr ? 1 : S;
  const auto block = [&](int64_t b) {
    torch::NoGradGuard ng;
    const int64_t i = b * kRowBlock, m = std::min(kRowBlock, n - i);
    auto x = xs.narrow(0, i, m);
    if (m < kRowBlock) x = torch::cat({x, torch::zeros({kRowBlock - m, xs.size(1)}, xs.options())});
    return inf.predict(x, draws, make_generator(seed, split, Stream::kEval)).narrow(1, 0, m);
  };
  const auto first = block(0);
  auto sizes = first.sizes().vec();
  sizes[1] = n;
  auto out = torch::empty(sizes, first.options());
  out.narrow(1, 0, first.size(1)).copy_(first);
  const auto put = [&](int64_t b) {
    const auto p = block(b);
    out.narrow(1, b * kRowBlock, p.size(1)).copy_(p);
  };
  if (inf.predicts_concurrently() && threads() > 1 && nb > 1)
    at::parallel_for(1, nb, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) put(b);
    });
  else
    for (int64_t b = 1; b < nb; ++b) put(b);
  return out;
}
torch::Tensor predict_rows(infer::Inference& inf, const torch::Tensor& xs, int64_t S, uint64_t seed,
                           uint64_t split) {
  const int64_t n = xs.size(0);
  if ((inf.closed_form() != nullptr || inf.draws_weights_only()) && n > 0) return predict_blocks(inf, xs, S, seed, split);
  const auto row = [&](int64_t i) {
    torch::NoGradGuard ng;
    return inf.predict(xs.narrow(0, i, 1), S, make_generator(seed, split, Stream::kEval));
  };
  const auto first = row(0);
  auto sizes = first.sizes().vec();
  sizes[1] = n;  // [S, n, ...]: rows are the second dimension
  auto out = torch::empty(sizes, first.options());
  out.narrow(1, 0, 1).copy_(first);
  if (inf.predicts_concurrently() && threads() > 1 && n > 1) {
    at::parallel_for(1, n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out.narrow(1, i, 1).copy_(row(i));
    });
  } else {
    for (int64_t i = 1; i < n; ++i) out.narrow(1, i, 1).copy_(row(i));
  }
  return out;
}

// Inputs so far outside the training data that the network's arithmetic
// overflows are refused, naming the row and column, before any prediction.
// 1e6 training standard deviations is far beyond any extrapolation worth a
// number, and far below where float32 activations overflow.
void check_inputs_in_range(const torch::Tensor& xs, const std::vector<Column>& cols,
                           const std::vector<int64_t>& file_rows, const std::string& input) {
  constexpr double kMaxSd = 1e6;
  const auto bad = (xs.abs() > kMaxSd).logical_or(xs.isnan()).nonzero();
  if (bad.size(0) == 0) return;
  const int64_t i = bad[0][0].item<int64_t>(), j = bad[0][1].item<int64_t>();
  std::string name;
  int64_t c0 = 0;
  for (const auto& c : cols) {
    const int64_t w = c.categories.empty() ? 1 : static_cast<int64_t>(c.categories.size());
    if (j < c0 + w) {
      name = c.name;
      break;
    }
    c0 += w;
  }
  throw Error("'" + input + "' row " + std::to_string(file_rows[static_cast<size_t>(i)]) + ", column '" + name.substr(0, 60) +
              "': the value is more than 1e6 training standard deviations from the training mean, too far outside "
              "the data the model was trained on to predict; check the row (units, a typo)");
}

// Rows with a numeric input more than 10 training standard deviations from
// the training mean: their predictions extrapolate far beyond the data, said
// once per run with the first such row (one-hot columns are left out: a rare
// category's 1 lies many standard deviations from its column's mean).
void warn_far_inputs(const torch::Tensor& xs, const std::vector<Column>& cols, const std::vector<int64_t>& file_rows,
                     const std::string& input, bool& said) {
  if (said) return;
  int64_t c0 = 0;
  for (const auto& c : cols) {
    const int64_t w = c.categories.empty() ? 1 : static_cast<int64_t>(c.categories.size());
    if (c.categories.empty() && c0 < xs.size(1)) {
      const auto far = (xs.select(1, c0).abs() > 10).nonzero();
      if (far.size(0) > 0) {
        spdlog::warn("predict: '{}' row {}, column '{}' lies more than 10 training standard deviations from the "
                     "training mean: its prediction extrapolates far outside the data the model was trained on "
                     "(said once)", input, file_rows[static_cast<size_t>(far[0][0].item<int64_t>())], c.name.substr(0, 60));
        said = true;
        return;
      }
    }
    c0 += w;
  }
}

// What predict is asked, before anything is read: an interval in (0, 1), a CSV input.
void check_predict_options(const PredictOptions& o) {
  WHVI_CHECK(o.interval > 0 && o.interval < 1, "--interval ", o.interval, " is not in (0, 1) (e.g. --interval 0.95)");
  WHVI_CHECK(o.input.size() < 4 || o.input.compare(o.input.size() - 4, 4, ".npy") != 0, "--input '", o.input,
             "' is a .npy array; whvi predict reads a CSV file with the training columns' names in its header "
             "line (write the array as CSV, e.g. numpy.savetxt(f, x, delimiter=',', header='x1,x2', comments=''))");
}

// A long prediction says how long first: a pilot of S/200 samples of the
// first row, predicted and written as every row will be (the output is not used).
void announce_predict(infer::Inference& inf, const torch::Tensor& xs, int64_t S, uint64_t seed, uint64_t split,
                      const std::function<std::string(const torch::Tensor&)>& lines) {
  if (S < 20000) return;
  const int64_t pilot = S / 200;
  const auto t0 = std::chrono::steady_clock::now();
  (void)lines(predict_rows(inf, xs.narrow(0, 0, 1), pilot, seed, split));
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 200;
  spdlog::info("predict: {} Monte Carlo samples a row: about {} per row (timed on {} samples; --mc-samples lowers it)",
               S, train::duration_text(t), pilot);
}

// The places of the --keep columns in the input's header.
std::vector<size_t> kept_columns(const PredictOptions& o, const data::CsvReader& in) {
  std::vector<size_t> at;
  for (const auto& k : o.keep) {
    const auto& h = in.header();
    const auto it = std::find(h.begin(), h.end(), k);
    WHVI_CHECK(it != h.end(), "--keep: the input file '", o.input, "' has no column '", k.substr(0, 60),
               "'; name columns of its header line, e.g. --keep id");
    at.push_back(static_cast<size_t>(it - h.begin()));
  }
  return at;
}

}  // namespace

json run_predict(const PredictOptions& o) {
  if (o.out != "-") check_output_path(o.out, "--out");
  auto loaded = load_checkpoint(o.checkpoint);
  std::unique_ptr<AtomicFile> out;  // created at the first line, once the input's columns have matched
  auto r = predict_with(loaded, o, [&](const std::string& piece) {
    if (!out) out = std::make_unique<AtomicFile>(o.out);
    out->write(piece);
  });
  out->commit();
  return r;
}

json predict_with(LoadedCheckpoint& loaded, const PredictOptions& o,
                  const std::function<void(const std::string&)>& write) {
  check_predict_options(o);
  const auto& meta = loaded.meta;
  auto& inf = loaded.inf;
  WHVI_CHECK(!meta.inputs_json.empty(), "'", o.checkpoint, "' was written by an older whvi and does not store its "
             "input columns and standardisation; retrain that split with this version to use whvi predict");
  const json enc = json::parse(meta.inputs_json);
  WHVI_CHECK(!enc.value("pixels", false), "'", o.checkpoint, "' holds a model of images (",
             enc.value("dataset", std::string()), "); whvi predict reads rows of named columns (CSV) only");
  const auto& classes = enc["classes"];
  const bool classify = meta.num_classes > 0;

  data::CsvReader in(o.input);
  int64_t width = 0;
  const auto cols = match_columns(enc, in, o.input, width);
  WHVI_CHECK(width == meta.d_in && meta.x_mean.numel() == width &&
                 (!meta.x_fill.defined() || meta.x_fill.numel() == width),
             "'", o.checkpoint, "' is damaged: its input columns make ", width, " inputs, its model reads ", meta.d_in);

  const auto keep_at = kept_columns(o, in);
  const auto cal = stored_calibration(meta, o.checkpoint);
  log_predictive(loaded.inf->likelihood(), cal);
  write(output_header(o, classify, classes, cal));

  const int64_t S = o.mc_samples > 0 ? o.mc_samples : loaded.plan.mc_samples;
  const auto seed = static_cast<uint64_t>(loaded.plan.seed);
  const double noise_var = classify ? 0.0 : inf->likelihood().noise_var_original();
  const auto unseen_col = never_set_inputs(enc["columns"], meta.x_mean);
  int64_t rows = 0, unseen = 0, missing = 0;
  const auto fill = input_fill(enc["columns"], meta);
  std::vector<std::string> fields;
  // memory and time grow with rows x samples: blocks of at most 2^22 row-samples (65,536 rows at 64 samples; a row at a time from 2^22)
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(o.chunk_rows, static_cast<int64_t>(static_cast<double>(1 << 22) / static_cast<double>(S))));
  bool more = true, said_far = false;
  while (more) {
    std::vector<std::vector<double>> chunk;
    std::vector<int64_t> file_rows;
    std::vector<std::string> prefix;  // each row's number and kept cells
    while (static_cast<int64_t>(chunk.size()) < block && (more = in.next(fields))) {
      std::vector<double> x(static_cast<size_t>(width), 0.0);
      const bool row_unseen = encode_row(fields, cols, x, o.input, in.row(), missing);
      unseen += row_unseen;
      chunk.push_back(std::move(x));
      file_rows.push_back(in.row());
      std::string p = std::to_string(rows + static_cast<int64_t>(chunk.size())) + ",";
      for (const size_t j : keep_at) p += csv_field(fields[j]) + ",";
      prefix.push_back(std::move(p));
    }
    if (chunk.empty()) break;
    const auto n = static_cast<int64_t>(chunk.size());
    auto x = torch::empty({n, width}, torch::kFloat64);
    auto xa = x.accessor<double, 2>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < width; ++j) xa[i][j] = chunk[static_cast<size_t>(i)][static_cast<size_t>(j)];
    x = torch::where(x.isnan(), fill.unsqueeze(0).expand_as(x), x);
    x.index_put_({torch::indexing::Slice(), unseen_col}, 0.0);
    const auto xs = (x - meta.x_mean) / meta.x_std;
    check_inputs_in_range(xs, cols, file_rows, o.input);
    warn_far_inputs(xs, cols, file_rows, o.input, said_far);
    const RowNamer where{o.input, file_rows};
    const auto lines = [&](const torch::Tensor& f) {
      return classify ? classification_lines(f, classes, cal, where)
                      : regression_lines(f, inf->likelihood(), noise_var, o.interval, cal, loaded.plan.log_target, where);
    };
    if (rows == 0) announce_predict(*inf, xs, S, seed, static_cast<uint64_t>(meta.split), lines);
    const std::string text = lines(predict_rows(*inf, xs, S, seed, static_cast<uint64_t>(meta.split)));
    write(with_prefixes(text, prefix));
    rows += n;
    if (rows >= o.chunk_rows) spdlog::info("predict: {} rows done", rows);
  }
  WHVI_CHECK(rows > 0, "'", o.input, "' has a header but no rows to predict");
  if (missing > 0)
    spdlog::info("predict: {} missing cell(s) filled as in training ({})", missing,
                 meta.x_fill.defined() ? "the training split's median / most frequent category"
                                       : "the training split's mean / most frequent category: it had no missing cells");
  if (unseen > 0)
    spdlog::warn("predict: {} of {} rows hold a text category the model never saw in training (encoded as zeros)",
                 unseen, rows);
  return {{"rows", rows}, {"unseen_category_rows", unseen}, {"mc_samples", S}, {"checkpoint", o.checkpoint}};
}

}  // namespace whvi::experiment
