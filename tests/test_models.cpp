// Bayesian layers (every registered kind), the WHVI weight distribution,
// local reparameterisation, closed-form KLs and the test metrics.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "common/rng.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "nn/conv_filter.h"
#include "nn/layer.h"
#include "onnx/graph.h"
#include "models/regression_model.h"
#include "models/trunk.h"
#include "optim/rule.h"
#include "ops/fwht_op.h"
#include "likelihoods/metrics.h"
#include "helpers.h"

using whvi::testing::cfg_with;
using whvi::testing::error_of;

using namespace whvi;
using models::Mode;

namespace {


models::LayerContext init(uint64_t seed, bool is_output = false) { return {is_output, make_generator(seed)}; }

torch::Tensor param(models::BayesianLayer& l, const std::string& name) {
  for (const auto& p : l.named_parameters())
    if (p.key() == name) return p.value();
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

// ---- every registered kind -------------------------------------------------------

class EveryKind : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryKind, ShapesKlGradientsAndSeeds) {
  const auto cfg = cfg_with({"model.mcd.dropout=0.3"});  // so that MCD samples differ in small layers
  for (auto [in, out] : {std::pair{5, 13}, {8, 8}, {1, 3}, {16, 4}}) {
    torch::manual_seed(1);
    auto layer = experiment::make_layer(GetParam(), in, out, cfg, init(1));
    auto gen = make_generator(2);
    EXPECT_EQ(layer->kind(), GetParam());
    EXPECT_GT(layer->num_params(), 0);
    auto x = torch::randn({7, in});
    for (Mode m : {Mode::kSample, Mode::kMean}) {
      auto y = layer->forward(x, m, gen);
      EXPECT_EQ(y.sizes(), (std::vector<int64_t>{7, out}));
      EXPECT_TRUE(torch::isfinite(y).all().item<bool>());
    }
    auto kl = layer->kl();
    EXPECT_EQ(kl.numel(), 1);
    EXPECT_GE(kl.item<double>(), 0.0);
    (layer->forward(x, Mode::kSample, gen).square().sum() + kl).backward();
    for (const auto& p : layer->named_parameters())
      EXPECT_TRUE(p.value().grad().defined()) << GetParam() << " " << p.key();
    // the same generators give the same layer and the same samples, whatever
    // the global generator does in between; another seed gives others
    auto a = experiment::make_layer(GetParam(), in, out, cfg, init(42));
    auto ya = a->forward(x, Mode::kSample, make_generator(7));
    torch::randn({100});
    auto b = experiment::make_layer(GetParam(), in, out, cfg, init(42));
    auto yb = b->forward(x, Mode::kSample, make_generator(7));
    EXPECT_TRUE(torch::equal(ya, yb));
    auto c = experiment::make_layer(GetParam(), in, out, cfg, init(43));
    EXPECT_FALSE(torch::equal(a->parameters()[0], c->parameters()[0]));
    // (a deterministic layer, SGHMC's "linear", has no samples to differ)
    if (GetParam() != "linear") EXPECT_FALSE(torch::equal(ya, a->forward(x, Mode::kSample, make_generator(8))));
  }
  EXPECT_THROW(experiment::make_layer(GetParam(), 4, 4, cfg, init(0))->forward(torch::randn({2, 5}), Mode::kMean),
               ShapeError);
}

// The capabilities a kind declares (the lists in help and error text come
// from them) are what a layer of its default options offers: the fused step
// and batched splits, hidden and at the output; a kind that declares neither
// offers neither. Declaring one the layer does not have, or forgetting one it
// has, fails here.
TEST_P(EveryKind, DeclaredCapabilitiesAreTheLayers) {
  const auto& kind = models::find_layer_kind(GetParam());
  for (bool output : {false, true}) {
    auto layer = experiment::make_layer(GetParam(), 8, output ? 1 : 8, cfg_with({}), init(1, output));
    EXPECT_EQ(layer->fused() != nullptr, kind.fused_when != nullptr) << GetParam() << " output " << output;
    EXPECT_EQ(layer->group() != nullptr, kind.batched_when != nullptr) << GetParam() << " output " << output;
    onnx::Graph g;  // whvi export: the kinds that declare it append nodes, the others refuse with ""
    EXPECT_EQ(!layer->export_onnx(g, "x").empty(), kind.exported_when != nullptr) << GetParam() << " output " << output;
  }
}

// A kind that exports only with some options refuses the others (whvi export names the condition).
TEST(Registry, WhviExportsOnlyItsDefaultStructure) {
  onnx::Graph g;
  auto plain = experiment::make_layer("whvi", 8, 8, cfg_with({}), init(1));
  EXPECT_FALSE(plain->export_onnx(g, "x").empty());
  auto gh = experiment::make_layer("whvi", 8, 8, cfg_with({"model.whvi.structure=gh"}), init(1));
  EXPECT_TRUE(gh->export_onnx(g, "x").empty());
  EXPECT_EQ(std::string(models::find_layer_kind("whvi").exported_when), "with its default structure");
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryKind, ::testing::ValuesIn(models::registered_layer_kinds()));

// The lists are written from the declarations, in registration order.
TEST(Registry, CapabilityListsComeFromTheDeclarations) {
  EXPECT_EQ(models::layer_kinds_with(&models::LayerKind::batched_when),
            "whvi (with its default structure), mfg, mcd");
  EXPECT_EQ(models::model_kinds_with(&models::LayerKind::batched_when, "variational"), "mcd, mfg, whvi");
  EXPECT_NE(models::layer_kinds_with(&models::LayerKind::fused_when).find("nf-whvi (with a deterministic or no bias)"),
            std::string::npos);
  EXPECT_EQ(likelihoods::likelihoods_that(likelihoods::Capability::kFusedStep), "gaussian, softmax");
  EXPECT_EQ(likelihoods::likelihoods_that(likelihoods::Capability::kBatchedSplits), "gaussian");
  EXPECT_EQ(likelihoods::likelihoods_that(likelihoods::Capability::kClassification), "softmax");
}

TEST(Registry, UnknownKindListsTheKnownOnes) {
  try {
    experiment::make_layer("gp", 2, 2, cfg_with({}), init(0));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer kind 'gp' is not registered; registered: whvi, mfg, mcd, nf-whvi, linear, nng"),
              std::string::npos)
        << e.what();
  }
  // the same lookup serves every registry
  EXPECT_EQ(error_of([] { models::find_trunk("lenet"); }),
            "model.architecture 'lenet' is not registered; registered: simple-cnn, alexnet, vgg16, resnet18, rff");
  EXPECT_NE(error_of([] { models::find_filter("gp"); }).find("registered: mcd, mfg"), std::string::npos);
  EXPECT_NE(error_of([] { optim::find_rule("lion"); }).find("registered: adam, sgd, rmsprop"), std::string::npos);
}

