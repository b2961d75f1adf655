// The model family on the inference seam: NF-WHVI (planar flows, the Monte
// Carlo KL), SGHMC (samples of an exact posterior), NNG (Kronecker factors
// against a Fisher written out by hand, the posterior mean of a conjugate
// problem). Every reference here is computed independently of the code under
// test: explicit matrices, closed forms, autograd Jacobians.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "common/draws.h"
#include "common/errors.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "infer/inference.h"
#include "closed_form_helpers.h"
#include "infer/nng.h"
#include "infer/variational.h"
#include "nn/layer.h"
#include "nn/planar_flow.h"
#include "models/regression_model.h"
#include "train/loop.h"
#include "helpers.h"

using whvi::testing::cfg_with;

using namespace whvi;
using models::Mode;

namespace {


torch::Tensor param(torch::nn::Module& m, const std::string& name) {
  for (const auto& p : m.named_parameters())
    if (p.key() == name) return p.value();
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

// ---- NF-WHVI -----------------------------------------------------------------------

// log|det J| of the flows equals the log-determinant of the Jacobian that
// autograd computes column by column (float64, D = 5, 4 flows, 2 groups).
TEST(PlanarFlow, LogDeterminantMatchesTheJacobian) {
  torch::manual_seed(0);
  const int64_t K = 4, G = 2, D = 5;
  const auto opt = torch::kFloat64;
  const auto u = torch::randn({K, G, D}, opt), w = torch::randn({K, G, D}, opt), b = torch::randn({K, G}, opt);
  const auto z0 = torch::randn({1, G, D}, opt);
  const auto [zk, logdet] = models::planar_flows(z0, u, w, b);
  for (int64_t g = 0; g < G; ++g) {
    // the Jacobian of group g's output w.r.t. group g's input (groups are independent)
    auto jac = torch::zeros({D, D}, opt);
    for (int64_t i = 0; i < D; ++i) {
      auto z = z0.clone().requires_grad_(true);
      const auto out = models::planar_flows(z, u, w, b).first;
      const auto grad = torch::autograd::grad({out[0][g][i]}, {z})[0];
      jac[i] = grad[0][g];
      // nothing leaks across groups
      EXPECT_EQ(grad[0][1 - g].abs().max().item<double>(), 0.0);
    }
    const double ld = std::log(std::fabs(torch::det(jac).item<double>()));
    // logdet sums the groups: compare group by group through a one-group flow
    const auto one = models::planar_flows(z0.narrow(1, g, 1), u.narrow(1, g, 1), w.narrow(1, g, 1), b.narrow(1, g, 1));
    EXPECT_NEAR(one.second.item<double>(), ld, 1e-10) << g;
  }
  const auto g0 = models::planar_flows(z0.narrow(1, 0, 1), u.narrow(1, 0, 1), w.narrow(1, 0, 1), b.narrow(1, 0, 1));
  const auto g1 = models::planar_flows(z0.narrow(1, 1, 1), u.narrow(1, 1, 1), w.narrow(1, 1, 1), b.narrow(1, 1, 1));
  EXPECT_NEAR(logdet.item<double>(), (g0.second + g1.second).item<double>(), 1e-12);
}

// wᵀû > -1 whatever u is, including u chosen to break it (wᵀu = -100).
TEST(PlanarFlow, ConstraintHoldsForAnyU) {
  torch::manual_seed(1);
  const auto w = torch::randn({3, 8}, torch::kFloat64);
  for (double scale : {-100.0, -3.0, -1.0, 0.0, 5.0}) {
    const auto u = scale * w / w.square().sum(-1, true) + 0.01 * torch::randn({3, 8}, torch::kFloat64);
    const auto wu = (w * models::planar_u_hat(u, w)).sum(-1);
    EXPECT_GT(wu.min().item<double>(), -1.0) << scale;
    if (scale >= 0) EXPECT_NEAR((w * u).sum(-1)[0].item<double>(), scale + 0.0, 1.0);  // sanity of the set-up
  }
}

// With 0 flows NF-WHVI is the WHVI layer: same initial values, same outputs
// (mean and sampled, within float rounding: the product runs through another
// path), the same closed-form KL, and no Monte Carlo KL term at all.
TEST(NfWhvi, WithoutFlowsItIsWhvi) {
  const auto cfg = cfg_with({"model.nf_whvi.flows=0", "model.whvi.init_g_logvar=-1", "model.whvi.prior_var=0.5"});
  auto nf = experiment::make_layer("nf-whvi", 6, 13, cfg, {false, make_generator(3)});
  auto wh = experiment::make_layer("whvi", 6, 13, cfg, {false, make_generator(3)});
  const auto x = torch::randn({9, 6}, make_generator(4));
  EXPECT_TRUE(torch::allclose(nf->forward(x, Mode::kMean), wh->forward(x, Mode::kMean), 1e-4, 1e-5));
  models::ForwardCtx ctx;
  ctx.mode = Mode::kSample;
  ctx.gen = make_generator(5);
  EXPECT_TRUE(torch::allclose(nf->forward(x, ctx), wh->forward(x, Mode::kSample, make_generator(5)), 1e-4, 1e-5));
  EXPECT_FALSE(ctx.mc_kl.defined());
  EXPECT_DOUBLE_EQ(nf->kl().item<double>(), wh->kl().item<double>());
}

// The KL: kl() is KL(q0 || p) in closed form; the forward adds the mean over
// rows of log p(z_0) - log p(z_K) - Σ log|det J|, written out here from the
// layer's own parameters and noise, flow by flow; its gradient reaches the
// flow parameters (the authors' code detaches it).
TEST(NfWhvi, KlIsTheGaussianKlPlusTheFlowCorrectionWithGradients) {
  const double lambda = 0.7;
  const auto cfg = cfg_with({"model.nf_whvi.flows=3", "model.whvi.init_g_logvar=-2",
                             "model.whvi.prior_var=" + std::to_string(lambda), "model.whvi.bias=none"});
  auto nf = experiment::make_layer("nf-whvi", 4, 4, cfg, {false, make_generator(7)});
  nf->to(torch::kFloat64);
  {
    torch::NoGradGuard ng;  // flows far from the identity
    param(*nf, "flow_u").normal_(0, 1, make_generator(8));
    param(*nf, "flow_w").normal_(0, 1, make_generator(9));
    param(*nf, "flow_b").normal_(0, 1, make_generator(10));
  }
  const auto x = torch::randn({5, 4}, make_generator(11), torch::kFloat64);
  models::ForwardCtx ctx;
  ctx.mode = Mode::kSample;
  ctx.gen = make_generator(12);
  nf->forward(x, ctx);
  // the same noise the layer drew: the first draw from the same generator state
  const auto eps = torch::randn({5, 1, 4}, make_generator(12), torch::kFloat64);
  const auto mu = param(*nf, "g_mu"), lv = param(*nf, "g_logvar");
  const auto z0 = mu + (0.5 * lv).exp() * eps;
  double want = 0;
  for (int64_t i = 0; i < 5; ++i) {
    auto z = z0[i][0];
    double logdet = 0;
    for (int64_t k = 0; k < 3; ++k) {
      const auto u = param(*nf, "flow_u")[k][0], w = param(*nf, "flow_w")[k][0];
      const double b = param(*nf, "flow_b")[k][0].item<double>();
      const double wu = (w * u).sum().item<double>();
      const auto uh = u + ((-1.0 + std::max(std::log1p(std::exp(wu)), 1e-6)) - wu) * w / w.square().sum();
      const double a = (w * z).sum().item<double>() + b;
      logdet += std::log(std::fabs(1.0 + (1.0 - std::tanh(a) * std::tanh(a)) * (w * uh).sum().item<double>()));
      z = z + std::tanh(a) * uh;
    }
    double log_p0 = 0, log_pk = 0;
    for (int64_t j = 0; j < 4; ++j) {
      const double a0 = z0[i][0][j].item<double>(), ak = z[j].item<double>();
      log_p0 += -0.5 * (std::log(2 * M_PI * lambda) + a0 * a0 / lambda);
      log_pk += -0.5 * (std::log(2 * M_PI * lambda) + ak * ak / lambda);
    }
    want += (log_p0 - log_pk - logdet) / 5.0;
  }
  EXPECT_NEAR(ctx.mc_kl.item<double>(), want, 1e-9);
  // kl(): the closed form of q0 against the prior, by hand
  double kl0 = 0;
  for (int64_t j = 0; j < 4; ++j) {
    const double m = mu[0][j].item<double>(), v = std::exp(lv[0][j].item<double>());
    kl0 += 0.5 * (v / lambda + m * m / lambda - 1.0 - std::log(v / lambda));
  }
  EXPECT_NEAR(nf->kl().item<double>(), kl0, 1e-9);
  ctx.mc_kl.backward();
  for (const char* p : {"flow_u", "flow_w", "flow_b", "g_mu", "g_logvar"})
    EXPECT_GT(param(*nf, p).grad().abs().sum().item<double>(), 0.0) << p;
}

// Unbiased: over many rows, kl() + the correction averages to the plain
// estimator log q0(z_0) - Σ log|det J| - log p(z_K), computed here from z_0
// drawn with the layer's own generator and the flows of planar_flows().
TEST(NfWhvi, KlSplitAgreesWithThePlainEstimator) {
  const double lambda = 0.5;
  const auto cfg = cfg_with({"model.nf_whvi.flows=2", "model.whvi.init_g_logvar=-1",
                             "model.whvi.prior_var=" + std::to_string(lambda), "model.whvi.bias=none"});
  auto nf = experiment::make_layer("nf-whvi", 8, 8, cfg, {false, make_generator(13)});
  nf->to(torch::kFloat64);
  {
    torch::NoGradGuard ng;
    param(*nf, "flow_u").normal_(0, 0.7, make_generator(14));
    param(*nf, "flow_w").normal_(0, 0.7, make_generator(15));
  }
  torch::NoGradGuard ng;
  const int64_t n = 200000;
  models::ForwardCtx ctx;
  ctx.mode = Mode::kSample;
  ctx.gen = make_generator(16);
  nf->forward(torch::randn({n, 8}, make_generator(17), torch::kFloat64), ctx);
  const double split = nf->kl().item<double>() + ctx.mc_kl.item<double>();
  const auto eps = torch::randn({n, 1, 8}, make_generator(16), torch::kFloat64);
  const auto mu = param(*nf, "g_mu"), lv = param(*nf, "g_logvar");
  const auto z0 = mu + (0.5 * lv).exp() * eps;
  const auto [zk, logdet] = models::planar_flows(z0, param(*nf, "flow_u"), param(*nf, "flow_w"), param(*nf, "flow_b"));
  const auto log_q0 = (-0.5 * (std::log(2 * M_PI) + lv + eps.square())).sum({1, 2});
  const auto log_pk = (-0.5 * (std::log(2 * M_PI * lambda) + zk.square() / lambda)).sum({1, 2});
  const auto plain = log_q0 - logdet - log_pk;
  const double se = plain.std().item<double>() / std::sqrt(static_cast<double>(n));
  EXPECT_NEAR(split, plain.mean().item<double>(), 5 * se) << "se " << se;
  EXPECT_GT(se, 0);
}

// Training steps that push the flows hard (a large learning rate) leave every
// flow invertible: wᵀû > -1 for every trained flow.
TEST(NfWhvi, TrainedFlowsStayInvertible) {
  set_threads(1);
  auto cfg = cfg_with({"model.kind=nf-whvi", "model.nf_whvi.flows=4", "model.width=16", "training.lr=0.05",
                       "training.steps=200", "training.steps_fixed_noise=0", "training.log_every=1000000",
                       "training.lr_gamma=0"});
  const auto x = torch::randn({64, 2}, make_generator(1));
  const auto y = torch::sin(3 * x.select(1, 0)) + 0.1 * torch::randn({64}, make_generator(2));
  auto inf = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(3));
  experiment::train(*inf, x, y, cfg, make_generator(4), "t");
  int checked = 0;
  for (const auto& l : inf->model().layers()) {
    if (l->kind() != "nf-whvi") continue;
    const auto u = param(*l, "flow_u"), w = param(*l, "flow_w");
    EXPECT_GT((w * models::planar_u_hat(u, w)).sum(-1).min().item<double>(), -1.0);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// ---- a conjugate problem for SGHMC and NNG -------------------------------------------

struct Conjugate {
  torch::Tensor x, y, mean, cov;  // exact posterior of (w, b) under prior N(0, prior_var I)
};

Conjugate linear_gaussian(int64_t n, double noise_var, double prior_var) {
  auto x = torch::randn({n, 2}, make_generator(21), torch::kFloat64);
  auto y = x.mv(torch::tensor({0.8, -0.5}, torch::kFloat64)) + 0.3 +
           std::sqrt(noise_var) * torch::randn({n}, make_generator(22), torch::kFloat64);
  const auto xb = torch::cat({x, torch::ones({n, 1}, torch::kFloat64)}, 1);
  const auto prec = xb.t().mm(xb) / noise_var + torch::eye(3, torch::kFloat64) / prior_var;
  const auto cov = torch::inverse(prec);
  const auto mean = cov.mv(xb.t().mv(y) / noise_var);
  return {x, y, mean, cov};
}

// SGHMC on Bayesian linear regression (noise known, prior N(0, 1)): the mean
// and covariance of the stored samples match the exact Gaussian posterior,
// plain and preconditioned (whose mass matrix is frozen after the burn-in).
class Sghmc : public ::testing::TestWithParam<bool> {};

TEST_P(Sghmc, SamplesMatchTheExactPosteriorOfALinearModel) {
  set_threads(1);
  const bool pre = GetParam();
  const double noise_var = 0.25;
  const auto c = linear_gaussian(40, noise_var, 1.0);
  const int64_t steps = 60000;
  auto cfg = cfg_with({"model.kind=sghmc", "model.depth=0", "model.sghmc.prior_var=1", "model.sghmc.samples=3000",
                       "model.sghmc.burn_in=0.1", "model.sghmc.friction=0.1",
                       pre ? "model.sghmc.lr=0.3" : "model.sghmc.lr=0.02",
                       pre ? "model.sghmc.precondition=true" : "model.sghmc.precondition=false",
                       "likelihood.init_log_noise_var=" + std::to_string(std::log(noise_var)),
                       "training.steps_fixed_noise=" + std::to_string(steps), "training.steps=0",
                       "training.batch_size=40", "training.dtype=float64", "training.log_every=1000000"});
  auto inf = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(23));
  experiment::train(*inf, c.x, c.y, cfg, make_generator(24), "t");
  torch::Tensor bank;
  int64_t count = 0;
  for (auto& [k, t] : inf->state()) {
    if (k == "sghmc.bank") bank = t;
    if (k == "sghmc.count") count = t.item<int64_t>();
  }
  ASSERT_EQ(count, 3000);
  // flat order: layer0.w [2, 1], layer0.b [1], likelihood.log_noise_var [1]
  const auto th = bank.narrow(1, 0, 3);
  const auto m = th.mean(0);
  const auto centred = th - m;
  const auto cov = centred.t().mm(centred) / static_cast<double>(count - 1);
  const auto sd = c.cov.diagonal().sqrt();
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(m[i].item<double>(), c.mean[i].item<double>(), 0.25 * sd[i].item<double>()) << i;
    EXPECT_NEAR(cov[i][i].item<double>() / c.cov[i][i].item<double>(), 1.0, 0.3) << i;
  }
  // the noise stayed frozen at its true value
  EXPECT_NEAR(inf->likelihood().noise_var_original(), noise_var, 1e-6);  // (the parameter starts in float32)
  // predictions use every sample
  EXPECT_EQ(inf->predict(c.x.narrow(0, 0, 5), 64, make_generator(1)).size(0), 3000);
}

INSTANTIATE_TEST_SUITE_P(PlainAndPreconditioned, Sghmc, ::testing::Bool());

// NNG on the same problem: the mean M converges to the exact posterior mean
// (the fixed point of V = G - γ_in W̄ with λ = 1 is the MAP of the ELBO's
// data term and prior, which for a linear-Gaussian model is the posterior mean).
TEST(Nng, MeanReachesTheExactPosteriorMeanOfALinearModel) {
  set_threads(1);
  const double noise_var = 0.25;
  const auto c = linear_gaussian(40, noise_var, 1.0);
  const int64_t steps = 3000;
  auto cfg = cfg_with({"model.kind=nng", "model.depth=0", "model.nng.prior_var=1", "model.nng.lr=0.05",
                       "model.nng.ema=0.05", "model.nng.decay_at=1", "model.nng.inverse_every=1",
                       "likelihood.init_log_noise_var=" + std::to_string(std::log(noise_var)),
                       "training.steps_fixed_noise=" + std::to_string(steps), "training.steps=0",
                       "training.batch_size=40", "training.dtype=float64", "training.log_every=1000000"});
  auto inf = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(25));
  experiment::train(*inf, c.x, c.y, cfg, make_generator(26), "t");
  const auto m = param(inf->model(), "layer0.m").squeeze(1);  // [w1, w2, b]
  const auto sd = c.cov.diagonal().sqrt();
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(m[i].item<double>(), c.mean[i].item<double>(), 0.1 * sd[i].item<double>()) << i;
}

