// Classification (issue 10, part 1): the softmax likelihood, the metrics
// against hand computations, the UCI classification loaders and their bad
// input, stratified splits, and a classifier end to end through `whvi train`
// and `whvi eval`.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <unistd.h>
#include <zlib.h>

#include "analysis/approximation.h"
#include "common/errors.h"
#include "common/io.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "data/dataset.h"
#include "experiment/checkpoint.h"
#include "experiment/experiment.h"
#include "experiment/resolve.h"
#include "helpers.h"
#include "infer/inference.h"
#include "infer/nng.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/metrics.h"
#include "likelihoods/softmax.h"
#include "models/conv.h"
#include "models/regression_model.h"
#include "nn/layer_options.h"
#include "nn/nng_layer.h"
#include "ops/fwht_op.h"
#include "report/table.h"
#include "train/loop.h"

using whvi::testing::data_dir;
using whvi::testing::error_of;
// A convolution's typed options from a config, with its kind set.
[[maybe_unused]] static whvi::models::ConvOptions conv_options(const whvi::config::Config& cfg, const std::string& kind) {
  auto o = whvi::options::read<whvi::models::ConvOptions>(cfg);
  o.kind = kind;
  o.filter = whvi::experiment::make_filter_maker(kind, cfg);
  return o;
}


using namespace whvi;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {


bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(SoftmaxLikelihood, NllIsMinusTheLogOfTheNormalisedExponential) {
  likelihoods::SoftmaxLikelihood lik(3);
  const auto f = torch::tensor({{1.0, 2.0, 0.5}, {-1.0, 0.0, 3.0}}, torch::kFloat64);
  const auto y = torch::tensor({1.0, 0.0}, torch::kFloat64);
  const double z0 = std::exp(1.0) + std::exp(2.0) + std::exp(0.5);
  const double z1 = std::exp(-1.0) + std::exp(0.0) + std::exp(3.0);
  const double expected = -(2.0 - std::log(z0)) - (-1.0 - std::log(z1));
  EXPECT_NEAR(lik.nll_sum(f, y).item<double>(), expected, 1e-12);
  // to_original gives log class probabilities that sum to one
  const auto lp = lik.to_original(f);
  EXPECT_NEAR(lp[0][2].item<double>(), 0.5 - std::log(z0), 1e-12);
  EXPECT_TRUE(torch::allclose(lp.exp().sum(1), torch::ones({2}, torch::kFloat64)));
  EXPECT_EQ(lik.out_dim(), 3);
  EXPECT_STREQ(lik.task(), "classification");
}

TEST(SoftmaxLikelihood, SampledLabelsFollowTheClassProbabilities) {
  likelihoods::SoftmaxLikelihood lik(3);
  const auto f = torch::log(torch::tensor({0.2, 0.5, 0.3}, torch::kFloat64)).repeat({40000, 1});
  const auto s = lik.sample(f, make_generator(5)).to(torch::kInt64);
  for (int c = 0; c < 3; ++c) {
    const double share = s.eq(c).to(torch::kFloat64).mean().item<double>();
    const double want[3] = {0.2, 0.5, 0.3};
    EXPECT_NEAR(share, want[c], 0.01) << c;
  }
}

// Two Monte Carlo samples of three test points, three classes, numbers chosen
// away from the bin edges (multiples of 1/15); every metric by hand.
TEST(ClassificationMetrics, MatchHandComputations) {
  const double s0[3][3] = {{.72, .18, .10}, {.12, .60, .28}, {.20, .20, .60}};
  const double s1[3][3] = {{.52, .38, .10}, {.32, .40, .28}, {.30, .30, .40}};
  auto p = torch::empty({2, 3, 3}, torch::kFloat64);
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 3; ++c) p[0][n][c] = s0[n][c], p[1][n][c] = s1[n][c];
  const auto y = torch::tensor({0, 2, 2}, torch::kInt64);
  const auto m = metrics::classification_metrics(p.log(), y);
  // mean probabilities: [.62 .28 .10], [.22 .50 .28], [.25 .25 .50]; predictions 0, 1, 2
  EXPECT_NEAR(m.error, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.mnll, -(std::log(.62) + std::log(.28) + std::log(.50)) / 3.0, 1e-12);
  EXPECT_NEAR(m.mnll_paper,
              -((std::log(.72) + std::log(.52)) / 2 + (std::log(.28) + std::log(.28)) / 2 +
                (std::log(.60) + std::log(.40)) / 2) / 3.0,
              1e-12);
  const double b0 = .38 * .38 + .28 * .28 + .10 * .10, b1 = .22 * .22 + .50 * .50 + .72 * .72,
               b2 = .25 * .25 + .25 * .25 + .50 * .50;
  EXPECT_NEAR(m.brier, (b0 + b1 + b2) / 3.0, 1e-12);
  // confidences .62 (bin 9, correct) and .50, .50 (bin 7: one right, one wrong)
  EXPECT_NEAR(m.ece, (1.0 / 3.0) * (1.0 - .62), 1e-12);
  ASSERT_EQ(m.bins.size(), 15u);
  EXPECT_EQ(m.bins[9].count, 1);
  EXPECT_EQ(m.bins[7].count, 2);
  EXPECT_NEAR(m.bins[7].accuracy, 0.5, 1e-12);
  EXPECT_NEAR(m.bins[7].confidence, 0.5, 1e-12);
  EXPECT_NEAR(m.bins[9].lo, 9.0 / 15.0, 1e-15);
  int64_t total = 0;
  for (const auto& b : m.bins) total += b.count;
  EXPECT_EQ(total, 3);
  EXPECT_TRUE(std::isnan(m.bins[0].accuracy));
}

// A perfectly calibrated predictor has ECE ~ 0 on many points; an
// overconfident one has ECE = confidence - accuracy.
TEST(ClassificationMetrics, EceOfCalibratedAndOverconfidentPredictors) {
  const int64_t N = 200000;
  auto gen = make_generator(9);
  const auto y_cal = torch::bernoulli(torch::full({N}, 0.3, torch::kFloat64), gen);  // P(class 1) = .3
  auto lp = torch::log(torch::tensor({0.7, 0.3}, torch::kFloat64)).repeat({1, N, 1});
  EXPECT_LT(metrics::classification_metrics(lp, y_cal).ece, 0.005);
  const auto over = torch::log(torch::tensor({0.95, 0.05}, torch::kFloat64)).repeat({1, N, 1});
  const auto m = metrics::classification_metrics(over, y_cal);
  EXPECT_NEAR(m.ece, 0.95 - 0.7, 0.005);
  EXPECT_NEAR(m.error, 0.3, 0.005);
}

TEST(ClassificationMetrics, UnderflowingProbabilitiesStayFinite) {
  // log-probabilities far below exp's range: the mean over samples by log-sum-exp
  auto lp = torch::full({2, 1, 2}, -2000.0, torch::kFloat64);
  lp[0][0][0] = 0.0, lp[1][0][0] = 0.0;
  const auto m = metrics::classification_metrics(lp, torch::tensor({1}, torch::kInt64));
  EXPECT_NEAR(m.mnll, 2000.0, 1e-9);
  EXPECT_TRUE(std::isfinite(m.mnll_paper));
  EXPECT_EQ(m.error, 1.0);
}

