#include "bench/bench_train.h"

#include "bench/bench_fwht.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "common/errors.h"
#include "common/io.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "fwht.h"
#include "infer/inference.h"
#include "train/batched.h"
#include "train/loop.h"

namespace whvi::bench {

namespace {

// Before a measurement estimated from a pilot to take over 30 s: one line
// saying about how long, so that a huge --steps or --rows is not a silent wait.
void announce(const std::string& what, double seconds) {
  if (!(seconds > 30)) return;
  spdlog::info("{}: about {} to go (from a pilot's speed); Ctrl-C stops it", what, train::duration_text(seconds));
}


double train_seconds(const config::Config& cfg, const torch::Tensor& x, const torch::Tensor& y,
                     uint64_t seed, int64_t* params) {
  const auto inf = experiment::make_inference(x.size(1), cfg, 0.0, 1.0, make_generator(seed, 0, Stream::kInit));
  if (params) *params = inf->num_params();
  // the trainer's step log would interleave with the table
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::warn);
  try {
    const auto st = experiment::train(*inf, x, y, cfg, make_generator(seed, 0, Stream::kTrain), "bench");
    spdlog::set_level(level);
    return st.seconds;
  } catch (...) {
    spdlog::set_level(level);
    throw;
  }
}

// S > 1 splits of the same data trained as one batched model
// (training.batched_splits), each with its own initial values and stream.
double train_seconds_batched(const config::Config& cfg, const torch::Tensor& x, const torch::Tensor& y,
                             uint64_t seed, int64_t splits) {
  std::vector<std::unique_ptr<infer::Inference>> infs;
  std::vector<train::SplitTask> tasks;
  for (int64_t k = 0; k < splits; ++k) {
    infs.push_back(experiment::make_inference(x.size(1), cfg, 0.0, 1.0,
                                         make_generator(seed, static_cast<uint64_t>(k), Stream::kInit)));
    train::SplitTask t;
    t.inference = infs.back().get();
    t.x = x;
    t.y = y;
    t.gen = make_generator(seed, static_cast<uint64_t>(k), Stream::kTrain);
    t.label = "bench split " + std::to_string(k);
    tasks.push_back(std::move(t));
  }
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::warn);
  try {
    experiment::train_group(tasks, cfg);
    spdlog::set_level(level);
  } catch (...) {
    spdlog::set_level(level);
    throw;
  }
  return tasks.front().stats.seconds;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A kind may carry settings: "nng:model.nng.inverse_every=1:model.nng.particles=5".
std::vector<std::string> split_spec(const std::string& spec) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = spec.find(':', start)) != std::string::npos; start = pos + 1)
    parts.push_back(spec.substr(start, pos - start));
  parts.push_back(spec.substr(start));
  return parts;
}

// The checks both benches share: known kinds, widths and depth in range.
void check_kinds_widths(const char* what, const std::vector<std::string>& specs, const std::vector<int64_t>& widths,
                        int64_t depth) {
  const auto kinds = config::find_param("model.kind")->choices;
  for (const auto& spec : specs) {
    const auto k = split_spec(spec).front();
    WHVI_CHECK(std::find(kinds.begin(), kinds.end(), k) != kinds.end(), what, ": unknown kind '", k,
               "' in --kinds; registered: ", join(kinds));
  }
  WHVI_CHECK(!specs.empty() && !widths.empty(), what, ": --kinds and --widths must not be empty");
  for (int64_t w : widths)
    WHVI_CHECK(w >= 1 && w <= 65536, what, ": width ", w, " in --widths is out of range [1, 65536]");
  WHVI_CHECK(depth >= 0 && depth <= 64, what, ": --depth ", depth, " is out of range [0, 64]");
}

// A bench runs on its own random rows (--rows, --d-in) and writes no results
// folder: a data.* or output.* setting (in --kinds kind:key=value or --set)
// would be silently ignored, so it is refused.
void check_bench_sets(const char* what, const std::vector<std::string>& specs, const std::vector<std::string>& sets) {
  auto check = [&](const std::string& s, const char* where) {
    const std::string key = s.substr(0, s.find('='));
    WHVI_CHECK(key.rfind("data.", 0) != 0 && key.rfind("output.", 0) != 0, what, ": ", printable(key, 80), " (in ",
               where, ") does not apply: a bench times models on its own random rows (--rows, --d-in", 
               std::string(what) == "bench predict" ? ", --classes" : "", ") and writes no results; remove it");
  };
  for (const auto& spec : specs) {
    const auto parts = split_spec(spec);
    for (size_t i = 1; i < parts.size(); ++i) check(parts[i], "--kinds");
  }
  for (const auto& s : sets) check(s, "--set");
}