// model.nng.sampling: rows forms a particle's effect on the rows,
// ā M + ((ā L_A) E) L_Sᵀ, instead of the particle: with the same draw E the
// outputs equal those of the sampled weights ā (M + L_A E L_Sᵀ) to float
// rounding (one particle per draw, shared by its rows); its capture hands the
// optimiser M for the prior term.
TEST(Nng, RowSamplingIsTheSameParticleWithoutFormingIt) {
  torch::NoGradGuard ng;
  models::NngLayer weights(5, 3, 1.0, make_generator(1)), rows(5, 3, 1.0, make_generator(1), true);
  auto g = make_generator(2);
  const auto la = torch::randn({6, 6}, g) * 0.5, ls = torch::randn({3, 3}, g) * 0.5;
  weights.set_sampling(la, ls, 0, 0);
  rows.set_sampling(la, ls, 0, 0);
  const auto x = torch::randn({8, 5}, g);
  auto run = [&](models::NngLayer& l, models::KfacCapture& cap) {
    models::ForwardCtx ctx;
    ctx.mode = models::Mode::kSample;
    ctx.gen = make_generator(3);
    ctx.draws = 2;
    ctx.capture = &cap;
    return l.forward(x, ctx);
  };
  models::KfacCapture cw, cr;
  const auto yw = run(weights, cw), yr = run(rows, cr);
  EXPECT_TRUE(torch::allclose(yw, yr, 1e-4, 1e-5)) << (yw - yr).abs().max().item<double>();
  // the particles' noise is far above the tolerance (the comparison compares something)
  const auto dev = yr - torch::cat({x, torch::ones({8, 1})}, 1).mm(rows.mean());
  EXPECT_GT(dev.abs().max().item<double>(), 1e-2);
  EXPECT_TRUE(torch::equal(cr.entries[0].w_mean, rows.mean()));
  EXPECT_FALSE(torch::equal(cw.entries[0].w_mean, weights.mean()));
}