TEST(ClassTable, ParsesArffWithHeaderCommentsAndCrlf) {
  const std::string text =
      "% a comment\r\n@RELATION eye\r\n\r\n@ATTRIBUTE a NUMERIC\r\n@ATTRIBUTE b NUMERIC\r\n"
      "@ATTRIBUTE eyeDetection {1,0}\r\n@DATA\r\n1.5,2,0\r\n% inside\r\n-3,4e1,1\r\n\r\n";
  const auto d = data::parse_class_table(text, -1, true, "t.arff");
  ASSERT_EQ(d.x.size(0), 2);
  EXPECT_EQ(d.num_classes, 2);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"1", "0"}));  // the declared order
  EXPECT_EQ(d.y[0][0].item<double>(), 1.0);  // label "0" is class 1
  EXPECT_EQ(d.x[1][1].item<double>(), 40.0);
}

TEST(ClassTable, LabelFirstColumnAndSortedClassNames) {
  const auto d = data::parse_class_table("T,1,2\nA,3,4\nT,5,6\n", 0, false, "t.data");
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"A", "T"}));
  EXPECT_EQ(d.y[0][0].item<double>(), 1.0);
  EXPECT_EQ(d.x[1][0].item<double>(), 3.0);
}

TEST(ClassTable, BadFilesGetErrorsNamingLineAndFix) {
  auto err = [](const std::string& text, bool arff = false) {
    return error_of([&] { data::parse_class_table(text, -1, arff, "f.csv"); });
  };
  EXPECT_TRUE(contains(err("1,2,g\n3,h\n"), "line 2: 2 columns, but the first row has 3")) << err("1,2,g\n3,h\n");
  EXPECT_TRUE(contains(err("1,?,g\n2,3,h\n"), "line 1, column 2: '?' is not a finite number"));
  EXPECT_TRUE(contains(err("1,nan,g\n2,3,h\n"), "not a finite number"));
  EXPECT_TRUE(contains(err("1,2,g\n3,4,g\n"), "only one class"));
  EXPECT_TRUE(contains(err(""), "no data rows"));
  EXPECT_TRUE(contains(err("@attribute c {0,1}\n@data\n1,2,7\n", true), "label '7' is not one of the data set's 2 classes"));
  EXPECT_TRUE(contains(err("@relation x\n1,2,0\n", true), "neither an ARFF header line"));
  EXPECT_TRUE(contains(err("@relation x\n", true), "no @data line"));
  EXPECT_TRUE(contains(err("1,2,\n3,4,h\n"), "the class label (column 3) is empty"));
}

TEST(ClassData, UciSetsLoadWithTheirDocumentedShapes) {
  const std::string dir = data_dir();
  if (!fs::exists(fs::path(dir) / "uci-class")) GTEST_SKIP() << "no uci-class data under " << dir;
  struct Want {
    const char* name;
    int64_t rows, dims, classes;
    int64_t first_class_count;
  };
  for (const Want w : {Want{"eeg", 14980, 14, 2, 8257}, Want{"magic", 19020, 10, 2, 12332},
                       Want{"letter", 20000, 16, 26, 789}}) {
    const auto d = data::load_uci_class(w.name, dir);
    EXPECT_EQ(d.x.size(0), w.rows) << w.name;
    EXPECT_EQ(d.x.size(1), w.dims) << w.name;
    EXPECT_EQ(d.num_classes, w.classes) << w.name;
    EXPECT_EQ(d.y.eq(0).sum().item<int64_t>(), w.first_class_count) << w.name;
  }
  EXPECT_TRUE(contains(error_of([&] { data::load_uci_class("eeg", "/nonexistent"); }), "WHVI_DATA_DIR"));
}

TEST(ClassData, StratifiedSplitsKeepEachClassShareAndAreDisjoint) {
  data::RegressionData d;
  const int64_t n = 1003;
  d.x = torch::randn({n, 2}, make_generator(1)).to(torch::kFloat64);
  d.y = torch::empty({n, 1}, torch::kFloat64);
  std::vector<int64_t> per_class(3, 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i < 700 ? 0 : i < 950 ? 1 : 2;
    d.y[i][0] = static_cast<double>(c);
    ++per_class[c];
  }
  d.num_classes = 3;
  d.name = "t";
  const auto splits = data::make_splits(d, "stratified", 3, 11, 0.9);
  ASSERT_EQ(splits.size(), 3u);
  for (const auto& s : splits) {
    std::vector<int64_t> seen(n, 0), tr(3, 0);
    for (auto i : s.train) ++seen[i], ++tr[static_cast<int64_t>(d.y[i][0].item<double>())];
    for (auto i : s.test) ++seen[i];
    for (auto v : seen) ASSERT_EQ(v, 1);  // disjoint cover
    for (int c = 0; c < 3; ++c) EXPECT_EQ(tr[c], std::llround(0.9 * per_class[c])) << c;
  }
  EXPECT_NE(splits[0].test, splits[1].test);
  EXPECT_EQ(data::make_splits(d, "stratified", 3, 11, 0.9)[2].test, splits[2].test);  // deterministic
  data::RegressionData reg = d;
  reg.num_classes = 0;
  EXPECT_TRUE(contains(error_of([&] { data::make_splits(reg, "stratified", 1, 0, 0.9); }),
                       "needs a classification data set"));
  // classification targets are not standardised
  const auto p = data::prepare_split(d, splits[0]);
  EXPECT_TRUE(torch::equal(p.y_train, p.y_train_raw));
}

TEST(ClassLikelihood, KindMustFitTheData) {
  const auto soft = config::Config::parse("data: {dataset: yacht}\nlikelihood: {kind: softmax}\n", "a.yaml");
  EXPECT_TRUE(contains(error_of([&] { experiment::make_likelihood(soft, 0, 1, 0); }), "set likelihood.kind: gaussian"));
  const auto gauss = config::Config::parse("data: {dataset: eeg}\n", "b.yaml");
  EXPECT_TRUE(contains(error_of([&] { experiment::make_likelihood(gauss, 0, 1, 2); }), "set likelihood.kind: softmax"));
  const auto sghmc = config::Config::parse("data: {dataset: eeg}\nlikelihood: {kind: softmax}\nmodel: {kind: sghmc}\n", "c.yaml");
  EXPECT_TRUE(contains(error_of([&] { experiment::make_inference(3, sghmc, 0, 1, make_generator(1), 2); }),
                       "supports regression only"));
}