// ---- KL --------------------------------------------------------------------------

TEST(Kl, ClosedFormMatchesMonteCarlo) {
  torch::manual_seed(3);
  auto mu = torch::randn({6}, torch::kFloat64) * 0.5;
  auto lv = torch::randn({6}, torch::kFloat64) * 0.3 - 1.0;
  const double pv = 0.7;
  const double kl = models::kl_diag_gaussian(mu, lv, pv).item<double>();
  const int64_t S = 400000;
  auto sd = (0.5 * lv).exp();
  auto z = mu + sd * torch::randn({S, 6}, torch::kFloat64);
  auto logq = (-0.5 * (std::log(2 * M_PI) + lv + (z - mu).square() / lv.exp())).sum(1);
  auto logp = (-0.5 * (std::log(2 * M_PI * pv) + z.square() / pv)).sum(1);
  const auto diff = logq - logp;
  const double mc = diff.mean().item<double>();
  const double se = diff.std().item<double>() / std::sqrt(double(S));
  EXPECT_NEAR(kl, mc, 5 * se);
  EXPECT_NEAR(models::kl_diag_gaussian(torch::zeros({3}), torch::full({3}, std::log(pv)), pv).item<double>(), 0.0, 1e-12);
}

// ---- WHVI ------------------------------------------------------------------------

// Mean weight matrix through the layer (identity inputs, Mode::kMean) equals
// S1 H diag(mu) H S2 built from the parameters, stacked and truncated
// (Algorithm 1: 5 inputs padded to D = 8, 13 outputs from 2 blocks).
TEST(Whvi, MeanMatrixIsS1HGHS2StackedAndTruncated) {
  auto cfg = cfg_with({"model.whvi.bias=none"});
  torch::manual_seed(5);
  auto layer = experiment::make_layer("whvi", 5, 13, cfg, init(5));
  layer->to(torch::kFloat64);
  auto W = layer->forward(torch::eye(5, torch::kFloat64), Mode::kMean).t();  // [13, 5]
  const auto s1 = param(*layer, "s1"), s2 = param(*layer, "s2"), mu = param(*layer, "g_mu");
  ASSERT_EQ(s1.sizes(), (std::vector<int64_t>{2, 8}));
  auto H = ops::hadamard_matrix(8);
  std::vector<torch::Tensor> blocks;
  for (int k = 0; k < 2; ++k)
    blocks.push_back(torch::diag(s1[k]).mm(H).mm(torch::diag(mu[k])).mm(H).mm(torch::diag(s2[k])));
  auto ref = torch::cat(blocks, 0).slice(0, 0, 13).slice(1, 0, 5);
  EXPECT_LE((W - ref).abs().max().item<double>(), 1e-10);
}

