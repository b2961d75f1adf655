// Training end to end on real data (yacht, from WHVI_DATA_DIR): WHVI learns
// far beyond the constant predictor; runs are repeatable; --resume skips
// finished splits; checkpoints re-evaluate.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/io.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "data/dataset.h"
#include "experiment/experiment.h"
#include "experiment/resolve.h"
#include "optim/flat_optimizer.h"
#include "optim/rule.h"
#include "models/regression_model.h"
#include "likelihoods/metrics.h"
#include "infer/inference.h"
#include "train/loop.h"
#include "helpers.h"

using namespace whvi;
using whvi::testing::cfg_with;
using whvi::testing::data_dir;
using whvi::testing::error_of;
namespace fs = std::filesystem;

namespace {

config::Config short_cfg(const std::string& kind, int steps) {
  return config::Config::parse("", "test",
                               {"data.dataset=yacht", "data.dir=" + data_dir(), "model.kind=" + kind,
                                "training.steps=" + std::to_string(steps), "training.log_every=100000"});
}

struct Run {
  metrics::RegressionMetrics m;
  double constant_rmse;
  torch::Tensor first_param;
};

Run run_yacht(const config::Config& cfg, uint64_t seed) {
  const auto d = data::load_uci("yacht", data_dir());
  const auto splits = data::make_splits(d, "standard", 1, 0);
  const auto prep = data::prepare_split(d, splits[0]);
  const auto inf = experiment::make_inference(d.x.size(1), cfg, prep.stats.y_mean.item<double>(),
                                         prep.stats.y_std.item<double>(), make_generator(seed, 0, Stream::kInit));
  experiment::train(*inf, prep.x_train, prep.y_train.squeeze(1), cfg, make_generator(seed, 0, Stream::kTrain), "test");
  const auto f = inf->predict(prep.x_test, 32, make_generator(seed, 0, Stream::kEval));
  auto& model = inf->model();
  const auto y = prep.y_test.squeeze(1).to(torch::kFloat64);
  Run r;
  r.m = metrics::regression_metrics(f, y, inf->likelihood().noise_var_original());
  r.constant_rmse = std::sqrt((y - prep.stats.y_mean.item<double>()).square().mean().item<double>());
  r.first_param = model.parameters()[0].detach().clone();
  return r;
}

TEST(Training, ShortYachtRunBeatsTheConstantPredictorByFar) {
  set_threads(1);
  const auto r = run_yacht(short_cfg("whvi", 2500), 0);
  EXPECT_GT(r.constant_rmse, 10.0);  // yacht's residuary resistance spreads widely
  EXPECT_LT(r.m.rmse, 0.2 * r.constant_rmse) << "RMSE " << r.m.rmse;
  EXPECT_LT(r.m.mnll, 3.0);
}

TEST(Training, MfgAndMcdLearnToo) {
  for (const char* kind : {"mfg", "mcd"}) {
    const auto r = run_yacht(short_cfg(kind, 2500), 0);
    EXPECT_LT(r.m.rmse, 0.5 * r.constant_rmse) << kind << " RMSE " << r.m.rmse;
  }
}

TEST(Training, SameSeedSameNumbers) {
  set_threads(1);
  const auto a = run_yacht(short_cfg("whvi", 200), 3);
  const auto b = run_yacht(short_cfg("whvi", 200), 3);
  EXPECT_TRUE(torch::equal(a.first_param, b.first_param));
  EXPECT_EQ(a.m.rmse, b.m.rmse);
  const auto c = run_yacht(short_cfg("whvi", 200), 4);
  EXPECT_FALSE(torch::equal(a.first_param, c.first_param));
  set_threads(1);
}

TEST(Experiment, ResumeSkipsFinishedSplitsAndCheckpointsReevaluate) {
  const fs::path dir = fs::temp_directory_path() / "whvi_resume_test";
  whvi::remove_tree(fs::path(dir).string());
  fs::create_directories(dir);
  const fs::path cfg_path = dir / "exp.yaml";
  std::ofstream(cfg_path) << "data: {dataset: yacht, dir: '" << data_dir()
                          << "', splits: 2}\ntraining: {steps: 100, steps_fixed_noise: 10}\n"
                          << "output: {dir: '" << dir.string() << "'}\n";
  experiment::TrainOptions o;
  o.config_path = cfg_path.string();
  const auto first = experiment::run_train(o);
  ASSERT_EQ(first["splits"].size(), 2u);
  EXPECT_TRUE(first["complete"].get<bool>());
  EXPECT_TRUE(first["protocol"]["shortened"].get<bool>());
  for (const char* k : {"rmse", "mnll", "mnll_paper"})
    for (const char* s : {"mean", "std", "sem"}) EXPECT_TRUE(first["summary"][k].contains(s));
  EXPECT_TRUE(fs::exists(dir / "exp.json"));
  EXPECT_TRUE(fs::exists(dir / "exp" / "split-01.ckpt"));

  // A killed run: split 1 missing. --resume recomputes only split 1.
  fs::remove(dir / "exp" / "split-01.json");
  o.resume = true;
  const auto second = experiment::run_train(o);
  EXPECT_EQ(second["splits"][0]["train_seconds"], first["splits"][0]["train_seconds"]);
  EXPECT_NE(second["splits"][1]["train_seconds"], first["splits"][1]["train_seconds"]);

  // A different configuration refuses to mix with the old results.
  o.overrides = {"training.steps=50"};
  try {
    experiment::run_train(o);
    ADD_FAILURE() << "resume with a different config should fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different configuration"), std::string::npos) << e.what();
  }

  // eval: deterministic for a checkpoint, close to the training-time numbers.
  experiment::EvalOptions eo;
  eo.checkpoint = (dir / "exp" / "split-00.ckpt").string();
  eo.mc_samples = 256;
  const auto e1 = experiment::run_eval(eo), e2 = experiment::run_eval(eo);
  EXPECT_EQ(e1["rmse"], e2["rmse"]);
  EXPECT_NEAR(e1["rmse"].get<double>(), second["splits"][0]["rmse"].get<double>(),
              0.15 * second["splits"][0]["rmse"].get<double>());
  std::ofstream(dir / "junk.ckpt") << "not a checkpoint";
  eo.checkpoint = (dir / "junk.ckpt").string();
  EXPECT_THROW(experiment::run_eval(eo), Error);
}

}  // namespace