// `whvi predict` predicts row by row from one generator state: NNG keeps the
// particles the first row drew and reuses them for the next rows. Each row's
// numbers are those of drawing them again (predict_with with no cache), and
// the generator is left where drawing leaves it, for either sampling and for
// several chunks of samples; a changed mean, S or generator state draws anew.
TEST(Nng, KeptParticlesGiveTheNumbersOfDrawingThemAgain) {
  set_threads(1);
  torch::NoGradGuard ng;
  for (const std::string sampling : {"weights", "rows"}) {
    SCOPED_TRACE(sampling);
    auto base = experiment::make_inference(
        3, cfg_with({"model.kind=nng", "model.depth=2", "model.width=6", "model.nng.sampling=" + sampling}), 0.0,
        1.0, make_generator(41));
    auto* inf = dynamic_cast<infer::NoisyKfac*>(base.get());
    ASSERT_NE(inf, nullptr);
    auto g = make_generator(42);
    for (const auto& l : inf->model().layers()) {  // particles far from the mean
      auto* nl = dynamic_cast<models::NngLayer*>(l.get());
      const int64_t in = nl->in_features() + 1, out = nl->out_features();
      nl->set_sampling(torch::randn({in, in}, g) * 0.5, torch::randn({out, out}, g) * 0.5, 0, 0);
    }
    const auto x = torch::randn({4, 3}, g);
    const auto check = [&](int64_t i, int64_t S, uint64_t seed) {
      auto got_gen = make_generator(seed), want_gen = make_generator(seed);
      const auto got = inf->predict(x.narrow(0, i, 1), S, got_gen);
      const auto want = infer::predict_with(inf->model(), x.narrow(0, i, 1), S, want_gen);
      EXPECT_TRUE(torch::equal(got, want)) << "row " << i << ", S " << S;
      EXPECT_TRUE(torch::equal(whvi::randn({3}, got_gen), whvi::randn({3}, want_gen))) << "row " << i;
      return got;
    };
    const auto first = check(0, 16, 43);
    EXPECT_GT(first.std(0).max().item<double>(), 1e-2);  // the draws matter
    for (int64_t i = 1; i < 4; ++i) check(i, 16, 43);
    EXPECT_EQ(inf->particle_reuses(), 3);
    check(1, 16, 44);  // another generator state
    check(1, 8, 44);   // another S
    param(inf->model(), "layer0.m").add_(0.25);
    check(1, 8, 44);  // another mean
    EXPECT_EQ(inf->particle_reuses(), 3);
    check(2, 8, 44);
    EXPECT_EQ(inf->particle_reuses(), 4);
    // more samples than one chunk (2^17 values): the chunks' particles are kept apart
    check(0, 140000, 45);
    check(3, 140000, 45);
    EXPECT_EQ(inf->particle_reuses(), 5);
  }
}