// A small separable problem written as an ARFF file in a data folder of its
// own: train, evaluate, resume, and evaluate again from the checkpoint.
TEST(ClassExperiment, TrainsEvaluatesAndReproducesFromItsCheckpoint) {
  set_threads(1);
  const fs::path dir = fs::temp_directory_path() / "whvi_class_exp";
  whvi::remove_tree(fs::path(dir).string());
  fs::create_directories(dir / "uci-class" / "eeg");
  {
    std::ofstream f(dir / "uci-class" / "eeg" / "EEG_Eye_State.arff");
    f << "@relation toy\n@attribute a numeric\n@attribute b numeric\n@attribute c {0,1}\n@data\n";
    auto g = make_generator(4);
    const auto x = torch::randn({400, 2}, g, torch::kFloat64);
    for (int64_t i = 0; i < 400; ++i) {
      const double a = x[i][0].item<double>(), b = x[i][1].item<double>();
      f << a << ',' << b << ',' << (a + 0.5 * b > 0 ? 1 : 0) << '\n';
    }
  }
  std::ofstream(dir / "exp.yaml") << "data: {dataset: eeg, dir: '" << dir.string()
                                  << "', protocol: stratified, splits: 2}\nlikelihood: {kind: softmax}\n"
                                     "model: {kind: whvi, width: 16}\n"
                                     "training: {steps: 400, steps_fixed_noise: 0, log_every: 100000}\n"
                                     "evaluation: {mc_samples: 8}\noutput: {dir: '"
                                  << dir.string() << "', plot: false}\n";
  experiment::TrainOptions o;
  o.config_path = (dir / "exp.yaml").string();
  const auto doc = experiment::run_train(o);
  EXPECT_EQ(doc["task"], "classification");
  EXPECT_EQ(doc["classes"], json({"0", "1"}));
  const auto& s0 = doc["splits"][0];
  EXPECT_LT(s0["error"].get<double>(), 0.15);
  EXPECT_EQ(s0["n_test"].get<int64_t>(), 40);
  EXPECT_EQ(s0["reliability"].size(), 15u);
  EXPECT_TRUE(s0["noise_var"].is_null());
  for (const char* k : {"error", "mnll", "mnll_paper", "ece", "brier"})
    EXPECT_EQ(doc["summary"][k]["n"].get<int64_t>(), 2) << k;
  EXPECT_FALSE(doc["summary"].contains("rmse"));
  EXPECT_TRUE(fs::exists(dir / "exp-reliability.csv"));
  EXPECT_EQ(doc["reliability"]["bins"].size(), 15u);
  // eval from the checkpoint gives the training-time numbers
  experiment::EvalOptions eo;
  eo.checkpoint = (dir / "exp" / "split-01.ckpt").string();
  const auto e = experiment::run_eval(eo);
  for (const char* k : {"error", "mnll", "mnll_paper", "ece", "brier"})
    EXPECT_EQ(e[k], doc["splits"][1][k]) << k;
  // resume trusts finished classification splits
  o.resume = true;
  const auto again = experiment::run_train(o);
  EXPECT_EQ(again["summary"], doc["summary"]);
  // the table renders it, and refuses to mix it with regression
  std::ofstream(dir / "r.json") << doc.dump();
  const auto md = report::render_from_files({(dir / "r.json").string()}, "", "t");
  EXPECT_TRUE(contains(md, "## Test error")) << md;
  EXPECT_TRUE(contains(md, "WHVI ECE")) << md;
  json reg = doc;
  reg["task"] = "regression";
  reg["dataset"] = "yacht";
  std::ofstream(dir / "g.json") << reg.dump();
  EXPECT_TRUE(contains(error_of([&] {
                         report::render_from_files({(dir / "r.json").string(), (dir / "g.json").string()}, "", "t");
                       }),
                       "render each task in its own table"));
  whvi::remove_tree(fs::path(dir).string());
}

// training.stopping_temperature fit on a synthetic classification problem
// (data.synthetic_classes): the record says from what to what, the likelihood
// lists the temperature, the checkpoint keeps it (eval from it gives the
// training-time numbers, which differ from those at T = 1), and keep records
// neither.
TEST(ClassExperiment, AFittedTemperatureIsRecordedCheckpointedAndPredicted) {
  set_threads(1);
  const fs::path dir = fs::temp_directory_path() / "whvi_class_temperature";
  whvi::remove_tree(fs::path(dir).string());
  fs::create_directories(dir);
  json docs[2];
  for (const int fit : {1, 0}) {
    const std::string name = fit ? "fit" : "keep";
    std::ofstream(dir / (name + ".yaml"))
        << "data: {dataset: 'synthetic:friedman', synthetic_rows: 300, synthetic_classes: 3, protocol: random, "
           "splits: 1}\nlikelihood: {kind: softmax}\nmodel: {kind: ensemble, width: 16}\nensemble: {members: 2}\n"
           "training: {steps: 600, steps_fixed_noise: 0, log_every: 100000, stopping: validation, "
           "stopping_temperature: "
        << name << "}\nevaluation: {mc_samples: 8}\noutput: {dir: '" << dir.string() << "', name: " << name
        << ", plot: false}\n";
    experiment::TrainOptions o;
    o.config_path = (dir / (name + ".yaml")).string();
    docs[fit] = experiment::run_train(o);
  }
  const auto& s = docs[1]["splits"][0];
  ASSERT_TRUE(s["stopping"].contains("temperature_fit")) << s["stopping"].dump();
  const double t = s["stopping"]["temperature_fit"]["to"].get<double>();
  EXPECT_EQ(s["stopping"]["temperature_fit"]["from"].get<double>(), 1.0);
  EXPECT_GT(std::abs(std::log(t)), 1e-3);
  EXPECT_EQ(s["likelihood"]["temperature"].get<double>(), t) << s["likelihood"].dump();
  const auto& k = docs[0]["splits"][0];
  EXPECT_FALSE(k["stopping"].contains("temperature_fit"));
  EXPECT_FALSE(k.contains("likelihood") && k["likelihood"].contains("temperature"));
  // the same network (same seed and kept step), another predictive
  EXPECT_EQ(k["stopping"]["best_step"], s["stopping"]["best_step"]);
  EXPECT_NE(k["mnll"], s["mnll"]);
  experiment::EvalOptions eo;
  eo.checkpoint = (dir / "fit" / "split-00.ckpt").string();
  const auto e = experiment::run_eval(eo);
  for (const char* key : {"error", "mnll", "ece", "brier"}) EXPECT_EQ(e[key], s[key]) << key;
  auto loaded = experiment::load_checkpoint(eo.checkpoint);
  for (auto* l : loaded.inf->predicting_likelihoods())
    EXPECT_EQ(dynamic_cast<likelihoods::SoftmaxLikelihood&>(*l).temperature(), t);
  EXPECT_EQ(loaded.meta.likelihood_fitted, (std::vector<std::pair<std::string, double>>{{"temperature", t}}));
  EXPECT_TRUE(experiment::load_checkpoint((dir / "keep" / "split-00.ckpt").string()).meta.likelihood_fitted.empty());
  // a stored value the likelihood refuses is a damaged checkpoint, named, whatever its checksum
  auto bad = loaded.meta;
  bad.likelihood_fitted = {{"temperature", -1.0}};
  const auto bad_path = (dir / "bad.ckpt").string();
  experiment::save_checkpoint(bad_path, *loaded.inf, bad);
  const auto err = error_of([&] { experiment::load_checkpoint(bad_path); });
  EXPECT_NE(err.find("is damaged: its temperature is not valid"), std::string::npos) << err;
  EXPECT_NE(error_of([&] { loaded.inf->likelihood().set_fitted("noise", 1.0); }).find("fits nothing named 'noise'"),
            std::string::npos);
  whvi::remove_tree(fs::path(dir).string());
}

// ---- Variational Structured Dropout (issue 10, part 3) --------------------------

namespace {
config::Config vsd_cfg(const std::string& extra = "") {
  return config::Config::parse("model: {kind: vsd" + extra + "}\n", "vsd.yaml");
}
torch::Tensor param(models::BayesianLayer& l, const std::string& name) {
  for (const auto& p : l.named_parameters())
    if (p.key() == name) return p.value();
  ADD_FAILURE() << "no parameter " << name;
  return {};
}
}  // namespace