// A kind fitted in closed form has no steps or no training rows here: refused, `why_and_fix` after its name.
void refuse_closed_forms(const char* what, const std::vector<std::string>& specs, const char* why_and_fix) {
  for (const auto& spec : specs) {
    const std::string k = split_spec(spec).front();
    WHVI_CHECK(!infer::fits_in_closed_form(infer::method_of(k)), what, ": model.kind ", k, " is fitted in closed form",
               why_and_fix);
  }
}

}  // namespace

// The options' checks; bench predict has no training rows, so a kind fitted in closed form is refused.
void check_predict_bench_options(const PredictBenchOptions& o) {
  check_kinds_widths("bench predict", o.kinds, o.widths, o.depth);
  check_bench_sets("bench predict", o.kinds, o.sets);
  refuse_closed_forms("bench predict", o.kinds, " on training rows, which this bench does not have; time `whvi predict` "
                      "of a trained checkpoint instead (scripts/bench/predict_csv.sh)");
  WHVI_CHECK(o.batch >= 1 && o.batch <= o.rows, "bench predict: --batch ", o.batch, " must be in [1, --rows = ",
             o.rows, "]");
  WHVI_CHECK(o.rows >= 1 && o.rows <= 10000000, "bench predict: --rows ", o.rows, " is out of range [1, 1e7]");
  WHVI_CHECK(o.mc >= 1 && o.mc <= 100000, "bench predict: --mc ", o.mc, " is out of range [1, 100000]");
  WHVI_CHECK(o.repeats >= 1 && o.repeats <= 1000, "bench predict: --repeats ", o.repeats, " is out of range [1, 1000]");
  WHVI_CHECK(o.d_in >= 1 && o.d_in <= 65536, "bench predict: --d-in ", o.d_in, " is out of range [1, 65536]");
  WHVI_CHECK(o.classes == 0 || (o.classes >= 2 && o.classes <= 100000), "bench predict: --classes ", o.classes,
             " must be 0 (regression) or at least 2");
}