// A method that declares its draws are of the weights only
// (Inference::draws_weights_only) gives every row of one predict() call the
// draws that row would meet alone from the same generator state: `whvi
// predict` then predicts it in blocks of rows. Checked for every kind that
// declares it (NNG, with either sampling), against each row predicted alone;
// MC dropout (a mask per row) does not declare it and fails the same check,
// so the check compares something.
TEST(Inference, DrawsOfTheWeightsOnlyGiveABlockTheRowsAloneDraws) {
  set_threads(1);
  torch::NoGradGuard ng;
  const auto block_is_rows = [](infer::Inference& inf, const torch::Tensor& x) {
    const auto all = inf.predict(x, 8, make_generator(7));
    for (int64_t i = 0; i < x.size(0); ++i) {
      const auto one = inf.predict(x.narrow(0, i, 1), 8, make_generator(7));
      if (!torch::allclose(all.narrow(1, i, 1), one, 1e-6, 1e-8)) return false;
    }
    return all.std(0).max().item<double>() > 1e-3;  // the draws matter
  };
  auto g = make_generator(3);
  const auto x = torch::randn({5, 3}, g, torch::kFloat64);
  int declared = 0;
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"model.kind=nng"}, {"model.kind=nng", "model.nng.sampling=rows"},
        {"model.kind=mcd"}, {"model.kind=mfg"}, {"model.kind=whvi"}}) {
    SCOPED_TRACE(sets.back());
    auto base = sets;
    base.insert(base.end(), {"model.depth=2", "model.width=8"});
    auto inf = experiment::make_inference(3, cfg_with(base), 0.0, 1.0, make_generator(41));
    if (auto* nng = dynamic_cast<infer::NoisyKfac*>(inf.get()))
      for (const auto& l : nng->model().layers()) {  // particles far from the mean
        auto* nl = dynamic_cast<models::NngLayer*>(l.get());
        const int64_t in = nl->in_features() + 1, out = nl->out_features();
        nl->set_sampling(torch::eye(in) * 0.5, torch::eye(out) * 0.5, 0, 0);
      }
    if (!inf->draws_weights_only()) {
      if (sets.back() == "model.kind=mcd") EXPECT_FALSE(block_is_rows(*inf, x));  // a mask per row
      continue;
    }
    ++declared;
    EXPECT_TRUE(block_is_rows(*inf, x));
  }
  EXPECT_EQ(declared, 2);
}

