#include "experiment/experiment.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "common/errors.h"
#include "common/io.h"
#include "common/runtime.h"
#include "config/config.h"
#include "data/dataset.h"
#include "fwht.h"
#include "models/regression_model.h"
#include "train/metrics.h"
#include "train/trainer.h"

namespace whvi::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int64_t kPaperSteps = 50500;
constexpr int kPaperSplits = 8;

std::string split_stem(const fs::path& dir, size_t k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "split-%02zu", k);
  return (dir / buf).string();
}

// The configuration that determines the numbers (everything but output.*).
std::string fingerprint(const config::Config& cfg) {
  auto j = cfg.to_json();
  j.erase("output");
  return j.dump();
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  WHVI_CHECK(in.good(), "cannot read ", path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error("malformed JSON in " + path + ": " + e.what() +
                " (delete the file to recompute that split)");
  }
}

data::RegressionData load_data(const config::Config& cfg) {
  const std::string& ds = cfg.get_string("data.dataset");
  WHVI_CHECK(!ds.empty(), cfg.source(), ": data.dataset is not set (a UCI alias such as yacht, 'toy', or a folder)");
  if (ds == "toy")
    return data::make_toy(static_cast<uint64_t>(cfg.get_int("data.split_seed")),
                          static_cast<int>(cfg.get_int("data.toy_points")));
  return data::load_uci(ds, data::resolve_data_dir(cfg.get_string("data.dir")));
}

std::vector<data::SplitIndices> load_splits(const config::Config& cfg, const data::RegressionData& d) {
  if (cfg.get_string("data.dataset") == "toy") {
    data::SplitIndices s;
    for (int64_t i = 0; i < d.x.size(0); ++i) s.train.push_back(i);
    return {s};
  }
  return data::make_splits(d, cfg.get_string("data.protocol"),
                           static_cast<int>(cfg.get_int("data.splits")),
                           static_cast<uint64_t>(cfg.get_int("data.split_seed")),
                           cfg.get_float("data.train_fraction"));
}

json protocol_json(const config::Config& cfg, size_t planned, size_t done) {
  const int64_t steps = cfg.get_int("training.steps_fixed_noise") + cfg.get_int("training.steps");
  const bool toy = cfg.get_string("data.dataset") == "toy";
  const bool paper = cfg.get_string("data.protocol") == "paper";
  std::string note;
  bool shortened = false;
  if (!toy && steps < kPaperSteps) {
    shortened = true;
    note += "shortened: " + std::to_string(steps) + " of the paper's " + std::to_string(kPaperSteps) + " steps. ";
  }
  if (!toy && paper && planned < static_cast<size_t>(kPaperSplits)) {
    shortened = true;
    note += "shortened: " + std::to_string(planned) + " of the paper's 8 splits. ";
  }
  return {{"name", toy ? "toy" : cfg.get_string("data.protocol")},
          {"splits_planned", planned},
          {"splits_done", done},
          {"steps", steps},
          {"shortened", shortened},
          {"note", note}};
}

json summary_json(const std::vector<json>& splits) {
  json s = json::object();
  for (const char* key : {"rmse", "mnll", "mnll_paper", "steps_per_second", "train_seconds"}) {
    std::vector<double> v;
    for (const auto& r : splits)
      if (r.contains(key) && r[key].is_number()) v.push_back(r[key].get<double>());
    const auto m = train::summarize(v);
    if (m.n == 0)  // e.g. the toy problem has no test rows
      s[key] = {{"mean", nullptr}, {"std", nullptr}, {"sem", nullptr}, {"n", 0}};
    else
      s[key] = {{"mean", m.mean}, {"std", m.std}, {"sem", m.sem}, {"n", m.n}};
  }
  return s;
}