TEST(Vsd, HouseholderProductIsOrthogonalAndEqualsTheExplicitProduct) {
  const auto vs = torch::randn({3, 5}, make_generator(2)).to(torch::kFloat64);
  const auto u = models::householder_product(vs);
  EXPECT_TRUE(torch::allclose(torch::matmul(u, u.t()), torch::eye(5, torch::kFloat64), 1e-12, 1e-12));
  auto want = torch::eye(5, torch::kFloat64);
  for (int t = 0; t < 3; ++t) {
    const auto v = vs[t];
    const auto h = torch::eye(5, torch::kFloat64) - 2.0 * torch::outer(v, v) / v.dot(v);
    want = torch::matmul(h, want);  // H_T ... H_1
  }
  EXPECT_TRUE(torch::allclose(u, want, 1e-12, 1e-12));
}

// Eq. 5 is the KL of the column marginals N(θ_j, D_j Σ D_j) against the
// Gaussian prior with the empirical-Bayes variances θ_ij² (1 + Σ_ii): the
// same number from explicit covariance matrices, and those variances are
// where that KL is smallest.
TEST(Vsd, Eq5IsTheEmpiricalBayesKlOfTheColumnMarginals) {
  auto g = make_generator(3);
  const int64_t K = 3, Q = 2;
  const auto theta = torch::randn({K, Q}, g).to(torch::kFloat64);
  const auto log_alpha = torch::randn({K}, g).to(torch::kFloat64);
  const auto u = models::householder_product(torch::randn({2, K}, g).to(torch::kFloat64));
  const auto sigma = torch::matmul(torch::matmul(u, torch::diag(log_alpha.exp())), u.t());
  auto kl_at = [&](const torch::Tensor& prior_var /*[K, Q]*/) {
    double total = 0;
    for (int64_t j = 0; j < Q; ++j) {
      const auto d = torch::diag(theta.select(1, j));
      const auto s = torch::matmul(torch::matmul(d, sigma), d);
      const auto pv = prior_var.select(1, j);
      total += 0.5 * ((torch::diagonal(s) / pv).sum() + (theta.select(1, j).square() / pv).sum() -
                      static_cast<double>(K) + pv.log().sum() - torch::logdet(s))
                         .item<double>();
    }
    return total;
  };
  const auto eb = theta.square() * (1.0 + torch::diagonal(sigma)).unsqueeze(1);
  EXPECT_NEAR(kl_at(eb), models::vsd_kl(log_alpha, u, Q).item<double>(), 1e-9);
  for (double f : {0.9, 1.1}) {
    auto p = eb.clone();
    p[1][0] *= f;
    EXPECT_GT(kl_at(p), kl_at(eb)) << f;
  }
  // T = 0 (U = I): the known Gaussian-dropout form (Q/2) Σ log(1 + 1/α)
  EXPECT_NEAR(models::vsd_kl(log_alpha, torch::eye(K, torch::kFloat64), Q).item<double>(),
              0.5 * Q * torch::log1p((-log_alpha).exp()).sum().item<double>(), 1e-12);
}

// The noise a VSD layer multiplies its inputs with has mean 1 and covariance
// U diag(α) Uᵀ (checked with Θ = I so the outputs are the noise itself).
TEST(Vsd, LayerNoiseHasTheStructuredCovariance) {
  for (int T : {1, 2}) {
    const auto cfg = vsd_cfg(", vsd: {householder: " + std::to_string(T) + ", init_dropout: 0.3}");
    auto layer = experiment::make_layer("vsd", 4, 4, cfg, {false, make_generator(7)});
    {
      torch::NoGradGuard ng;
      param(*layer, "w").copy_(torch::eye(4));
      param(*layer, "b").zero_();
      param(*layer, "log_alpha").copy_(torch::tensor({-1.0, -0.5, 0.0, -2.0}));
    }
    const int64_t N = 200000;
    const auto y = layer->forward(torch::ones({N, 4}), models::Mode::kSample, make_generator(8)).to(torch::kFloat64);
    std::vector<torch::Tensor> vs = {param(*layer, "v1").to(torch::kFloat64)};
    if (T == 2) vs.push_back(torch::matmul(param(*layer, "a1").to(torch::kFloat64), vs[0]) + param(*layer, "c1"));
    const auto u = models::householder_product(torch::stack(vs));
    const auto cov_want =
        torch::matmul(torch::matmul(u, torch::diag(torch::tensor({-1.0, -0.5, 0.0, -2.0}, torch::kFloat64).exp())), u.t());
    const auto c = y - y.mean(0);
    const auto cov = torch::matmul(c.t(), c) / static_cast<double>(N);
    EXPECT_TRUE(torch::allclose(y.mean(0), torch::ones({4}, torch::kFloat64), 0, 0.01)) << T;
    EXPECT_TRUE(torch::allclose(cov, cov_want, 0, 0.015)) << T << "\n" << cov << "\n" << cov_want;
    // the layer's KL is eq. 5 of its parameters
    EXPECT_NEAR(layer->kl().item<double>(),
                models::vsd_kl(param(*layer, "log_alpha").to(torch::kFloat64), u, 4).item<double>(), 1e-4);
    // the mean network is the deterministic layer
    EXPECT_TRUE(torch::allclose(layer->forward(torch::ones({2, 4}), models::Mode::kMean), torch::ones({2, 4})));
  }
}

// With the prior hierarchy the KL gains Σ_i KL(LogNormal(m_i, s_i²) ‖ Gamma(a, b)):
// the closed form against a Monte Carlo estimate of E_q[log q(z) - log p(z)].
TEST(Vsd, HierarchicalKlAddsTheLogNormalGammaKl) {
  const auto cfg = vsd_cfg(", vsd: {hierarchical: true, z_prior_shape: 2.0, z_prior_rate: 1.5}");
  auto layer = experiment::make_layer("vsd", 3, 2, cfg, {false, make_generator(9)});
  const std::vector<double> m = {0.2, -0.3, 0.1}, lv = {std::log(0.25), std::log(0.04), std::log(0.5)};
  {
    torch::NoGradGuard ng;
    param(*layer, "z_m").copy_(torch::tensor(m));
    param(*layer, "z_logvar").copy_(torch::tensor(lv));
  }
  const auto u = models::householder_product(param(*layer, "v1").to(torch::kFloat64).unsqueeze(0));
  const double base = models::vsd_kl(param(*layer, "log_alpha").to(torch::kFloat64), u, 2).item<double>();
  auto gen = make_generator(10);
  double mc = 0;
  const double a = 2.0, b = 1.5;
  for (int i = 0; i < 3; ++i) {
    const double s = std::exp(0.5 * lv[i]);
    const auto eps = torch::randn({400000}, gen, torch::kFloat64);
    const auto logz = m[i] + s * eps;
    const auto log_q = -0.5 * eps.square() - std::log(s) - 0.5 * std::log(2 * M_PI) - logz;
    const auto log_p = a * std::log(b) - std::lgamma(a) + (a - 1) * logz - b * logz.exp();
    mc += (log_q - log_p).mean().item<double>();
  }
  EXPECT_NEAR(layer->kl().item<double>() - base, mc, 0.01);
}