// The same for the methods that draw weight vectors after a MAP fit (SWAG's
// posterior, Laplace's output layer) and for a deep ensemble of MAP networks
// (no draws at all): `whvi predict` predicts them in blocks of rows, which
// took SWAG over an hour for 10,000 rows predicted one at a time.
TEST(Inference, FittedWeightDrawsGiveABlockTheRowsAloneDraws) {
  set_threads(1);
  auto g = make_generator(5);
  const auto x = torch::randn({24, 3}, g, torch::kFloat64);
  const auto y = (x.select(1, 0).sin() + 0.1 * torch::randn({24}, g, torch::kFloat64));
  const auto xs = torch::randn({5, 3}, g, torch::kFloat64);
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"model.kind=swag", "model.swag.snapshots=6", "model.swag.rank=3"},
        {"model.kind=laplace"}}) {
    SCOPED_TRACE(sets.front());
    auto all = sets;
    all.insert(all.end(), {"model.depth=1", "model.width=8", "training.batch_size=24", "training.lr=0.01"});
    auto inf = whvi::testing::fitted_after_steps(all, x, y, 0, 30);
    ASSERT_TRUE(inf->draws_weights_only());
    torch::NoGradGuard ng;
    const auto block = inf->predict(xs, 8, make_generator(7));
    EXPECT_GT(block.std(0).max().item<double>(), 1e-6);  // the draws matter
    for (int64_t i = 0; i < xs.size(0); ++i)
      EXPECT_TRUE(torch::allclose(block.narrow(1, i, 1), inf->predict(xs.narrow(0, i, 1), 8, make_generator(7)),
                                  1e-9, 1e-12)) << i;
  }
  auto ens = experiment::make_inference(3, cfg_with({"model.kind=ensemble", "model.depth=1", "model.width=8"}), 0.0,
                                        1.0, make_generator(41));
  ASSERT_TRUE(ens->draws_weights_only());
  torch::NoGradGuard ng;
  const auto block = ens->predict(xs, 8, make_generator(7));
  for (int64_t i = 0; i < xs.size(0); ++i)
    EXPECT_TRUE(torch::allclose(block.narrow(1, i, 1), ens->predict(xs.narrow(0, i, 1), 8, make_generator(7)), 1e-6,
                                1e-8)) << i;
}