// W = S1 H diag(g) H S2 with g ~ N(mu, diag(s^2)): the empirical mean and the
// covariance of all D^2 entries match the closed form (paper eq. 5 in vec form:
// Cov(W_ij, W_kl) = s1_i s2_j s1_k s2_l sum_m H_im H_mj H_km H_ml s_m^2).
TEST(Whvi, WeightDistributionMatchesClosedForm) {
  torch::manual_seed(6);
  const int64_t D = 4, S = 100000;
  auto s1 = torch::rand({1, D}, torch::kFloat64) + 0.5, s2 = torch::rand({1, D}, torch::kFloat64) + 0.5;
  auto mu = torch::randn({1, D}, torch::kFloat64), sg = torch::rand({1, D}, torch::kFloat64) + 0.2;
  // One g per sample, shared by the D basis inputs: rows (sample, j) -> column j of sample W.
  auto eps = torch::randn({S, 1, 1, D}, torch::kFloat64).expand({S, D, 1, D}).reshape({S * D, 1, D});
  auto x = torch::eye(D, torch::kFloat64).repeat({S, 1});
  auto cols = ops::whvi_matvec(x, eps.contiguous(), s1, s2, mu, sg).view({S, D, D});  // [s, j, i] = W_ij
  auto Wv = cols.transpose(1, 2).reshape({S, D * D});                                // vec by rows
  auto H = ops::hadamard_matrix(D);
  auto mean_ref = torch::diag(s1[0]).mm(H).mm(torch::diag(mu[0])).mm(H).mm(torch::diag(s2[0])).reshape({-1});
  auto emp_mean = Wv.mean(0);
  auto cen = Wv - emp_mean;
  auto emp_cov = cen.t().mm(cen) / double(S - 1);
  auto cov_ref = torch::zeros({D * D, D * D}, torch::kFloat64);
  auto a = s1[0], b = s2[0], v = sg[0].square();
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j)
      for (int64_t k = 0; k < D; ++k)
        for (int64_t l = 0; l < D; ++l) {
          double c = 0;
          for (int64_t m = 0; m < D; ++m)
            c += (H[i][m] * H[m][j] * H[k][m] * H[m][l] * v[m]).item<double>();
          cov_ref[i * D + j][k * D + l] = a[i].item<double>() * b[j].item<double>() * a[k].item<double>() *
                                          b[l].item<double>() * c;
        }
  const double scale = cov_ref.abs().max().item<double>();
  EXPECT_LE((emp_mean - mean_ref).abs().max().item<double>(), 0.05 * std::sqrt(scale));
  EXPECT_LE((emp_cov - cov_ref).abs().max().item<double>(), 0.05 * scale);
  // and the paper's matrix-variate structure: rows and columns are correlated
  EXPECT_GT(cov_ref.abs().sum().item<double>(), cov_ref.diagonal().abs().sum().item<double>() * 1.5);
}

// Local reparameterisation (one g per row) gives each output the same
// distribution as sampling W explicitly and multiplying.
TEST(Whvi, LocalReparameterisationMatchesExplicitSampling) {
  auto cfg = cfg_with({"model.whvi.bias=none", "model.whvi.init_g_logvar=-1"});
  torch::manual_seed(7);
  auto layer = experiment::make_layer("whvi", 6, 10, cfg, init(7));
  layer->to(torch::kFloat64);
  torch::NoGradGuard ng;
  const int64_t S = 60000;
  auto x = torch::randn({1, 6}, torch::kFloat64);
  auto y = layer->forward(x.expand({S, 6}).contiguous(), Mode::kSample, make_generator(70));  // [S, 10]
  // explicit: g ~ q, W = S1 H diag(g) H S2 per block, y = W x_padded
  const auto s1 = param(*layer, "s1"), s2 = param(*layer, "s2"), mu = param(*layer, "g_mu"),
             lv = param(*layer, "g_logvar");
  auto H = ops::hadamard_matrix(8);
  auto xp = torch::constant_pad_nd(x, {0, 2})[0];
  auto g = mu.unsqueeze(0) + (0.5 * lv).exp().unsqueeze(0) * torch::randn({S, 2, 8}, torch::kFloat64);
  auto u = H.mv(s2[0] * xp);  // block 0 input side
  auto u1 = H.mv(s2[1] * xp);
  auto y0 = (g.select(1, 0) * u).mm(H) * s1[0];
  auto y1 = (g.select(1, 1) * u1).mm(H) * s1[1];
  auto yr = torch::cat({y0, y1}, 1).slice(1, 0, 10);
  const auto sd = yr.std(0);
  EXPECT_LE(((y.mean(0) - yr.mean(0)).abs() / sd).max().item<double>(), 0.05);
  EXPECT_LE(((y.std(0) - sd).abs() / sd).max().item<double>(), 0.03);
}