TEST(Mnist, MiniLoadsWithItsSplitScaledPixelsAndKnownLabels) {
  const std::string dir = data_dir();
  if (!fs::exists(fs::path(dir) / "mnist-mini")) GTEST_SKIP() << "no mnist-mini under " << dir;
  const auto d = data::load_mnist("mnist-mini", dir);
  EXPECT_EQ(d.x.size(0), 3000);
  EXPECT_EQ(d.x.size(1), 784);
  EXPECT_EQ(d.num_classes, 10);
  EXPECT_GE(d.x.min().item<double>(), 0.0);
  EXPECT_LE(d.x.max().item<double>(), 1.0);
  ASSERT_EQ(d.std_train.size(), 1u);
  EXPECT_EQ(d.std_train[0].size(), 2000u);
  EXPECT_EQ(d.std_test[0].front(), 2000);
  const std::vector<double> first_train = {5, 0, 4, 1, 9, 2, 1, 3}, first_test = {7, 2, 1, 0, 4};
  for (size_t i = 0; i < first_train.size(); ++i) EXPECT_EQ(d.y[i][0].item<double>(), first_train[i]);
  for (size_t i = 0; i < first_test.size(); ++i) EXPECT_EQ(d.y[2000 + i][0].item<double>(), first_test[i]);
  // pixels are not standardised
  const auto p = data::prepare_split(d, {d.std_train[0], d.std_test[0]});
  EXPECT_TRUE(torch::equal(p.x_train, d.x.narrow(0, 0, 2000)));
}

TEST(Mnist, BadIdxFilesGetClearErrors) {
  auto be = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  const std::string im = be(0x803) + be(2) + be(2) + be(2) + std::string(8, '\x10');
  const std::string lb = be(0x801) + be(2) + std::string{1, 9};
  EXPECT_NO_THROW(data::parse_idx(im, lb, "f"));
  EXPECT_TRUE(contains(error_of([&] { data::parse_idx("\x1f\x8b" + im, lb, "f"); }), "gzip"));
  EXPECT_TRUE(contains(error_of([&] { data::parse_idx(im.substr(0, im.size() - 1), lb, "f"); }), "truncated"));
  EXPECT_TRUE(contains(error_of([&] { data::parse_idx(im, be(0x801) + be(3) + std::string{1, 9, 2}, "f"); }),
                       "2 images but 3 labels"));
  EXPECT_TRUE(contains(error_of([&] { data::parse_idx(im, be(0x801) + be(2) + std::string{1, 12}, "f"); }),
                       "MNIST labels are 0..9"));
}

