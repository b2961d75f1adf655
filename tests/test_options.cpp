// Options declared once, beside their components (common/options.h): the
// declarations' defaults read back exactly, every key a registered component
// reads is declared with the type it reads it as, values set in a config reach
// the component (including keys it reads from another component's
// declaration), and nothing below experiment/ includes the config header.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "common/options.h"
#include "common/rng.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "infer/inference.h"
#include "infer/nng.h"
#include "infer/variational.h"
#include "likelihoods/gaussian.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/student_t.h"
#include "models/regression_model.h"
#include "models/trunk.h"
#include "nn/conv_filter.h"
#include "nn/layer.h"
#include "optim/rule.h"
#include "train/batched.h"
#include "train/loop.h"
#include "train/stopping.h"

namespace fs = std::filesystem;
using namespace whvi;

namespace {

// A Source over a config that checks every key read is declared with the
// type it is read as, and records it.
class Checked : public options::Source {
 public:
  explicit Checked(config::Config c) : cfg_(std::move(c)) {}
  int64_t get_int(const std::string& k) const override { return note(k, options::Type::kInt), cfg_.get_int(k); }
  double get_float(const std::string& k) const override { return note(k, options::Type::kFloat), cfg_.get_float(k); }
  const std::string& get_string(const std::string& k) const override {
    return note(k, options::Type::kString), cfg_.get_string(k);
  }
  bool get_bool(const std::string& k) const override { return note(k, options::Type::kBool), cfg_.get_bool(k); }
  const std::string& source() const override { return cfg_.source(); }
  const std::vector<options::Spec>& declared() const override { return cfg_.declared(); }
  mutable std::set<std::string> read;

 private:
  void note(const std::string& k, options::Type t) const {
    const auto* p = config::find_param(k);
    if (!p) throw std::runtime_error("a component reads the undeclared key '" + k + "'");
    if (p->type != t) throw std::runtime_error("a component reads '" + k + "' as another type than declared");
    read.insert(k);
  }
  config::Config cfg_;
};

config::Config with(const std::vector<std::string>& sets) { return config::Config::parse("", "test", sets); }

}  // namespace

TEST(Options, FormatDoubleIsShortestExact) {
  EXPECT_EQ(options::format_double(0.1), "0.1");
  EXPECT_EQ(options::format_double(1.0), "1");
  EXPECT_EQ(options::format_double(-1.5), "-1.5");
  EXPECT_EQ(options::format_double(1e-12), "1e-12");
  EXPECT_EQ(options::format_double(options::kInf), ".inf");
  EXPECT_EQ(options::format_double(-options::kInf), "-.inf");
  for (const double x : {std::log(1e-4), 1 / std::sqrt(2.0), 0.0005, 9.0e15, -2.0 / 3.0})
    EXPECT_EQ(std::strtod(options::format_double(x).c_str(), nullptr), x) << x;
  EXPECT_EQ(options::format_double(-9.2103403719761836), "-9.210340371976184");  // log(1e-4) as the schema has always written it
}

// The schema's default text of every key reads back to the value the
// component's struct starts with, and prints back to the same text.
TEST(Options, DeclaredDefaultsReadBackExactly) {
  const auto cfg = config::Config::defaults();
  ASSERT_GT(config::schema().size(), 100u);
  std::set<std::string> keys;
  for (const auto& p : config::schema()) {
    EXPECT_TRUE(keys.insert(p.key).second) << p.key << " twice";
    EXPECT_FALSE(p.help.empty()) << p.key;
    switch (p.type) {
      case options::Type::kFloat: EXPECT_EQ(options::format_double(cfg.get_float(p.key)), p.def) << p.key; break;
      case options::Type::kInt: EXPECT_EQ(std::to_string(cfg.get_int(p.key)), p.def) << p.key; break;
      case options::Type::kBool: EXPECT_EQ(cfg.get_bool(p.key) ? "true" : "false", p.def) << p.key; break;
      case options::Type::kString: EXPECT_EQ(cfg.get_string(p.key), p.def) << p.key; break;
    }
  }
  // a few defaults the papers' protocols rest on, stated independently
  EXPECT_EQ(cfg.get_float("training.lr"), 0.001);
  EXPECT_EQ(cfg.get_int("training.steps"), 50000);
  EXPECT_EQ(cfg.get_int("training.steps_fixed_noise"), 500);
  EXPECT_EQ(cfg.get_float("likelihood.init_log_noise_var"), -1.5);
  EXPECT_NEAR(cfg.get_float("model.whvi.init_g_logvar"), std::log(1e-4), 1e-14);
  EXPECT_EQ(cfg.get_float("model.whvi.init_g_logvar"), -9.2103403719761836);
  EXPECT_EQ(cfg.get_int("model.nng.inverse_every"), 10);
  EXPECT_EQ(cfg.get_int("model.vsd.householder"), 1);
}