json environment_json() {
  return {{"whvi_version", WHVI_VERSION},
          {"whvi_commit", git_commit()},
          {"torch_version", torch_version()},
          {"threads", threads()},
          {"simd_level", kernels::simd_level_name(kernels::active_simd_level())},
          {"blas", blas_info()},
          {"cpu_model", cpu_model()}};
}

void save_checkpoint(const std::string& path, models::RegressionModel& model,
                     const config::Config& cfg, size_t split, int64_t d_in) {
  torch::serialize::OutputArchive ar;
  for (const auto& p : model.named_parameters()) ar.write("param/" + p.key(), p.value());
  ar.write("meta/config_yaml", c10::IValue(cfg.dump_yaml()));
  ar.write("meta/source", c10::IValue(cfg.source()));
  ar.write("meta/split", c10::IValue(static_cast<int64_t>(split)));
  ar.write("meta/d_in", c10::IValue(d_in));
  ar.write("meta/y_mean", c10::IValue(model.y_mean()));
  ar.write("meta/y_std", c10::IValue(model.y_std()));
  std::ostringstream os;
  ar.save_to(os);
  write_file_atomic(path, os.str());
}

// Predictions on a 1-D grid (CSV) and a PNG via scripts/plot_toy.sh.
void write_grid(models::RegressionModel& model, const data::RegressionData& d,
                const data::PreparedSplit& prep, const config::Config& cfg, const std::string& stem) {
  const auto grid = data::grid_1d(cfg.get_float("output.grid_lo"), cfg.get_float("output.grid_hi"),
                                  static_cast<int>(cfg.get_int("output.grid_points")));
  const auto xs = (grid - prep.stats.x_mean) / prep.stats.x_std;
  const auto f = train::predict_samples(model, xs, cfg.get_int("evaluation.mc_samples"));
  const auto mean = f.mean(0);
  const auto sd = (f.var(0, false) + train::noise_var_original(model)).sqrt();
  std::ostringstream pred, dat;
  pred << "x,mean,std,lo95,hi95,lo75,hi75\n";
  for (int64_t i = 0; i < grid.size(0); ++i) {
    const double m = mean[i].item<double>(), s = sd[i].item<double>();
    pred << grid[i][0].item<double>() << ',' << m << ',' << s << ',' << m - 1.959964 * s << ','
         << m + 1.959964 * s << ',' << m - 1.150349 * s << ',' << m + 1.150349 * s << '\n';
  }
  dat << "x,y\n";
  for (int64_t i = 0; i < d.x.size(0); ++i)
    dat << d.x[i][0].item<double>() << ',' << d.y[i][0].item<double>() << '\n';
  write_file_atomic(stem + "-grid.csv", pred.str());
  write_file_atomic(stem + "-data.csv", dat.str());
  spdlog::info("wrote {}-grid.csv and {}-data.csv", stem, stem);
  if (!cfg.get_bool("output.plot")) return;
  if (!fs::exists("scripts/plot_toy.sh")) {
    spdlog::warn("scripts/plot_toy.sh not found from {}: no plot (run from the repository root)",
                 fs::current_path().string());
    return;
  }
  const std::string cmd = "bash scripts/plot_toy.sh '" + stem + "-grid.csv' '" + stem + "-data.csv' '" +
                          stem + ".png' '" + cfg.get_string("output.name") + "'";
  if (std::system(cmd.c_str()) == 0)
    spdlog::info("wrote {}.png", stem);
  else
    spdlog::warn("plotting failed ({}); the CSV files are written", cmd);
}

}  // namespace