// Fashion-MNIST: IDX files gzip-compressed (as Debian ships them) or plain, in
// one folder; the classes by name; pixels in [0, 1]; the shipped split.
TEST(FashionMnist, GzipOrPlainIdxFilesWithClassNames) {
  auto be = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  const fs::path root = fs::temp_directory_path() / ("whvi_fashion_" + std::to_string(::getpid()));
  whvi::remove_tree(root.string());
  fs::create_directories(root / "fashion-mnist");
  auto write = [&](const std::string& name, const std::string& bytes, bool gz) {
    const std::string p = (root / "fashion-mnist" / (name + (gz ? ".gz" : ""))).string();
    if (!gz) {
      std::ofstream(p, std::ios::binary) << bytes;
      return;
    }
    gzFile g = gzopen(p.c_str(), "wb");
    ASSERT_NE(g, nullptr);
    gzwrite(g, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(g);
  };
  // 3 training images of 2 x 2 pixels (labels 0, 9, 8), 1 test image (label 6)
  write("train-images-idx3-ubyte", be(0x803) + be(3) + be(2) + be(2) + std::string("\x00\xff\x33\x66", 4) +
                                       std::string(8, '\x10'), true);
  write("train-labels-idx1-ubyte", be(0x801) + be(3) + std::string{0, 9, 8}, true);
  write("t10k-images-idx3-ubyte", be(0x803) + be(1) + be(2) + be(2) + std::string(4, '\x80'), false);
  write("t10k-labels-idx1-ubyte", be(0x801) + be(1) + std::string{6}, true);
  const auto d = data::load_mnist("fashion-mnist", root.string());
  ASSERT_EQ(d.x.sizes(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(d.x[0][1].item<double>(), 1.0);
  EXPECT_NEAR(d.x[0][2].item<double>(), 0x33 / 255.0, 1e-15);
  EXPECT_NEAR(d.x[3][0].item<double>(), 128 / 255.0, 1e-15);
  EXPECT_EQ(d.y[1][0].item<double>(), 9);
  EXPECT_EQ(d.y[3][0].item<double>(), 6);
  ASSERT_EQ(d.class_names.size(), 10u);
  EXPECT_EQ(d.class_names[0], "T-shirt/top");
  EXPECT_EQ(d.class_names[9], "Ankle boot");
  EXPECT_EQ(d.class_names[6], "Shirt");
  ASSERT_EQ(d.std_train.size(), 1u);
  EXPECT_EQ(d.std_train[0].size(), 3u);
  EXPECT_EQ(d.std_test[0], (std::vector<int64_t>{3}));
  // a damaged gzip file is named
  std::ofstream(root / "fashion-mnist" / "t10k-labels-idx1-ubyte.gz", std::ios::binary | std::ios::trunc)
      << std::string("\x1f\x8b\x08\x00garbage", 12);
  EXPECT_TRUE(contains(error_of([&] { data::load_mnist("fashion-mnist", root.string()); }), "gzip"));
  whvi::remove_tree(root.string());
}

// ---- CIFAR-10 (issue 10, part 2: the loader) ------------------------------------

TEST(Cifar10, MiniLoadsWithKnownLabelsPixelsAndChannelStatistics) {
  const std::string dir = data_dir();
  if (!fs::exists(fs::path(dir) / "cifar10-mini")) GTEST_SKIP() << "no cifar10-mini under " << dir;
  const auto d = data::load_cifar10("cifar10-mini", dir);
  EXPECT_EQ(d.x.size(0), 3000);
  EXPECT_EQ(d.x.size(1), 3072);
  EXPECT_EQ(d.class_names.front(), "airplane");
  EXPECT_EQ(d.class_names.back(), "truck");
  const std::vector<double> train_first = {6, 9, 9, 4, 1, 1, 2, 7, 8, 3}, test_first = {3, 8, 8, 0, 6, 6, 1, 6, 3, 1};
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(d.y[i][0].item<double>(), train_first[i]) << i;
    EXPECT_EQ(d.y[2000 + i][0].item<double>(), test_first[i]) << i;
  }
  // the training images' channels have mean 0 and std 1, and image 0's red
  // plane is an affine map of the raw file's red bytes (PROVENANCE.md: 59, ...)
  const auto tr = d.x.narrow(0, 0, 2000).view({2000, 3, 1024});
  EXPECT_TRUE(torch::allclose(tr.mean(std::vector<int64_t>{0, 2}), torch::zeros({3}, torch::kFloat64), 0, 1e-9));
  EXPECT_TRUE(torch::allclose(tr.std(std::vector<int64_t>{0, 2}, false), torch::ones({3}, torch::kFloat64), 0, 1e-9));
  std::ifstream f(fs::path(dir) / "cifar10-mini" / "train.bin", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(f)), {});
  const auto red = torch::from_blob(raw.data() + 1, {1024}, torch::kUInt8).to(torch::kFloat64) / 255.0;
  const auto x0 = tr[0][0];
  // x0 = (red - mu) / sd for one (mu, sd): fit it from two pixels, check the rest
  const double r0 = red[0].item<double>(), r1 = red[1].item<double>();
  const double sd = (r0 - r1) / (x0[0].item<double>() - x0[1].item<double>());
  const double mu = r0 - sd * x0[0].item<double>();
  EXPECT_TRUE(torch::allclose(x0 * sd + mu, red, 0, 1e-9));
  EXPECT_EQ(std::lround(red[0].item<double>() * 255), 59);
}

TEST(Cifar10, BadFilesGetClearErrors) {
  std::string rec(3073, '\x05');
  rec[0] = 3;
  EXPECT_NO_THROW(data::parse_cifar_batch(rec + rec, "f"));
  EXPECT_TRUE(contains(error_of([&] { data::parse_cifar_batch(rec + "x", "f"); }), "not a whole number of CIFAR-10"));
  EXPECT_TRUE(contains(error_of([&] { data::parse_cifar_batch("", "f"); }), "not a whole number"));
  std::string bad = rec;
  bad[0] = 12;
  EXPECT_TRUE(contains(error_of([&] { data::parse_cifar_batch(rec + bad, "f"); }), "record 1 has label 12"));
  EXPECT_TRUE(contains(error_of([&] { data::load_cifar10("cifar10", "/nonexistent"); }), "data_batch_1.bin"));
}

// ---- convolutional trunks (issue 10, part 2) --------------------------------------

// MFG filters' local reparameterisation: per output element, mean conv(x, μ) + μ_b
// and variance conv(x², σ²) + σ_b², against weights sampled explicitly.
TEST(Conv, MfgFiltersSampleTheExactOutputMarginals) {
  const auto cfg = config::Config::parse("model: {kind: mfg, mfg: {init_logvar: -3.0}}\n", "c.yaml");
  models::ConvLayer layer(conv_options(cfg, "mfg"), 2, 3, make_generator(1));
  torch::Tensor w_mu, w_lv, b_mu, b_lv;
  for (const auto& p : layer.named_parameters()) {
    if (p.key() == "w_mu") w_mu = p.value();
    if (p.key() == "w_logvar") w_lv = p.value();
    if (p.key() == "b_mu") b_mu = p.value();
    if (p.key() == "b_logvar") b_lv = p.value();
  }
  {
    torch::NoGradGuard ng;
    b_mu.fill_(0.3);
    w_lv.uniform_(-4.0, -1.0, make_generator(2));
  }
  const auto x = torch::randn({1, 2, 4, 4}, make_generator(3));
  const int64_t S = 20000;
  models::ForwardCtx ctx;
  ctx.mode = models::Mode::kSample;
  ctx.gen = make_generator(4);
  const auto y = layer.forward(x.expand({S, 2, 4, 4}).contiguous(), ctx).to(torch::kFloat64);
  // explicit: sample whole filters, convolve
  auto g = make_generator(5);
  std::vector<torch::Tensor> ys;
  for (int s = 0; s < 4000; ++s) {
    torch::NoGradGuard ng;
    const auto w = w_mu + (0.5 * w_lv).exp() * torch::randn(w_mu.sizes(), g);
    const auto b = b_mu + (0.5 * b_lv).exp() * torch::randn(b_mu.sizes(), g);
    ys.push_back(torch::nn::functional::conv2d(x, w, torch::nn::functional::Conv2dFuncOptions().padding(1).bias(b)));
  }
  const auto ref = torch::cat(ys).to(torch::kFloat64);
  // means within 5 standard errors, variances within 10% (4,000 explicit draws: ~2% error)
  const auto se = (ref.var(0) / 4000.0 + y.var(0) / static_cast<double>(S)).sqrt();
  EXPECT_LT(((y.mean(0) - ref.mean(0)).abs() / se).max().item<double>(), 5.0);
  EXPECT_TRUE(torch::allclose(y.var(0), ref.var(0), 0.1, 1e-3));
  // and the mean network is the mean filter
  models::ForwardCtx mean_ctx;
  const auto m = layer.forward(x, mean_ctx);
  EXPECT_TRUE(torch::allclose(
      m, torch::nn::functional::conv2d(x, w_mu, torch::nn::functional::Conv2dFuncOptions().padding(1).bias(b_mu))));
}

// NNG filters (model.conv: nng): the mean network is the convolution with the
// filter matrix M read in im2col order, written out as loops over positions;
// a sampling pass uses one weight particle per draw (the particles the layer's
// own sample_weights draws from the same generator); the capture holds one
// row per (image, position): the patch with a 1 appended and the output.
TEST(Conv, NngFiltersAreTheFilterMatrixOneParticlePerDrawWithKfcRows) {
  torch::NoGradGuard ng;
  const auto cfg = config::Config::parse("model: {kind: nng}\n", "c.yaml");
  models::ConvLayer layer(conv_options(cfg, "nng"), 2, 3, make_generator(1));
  models::NngLayer* nl = nullptr;
  for (const auto& m : layer.modules(false))
    if (auto* p = dynamic_cast<models::NngLayer*>(m.get())) nl = p;
  ASSERT_NE(nl, nullptr);
  ASSERT_EQ(nl->mean().sizes(), (std::vector<int64_t>{19, 3}));
  {
    auto g = make_generator(2);
    nl->set_sampling(torch::randn({19, 19}, g) * 0.3, torch::randn({3, 3}, g) * 0.3, 0, 0);
  }
  const int64_t n = 4, hw = 5;
  const auto x = torch::randn({n, 2, hw, hw}, make_generator(3));
  const auto xp = torch::constant_pad_nd(x, {1, 1, 1, 1}).to(torch::kFloat64);
  // explicit convolution with W̄ [19, 3]: row c*9 + di*3 + dj, bias row 18
  auto explicit_conv = [&](const torch::Tensor& w, int64_t img) {
    const auto w64 = w.to(torch::kFloat64);
    auto out = torch::zeros({3, hw, hw}, torch::kFloat64);
    for (int64_t o = 0; o < 3; ++o)
      for (int64_t i = 0; i < hw; ++i)
        for (int64_t j = 0; j < hw; ++j) {
          double acc = w64[18][o].item<double>();
          for (int64_t c = 0; c < 2; ++c)
            for (int64_t di = 0; di < 3; ++di)
              for (int64_t dj = 0; dj < 3; ++dj)
                acc += xp[img][c][i + di][j + dj].item<double>() * w64[c * 9 + di * 3 + dj][o].item<double>();
          out[o][i][j] = acc;
        }
    return out;
  };
  models::ForwardCtx mean_ctx;
  const auto m = layer.forward(x, mean_ctx).to(torch::kFloat64);
  for (int64_t img = 0; img < n; ++img)
    EXPECT_TRUE(torch::allclose(m[img], explicit_conv(nl->mean(), img), 1e-5, 1e-5)) << img;
  // two draws of two images each, captured
  models::KfacCapture cap;
  models::ForwardCtx ctx;
  ctx.mode = models::Mode::kSample;
  ctx.gen = make_generator(7);
  ctx.draws = 2;
  ctx.capture = &cap;
  const auto y = layer.forward(x, ctx).to(torch::kFloat64);
  const auto w = nl->sample_weights(2, make_generator(7), x.options());
  EXPECT_GT((w[0] - w[1]).abs().max().item<double>(), 1e-3) << "the particles differ";
  for (int64_t img = 0; img < n; ++img)
    EXPECT_TRUE(torch::allclose(y[img], explicit_conv(w[img / 2], img), 1e-5, 1e-5)) << img;
  ASSERT_EQ(cap.entries.size(), 1u);
  const auto& e = cap.entries[0];
  EXPECT_EQ(e.layer, nl);
  EXPECT_EQ(e.positions, hw * hw);
  ASSERT_EQ(e.a_bar.sizes(), (std::vector<int64_t>{n * hw * hw, 19}));
  ASSERT_EQ(e.s.sizes(), (std::vector<int64_t>{n * hw * hw, 3}));
  EXPECT_TRUE(torch::allclose(e.w_mean, w.mean(0)));
  for (int64_t img : {0, 3})
    for (int64_t i : {0, 2, 4})
      for (int64_t j : {0, 1, 4}) {
        const int64_t row = img * hw * hw + i * hw + j;
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t di = 0; di < 3; ++di)
            for (int64_t dj = 0; dj < 3; ++dj)
              EXPECT_EQ(e.a_bar[row][c * 9 + di * 3 + dj].item<double>(), xp[img][c][i + di][j + dj].item<double>());
        EXPECT_EQ(e.a_bar[row][18].item<double>(), 1.0);
        for (int64_t o = 0; o < 3; ++o) EXPECT_EQ(e.s[row][o].item<double>(), y[img][o][i][j].item<double>());
      }
}