// Every registered layer, architecture, likelihood and method is built from a
// source that refuses undeclared keys and keys read as the wrong type.
TEST(Options, EveryRegisteredComponentReadsDeclaredKeysOnly) {
  const Checked src(config::Config::defaults());
  for (const auto& k : models::layer_kinds()) {
    EXPECT_NO_THROW(experiment::make_layer(k.name, 4, 3, src, {false, make_generator(1)})) << k.name;
    EXPECT_NO_THROW(experiment::make_layer(k.name, 4, 3, src, {true, make_generator(1)})) << k.name;
  }
  EXPECT_NO_THROW(experiment::make_trunk("rff", 3, src, make_generator(1)));
  EXPECT_NO_THROW(experiment::make_trunk("simple-cnn", 784, src, make_generator(1)));
  for (const auto& name : models::filter_names()) {
    const Checked s(with({"model.conv=" + name}));
    EXPECT_NO_THROW(experiment::make_trunk("simple-cnn", 784, s, make_generator(1))) << name;
  }
  for (const auto& k : models::trunk_kinds()) EXPECT_FALSE(k.declare().empty()) << k.name;
  for (const auto& kind : likelihoods::registered_likelihoods()) {
    const Checked s(with({"likelihood.kind=" + kind}));
    EXPECT_NO_THROW(experiment::make_likelihood(s, 0.0, 1.0, kind == "softmax" ? 3 : 0)) << kind;
  }
  for (const auto& kind : {"whvi", "mfg", "mcd", "nf-whvi", "vsd", "tt", "nng", "sghmc", "ensemble"}) {
    const Checked s(with({std::string("model.kind=") + kind}));
    EXPECT_NO_THROW(experiment::make_inference(4, s, 0.0, 1.0, make_generator(2))) << kind;
  }
  const Checked ens(with({"inference.kind=ensemble", "model.kind=mfg", "training.engine=autograd"}));
  EXPECT_NO_THROW(experiment::make_inference(4, ens, 0.0, 1.0, make_generator(2)));
  for (const auto& name : optim::rule_names()) {
    const Checked s(with({"training.optimizer=" + name}));
    EXPECT_NO_THROW(experiment::make_rule(name, s)) << name;
  }
  EXPECT_NO_THROW(options::read<train::LoopOptions>(src));
  EXPECT_NO_THROW(options::read<train::StoppingOptions>(src));
  EXPECT_NO_THROW(options::read<train::BatchedOptions>(src));
  EXPECT_GT(src.read.size(), 40u);
}

// Values set in a config reach the struct, through the keys a component
// declares and through those it reads from another's declaration (use).
TEST(Options, SetValuesReachTheComponent) {
  const auto cfg = with({"model.mfg.init_logvar=-3", "likelihood.init_log_noise_var=-2", "likelihood.lr_factor=0.5",
                         "training.steps_fixed_noise=7", "training.steps=11", "likelihood.student_t.init_df=6",
                         "training.stopping_every=13", "training.dtype=float64", "training.lr=0.02",
                         "training.engine=fused"});
  const auto mfg = experiment::make_layer("mfg", 4, 3, cfg, {false, make_generator(1)});
  for (const auto& p : mfg->named_parameters())
    if (p.key().find("logvar") != std::string::npos) EXPECT_TRUE(torch::all(p.value() == -3.0).item<bool>()) << p.key();
  const auto g = options::read<likelihoods::GaussianOptions>(cfg);
  EXPECT_EQ(g.init_log_noise_var, -2);
  EXPECT_EQ(g.lr_factor, 0.5);
  EXPECT_EQ(g.steps_fixed, 7);
  const auto t = options::read<likelihoods::StudentTOptions>(cfg);
  EXPECT_EQ(t.init_log_scale2, -2);
  EXPECT_EQ(t.init_df, 6);
  EXPECT_EQ(t.lr_factor, 0.5);
  EXPECT_EQ(t.steps_fixed, 7);
  const auto st = experiment::make_likelihood(with({"likelihood.kind=student-t", "likelihood.init_log_noise_var=-2"}),
                                               0.0, 1.0);
  for (const auto& p : st->named_parameters())
    if (p.key() == "log_scale2") EXPECT_EQ(p.value().item<double>(), -2.0);
  const auto loop = options::read<train::LoopOptions>(cfg);
  EXPECT_EQ(loop.total_steps, 18);  // finish() derives it
  EXPECT_EQ(loop.dtype, torch::kFloat64);
  const auto stop = options::read<train::StoppingOptions>(cfg);
  EXPECT_EQ(stop.every, 13);
  EXPECT_EQ(stop.min_steps, 7);
  const auto nng = options::read<infer::NngOptions>(cfg);
  EXPECT_DOUBLE_EQ(nng.noise_lr, 0.02 * 0.5);
  const auto vo = options::read<infer::VariationalOptions>(cfg);
  EXPECT_TRUE(vo.fused);
  EXPECT_FALSE(vo.auto_engine);
}