nlohmann::json run_predict_bench(const PredictBenchOptions& o) {
  check_predict_bench_options(o);
  const auto x = torch::randn({o.rows, o.d_in}, make_generator(o.seed, 0, Stream::kData), torch::kFloat64);
  std::printf("%6s %7s %9s | %10s %10s %10s\n", "kind", "width", "params", "mean s", "min s", "ms/batch");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& spec : o.kinds) {
    const auto parts = split_spec(spec);
    for (int64_t w : o.widths) {
      std::vector<std::string> sets{"model.kind=" + parts.front(), "model.width=" + std::to_string(w),
                                    "model.depth=" + std::to_string(o.depth)};
      if (o.classes > 0) sets.push_back("likelihood.kind=softmax");
      sets.insert(sets.end(), parts.begin() + 1, parts.end());
      sets.insert(sets.end(), o.sets.begin(), o.sets.end());
      const auto cfg = config::Config::parse("", "bench predict", sets);
      const auto inf = experiment::make_inference(o.d_in, cfg, 0.0, 1.0, make_generator(o.seed, 0, Stream::kInit), o.classes);
      inf->to(torch::kFloat32);
      auto pass = [&] {
        const auto gen = make_generator(o.seed, 0, Stream::kEval);
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < o.rows; i += o.batch)
          inf->predict(x.narrow(0, i, std::min(o.batch, o.rows - i)), o.mc, gen);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      };
      {  // a pilot batch, for the estimate
        const auto gen = make_generator(o.seed, 0, Stream::kEval);
        const auto t0 = std::chrono::steady_clock::now();
        inf->predict(x.narrow(0, 0, std::min(o.batch, o.rows)), o.mc, gen);
        const double one = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        announce("bench predict " + spec + " width " + std::to_string(w),
                 one * static_cast<double>((o.rows + o.batch - 1) / o.batch) * static_cast<double>(o.repeats + 1));
      }
      pass();  // untimed: first-touch allocations
      std::vector<double> t;
      for (int64_t r = 0; r < o.repeats; ++r) t.push_back(pass());
      double mean = 0;
      for (double v : t) mean += v / static_cast<double>(t.size());
      double var = 0;
      for (double v : t) var += (v - mean) * (v - mean) / std::max<double>(1.0, static_cast<double>(t.size() - 1));
      const int64_t batches = (o.rows + o.batch - 1) / o.batch;
      nlohmann::json r;
      r["kind"] = parts.front();
      if (parts.size() > 1) r["spec"] = spec;
      r["width"] = w;
      r["depth"] = o.depth;
      r["params"] = inf->num_params();
      r["seconds"] = t;
      r["seconds_mean"] = mean;
      r["seconds_std"] = std::sqrt(var);
      r["seconds_min"] = *std::min_element(t.begin(), t.end());
      r["ms_per_batch"] = mean * 1e3 / static_cast<double>(batches);
      r["peak_rss_mib"] = peak_rss_mib();
      std::printf("%6s %7lld %9lld | %10.4f %10.4f %10.3f\n", spec.c_str(), static_cast<long long>(w),
                  static_cast<long long>(r["params"].get<int64_t>()), mean, r["seconds_min"].get<double>(),
                  r["ms_per_batch"].get<double>());
      std::fflush(stdout);
      rows.push_back(r);
    }
  }
  auto doc = bench_record("predict", o.command_line, o.seed);
  doc["batch"] = o.batch;
  doc["mc_samples"] = o.mc;
  doc["d_in"] = o.d_in;
  doc["test_rows"] = o.rows;
  doc["classes"] = o.classes;
  doc["repeats"] = o.repeats;
  doc["timing"] = "wall clock of predicting all test_rows (batches of `batch` rows, mc_samples draws each, float32), "
                  "repeated after one untimed pass; freshly initialised networks";
  doc["sets"] = o.sets;
  doc["rows"] = rows;
  return doc;
}

// The options' checks; bench train times steps, so a kind fitted in closed form is refused.
void check_train_bench_options(const TrainBenchOptions& o) {
  check_kinds_widths("bench train", o.kinds, o.widths, o.depth);
  check_bench_sets("bench train", o.kinds, o.sets);
  refuse_closed_forms("bench train", o.kinds, ", with no steps to time; time `whvi train` of a config with it instead");
  for (int64_t sp : o.splits)
    WHVI_CHECK(sp >= 1 && sp <= 1024, "bench train: ", sp, " in --splits is out of range [1, 1024]");
  WHVI_CHECK(!o.splits.empty(), "bench train: --splits must not be empty");
  WHVI_CHECK(o.batch >= 1 && o.batch <= o.rows, "bench train: --batch ", o.batch, " must be in [1, --rows = ",
             o.rows, "]");
  WHVI_CHECK(o.d_in >= 1 && o.d_in <= 65536, "bench train: --d-in ", o.d_in, " is out of range [1, 65536]");
  WHVI_CHECK(o.rows >= 2 && o.rows <= 10000000, "bench train: --rows ", o.rows, " is out of range [2, 1e7]");
  WHVI_CHECK(o.steps >= 1 && o.steps <= 100000000, "bench train: --steps ", o.steps, " must be positive");
  WHVI_CHECK(o.warmup >= 0 && o.warmup <= 100000000, "bench train: --warmup ", o.warmup, " must be >= 0");
}