// FlatOptimizer (optim/flat_optimizer.h) with the default rule, Adam
// (optim/adam.cpp), against LibTorch's Adam: the same updates for
// each segment, its own learning-rate factor, and a frozen segment that does
// not move and keeps no step count (it starts as a fresh Adam when thawed).
TEST(FlatOptimizer, AdamMatchesTorchAdamPerSegment) {
  for (const bool tensor_ops : {false, true}) {
    SCOPED_TRACE(tensor_ops ? "step_tensor_ops (other devices)" : "step (the CPU loop)");
    auto gen = make_generator(11);
    // segment 3 shares segment 2's learning rate but not its step count (the
    // tensor-op path must not merge them)
    const std::vector<std::vector<int64_t>> shapes = {{3, 4}, {5}, {1}, {2}};
    std::vector<torch::Tensor> a, b, init;
    for (const auto& s : shapes) {
      auto t = torch::randn(s, gen, torch::kFloat64);
      init.push_back(t.clone());
      a.push_back(t.clone().requires_grad_(true));
      b.push_back(t.clone().requires_grad_(true));
    }
    const auto target = [&](size_t i) { return torch::full(shapes[i], 0.5 + static_cast<double>(i), torch::kFloat64); };
    auto loss_of = [&](std::vector<torch::Tensor>& ps) {
      torch::Tensor l = torch::zeros({}, torch::kFloat64);
      for (size_t i = 0; i < ps.size(); ++i) l = l + ((ps[i] - target(i)).pow(4) + ps[i].sin()).sum();
      return l;
    };
    optim::FlatOptimizer<double> flat(a, torch::kFloat64);
    flat.segment(1).lr_factor = 0.5;
    const double lr = 0.01;
    std::vector<torch::optim::Adam> ref;
    for (size_t i = 0; i < b.size(); ++i)
      ref.emplace_back(std::vector<torch::Tensor>{b[i]}, torch::optim::AdamOptions(i == 1 ? lr * 0.5 : lr));
    const int frozen_until = 5;  // segment 2 frozen for the first 5 steps
    for (int t = 0; t < 30; ++t) {
      flat.segment(2).frozen = t < frozen_until;
      flat.zero_grad();
      loss_of(a).backward();
      tensor_ops ? flat.step_tensor_ops(lr) : flat.step(lr);
      for (auto& o : ref) o.zero_grad();
      loss_of(b).backward();
      for (size_t i = 0; i < b.size(); ++i)
        if (!(i == 2 && t < frozen_until)) ref[i].step();
    }
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-12, 1e-12)) << "segment " << i << ": " << (a[i] - b[i]).abs().max();
    // and the updates are not no-ops
    for (size_t i = 0; i < a.size(); ++i) EXPECT_GT((a[i] - init[i]).abs().max().item<double>(), 1e-3) << i;
  }
}