json run_train(const TrainOptions& o) {
  const auto cfg = config::Config::load(o.config_path, o.overrides);
  spdlog::info("config {} resolved:\n{}", o.config_path, cfg.dump_yaml());
  const std::string name = cfg.get_string("output.name");
  const fs::path out_dir = cfg.get_string("output.dir");
  const fs::path exp_dir = out_dir / name;
  const std::string exp_path = (out_dir / (name + ".json")).string();

  const auto d = load_data(cfg);
  const auto splits = load_splits(cfg, d);
  spdlog::info("data {} ({}): {} rows x {} features; {} split(s)", d.name, d.source, d.x.size(0),
               d.x.size(1), splits.size());

  json doc = environment_json();
  doc["experiment"] = name;
  doc["dataset"] = cfg.get_string("data.dataset");
  doc["model"] = cfg.get_string("model.kind");
  doc["command"] = o.command_line;
  doc["config"] = cfg.to_json();
  doc["config_file"] = o.config_path;

  const std::string fp = fingerprint(cfg);
  const uint64_t seed = static_cast<uint64_t>(cfg.get_int("training.seed"));
  std::vector<json> done;
  // The experiment record, rewritten atomically after each split.
  auto write_doc = [&] {
    doc["protocol"] = protocol_json(cfg, splits.size(), done.size());
    doc["splits"] = done;
    doc["summary"] = summary_json(done);
    doc["complete"] = done.size() == splits.size();
    write_file_atomic(exp_path, doc.dump(2) + "\n");
  };
  for (size_t k = 0; k < splits.size(); ++k) {
    const std::string stem = split_stem(exp_dir, k);
    if (o.resume && fs::exists(stem + ".json")) {
      auto prev = read_json(stem + ".json");
      WHVI_CHECK(prev.value("config_fingerprint", std::string()) == fp, stem,
                 ".json was produced by a different configuration; delete ", exp_dir.string(),
                 " or choose another output.name to keep both");
      spdlog::info("split {}: done already ({}), skipped", k, stem + ".json");
      done.push_back(prev);
      continue;
    }
    const auto prep = data::prepare_split(d, splits[k]);
    models::RegressionModel model(d.x.size(1), cfg, prep.stats.y_mean.item<double>(),
                                  prep.stats.y_std.item<double>());
    const std::string label = name + " split " + std::to_string(k);
    spdlog::info("{}: {} train / {} test rows, {} parameters", label, prep.x_train.size(0),
                 prep.x_test.size(0), model.num_params());
    const auto ts = train::train_regression(model, prep.x_train, prep.y_train.squeeze(1), cfg, seed + k, label);
    const auto t_eval = std::chrono::steady_clock::now();
    const auto f = train::predict_samples(model, prep.x_test, cfg.get_int("evaluation.mc_samples"));
    const auto m = train::regression_metrics(f, prep.y_test.squeeze(1).to(torch::kFloat64),
                                             train::noise_var_original(model));
    const double eval_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_eval).count();
    json r = {{"split", k},
              {"n_train", prep.x_train.size(0)},
              {"n_test", prep.x_test.size(0)},
              {"seed", seed + k},
              {"steps", ts.steps},
              {"train_seconds", ts.seconds},
              {"steps_per_second", ts.steps_per_second},
              {"eval_seconds", eval_s},
              {"final_neg_elbo", ts.final_loss},
              {"noise_var", train::noise_var_original(model)},
              {"params", {{"total", model.num_params()}}},
              {"config_fingerprint", fp},
              {"whvi_commit", git_commit()}};
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    r["rmse"] = num(m.rmse);
    r["mnll"] = num(m.mnll);
    r["mnll_paper"] = num(m.mnll_paper);
    if (cfg.get_bool("output.checkpoints")) save_checkpoint(stem + ".ckpt", model, cfg, k, d.x.size(1));
    if (cfg.get_int("output.grid_points") > 0) {
      WHVI_CHECK(d.x.size(1) == 1, "output.grid_points needs 1-D inputs; ", d.name, " has ", d.x.size(1));
      write_grid(model, d, prep, cfg, stem);
    }
    write_file_atomic(stem + ".json", r.dump(2) + "\n");
    spdlog::info("{}: RMSE {:.4g}  MNLL {:.4g}  MNLL(paper) {:.4g}  ({:.1f} s, {:.0f} steps/s)", label,
                 m.rmse, m.mnll, m.mnll_paper, ts.seconds, ts.steps_per_second);
    done.push_back(r);
    if (done.size() < splits.size()) write_doc();
  }
  write_doc();  // also when every split was resumed
  const auto& s = doc["summary"];
  if (s["rmse"]["n"].get<int64_t>() == 0) {
    spdlog::info("{}: {} split(s) trained; no test rows, so no test metrics -> {}", name, done.size(), exp_path);
    return doc;
  }
  spdlog::info("{}: {} split(s): RMSE {:.4g} ± {:.2g}, MNLL {:.4g} ± {:.2g}, MNLL(paper) {:.4g} ± {:.2g} -> {}",
               name, done.size(), s["rmse"]["mean"].get<double>(), s["rmse"]["std"].get<double>(),
               s["mnll"]["mean"].get<double>(), s["mnll"]["std"].get<double>(),
               s["mnll_paper"]["mean"].get<double>(), s["mnll_paper"]["std"].get<double>(), exp_path);
  return doc;
}