nlohmann::json run_train_bench(const TrainBenchOptions& o) {
  check_train_bench_options(o);
  auto gen = make_generator(o.seed, 0, Stream::kData);
  const auto x = torch::randn({o.rows, o.d_in}, gen, torch::kFloat64);
  const auto y = (x.narrow(1, 0, 1).squeeze(1).sin() + 0.1 * torch::randn({o.rows}, gen, torch::kFloat64));
  std::printf("%6s %7s %6s %9s | %10s %10s %12s %10s\n", "kind", "width", "splits", "params", "steps/s", "ms/step",
              "split-steps/s", "peak MiB");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& spec : o.kinds) {
    const auto parts = split_spec(spec);
    const std::string& kind = parts.front();
    for (int64_t w : o.widths)
    for (int64_t n_splits : o.splits) {
      auto sets = [&](int64_t steps) {
        std::vector<std::string> v{
            "model.kind=" + kind, "model.width=" + std::to_string(w), "model.depth=" + std::to_string(o.depth),
            "training.batch_size=" + std::to_string(o.batch), "training.steps=" + std::to_string(steps),
            "training.steps_fixed_noise=0", "training.log_every=100000000"};
        v.insert(v.end(), parts.begin() + 1, parts.end());
        v.insert(v.end(), o.sets.begin(), o.sets.end());
        return v;
      };
      // The untimed warm-up run pays for first-touch allocations; the timed
      // run's seconds minus the warm-up's is the time of `steps` steps.
      const auto warm_cfg = config::Config::parse("", "bench train", sets(std::max<int64_t>(o.warmup, 1)));
      const auto cfg = config::Config::parse("", "bench train", sets(o.warmup + o.steps));
      int64_t params = 0;
      double t_warm = 0, t_all = 0;
      const std::string what = "bench train " + spec + " width " + std::to_string(w) +
                               (n_splits > 1 ? " x " + std::to_string(n_splits) + " splits" : std::string());
      if (n_splits == 1) {
        t_warm = train_seconds(warm_cfg, x, y, o.seed, nullptr);
        announce(what, t_warm / static_cast<double>(std::max<int64_t>(o.warmup, 1)) *
                           static_cast<double>(o.warmup + o.steps));
        t_all = train_seconds(cfg, x, y, o.seed, &params);
      } else {
        t_warm = train_seconds_batched(warm_cfg, x, y, o.seed, n_splits);
        announce(what, t_warm / static_cast<double>(std::max<int64_t>(o.warmup, 1)) *
                           static_cast<double>(o.warmup + o.steps));
        t_all = train_seconds_batched(cfg, x, y, o.seed, n_splits);
        params = experiment::make_inference(x.size(1), cfg, 0.0, 1.0, make_generator(o.seed, 0, Stream::kInit))->num_params();
      }
      const double secs = std::max(t_all - (o.warmup > 0 ? t_warm : 0.0), 1e-9);
      nlohmann::json r;
      r["kind"] = kind;
      if (parts.size() > 1) r["spec"] = spec;
      r["width"] = w;
      r["depth"] = o.depth;
      r["splits"] = n_splits;  // 1: one split, train(); > 1: that many trained as one batched model
      r["params"] = params;    // of one split
      r["steps"] = o.steps;
      r["seconds"] = secs;
      r["steps_per_second"] = static_cast<double>(o.steps) / secs;
      r["split_steps_per_second"] = static_cast<double>(o.steps * n_splits) / secs;
      r["ms_per_step"] = secs * 1e3 / static_cast<double>(o.steps);
      r["peak_rss_mib"] = peak_rss_mib();
      std::printf("%6s %7lld %6lld %9lld | %10.1f %10.4f %12.1f %10.1f\n", spec.c_str(), static_cast<long long>(w),
                  static_cast<long long>(n_splits), static_cast<long long>(params), r["steps_per_second"].get<double>(),
                  r["ms_per_step"].get<double>(), r["split_steps_per_second"].get<double>(),
                  r["peak_rss_mib"].get<double>());
      std::fflush(stdout);
      rows.push_back(r);
    }
  }
  auto doc = bench_record("train", o.command_line, o.seed);
  doc["batch"] = o.batch;
  doc["d_in"] = o.d_in;
  doc["rows_of_data"] = o.rows;
  doc["timing"] =
      "wall clock of `steps` training steps (run of warmup+steps minus a run of warmup steps); "
      "peak_rss_mib is the process's peak resident memory so far (monotone over rows)";
  doc["sets"] = o.sets;
  doc["rows"] = rows;
  return doc;
}

std::string stepped_model_kinds() {
  std::string out;
  for (const auto& k : models::model_kinds())
    if (!infer::fits_in_closed_form(infer::method_of(k))) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace whvi::bench