// The other registered rules (optim/sgd.cpp, optim/rmsprop.cpp), built from
// their options as training.optimizer picks them, against LibTorch's SGD
// (momentum) and RMSprop.
TEST(FlatOptimizer, SgdAndRmspropMatchTorch) {
  for (const bool tensor_ops : {false, true}) {
    for (const std::string name : {"sgd", "rmsprop"}) {
      SCOPED_TRACE(name + (tensor_ops ? ": step_tensor_ops (other devices)" : ": step (the CPU loop)"));
      auto gen = make_generator(12);
      auto t = torch::randn({4, 3}, gen, torch::kFloat64);
      std::vector<torch::Tensor> a = {t.clone().requires_grad_(true)};
      auto b = t.clone().requires_grad_(true);
      const auto cfg = cfg_with({"training.optimizer=" + name, "training.momentum=0.8"});
      const auto chosen = options::read<optim::OptimiserOptions>(cfg);
      ASSERT_EQ(chosen.kind, name);
      optim::FlatOptimizer<double> flat(a, torch::kFloat64, chosen.rule);
      std::unique_ptr<torch::optim::Optimizer> ref;
      if (name == "sgd")
        ref = std::make_unique<torch::optim::SGD>(std::vector<torch::Tensor>{b}, torch::optim::SGDOptions(0.01).momentum(0.8));
      else
        ref = std::make_unique<torch::optim::RMSprop>(std::vector<torch::Tensor>{b}, torch::optim::RMSpropOptions(0.01));
      auto loss = [](const torch::Tensor& p) { return ((p - 0.3).pow(4) + p.sin()).sum(); };
      for (int s = 0; s < 25; ++s) {
        flat.zero_grad();
        loss(a[0]).backward();
        tensor_ops ? flat.step_tensor_ops(0.01) : flat.step(0.01);
        ref->zero_grad();
        loss(b).backward();
        ref->step();
      }
      EXPECT_TRUE(torch::allclose(a[0], b, 1e-12, 1e-12)) << (a[0] - b).abs().max();
      EXPECT_GT((a[0] - t).abs().max().item<double>(), 1e-3);
    }
  }
}

// training.optimizer's allowed values are the registry's, and a name that is
// not registered is refused with the registered ones.
TEST(FlatOptimizer, TheRegistryNamesEveryRule) {
  EXPECT_EQ(optim::rule_names(), (std::vector<std::string>{"adam", "sgd", "rmsprop"}));
  const auto msg = error_of([] { experiment::make_rule("lion", cfg_with({})); });
  EXPECT_NE(msg.find("registered: adam, sgd, rmsprop"), std::string::npos) << msg;
  const auto bad = error_of([] { cfg_with({"training.optimizer=lion"}); });
  EXPECT_NE(bad.find("training.optimizer"), std::string::npos) << bad;
}