// After one step with β = 1 (no moving average), mean step 0 and N so large
// that the sampled weights equal M, the Kronecker factors are the empirical
// Fisher's, written out by hand for a 3 -> 4 -> 1 ReLU network:
//   A_l = mean ā ā ᵀ,  S_l = mean g gᵀ,  g_out = (y - f)/σ²,  g_hidden = g_out · W_out ⊙ 1[s > 0].
TEST(Nng, KroneckerFactorsAreTheFisherOfATinyNetwork) {
  set_threads(1);
  const double lnv = std::log(0.5);
  auto cfg = cfg_with({"model.kind=nng", "model.depth=1", "model.width=4", "model.nng.lr=0", "model.nng.ema=1",
                       "model.nng.fisher=empirical", "model.nng.particles=2",
                       "likelihood.init_log_noise_var=" + std::to_string(lnv), "training.dtype=float64"});
  auto base = experiment::make_inference(3, cfg, 0.0, 1.0, make_generator(31));
  auto* inf = dynamic_cast<infer::NoisyKfac*>(base.get());
  ASSERT_NE(inf, nullptr);
  inf->to(torch::kFloat64);
  const auto x = torch::randn({6, 3}, make_generator(32), torch::kFloat64);
  const auto y = torch::randn({6}, make_generator(33), torch::kFloat64);
  inf->begin(int64_t{1} << 50, 10, make_generator(34));
  inf->step(x, y, 0, make_generator(35));
  const auto m0 = param(inf->model(), "layer0.m").detach(), m1 = param(inf->model(), "layer1.m").detach();
  const auto a0 = torch::cat({x, torch::ones({6, 1}, torch::kFloat64)}, 1);
  const auto s0 = a0.mm(m0);
  const auto h = torch::relu(s0);
  const auto a1 = torch::cat({h, torch::ones({6, 1}, torch::kFloat64)}, 1);
  const auto f = a1.mm(m1).squeeze(1);
  const auto g1 = ((y - f) / std::exp(lnv)).unsqueeze(1);                         // [6, 1]
  const auto g0 = g1 * m1.narrow(0, 0, 4).t() * (s0 > 0).to(torch::kFloat64);     // [6, 4]
  // two particles of identical weights: the same rows twice, the same means
  EXPECT_TRUE(torch::allclose(inf->factor_a(0), a0.t().mm(a0) / 6.0, 1e-6, 1e-9));
  EXPECT_TRUE(torch::allclose(inf->factor_a(1), a1.t().mm(a1) / 6.0, 1e-6, 1e-9));
  EXPECT_TRUE(torch::allclose(inf->factor_s(0), g0.t().mm(g0) / 6.0, 1e-6, 1e-9));
  EXPECT_TRUE(torch::allclose(inf->factor_s(1), g1.t().mm(g1) / 6.0, 1e-6, 1e-9));
}