TEST(Mfg, LocalReparameterisationMomentsAreExact) {
  auto cfg = cfg_with({"model.mfg.init_logvar=-2"});
  torch::manual_seed(8);
  auto layer = experiment::make_layer("mfg", 3, 2, cfg, init(8));
  layer->to(torch::kFloat64);
  torch::NoGradGuard ng;
  auto x = torch::randn({1, 3}, torch::kFloat64);
  auto y = layer->forward(x.expand({200000, 3}).contiguous(), Mode::kSample, make_generator(80));
  auto m = torch::addmm(param(*layer, "b_mu"), x, param(*layer, "w_mu"))[0];
  auto v = torch::addmm(param(*layer, "b_logvar").exp(), x.square(), param(*layer, "w_logvar").exp())[0];
  EXPECT_LE(((y.mean(0) - m).abs() / v.sqrt()).max().item<double>(), 0.02);
  EXPECT_LE(((y.var(0) - v).abs() / v).max().item<double>(), 0.02);
}

TEST(Mcd, DropoutRateAndInvertedScaling) {
  auto cfg = cfg_with({"model.mcd.dropout=0.3"});
  torch::manual_seed(9);
  auto layer = experiment::make_layer("mcd", 4, 50, cfg, init(9));
  torch::NoGradGuard ng;
  auto x = torch::randn({2000, 4});
  auto det = layer->forward(x, Mode::kMean);
  auto y = layer->forward(x, Mode::kSample, make_generator(90));
  const double zero_frac = (y == 0).to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(zero_frac, 0.3, 0.01);
  auto kept = y != 0;
  EXPECT_TRUE(torch::allclose(y.masked_select(kept), det.masked_select(kept) / 0.7, 1e-5, 1e-6));
  // no dropout at the output layer
  auto out = experiment::make_layer("mcd", 4, 1, cfg, init(9, true));
  EXPECT_TRUE(torch::equal(out->forward(x, Mode::kSample, make_generator(91)), out->forward(x, Mode::kMean)));
}

// ---- the model's parameter count (paper toy network, notes: 1537) ----------------

TEST(RegressionModel, ToyWhviParameterCount) {
  auto cfg = cfg_with({"model.activation=cos"});
  auto m_ptr = experiment::make_network(1, cfg, 0.0, 1.0, make_generator(0));
  auto& m = *m_ptr;
  // 1->128: S1,S2,mu,logvar over 128 blocks of 1 (512) + bias 128;
  // 128->128: 4*128 + 128; output MFG 128->1: 2*128 + 2; noise: 1.
  EXPECT_EQ(m.num_params(), 512 + 128 + 512 + 128 + 258 + 1);
}

// ---- metrics -----------------------------------------------------------------------

TEST(Metrics, HandComputedCase) {
  // two samples, two points, noise variance 1
  auto f = torch::tensor({0.0, 2.0, 2.0, 2.0}, torch::kFloat64).view({2, 2});
  auto y = torch::tensor({1.0, 2.0}, torch::kFloat64);
  const auto m = metrics::regression_metrics(f, y, 1.0);
  // MC mean = (1, 2): RMSE 0
  EXPECT_NEAR(m.rmse, 0.0, 1e-12);
  const double c = 0.5 * std::log(2 * M_PI);
  // point 1: both samples are 1 away: -log p = c + 0.5 for both
  // point 2: sample 1 is exact (c), sample 2 exact (c)
  EXPECT_NEAR(m.mnll_paper, 0.5 * ((c + 0.5) + c), 1e-12);
  EXPECT_NEAR(m.mnll, 0.5 * ((c + 0.5) + c), 1e-12);
  // a case where the two conventions differ: one sample exact, one 2 away
  auto f2 = torch::tensor({0.0, 2.0}, torch::kFloat64).view({2, 1});
  auto y2 = torch::tensor({0.0}, torch::kFloat64);
  const auto m2 = metrics::regression_metrics(f2, y2, 1.0);
  EXPECT_NEAR(m2.rmse, 1.0, 1e-12);
  EXPECT_NEAR(m2.mnll_paper, c + 0.5 * (0 + 2.0), 1e-12);
  EXPECT_NEAR(m2.mnll, -std::log(0.5 * (std::exp(-c) + std::exp(-c - 2.0))), 1e-12);
  EXPECT_LT(m2.mnll, m2.mnll_paper);  // Jensen
  EXPECT_THROW(metrics::regression_metrics(f2, y2, 0.0), Error);
  EXPECT_THROW(metrics::regression_metrics(torch::full({2, 1}, NAN, torch::kFloat64), y2, 1.0), Error);
}

TEST(Metrics, SummaryUsesPopulationStd) {
  const auto s = metrics::summarize({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.std, std::sqrt(1.25), 1e-12);
  EXPECT_NEAR(s.sem, std::sqrt(1.25) / 2.0, 1e-12);
}

}  // namespace