json run_eval(const EvalOptions& o) {
  torch::serialize::InputArchive ar;
  try {
    ar.load_from(o.checkpoint);
  } catch (const c10::Error& e) {
    throw Error("cannot read checkpoint " + o.checkpoint + ": " + e.what_without_backtrace());
  }
  c10::IValue v;
  auto read_iv = [&](const std::string& key) {
    WHVI_CHECK(ar.try_read(key, v), o.checkpoint, " is not a whvi checkpoint (missing ", key, ")");
    return v;
  };
  const std::string yaml = read_iv("meta/config_yaml").toStringRef();
  const auto cfg = config::Config::parse(yaml, o.checkpoint + " (embedded config)");
  const auto split = static_cast<size_t>(read_iv("meta/split").toInt());
  const int64_t d_in = read_iv("meta/d_in").toInt();
  const double y_mean = read_iv("meta/y_mean").toDouble(), y_std = read_iv("meta/y_std").toDouble();

  const auto d = load_data(cfg);
  const auto splits = load_splits(cfg, d);
  WHVI_CHECK(split < splits.size() && d.x.size(1) == d_in, o.checkpoint,
             ": its split or input size no longer matches the data (", d.source, ")");
  const auto prep = data::prepare_split(d, splits[split]);
  models::RegressionModel model(d_in, cfg, y_mean, y_std);
  model.to(cfg.get_string("training.dtype") == "float64" ? torch::kFloat64 : torch::kFloat32);
  {
    torch::NoGradGuard ng;
    for (auto& p : model.named_parameters()) {
      torch::Tensor t;
      WHVI_CHECK(ar.try_read("param/" + p.key(), t), o.checkpoint, ": missing parameter ", p.key());
      WHVI_CHECK_AS(ShapeError, t.sizes() == p.value().sizes(), o.checkpoint, ": parameter ", p.key(),
                    " has shape ", t.sizes(), ", the model expects ", p.value().sizes());
      p.value().copy_(t);
    }
  }
  const int64_t S = o.mc_samples > 0 ? o.mc_samples : cfg.get_int("evaluation.mc_samples");
  torch::manual_seed(static_cast<uint64_t>(cfg.get_int("training.seed")) + split + 7919);
  const auto f = train::predict_samples(model, prep.x_test, S);
  const auto m = train::regression_metrics(f, prep.y_test.squeeze(1).to(torch::kFloat64),
                                           train::noise_var_original(model));
  json r = environment_json();
  r["checkpoint"] = o.checkpoint;
  r["command"] = o.command_line;
  r["split"] = split;
  r["mc_samples"] = S;
  r["n_test"] = prep.x_test.size(0);
  r["rmse"] = m.rmse;
  r["mnll"] = m.mnll;
  r["mnll_paper"] = m.mnll_paper;
  return r;
}

}  // namespace whvi::experiment