// The true Fisher (targets drawn from the model) of a Gaussian output is 1/σ²
// in expectation: S of the output layer over many rows.
TEST(Nng, TrueFisherOfTheGaussianOutputIsThePrecision) {
  set_threads(1);
  const double lnv = std::log(0.3);
  auto cfg = cfg_with({"model.kind=nng", "model.depth=0", "model.nng.lr=0", "model.nng.ema=1",
                       "likelihood.init_log_noise_var=" + std::to_string(lnv), "training.dtype=float64"});
  auto base = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(41));
  auto* inf = dynamic_cast<infer::NoisyKfac*>(base.get());
  inf->to(torch::kFloat64);
  const auto x = torch::randn({5000, 2}, make_generator(42), torch::kFloat64);
  inf->begin(5000, 10, make_generator(43));
  inf->step(x, torch::zeros({5000}, torch::kFloat64), 0, make_generator(44));
  // 10 particles x 5000 rows of (ỹ - f)²/σ⁴: mean 1/σ², relative sd sqrt(2/50000)
  EXPECT_NEAR(inf->factor_s(0).item<double>() * 0.3, 1.0, 0.03);
}


// model.nng.update: heavy-ball with the KL clip (the authors' CIFAR-10 code):
// v ← μ v + ν P, M ← M + α v, with ν scaling each step to the squared norm
// C_e = kl_clip · 0.95^e in the preconditioner's metric. With a tiny clip every
// step is clipped, so u_k = ΔM_k - μ ΔM_{k-1} = α ν P_k has, summed over the
// layers, ⟨u, A^γ u S^γ⟩ = α² ν² ⟨P, V⟩ = C_e exactly, A^γ and S^γ the inverses
// of the preconditioner in use (fixed: no eigendecomposition after begin).
// Fails for momentum on the gradient, a bias correction, a missing square
// root, α or decay, or a norm over one layer only.
TEST(Nng, ClippedHeavyBallStepsHaveTheClipsNormInThePreconditionersMetric) {
  set_threads(1);
  const auto c = linear_gaussian(40, 0.25, 1.0);
  const double mu = 0.5, clip = 1e-6;
  auto cfg = cfg_with({"model.kind=nng", "model.depth=1", "model.width=4", "model.nng.update=heavy-ball",
                       "model.nng.kl_clip=1e-6", "model.nng.momentum=0.5", "model.nng.lr=0.1",
                       "model.nng.decay_at=1", "model.nng.inverse_every=1000000", "model.nng.particles=1",
                       "training.dtype=float64"});
  auto base = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(61));
  auto* inf = dynamic_cast<infer::NoisyKfac*>(base.get());
  ASSERT_NE(inf, nullptr);
  inf->to(torch::kFloat64);
  const auto x = c.x.to(torch::kFloat64), y = c.y.to(torch::kFloat64);
  inf->begin(80, 100, make_generator(62));  // N = 80, B = 40: 2 steps an epoch
  auto means = [&] {
    return std::vector<torch::Tensor>{param(inf->model(), "layer0.m").detach().clone(),
                                      param(inf->model(), "layer1.m").detach().clone()};
  };
  auto prev = means();
  std::vector<torch::Tensor> last_step{torch::zeros_like(prev[0]), torch::zeros_like(prev[1])};
  for (int64_t t = 0; t < 6; ++t) {
    inf->step(x, y, t, make_generator(63 + t));
    const auto now = means();
    double norm = 0;
    for (size_t l = 0; l < 2; ++l) {
      const auto dm = now[l] - prev[l];
      const auto u = dm - mu * last_step[l];
      const auto ag = torch::inverse(inf->preconditioner_a(l)), sg = torch::inverse(inf->preconditioner_s(l));
      norm += (u * ag.mm(u).mm(sg)).sum().item<double>();
      last_step[l] = dm;
    }
    prev = now;
    EXPECT_NEAR(norm / (clip * std::pow(0.95, static_cast<double>(t / 2))), 1.0, 1e-6) << "step " << t;
  }
  // the clip belongs to the heavy-ball rule
  auto bad = cfg_with({"model.kind=nng", "model.nng.kl_clip=0.01"});
  try {
    experiment::make_inference(2, bad, 0.0, 1.0, make_generator(1));
    FAIL() << "kl_clip with the bias-corrected update was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("set model.nng.update: heavy-ball"), std::string::npos) << e.what();
  }
}