// The optimiser's Kronecker factors of a convolutional NNG network are KFC's
// (Grosse & Martens 2016): A sums the patches' ā āᵀ over the output positions
// and S averages the output gradients' g gᵀ over them (per example), so A ⊗ S
// is the Fisher's approximation; a factor summed (or averaged) over both would
// be off by the number of positions. Written out here with autograd on an
// independent functional network (conv, ReLU, pooling, conv, ReLU, pooling,
// the output layer), the empirical Fisher, β = 1 and zero sampling noise.
TEST(Conv, NngFactorsOfAConvolutionalNetworkAreKfcs) {
  set_threads(1);
  auto cfg = config::Config::parse("data: {dataset: mnist-mini}\nlikelihood: {kind: softmax}\n"
                                   "model: {kind: nng, architecture: simple-cnn, conv: nng, depth: 0, "
                                   "nng: {lr: 0, ema: 1, fisher: empirical, particles: 1}}\n"
                                   "training: {dtype: float64}\n", "c.yaml");
  auto base = experiment::make_inference(784, cfg, 0.0, 1.0, make_generator(1), 10);
  auto* inf = dynamic_cast<infer::NoisyKfac*>(base.get());
  ASSERT_NE(inf, nullptr);
  inf->to(torch::kFloat64);
  const int64_t n = 3;
  const auto x = torch::randn({n, 784}, make_generator(2), torch::kFloat64);
  const auto y = torch::tensor({1.0, 7.0, 3.0}, torch::kFloat64);
  inf->begin(1000, 10, make_generator(3));
  std::vector<models::NngLayer*> nls;
  for (const auto& mod : inf->model().modules(false))
    if (auto* p = dynamic_cast<models::NngLayer*>(mod.get())) nls.push_back(p);
  ASSERT_EQ(nls.size(), 3u);  // conv 1 -> 32, conv 32 -> 64, the output layer 3136 -> 10
  for (auto* l : nls) {
    const auto ka = l->in_features() + 1, ks = l->out_features();
    l->set_sampling(torch::zeros({ka, ka}, torch::kFloat64), torch::zeros({ks, ks}, torch::kFloat64), 0, 0);
  }
  std::vector<torch::Tensor> ms;
  for (auto* l : nls) ms.push_back(l->mean().detach().clone());
  inf->step(x, y, 0, make_generator(4));
  namespace F = torch::nn::functional;
  auto conv = [](const torch::Tensor& h, const torch::Tensor& w, int64_t cin, int64_t cout) {
    const int64_t k = cin * 9;
    return F::conv2d(h, w.narrow(0, 0, k).t().reshape({cout, cin, 3, 3}),
                     F::Conv2dFuncOptions().padding(1).bias(w.select(0, k)));
  };
  const auto img = x.view({n, 1, 28, 28});
  auto o0 = conv(img, ms[0], 1, 32).requires_grad_();
  auto h = F::max_pool2d(torch::relu(o0), F::MaxPool2dFuncOptions(2));
  auto o1 = conv(h.detach(), ms[1], 32, 64).requires_grad_();
  const auto h1 = F::max_pool2d(torch::relu(o1), F::MaxPool2dFuncOptions(2)).reshape({n, -1});
  const auto a2 = torch::cat({h1.detach(), torch::ones({n, 1}, torch::kFloat64)}, 1);
  auto o2 = a2.mm(ms[2]).requires_grad_();
  // the chain by hand: d/d o1 through the head, d/d o0 through conv 1
  const auto lp = torch::log_softmax(o2, 1).gather(1, y.to(torch::kInt64).unsqueeze(1)).sum();
  const auto g2 = torch::autograd::grad({lp}, {o2})[0];
  const auto g_h1 = g2.mm(ms[2].narrow(0, 0, 3136).t()).view({n, 64, 7, 7});
  const auto z1 = torch::relu(o1);
  const auto g1 = torch::autograd::grad({F::max_pool2d(z1, F::MaxPool2dFuncOptions(2))}, {o1}, {g_h1})[0];
  const auto h_in = h.detach().requires_grad_();
  const auto g_h = torch::autograd::grad({conv(h_in, ms[1], 32, 64)}, {h_in}, {g1})[0];
  const auto g0 = torch::autograd::grad({F::max_pool2d(torch::relu(o0), F::MaxPool2dFuncOptions(2))}, {o0}, {g_h})[0];
  auto rows = [](const torch::Tensor& g) { return g.permute({0, 2, 3, 1}).reshape({-1, g.size(1)}); };
  auto patches = [&](const torch::Tensor& in) {
    const auto p = F::unfold(in, F::UnfoldFuncOptions({3, 3}).padding(1)).transpose(1, 2).reshape({-1, in.size(1) * 9});
    return torch::cat({p, torch::ones({p.size(0), 1}, torch::kFloat64)}, 1);
  };
  const auto p0 = patches(img), p1 = patches(h.detach());
  const auto r0 = rows(g0), r1 = rows(g1);
  const double nn = static_cast<double>(n);
  EXPECT_TRUE(torch::allclose(inf->factor_a(0), p0.t().mm(p0) / nn, 1e-6, 1e-9));
  EXPECT_TRUE(torch::allclose(inf->factor_s(0), r0.t().mm(r0) / (nn * 784.0), 1e-6, 1e-12));
  EXPECT_TRUE(torch::allclose(inf->factor_a(1), p1.t().mm(p1) / nn, 1e-6, 1e-9));
  EXPECT_TRUE(torch::allclose(inf->factor_s(1), r1.t().mm(r1) / (nn * 196.0), 1e-6, 1e-12));
  EXPECT_TRUE(torch::allclose(inf->factor_a(2), a2.t().mm(a2) / nn, 1e-6, 1e-9));
  EXPECT_TRUE(torch::allclose(inf->factor_s(2), g2.t().mm(g2) / nn, 1e-6, 1e-12));
  EXPECT_GT(inf->factor_s(0).abs().max().item<double>(), 1e-10) << "the gradients reach the first convolution";
}

