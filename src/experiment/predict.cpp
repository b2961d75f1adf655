// whvi predict: a trained split's model on new rows (experiment.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "common/errors.h"
#include "common/io.h"
#include "likelihoods/likelihood.h"
#include "common/rng.h"
#include "data/csv.h"
#include "experiment/checkpoint.h"
#include "experiment/experiment.h"

namespace whvi::experiment {
namespace {
using nlohmann::json;

struct Column {
  std::string name;
  std::vector<std::string> categories;  // empty: numeric
  size_t input_index = 0;               // its position in the input file's header
};

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// The model's input columns found in the input file's header; `width` gets
// the number of inputs they make (one-hot columns count their categories).
std::vector<Column> match_columns(const json& enc, const data::CsvReader& in, const std::string& input,
                                  int64_t& width) {
  std::vector<Column> cols;
  width = 0;
  for (const auto& c : enc["columns"]) {
    Column col{c["name"].get<std::string>(), c["categories"].get<std::vector<std::string>>(), 0};
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
    width += col.categories.empty() ? 1 : static_cast<int64_t>(col.categories.size());
    cols.push_back(std::move(col));
  }
  return cols;
}

// One input row encoded as the model's inputs (x, zeroed, of the width the
// columns make); true when a text cell holds a category training never saw.
bool encode_row(const std::vector<std::string>& fields, const std::vector<Column>& cols, std::vector<double>& x,
                const std::string& input, int64_t row) {
  size_t c0 = 0;
  bool row_unseen = false;
  for (const auto& col : cols) {
    const std::string& cell = fields[col.input_index];
    if (col.categories.empty()) {
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      WHVI_CHECK(!data::is_missing_cell(cell) && end == cell.c_str() + cell.size() && std::isfinite(v), "'", input,
                 "' row ", row, ", column '", col.name.substr(0, 60), "': not a number (missing or "
                 "text); the model was trained on numbers there");
      x[c0++] = v;
      continue;
    }
    const auto it = std::lower_bound(col.categories.begin(), col.categories.end(), cell);
    if (it != col.categories.end() && *it == cell) x[c0 + static_cast<size_t>(it - col.categories.begin())] = 1;
    else row_unseen = true;
    c0 += col.categories.size();
  }
  return row_unseen;
}

// The one-hot inputs that the training rows never set (x_mean 0): zero at
// prediction time, as in training.
torch::Tensor unseen_onehot_inputs(const std::vector<Column>& cols, int64_t width, const torch::Tensor& x_mean) {
  auto onehot = torch::zeros({width}, torch::kBool);
  for (size_t j = 0, c0 = 0; j < cols.size(); ++j) {
    const auto k = static_cast<int64_t>(cols[j].categories.size());
    if (k > 0) onehot.narrow(0, static_cast<int64_t>(c0), k).fill_(true);
    c0 += static_cast<size_t>(std::max<int64_t>(k, 1));
  }
  return onehot & (x_mean == 0);
}

// Output lines of a classifier: class probabilities, the predicted class, its
// probability, the predictive entropy and the mutual information.
std::string classification_lines(const torch::Tensor& f, const json& classes) {
  const auto logp = f.dim() == 3 ? f : f.unsqueeze(0);  // [S, n, C]
  const auto ps = logp.exp();
  const auto p = ps.mean(0);
  const auto entropy = -(p * p.clamp_min(1e-300).log()).sum(1);
  const auto expected = -(ps * logp).sum(2).mean(0);
  const auto mi = (entropy - expected).clamp_min(0.0);
  const auto best = p.max(1);
  const auto conf = std::get<0>(best), arg = std::get<1>(best);
  std::string text;
  for (int64_t i = 0; i < p.size(0); ++i) {
    for (int64_t c = 0; c < p.size(1); ++c) text += num(p[i][c].item<double>()) + ",";
    text += csv_field(classes[arg[i].item<int64_t>()].get<std::string>()) + "," + num(conf[i].item<double>()) + "," +
            num(entropy[i].item<double>()) + "," + num(mi[i].item<double>()) + "\n";
  }
  return text;
}

// Output lines of a regression model: the predictive mean and sd, its
// epistemic and aleatoric parts and the central interval.
std::string regression_lines(const torch::Tensor& f, likelihoods::Likelihood& lik, double noise_var, double interval) {
  torch::Tensor mean, epi, alea, lo, hi;
  if (f.dim() == 3) {
    // hetero-gaussian: each sample has its own variance per row
    const auto [mu, var] = likelihoods::regression_samples(f, noise_var);
    mean = mu.mean(0);
    epi = mu.var(0, /*unbiased=*/false).sqrt();
    alea = var.mean(0).sqrt();
    std::tie(lo, hi) = lik.predictive_interval(f, interval);
  } else {
    const auto mu = f.dim() == 2 ? f : f.view({f.size(0), -1});  // [S, n]
    mean = mu.mean(0);
    epi = mu.var(0, /*unbiased=*/false).sqrt();
    alea = torch::full_like(mean, std::sqrt(std::max(noise_var, 0.0)));
    std::tie(lo, hi) = lik.predictive_interval(mu, interval);
  }
  const auto sd = (epi.square() + alea.square()).sqrt();
  std::string text;
  for (int64_t i = 0; i < mean.size(0); ++i)
    text += num(mean[i].item<double>()) + "," + num(sd[i].item<double>()) + "," + num(epi[i].item<double>()) + "," +
            num(alea[i].item<double>()) + "," + num(lo[i].item<double>()) + "," + num(hi[i].item<double>()) + "\n";
  return text;
}

}  // namespace

json run_predict(const PredictOptions& o) {
  WHVI_CHECK(o.interval > 0 && o.interval < 1, "--interval ", o.interval, " is not in (0, 1) (e.g. --interval 0.95)");
  if (o.out != "-") check_output_path(o.out, "--out");
  auto loaded = load_checkpoint(o.checkpoint);
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
  WHVI_CHECK(width == meta.d_in && meta.x_mean.numel() == width, "'", o.checkpoint, "' is damaged: its input "
             "columns make ", width, " inputs, its model reads ", meta.d_in);

  AtomicFile out(o.out);
  std::string head;
  if (classify) {
    for (const auto& c : classes) head += csv_field("p_" + c.get<std::string>()) + ",";
    head += "predicted,confidence,entropy,mutual_information\n";
  } else {
    head = "mean,std,epistemic_std,aleatoric_std,lower,upper\n";
  }
  out.write(head);

  const auto& cfg = loaded.cfg;
  const int64_t S = o.mc_samples > 0 ? o.mc_samples : cfg.get_int("evaluation.mc_samples");
  const auto gen = make_generator(static_cast<uint64_t>(cfg.get_int("training.seed")),
                                  static_cast<uint64_t>(meta.split), Stream::kEval);
  const double noise_var = classify ? 0.0 : inf->likelihood().noise_var_original();
  const auto unseen_col = unseen_onehot_inputs(cols, width, meta.x_mean);
  int64_t rows = 0, unseen = 0;
  std::vector<std::string> fields;
  bool more = true;
  while (more) {
    std::vector<std::vector<double>> chunk;
    while (static_cast<int64_t>(chunk.size()) < o.chunk_rows && (more = in.next(fields))) {
      std::vector<double> x(static_cast<size_t>(width), 0.0);
      const bool row_unseen = encode_row(fields, cols, x, o.input, in.row());
      unseen += row_unseen;
      chunk.push_back(std::move(x));
    }
    if (chunk.empty()) break;
    const auto n = static_cast<int64_t>(chunk.size());
    auto x = torch::empty({n, width}, torch::kFloat64);
    auto xa = x.accessor<double, 2>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < width; ++j) xa[i][j] = chunk[static_cast<size_t>(i)][static_cast<size_t>(j)];
    x.index_put_({torch::indexing::Slice(), unseen_col}, 0.0);
    const auto xs = (x - meta.x_mean) / meta.x_std;
    const auto f = inf->predict(xs, S, gen);
    const std::string text = classify ? classification_lines(f, classes)
                                      : regression_lines(f, inf->likelihood(), noise_var, o.interval);
    out.write(text);
    rows += n;
    if (rows >= o.chunk_rows) spdlog::info("predict: {} rows done", rows);
  }
  WHVI_CHECK(rows > 0, "'", o.input, "' has a header but no rows to predict");
  out.commit();
  if (unseen > 0)
    spdlog::warn("predict: {} of {} rows hold a text category the model never saw in training (encoded as zeros)",
                 unseen, rows);
  return {{"rows", rows}, {"unseen_category_rows", unseen}, {"mc_samples", S}, {"checkpoint", o.checkpoint}};
}

}  // namespace whvi::experiment