// A divergence names what went wrong first: with a mean step of 10 (1,000 times the default) the
// update of some layer overflows; the error says which layer and step, what
// the relative updates were before it, and names model.nng.lr (the step that
// moves the weights), not training.lr (only the noise variance's Adam).
TEST(Nng, DivergenceNamesTheLayerTheStepAndTheMethodsStepSize) {
  set_threads(1);
  const auto c = linear_gaussian(40, 0.25, 1.0);
  auto cfg = cfg_with({"model.kind=nng", "model.depth=1", "model.width=4", "model.nng.lr=10",
                       "model.nng.inverse_every=1", "training.steps_fixed_noise=100", "training.steps=300",
                       "training.batch_size=40", "training.log_every=1000000"});
  auto inf = experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(51));
  try {
    experiment::train(*inf, c.x, c.y, cfg, make_generator(52), "t");
    FAIL() << "a mean step of 10 trained without diverging";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("noisy K-FAC: the mean update of layer "), std::string::npos) << msg;
    EXPECT_NE(msg.find("first became non-finite at step "), std::string::npos) << msg;
    EXPECT_NE(msg.find("Most likely cause: model.nng.lr = 10 "), std::string::npos) << msg;
    EXPECT_EQ(msg.find("training.lr ="), std::string::npos) << msg;
    // the setting that steadies its step, from nng's registration (Capabilities::steps_by)
    EXPECT_NE(msg.find("model.nng.damping = 0 (default 0; extra damping steadies the K-FAC step)"), std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("training.optimizer ="), std::string::npos) << msg;
    // the batch is the whole set (40 rows), so the peak step's largest
    // |input| is the set's, in the feature that holds it
    const auto ax = c.x.abs();
    const int64_t at = ax.reshape({-1}).argmax().item<int64_t>();
    std::ostringstream want;
    want << "whose mini-batch's largest |standardised input| was " << ax.max().item<double>() << " (feature "
         << at % c.x.size(1) + 1 << "; median over those steps " << ax.max().item<double>() << ")";
    EXPECT_NE(msg.find(want.str()), std::string::npos) << msg << "\nwanted: " << want.str();
  }
  EXPECT_EQ(experiment::make_inference(2, cfg, 0.0, 1.0, make_generator(51))->diagnose(), "")
      << "a method that has not trained has nothing to say";
}

}  // namespace