// NNG as a classifier (the softmax's true Fisher draws labels from the
// model; the likelihood has no parameters of its own for the noise optimiser):
// a linearly separable two-class problem is learned, and the capture/step
// path runs without a Gaussian.
TEST(Nng, ClassifiesALinearlySeparableProblem) {
  set_threads(1);
  auto g = make_generator(11);
  const auto x = torch::randn({300, 2}, g);
  const auto y = (x.select(1, 0) + 0.5 * x.select(1, 1) > 0).to(torch::kFloat32);
  const auto cfg = config::Config::parse("likelihood: {kind: softmax}\nmodel: {kind: nng, depth: 1, width: 16}\n"
                                         "training: {steps: 600, steps_fixed_noise: 0, batch_size: 50, log_every: 100000}\n",
                                         "c.yaml");
  auto inf = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(12), 2);
  experiment::train(*inf, x.narrow(0, 0, 200), y.narrow(0, 0, 200), cfg, make_generator(13), "t");
  const auto logp = inf->predict(x.narrow(0, 200, 100), 8, make_generator(14));  // [8, 100, 2] log-probabilities
  const auto pred = logp.exp().mean(0).argmax(1).to(torch::kFloat32);
  const double err = (pred != y.narrow(0, 200, 100)).to(torch::kFloat64).mean().item<double>();
  EXPECT_LT(err, 0.1);
}

// NNG on the combinations it cannot train: filters of another kind (their
// parameters would never move), and nng filters under another method.
TEST(Conv, NngRefusesFiltersItCannotTrain) {
  const auto mixed = config::Config::parse("model: {kind: nng, architecture: simple-cnn, conv: mcd}\n", "a.yaml");
  EXPECT_TRUE(contains(error_of([&] { experiment::make_inference(784, mixed, 0, 1, make_generator(1), 10); }),
                       "set model.conv: nng"));
  const auto other = config::Config::parse("model: {kind: mcd, architecture: simple-cnn, conv: nng}\n", "b.yaml");
  EXPECT_TRUE(contains(error_of([&] { experiment::make_inference(784, other, 0, 1, make_generator(1), 10); }),
                       "set model.kind: nng"));
}

// AlexNet as the supplement's Table 7 gives it, with WHVI fully connected
// layers: the conv filters' count is exact and the whole is the paper's ~2.3 M.
TEST(Conv, AlexNetWithWhviHasThePapersParameterCount) {
  const auto cfg = config::Config::parse(
      "data: {dataset: cifar10-mini}\nlikelihood: {kind: softmax}\n"
      "model: {kind: whvi, architecture: alexnet, depth: 2, width: 4096, output_layer: same}\n",
      "a.yaml");
  auto net_ptr = experiment::make_network(3072, cfg, 0, 1, make_generator(1), 10);
  auto& net = *net_ptr;
  const int64_t conv = (64 * 27 + 64) + (192 * 576 + 192) + (384 * 1728 + 384) + (256 * 3456 + 256) +
                       (256 * 2304 + 256);
  int64_t trunk = 0;
  for (const auto& p : net.named_parameters())
    if (p.key().rfind("trunk.", 0) == 0) trunk += p.value().numel();
  EXPECT_EQ(trunk, conv);
  const int64_t total = net.num_params();
  EXPECT_GT(total, 2200000);
  EXPECT_LT(total, 2450000);
  std::cout << "AlexNet-WHVI parameters: " << total << " (conv " << conv << ")\n";
  // shapes: a batch of 2 images -> [2, 10]; a non-image input is refused
  models::ForwardCtx ctx;
  ctx.mode = models::Mode::kSample;
  ctx.gen = make_generator(2);
  EXPECT_EQ(net.forward_standardized(torch::randn({2, 3072}), ctx).sizes(), (std::vector<int64_t>{2, 10}));
  EXPECT_TRUE(contains(error_of([&] { experiment::make_network(100, cfg, 0, 1, make_generator(1), 10); }),
                       "needs image inputs"));
}

TEST(Conv, SimpleCnnTrainsOnCifarMiniAndEvaluatesFromItsCheckpoint) {
  set_threads(1);
  const std::string dir = data_dir();
  if (!fs::exists(fs::path(dir) / "cifar10-mini")) GTEST_SKIP() << "no cifar10-mini under " << dir;
  const fs::path out = fs::temp_directory_path() / "whvi_conv_exp";
  whvi::remove_tree(fs::path(out).string());
  fs::create_directories(out);
  std::ofstream(out / "c.yaml") << "data: {dataset: cifar10-mini, dir: '" << dir
                                << "', protocol: standard, splits: 1}\nlikelihood: {kind: softmax}\n"
                                   "model: {kind: mcd, architecture: simple-cnn, depth: 0, conv: mfg}\n"
                                   "training: {steps: 30, steps_fixed_noise: 0, batch_size: 16}\n"
                                   "evaluation: {mc_samples: 2}\noutput: {dir: '"
                                << out.string() << "', plot: false}\n";
  experiment::TrainOptions o;
  o.config_path = (out / "c.yaml").string();
  const auto doc = experiment::run_train(o);
  EXPECT_EQ(doc["splits"][0]["n_test"].get<int64_t>(), 1000);
  EXPECT_LT(doc["splits"][0]["error"].get<double>(), 0.9);
  experiment::EvalOptions eo;
  eo.checkpoint = (out / "c" / "split-00.ckpt").string();
  EXPECT_EQ(experiment::run_eval(eo)["mnll"], doc["splits"][0]["mnll"]);
  whvi::remove_tree(fs::path(out).string());
}

// ---- the approximation study (issue 12, item 3; Fig. 11) ---------------------------

TEST(Approximation, StructuredMatrixIsTheExplicitProductAndAReachableTargetIsFitted) {
  auto g = make_generator(1);
  const int64_t d = 8;
  const auto s1 = torch::randn({d}, g).to(torch::kFloat64), gg = torch::randn({d}, g).to(torch::kFloat64),
             s2 = torch::randn({d}, g).to(torch::kFloat64);
  const auto h = ops::hadamard_matrix(d) / std::sqrt(8.0);
  const auto want = torch::diag(s1).mm(h).mm(torch::diag(gg)).mm(h).mm(torch::diag(s2));
  EXPECT_TRUE(torch::allclose(analysis::structured_matrix(s1, gg, s2), want, 1e-12, 1e-12));
  // a target the structure represents exactly is fitted far below the U(-1,1) level
  const double rmse = analysis::fit_structure(want, 3000, 0.02, make_generator(2));
  EXPECT_LT(rmse, 0.05 * want.square().mean().sqrt().item<double>());
  // a dense random target cannot be fitted exactly, but better than predicting 0
  const auto dense = torch::rand({d, d}, make_generator(3), torch::kFloat64) * 2 - 1;
  const double r = analysis::fit_structure(dense, 2000, 0.02, make_generator(4));
  EXPECT_GT(r, 0.05);
  EXPECT_LT(r, dense.square().mean().sqrt().item<double>());
}