// No shell, ever, and nothing found through PATH or the working directory: no
// file under src/ or kernels/ calls system(), popen() or a PATH-searching exec.
TEST(Layout, NoShellAnywhere) {
  int files = 0;
  for (const char* top : {"src", "kernels"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(WHVI_SOURCE_DIR) / top)) {
      if (!e.is_regular_file()) continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line))
        for (const char* bad : {"system(", "popen(", "execvp", "execlp", "posix_spawnp", "\"/bin/sh", "\"bash\""})
          EXPECT_EQ(line.find(bad), std::string::npos) << e.path().string() << ": " << line;
    }
  EXPECT_GT(files, 100);
}

// The module graph is a tower: a folder includes only folders below it (and
// itself), so no arrow runs back up (the metrics sit beside the likelihoods,
// the layers in nn/ see neither networks nor methods).
TEST(Layout, NoIncludeRunsUpTheModuleGraph) {
  const std::map<std::string, int> rank = {
      {"common", 0}, {"config", 1}, {"ops", 1},         {"optim", 1},  {"data", 1},     {"report", 1}, {"onnx", 1},
      {"nn", 2},     {"analysis", 2}, {"likelihoods", 2}, {"models", 3}, {"calibration", 3}, {"infer", 4},    {"train", 5},
      {"experiment", 6}, {"bench", 7}, {"whvi", 7}, {"cli", 8}};
  const fs::path src = fs::path(WHVI_SOURCE_DIR) / "src";
  int includes = 0;
  for (const auto& e : fs::directory_iterator(src)) {
    if (!e.is_directory()) continue;
    const std::string dir = e.path().filename().string();
    ASSERT_TRUE(rank.count(dir)) << "src/" << dir << " has no place in the module graph: add it here";
    for (const auto& f : fs::directory_iterator(e.path())) {
      std::ifstream in(f.path());
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("#include \"", 0) != 0) continue;
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;  // kernels' own headers ("fwht.h")
        const std::string to = line.substr(10, slash - 10);
        ASSERT_TRUE(rank.count(to)) << f.path().string() << ": " << line;
        ++includes;
        EXPECT_TRUE(to == dir || rank.at(to) < rank.at(dir)) << f.path().string() << " (" << dir << ") includes "
                                                             << to << ": an arrow up the module graph";
      }
    }
  }
  EXPECT_GT(includes, 100);
}

// One plan: the config is read once, in experiment/ (resolve.h), into each
// component's typed options; below it no file takes the config or an
// options::Source (common/options.h, which defines it, aside).
TEST(Options, NothingBelowTheExperimentReadsTheConfig) {
  const std::set<std::string> above = {"config", "experiment", "bench", "cli"};
  const fs::path src = fs::path(WHVI_SOURCE_DIR) / "src";
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const auto rel = fs::relative(e.path(), src);
    const std::string top = rel.begin()->string();
    if (above.count(top) || rel == fs::path("common") / "options.h") continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line))
      for (const char* bad : {"options::Source", "config/config.h", "config::Config", "options::Nested("})
        EXPECT_EQ(line.find(bad), std::string::npos) << rel.string() << ": " << line;
  }
  EXPECT_GT(files, 100);
}

// model.kind is a named recipe over the registries: every recipe names
// registered layer kinds and a registered method, and the config accepts
// exactly the recipes.
TEST(Options, EveryModelKindIsARecipeOverTheRegistries) {
  const auto layers = models::registered_layer_kinds();
  const auto methods = infer::registered_methods();
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (const auto& r : models::recipes()) {
    EXPECT_TRUE(has(layers, r.hidden)) << r.kind;
    EXPECT_TRUE(has(layers, r.output)) << r.kind;
    EXPECT_TRUE(has(methods, r.method)) << r.kind;
    EXPECT_EQ(infer::method_of(r.kind), r.method);
  }
  // model.kind's values: the recipes, and auto (chosen among them by `whvi train`)
  auto kinds = models::model_kinds();
  kinds.push_back("auto");
  EXPECT_EQ(config::find_param("model.kind")->choices, kinds);
  // the recipes the papers' protocols rest on, stated independently
  EXPECT_EQ(models::output_layer_kind("whvi", "auto"), "mfg");
  EXPECT_EQ(models::output_layer_kind("mcd", "auto"), "mcd");
  EXPECT_EQ(models::output_layer_kind("whvi", "same"), "whvi");
  EXPECT_EQ(models::hidden_layer_kind("sghmc"), "linear");
  EXPECT_EQ(infer::method_of("ensemble"), "ensemble");
  EXPECT_EQ(infer::method_of("tt"), "variational");
  EXPECT_THROW(models::recipe("no-such-kind"), Error);
}
