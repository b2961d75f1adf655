// The fused training step (infer/fused_step.h) against the autograd step it
// replaces: the same loss and the same gradient of every parameter, for every
// layer kind that has one and the options that change its arithmetic
// (padding, truncated blocks, shared g, no bias, dropout, MC samples, tanh,
// float32/float64); a finite-difference check of the fused gradient itself;
// the same trained parameters through `train`; and refusals by name.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/draws.h"
#include "common/rng.h"
#include "common/runtime.h"
#include "config/config.h"
#include "experiment/resolve.h"
#include "infer/fused_step.h"
#include "infer/inference.h"
#include "infer/variational.h"
#include "nn/fused_ops.h"
#include "models/regression_model.h"
#include "train/loop.h"
#include "helpers.h"

using whvi::testing::cfg_with;

using namespace whvi;

namespace {


struct Variant {
  std::string name;
  int64_t d_in;
  std::vector<std::string> sets;
  int64_t classes = 0;  // > 0: a classifier (likelihood.kind softmax)
};

std::vector<Variant> variants() {
  return {
      {"mfg", 5, {"model.kind=mfg", "model.depth=2", "model.width=12"}},
      {"mfg-3mc-tanh", 4, {"model.kind=mfg", "model.depth=1", "model.width=8", "training.mc_samples=3", "model.activation=tanh"}},
      {"mcd", 5, {"model.kind=mcd", "model.depth=2", "model.width=12", "model.mcd.dropout=0.3"}},
      {"mcd-2mc", 3, {"model.kind=mcd", "model.depth=1", "model.width=16", "training.mc_samples=2"}},
      {"whvi-padded-truncated", 5, {"model.kind=whvi", "model.depth=2", "model.width=12"}},
      {"whvi-pow2", 8, {"model.kind=whvi", "model.depth=2", "model.width=8"}},
      {"whvi-shared-g-nobias", 6, {"model.kind=whvi", "model.depth=1", "model.width=16", "model.whvi.shared_g=true", "model.whvi.bias=none"}},
      {"whvi-output-same", 8, {"model.kind=whvi", "model.depth=1", "model.width=8", "model.output_layer=same"}},
      {"softmax-mfg", 5, {"model.kind=mfg", "model.depth=2", "model.width=12", "likelihood.kind=softmax"}, 4},
      {"softmax-mcd-2mc", 5, {"model.kind=mcd", "model.depth=2", "model.width=12", "training.mc_samples=2",
                              "likelihood.kind=softmax"}, 3},
      {"softmax-whvi", 6, {"model.kind=whvi", "model.depth=2", "model.width=8", "likelihood.kind=softmax"}, 5},
      {"nf-whvi-padded-truncated", 5, {"model.kind=nf-whvi", "model.depth=2", "model.width=12"}},
      {"nf-whvi-shared-g-nobias-2mc", 6, {"model.kind=nf-whvi", "model.depth=1", "model.width=16",
                                          "model.whvi.shared_g=true", "model.whvi.bias=none", "training.mc_samples=2"}},
      {"nf-whvi-0flows-tanh", 8, {"model.kind=nf-whvi", "model.depth=1", "model.width=8", "model.nf_whvi.flows=0",
                                  "model.activation=tanh"}},
      {"softmax-nf-whvi", 6, {"model.kind=nf-whvi", "model.depth=2", "model.width=8", "model.nf_whvi.flows=2",
                              "likelihood.kind=softmax"}, 3},
      {"vsd", 5, {"model.kind=vsd", "model.depth=2", "model.width=12"}},
      {"vsd-0householder-tanh-2mc", 4, {"model.kind=vsd", "model.depth=1", "model.width=8", "model.vsd.householder=0",
                                        "model.activation=tanh", "training.mc_samples=2"}},
      {"softmax-vsd", 6, {"model.kind=vsd", "model.depth=2", "model.width=8", "likelihood.kind=softmax"}, 3},
  };
}

// NF-WHVI's flows start near the identity (u, w ~ N(0, 0.01²)), where the
// flows' terms of the gradient are small, and VSD's log α start equal, where
// a term with α_i for α_j gives the same: move them away from there, the same
// way in every model, so a wrong term shows.
std::shared_ptr<models::RegressionModel> make_model(const Variant& v, const config::Config& cfg) {
  auto m = experiment::make_network(v.d_in, cfg, 0.0, 1.0, make_generator(7), v.classes);
  torch::NoGradGuard ng;
  uint64_t seed = 70;
  for (auto& p : m->named_parameters())
    if (p.key().find("flow_") != std::string::npos)
      p.value().copy_(torch::randn(p.value().sizes(), make_generator(seed++), p.value().scalar_type()) * 0.4);
    else if (p.key().find("log_alpha") != std::string::npos)
      p.value().add_(torch::randn(p.value().sizes(), make_generator(seed++), p.value().scalar_type()));
  return m;
}

// Loss and gradients of the autograd path and of the fused path on the same
// model values and the same generator seed.
void compare(const Variant& v, torch::ScalarType dtype, double rtol) {
  auto sets = v.sets;
  sets.push_back(std::string("training.dtype=") + (dtype == torch::kFloat64 ? "float64" : "float32"));
  const auto cfg = cfg_with(sets);
  auto a = make_model(v, cfg), b = make_model(v, cfg);
  a->to(dtype);
  b->to(dtype);
  const int64_t B = 10, N = 250;
  const int64_t S = cfg.get_int("training.mc_samples");
  const auto x = torch::randn({B, v.d_in}, make_generator(3), dtype);
  const auto y = v.classes > 0 ? torch::randint(v.classes, {B}, make_generator(4), dtype)
                               : torch::randn({B}, make_generator(4), dtype);
  // a: autograd
  for (auto& p : a->parameters()) p.mutable_grad() = torch::Tensor();
  const auto loss_a = infer::negative_elbo(*a, x, y, N, S, make_generator(11));
  loss_a.backward();
  // b: fused
  for (auto& p : b->parameters()) p.mutable_grad() = torch::zeros_like(p);
  infer::FusedStep fused(*b);
  const double loss_b = fused.loss_and_grad(x, y, N, S, make_generator(11));
  EXPECT_NEAR(loss_b, loss_a.item<double>(), rtol * std::fabs(loss_a.item<double>())) << v.name;
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    const auto& ga = pa[i].value().grad();
    const auto& gb = pb[i].value().grad();
    ASSERT_TRUE(ga.defined()) << v.name << " " << pa[i].key();
    const double scale = std::max(ga.abs().max().item<double>(), 1e-12);
    EXPECT_LE((ga - gb).abs().max().item<double>() / scale, rtol) << v.name << " " << pa[i].key();
  }
}

}  // namespace

TEST(FusedStep, MatchesAutogradInFloat64) {
  set_threads(1);
  for (const auto& v : variants()) compare(v, torch::kFloat64, 1e-10);
}

TEST(FusedStep, MatchesAutogradInFloat32) {
  set_threads(1);
  for (const auto& v : variants()) compare(v, torch::kFloat32, 1e-5);
}

// Central differences of the fused loss (same draws: the same seed) against
// its gradient, for a few elements of every parameter (tanh: no kinks).
TEST(FusedStep, GradientMatchesFiniteDifferences) {
  set_threads(1);
  for (const std::string kind :
       {"mfg", "mcd", "whvi", "nf-whvi", "vsd", "softmax-mfg", "softmax-whvi", "softmax-nf-whvi", "softmax-vsd"}) {
    const bool softmax = kind.rfind("softmax-", 0) == 0;
    const std::string layer = softmax ? kind.substr(8) : kind;
    const Variant v{kind, 5,
                    {"model.kind=" + layer, "model.depth=2", "model.width=6", "model.activation=tanh",
                     "training.dtype=float64", "likelihood.init_log_noise_var=-1",
                     std::string("likelihood.kind=") + (softmax ? "softmax" : "gaussian")},
                    softmax ? 3 : 0};
    const auto cfg = cfg_with(v.sets);
    auto m = make_model(v, cfg);
    m->to(torch::kFloat64);
    const auto x = torch::randn({7, 5}, make_generator(5), torch::kFloat64);
    const auto y = softmax ? torch::randint(3, {7}, make_generator(6), torch::kFloat64)
                           : torch::randn({7}, make_generator(6), torch::kFloat64);
    infer::FusedStep fused(*m);
    auto loss = [&] {
      for (auto& p : m->parameters()) p.mutable_grad() = torch::zeros_like(p);
      return fused.loss_and_grad(x, y, 40, 1, make_generator(9));
    };
    loss();
    std::vector<torch::Tensor> grads;
    for (auto& p : m->parameters()) grads.push_back(p.grad().clone());
    size_t k = 0;
    for (auto& p : m->parameters()) {
      torch::NoGradGuard ng;
      auto flat = p.view({-1});
      for (int64_t i = 0; i < flat.numel(); i += std::max<int64_t>(1, flat.numel() / 3)) {
        const double h = 1e-6, v0 = flat[i].item<double>();
        flat[i] = v0 + h;
        const double up = loss();
        flat[i] = v0 - h;
        const double down = loss();
        flat[i] = v0;
        const double fd = (up - down) / (2 * h), an = grads[k].view({-1})[i].item<double>();
        EXPECT_NEAR(an, fd, 1e-5 * std::max(1.0, std::fabs(fd))) << kind << " parameter " << k << " element " << i;
      }
      ++k;
    }
  }
}

// Whole trainings through the inference seam (Adam, the frozen noise phase,
// the learning-rate decay): the fused and autograd steps end at the same
// parameters (float64, 60 steps).
TEST(FusedStep, TrainsToTheSameParametersAsAutograd) {
  set_threads(1);
  for (const std::string kind : {"mfg", "mcd", "whvi", "nf-whvi", "vsd"}) {
    std::vector<torch::Tensor> ends[2];
    int e = 0;
    for (const std::string engine : {"autograd", "fused"}) {
      const auto cfg = cfg_with({"model.kind=" + kind, "model.depth=2", "model.width=8", "training.engine=" + engine,
                                 "training.dtype=float64", "training.steps_fixed_noise=20", "training.steps=40",
                                 "training.batch_size=16", "training.log_every=1000000"});
      auto inf = experiment::make_inference(5, cfg, 0.0, 1.0, make_generator(21));
      const auto x = torch::randn({50, 5}, make_generator(22), torch::kFloat64);
      const auto y = torch::randn({50}, make_generator(23), torch::kFloat64);
      experiment::train(*inf, x, y, cfg, make_generator(24), "t");
      for (auto& p : inf->model().parameters()) ends[e].push_back(p.detach().clone());
      ++e;
    }
    ASSERT_EQ(ends[0].size(), ends[1].size());
    for (size_t i = 0; i < ends[0].size(); ++i)
      EXPECT_TRUE(torch::allclose(ends[0][i], ends[1][i], 1e-8, 1e-10)) << kind << " parameter " << i;
  }
}

// --threads 2 runs the independent halves of an MFG or MCD layer's step at
// once (fused_ops::both): the same loss and gradients, bit for bit, as one
// thread, and so the same trained parameters; the pairs did run in parallel.
TEST(FusedStep, TwoThreadsGiveOneThreadsBits) {
  const auto pairs_before = models::fused_ops::detail::parallel_pairs().load();
  for (const auto& v : variants()) {
    if (v.name.find("whvi") != std::string::npos) continue;  // the WHVI kernel's sums over rows are per thread
    for (const auto dtype : {torch::kFloat32, torch::kFloat64}) {
      auto sets = v.sets;
      sets.push_back(std::string("training.dtype=") + (dtype == torch::kFloat64 ? "float64" : "float32"));
      const auto cfg = cfg_with(sets);
      const int64_t B = 40, N = 250, S = cfg.get_int("training.mc_samples");
      const auto x = torch::randn({B, v.d_in}, make_generator(3), dtype);
      const auto y = v.classes > 0 ? torch::randint(v.classes, {B}, make_generator(4), dtype)
                                   : torch::randn({B}, make_generator(4), dtype);
      double loss[2];
      std::vector<torch::Tensor> grads[2];
      for (const int t : {1, 2}) {
        set_threads(t);
        auto m = make_model(v, cfg);
        m->to(dtype);
        for (auto& p : m->parameters()) p.mutable_grad() = torch::zeros_like(p);
        infer::FusedStep fused(*m);
        for (int step = 0; step < 2; ++step)  // twice: the second reuses the layers' buffers
          loss[t - 1] = fused.loss_and_grad(x, y, N, S, make_generator(11 + step));
        for (auto& p : m->parameters()) grads[t - 1].push_back(p.grad().clone());
      }
      EXPECT_EQ(std::memcmp(&loss[0], &loss[1], sizeof(double)), 0) << v.name << " " << loss[0] << " " << loss[1];
      ASSERT_EQ(grads[0].size(), grads[1].size());
      for (size_t i = 0; i < grads[0].size(); ++i) EXPECT_TRUE(torch::equal(grads[0][i], grads[1][i])) << v.name << " " << i;
    }
  }
  set_threads(1);
  EXPECT_GT(models::fused_ops::detail::parallel_pairs().load(), pairs_before);
  for (const std::string kind : {"mfg", "mcd"}) {
    std::vector<torch::Tensor> ends[2];
    for (const int t : {1, 2}) {
      set_threads(t);
      const auto cfg = cfg_with({"model.kind=" + kind, "model.depth=2", "model.width=24", "training.engine=fused",
                                 "training.steps_fixed_noise=10", "training.steps=30", "training.batch_size=16",
                                 "training.log_every=1000000"});
      auto inf = experiment::make_inference(5, cfg, 0.0, 1.0, make_generator(21));
      const auto x = torch::randn({50, 5}, make_generator(22));
      const auto y = torch::randn({50}, make_generator(23));
      experiment::train(*inf, x, y, cfg, make_generator(24), "t");
      for (auto& p : inf->model().parameters()) ends[t - 1].push_back(p.detach().clone());
    }
    ASSERT_EQ(ends[0].size(), ends[1].size());
    for (size_t i = 0; i < ends[0].size(); ++i) EXPECT_TRUE(torch::equal(ends[0][i], ends[1][i])) << kind << " " << i;
  }
  set_threads(1);
}

// The diagonal Gaussian KL and its gradient from precomputed e^logvar (MFG's
// fused step reuses its forward pass's exp) against the autograd KL, for sizes
// around the 8-wide blocks and in both dtypes; a stale e^logvar is visible.
TEST(FusedStep, KlFromPrecomputedExpMatchesAutograd) {
  for (const auto dtype : {torch::kFloat64, torch::kFloat32}) {
    const double tol = dtype == torch::kFloat64 ? 1e-12 : 1e-5;
    for (const int64_t n : {1, 7, 8, 9, 16, 61, 1000}) {
      const double pv = 0.37;
      auto mu = (torch::randn({n}, make_generator(30 + n), torch::kFloat64) * 0.3).to(dtype);
      auto lv = (torch::randn({n}, make_generator(40 + n), torch::kFloat64) * 2 - 4).to(dtype);
      auto a_mu = mu.clone().requires_grad_(true), a_lv = lv.clone().requires_grad_(true);
      const auto kl_a = models::kl_diag_gaussian(a_mu, a_lv, pv);
      kl_a.backward();
      auto b_mu = mu.clone(), b_lv = lv.clone();
      b_mu.mutable_grad() = torch::full_like(mu, 0.25);  // the function adds into .grad()
      b_lv.mutable_grad() = torch::full_like(lv, -0.5);
      const double kl_b = models::kl_diag_gaussian_backward_exp(b_mu, b_lv, lv.exp(), pv);
      const double ref = kl_a.item<double>();
      EXPECT_NEAR(kl_b, ref, tol * std::max(1.0, std::fabs(ref))) << n;
      const auto gmu = b_mu.grad().to(torch::kFloat64) - 0.25, glv = b_lv.grad().to(torch::kFloat64) + 0.5;
      EXPECT_LE((gmu - a_mu.grad().to(torch::kFloat64)).abs().max().item<double>(), tol) << n;
      EXPECT_LE((glv - a_lv.grad().to(torch::kFloat64)).abs().max().item<double>(), tol) << n;
      if (n == 1000) {  // e^logvar of other values (a stale buffer) gives another gradient
        auto c_mu = mu.clone(), c_lv = lv.clone();
        c_mu.mutable_grad() = torch::zeros_like(mu);
        c_lv.mutable_grad() = torch::zeros_like(lv);
        models::kl_diag_gaussian_backward_exp(c_mu, c_lv, (lv + 1e-3).exp(), pv);
        EXPECT_GT((c_lv.grad().to(torch::kFloat64) - a_lv.grad().to(torch::kFloat64)).abs().max().item<double>(), 1e-4);
      }
    }
  }
}

// A likelihood declares the fused step (likelihoods::Capability) exactly
// when the fused step takes a network with it.
TEST(FusedStep, DeclaredLikelihoodCapabilityIsTheStepsOwn) {
  for (const auto& kind : likelihoods::registered_likelihoods()) {
    const bool classes = likelihoods::likelihood_can(kind, likelihoods::Capability::kClassification);
    const auto net = experiment::make_network(4, cfg_with({"model.kind=mfg", "likelihood.kind=" + kind}), 0.0, 1.0,
                                              make_generator(1), classes ? 3 : 0);
    EXPECT_EQ(infer::fused_unsupported(*net).empty(),
              likelihoods::likelihood_can(kind, likelihoods::Capability::kFusedStep))
        << kind;
  }
}

TEST(FusedStep, RefusesWhatItCannotDoByName) {
  for (const auto& [sets, want] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"model.kind=nf-whvi", "model.whvi.bias=bayesian"}, "layer kind 'nf-whvi'"},
           {{"model.kind=whvi", "model.whvi.bias=bayesian"}, "layer kind 'whvi'"},
           {{"model.kind=whvi", "model.whvi.structure=gh"}, "layer kind 'whvi'"},
           {{"model.kind=vsd", "model.vsd.hierarchical=true"}, "layer kind 'vsd'"},
           {{"model.kind=mfg", "model.activation=cos"}, "model.activation 'cos'"},
           {{"model.kind=mfg", "likelihood.kind=student-t"}, "likelihood.kind has no fused step (supported: gaussian, softmax)"},
       }) {
    auto s = sets;
    s.push_back("training.engine=fused");
    const auto cfg = cfg_with(s);
    auto inf = experiment::make_inference(4, cfg, 0.0, 1.0, make_generator(1));
    try {
      inf->begin(10, 10, make_generator(2));
      FAIL() << want;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
      EXPECT_NE(msg.find("training.engine: autograd"), std::string::npos) << msg;
    }
  }
}

// The fused step's plain loops (nn/fused_ops.h) give exactly what the
// LibTorch op each replaces gives: bit for bit, in float32 and float64, on
// values that include -0, +-inf, NaN and subnormals, on strided inputs where
// the loop takes them, and with scalars that float cannot hold (0.1, 1/0.7:
// LibTorch rounds the scalar to the element type first). A loop that computed
// in double and rounded, reordered an operation, fused a multiply-add or lost
// the sign of a zero fails here, where the fused-vs-autograd tests above
// (tolerances) would not see it.
namespace {

// Bit patterns equal (NaN == NaN of the same payload; -0 != +0).
::testing::AssertionResult same_bits(const torch::Tensor& got, const torch::Tensor& want) {
  if (got.sizes() != want.sizes() || got.scalar_type() != want.scalar_type())
    return ::testing::AssertionFailure() << "shape/type " << got.sizes() << " vs " << want.sizes();
  const auto g = got.contiguous(), w = want.contiguous();
  const size_t bytes = static_cast<size_t>(g.numel()) * g.element_size();
  if (std::memcmp(g.data_ptr(), w.data_ptr(), bytes) == 0) return ::testing::AssertionSuccess();
  const auto* gb = static_cast<const unsigned char*>(g.data_ptr());
  const auto* wb = static_cast<const unsigned char*>(w.data_ptr());
  size_t i = 0;
  while (gb[i] == wb[i]) ++i;
  const int64_t e = static_cast<int64_t>(i / g.element_size());
  return ::testing::AssertionFailure() << "element " << e << " of " << g.numel() << ": "
                                       << g.view({-1})[e].item<double>() << " vs " << w.view({-1})[e].item<double>();
}

#if TORCH_VERSION_MAJOR >= 2
// Equal as numbers: the same bits, or both zeros (either sign), or both NaN
// (any sign or payload).
::testing::AssertionResult same_values(const torch::Tensor& got, const torch::Tensor& want) {
  const auto g = got.to(torch::kFloat64).contiguous().view({-1}), w = want.to(torch::kFloat64).contiguous().view({-1});
  const bool ok = got.sizes() == want.sizes() &&
                  ((g == w) | (g.isnan() & w.isnan())).all().item<bool>();
  return ok ? ::testing::AssertionSuccess() : same_bits(got, want);
}
#endif

// LibTorch 2.x (the Python wheel: MKL, its own vectorised sqrt) gives +0 for a
// zero product of opposite signs in mm and +NaN for the square root of a
// negative, where 1.13 (Debian's, OpenBLAS) gives -0 and the default -NaN as
// our loops do: those two comparisons are by value there (measured on an H200
// host with LibTorch 2.11, AVX-512). Every other one stays bit for bit.
::testing::AssertionResult same_bits_but_zero_and_nan_signs_on_torch2(const torch::Tensor& got,
                                                                      const torch::Tensor& want) {
#if TORCH_VERSION_MAJOR >= 2
  return same_values(got, want);
#else
  return same_bits(got, want);
#endif
}

// [rows, cols] of N(0, s²) values with special values sprinkled in.
torch::Tensor awkward(int64_t rows, int64_t cols, torch::ScalarType t, uint64_t seed, double s = 3.0) {
  auto gen = make_generator(seed);
  auto x = torch::randn({rows, cols}, gen, torch::TensorOptions().dtype(t)) * s;
  auto flat = x.view({-1});
  const double tiny = t == torch::kFloat32 ? 1e-40 : 1e-310;  // subnormal
  const std::vector<double> special{-0.0, 0.0, INFINITY, -INFINITY, NAN, tiny, -tiny, 1.0, -1.0};
  for (size_t i = 0; i < special.size() && static_cast<int64_t>(3 * i + 1) < flat.numel(); ++i)
    flat[static_cast<int64_t>(3 * i + 1)] = special[i];
  return x;
}

}  // namespace

TEST(FusedOps, EachLoopGivesTheLibTorchOpsBitsExactly) {
  namespace fo = models::fused_ops;
  for (const auto t : {torch::kFloat32, torch::kFloat64}) {
    SCOPED_TRACE(t == torch::kFloat32 ? "float32" : "float64");
    const int64_t R = 37, C = 70;  // not multiples of any vector width
    const auto a = awkward(R, C, t, 1), b = awkward(R, C, t, 2), c = awkward(R, C, t, 3).abs() + 0.25;
    auto out = torch::empty({R, C}, a.options());
    // a strided view: columns 5.. of a wider matrix (row stride C + 9)
    const auto wide = awkward(R, C + 9, t, 4);
    const auto strided = wide.narrow(1, 5, C);
    ASSERT_FALSE(strided.is_contiguous());
    const auto row = awkward(1, C, t, 5).view({C});

    fo::add_row_vector_out(out, strided, row);
    EXPECT_TRUE(same_bits(out, at::add(strided, row))) << "add_row_vector_out";

    auto acc = a.clone();
    fo::add_(acc, b);
    EXPECT_TRUE(same_bits(acc, a.clone().add_(b))) << "add_";

    for (const double s : {0.5, 0.1, 1.0 / 0.7, 3.0e38}) {
      fo::scale_out(out, a, s);
      EXPECT_TRUE(same_bits(out, at::mul(a, s))) << "scale_out " << s;
      auto inplace = a.clone();
      fo::scale_out(inplace, inplace, s);  // the fused step scales df in place
      EXPECT_TRUE(same_bits(inplace, at::mul(a, s))) << "scale_out in place " << s;
      fo::mul_scale_out(out, a, b, s);
      EXPECT_TRUE(same_bits(out, at::mul(a, b).mul_(s))) << "mul_scale_out " << s;
      fo::mul_div_scale_out(out, a, b, c, s);
      EXPECT_TRUE(same_bits(out, at::mul(a, b).div_(c).mul_(s))) << "mul_div_scale_out " << s;
    }

    for (const double v : {0.1, -1.0 / 3.0, 1e-30, 7.0e38}) {
      auto one = awkward(1, 1, t, 7).view({1}), want = one.clone().add_(v);
      fo::add_scalar_(one, v);
      EXPECT_TRUE(same_bits(one, want)) << "add_scalar_ " << v;
    }

    {  // a column times a row, with zeros of both signs, inf and NaN among both
      const auto col = awkward(R, 1, t, 8), w = awkward(C, 1, t, 9);
      fo::mm_wt_out(out, col, w);
      auto want = torch::empty({R, C}, a.options());
      at::mm_out(want, col, w.t());
      EXPECT_TRUE(same_bits_but_zero_and_nan_signs_on_torch2(out, want)) << "mm_wt_out";
    }

    fo::square_out(out, a);
    EXPECT_TRUE(same_bits(out, at::mul(a, a))) << "square_out";

    fo::sub_out(out, a, b);
    EXPECT_TRUE(same_bits(out, at::sub(a, b))) << "sub_out";

    auto r = a.clone();  // negatives (NaN), -0 (-0), inf, subnormals
    fo::sqrt_(r);
    EXPECT_TRUE(same_bits_but_zero_and_nan_signs_on_torch2(r, a.sqrt())) << "sqrt_";
    fo::mul_div_scale_out(out, a, c, b, 0.5);  // dividing by 0, -0, inf, NaN
    EXPECT_TRUE(same_bits(out, at::mul(a, c).div_(b).mul_(0.5))) << "mul_div_scale_out by awkward values";

    auto padded = torch::full({R, C + 9}, 7.0, a.options());  // stale values must go
    fo::pad_columns_out(padded, strided);
    auto want_pad = torch::zeros({R, C + 9}, a.options());
    want_pad.narrow(1, 0, C).copy_(strided);
    EXPECT_TRUE(same_bits(padded, want_pad)) << "pad_columns_out";

    fo::relu_out(out, strided);
    EXPECT_TRUE(same_bits(out, at::relu(strided))) << "relu_out (strided)";
    fo::relu_out(out, a);
    EXPECT_TRUE(same_bits(out, at::relu(a))) << "relu_out";
    // a[0][1] is -0: relu keeps it as it is (and NaN, a[0][13])
    EXPECT_TRUE(std::signbit(out[0][1].item<double>()));
    EXPECT_TRUE(std::isnan(out[0][13].item<double>()));

    auto dh = awkward(R, C + 3, t, 6).narrow(1, 2, C);
    fo::relu_backward_out(out, strided, dh);
    EXPECT_TRUE(same_bits(out, at::mul(dh, strided.gt(0)))) << "relu_backward_out";
  }
}

// The one-output layer's GEMMs sent straight to BLAS give LibTorch's addmm/mm
// bits (same gemm, same arguments), and on LibTorch 1.x they are sent there.
TEST(FusedOps, OneOutputGemmsGiveLibTorchsBitsExactly) {
  namespace fo = models::fused_ops;
  for (const auto t : {torch::kFloat32, torch::kFloat64}) {
    SCOPED_TRACE(t == torch::kFloat32 ? "float32" : "float64");
    auto gen = make_generator(11);
    const auto opt = torch::TensorOptions().dtype(t);
    for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{64, 128}, {37, 70}, {128, 6}, {1, 1}}) {
      SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(k));
      const auto x = torch::randn({n, k}, gen, opt), w = torch::randn({k, 1}, gen, opt);
      const auto bias = torch::randn({1}, gen, opt), g = torch::randn({n, 1}, gen, opt);
      const auto c = torch::randn({k, 1}, gen, opt);
      const int64_t before = fo::detail::direct_gemm_calls();

      auto out = torch::empty({n, 1}, opt), want = torch::empty({n, 1}, opt);
      fo::addmm_out(out, bias, x, w);
      at::addmm_out(want, bias, x, w);
      EXPECT_TRUE(same_bits(out, want)) << "addmm_out";

      auto c1 = c.clone();
      fo::xt_mm_out(c1, x, g, 1.0);
      EXPECT_TRUE(same_bits(c1, c.clone().addmm_(x.t(), g))) << "xt_mm_out, beta 1";

      auto c0 = torch::full({k, 1}, NAN, opt), want0 = torch::empty({k, 1}, opt);  // beta 0: C is not read
      fo::xt_mm_out(c0, x, g, 0.0);
      at::mm_out(want0, x.t(), g);
      EXPECT_TRUE(same_bits(c0, want0)) << "xt_mm_out, beta 0";
#if TORCH_VERSION_MAJOR == 1
      EXPECT_EQ(fo::detail::direct_gemm_calls() - before, 3) << "the direct BLAS route was not taken";
#else
      (void)before;
#endif
    }
  }
}

// ---- Gaussian draws (common/draws.h): LibTorch's bits, faster ----------------

namespace {
uint32_t next_word(const at::Generator& g) {
  return at::check_generator<at::CPUGeneratorImpl>(g)->random();
}
}  // namespace

// The block generator against one `random()` call per word, from states that
// sit anywhere in the 624-word cycle (fresh, mid-state, one word before and at
// a twist), for counts around the cycle's length.
TEST(FastNormal, WordsAreTheGeneratorsCalls) {
  for (int64_t skip : {0, 1, 5, 622, 623, 624, 625, 1000}) {
    for (int64_t n : {1, 2, 623, 624, 625, 1248, 5000}) {
      auto ga = make_generator(77 + static_cast<uint64_t>(skip));
      auto gb = make_generator(77 + static_cast<uint64_t>(skip));
      for (int64_t i = 0; i < skip; ++i) { next_word(ga); next_word(gb); }
      std::vector<uint32_t> got(static_cast<size_t>(n));
      whvi::detail::mt_words(gb, got.data(), n);
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i) bad += got[static_cast<size_t>(i)] != next_word(ga);
      EXPECT_EQ(bad, 0) << "skip " << skip << ", n " << n;
      for (int k = 0; k < 700; ++k) ASSERT_EQ(next_word(ga), next_word(gb)) << "state after: skip " << skip << ", n " << n << ", word " << k;
    }
  }
}

// Every size class (below 16, multiples of 16, ragged tails, longer than the
// cycle), both dtypes, means and standard deviations that are not 0 and 1, and
// generator states anywhere in the cycle: the same bits as `Tensor::normal_`
// and the same generator state afterwards. Non-contiguous tensors and tensors
// of other dtypes go to LibTorch and must match too.
TEST(FastNormal, GivesLibTorchsBitsAndGeneratorState) {
  for (auto dtype : {torch::kFloat32, torch::kFloat64}) {
    for (int64_t n : {1, 15, 16, 17, 31, 32, 33, 100, 624, 1000, 8192, 8193, 100003}) {
      for (auto ms : std::vector<std::pair<double, double>>{{0.0, 1.0}, {0.25, 1.5}, {-3.0, 0.0}, {1e3, 1e-3}}) {
        const int64_t skip = (n * 7) % 631;
        auto ga = make_generator(1000 + static_cast<uint64_t>(n)), gb = make_generator(1000 + static_cast<uint64_t>(n));
        for (int64_t i = 0; i < skip; ++i) { next_word(ga); next_word(gb); }
        auto a = torch::empty({n}, dtype), b = torch::empty({n}, dtype);
        a.normal_(ms.first, ms.second, ga);
        normal_(b, ms.first, ms.second, gb);
        EXPECT_TRUE(same_bits(a, b)) << dtype << " n " << n << " mean " << ms.first << " std " << ms.second;
        EXPECT_EQ(next_word(ga), next_word(gb)) << dtype << " n " << n << ": generator state after";
      }
    }
  }
  {  // a column (not contiguous), a half tensor, randn of a shape
    auto ga = make_generator(5), gb = make_generator(5);
    auto a = torch::empty({40, 3}), b = torch::empty({40, 3});
    auto ca = a.select(1, 1), cb = b.select(1, 1);
    ca.normal_(0, 1, ga);
    normal_(cb, 0, 1, gb);
    EXPECT_TRUE(same_bits(ca, cb)) << "non-contiguous";
    auto ha = torch::empty({50}, torch::kFloat16), hb = torch::empty({50}, torch::kFloat16);
    ha.normal_(0, 1, ga);
    normal_(hb, 0, 1, gb);
    EXPECT_TRUE(same_bits(ha, hb)) << "float16";
    EXPECT_TRUE(same_bits(torch::randn({3, 5, 7}, ga, torch::kFloat32), randn({3, 5, 7}, gb, torch::kFloat32))) << "randn";
    EXPECT_TRUE(same_bits(torch::randn({64, 128}, ga, torch::kFloat64), randn({64, 128}, gb, torch::kFloat64))) << "randn";
    EXPECT_EQ(next_word(ga), next_word(gb));
  }
}

// The integer threshold of the Bernoulli draws against LibTorch's comparison
// `x·2^-53 < p`, at every x within 3 of the threshold and at the ends, for p on
// the 2^-53 grid, next to it, tiny, subnormal, 0, 1, NaN.
TEST(FastNormal, BernoulliThresholdIsTheDoubleComparison) {
  const uint64_t top = (uint64_t(1) << 53) - 1;
  std::vector<double> ps = {0.0, -0.0, -1.0, 1.0, 0.5, 0.375, 1.0 / 3.0, 0.1, 1e-9, 1e-300, 5e-324, 0x1.0p-53,
                            0x1.8p-53, 3 * 0x1.0p-53, 1.0 - 0x1.0p-53, 1.0 - 0x1.0p-54, std::nan("")};
  for (double base : {0.5, 0.1, 0x1.0p-53, 7 * 0x1.0p-53, 1.0 - 0x1.0p-53, 0.9})
    for (int k = 1; k <= 3; ++k) {
      double up = base, down = base;
      for (int j = 0; j < k; ++j) { up = std::nextafter(up, 2.0); down = std::nextafter(down, -1.0); }
      ps.push_back(up);
      ps.push_back(down);
    }
  for (const double p : ps) {
    const uint64_t thr = whvi::detail::bernoulli_threshold(p);
    std::vector<uint64_t> xs = {0, 1, 2, top - 1, top};
    for (int64_t d = -3; d <= 3; ++d) {
      const int64_t x = static_cast<int64_t>(thr) + d;
      if (x >= 0 && static_cast<uint64_t>(x) <= top) xs.push_back(static_cast<uint64_t>(x));
    }
    for (const uint64_t x : xs)
      EXPECT_EQ(static_cast<double>(x) * 0x1.0p-53 < p, x < thr) << "p " << p << " x " << x;
  }
}

// Bernoulli draws: the bits and state of `Tensor::bernoulli_(p)` for sizes
// around the chunk length, both dtypes, p at and inside the ends, from
// generator states anywhere in the cycle; strided and integer tensors go to
// LibTorch and must match too.
TEST(FastNormal, BernoulliGivesLibTorchsBitsAndGeneratorState) {
  for (auto dtype : {torch::kFloat32, torch::kFloat64}) {
    for (int64_t n : {0, 1, 311, 1023, 1024, 1025, 5000}) {
      for (double p : {0.0, 1e-9, 0.1, 0.5, 0.9, 1.0 - 1e-16, 1.0}) {
        const int64_t skip = (n * 13) % 629;
        auto ga = make_generator(3000 + static_cast<uint64_t>(n)), gb = make_generator(3000 + static_cast<uint64_t>(n));
        for (int64_t i = 0; i < skip; ++i) { next_word(ga); next_word(gb); }
        auto a = torch::empty({n}, dtype), b = torch::empty({n}, dtype);
        a.bernoulli_(p, ga);
        bernoulli_(b, p, gb);
        EXPECT_TRUE(same_bits(a, b)) << dtype << " n " << n << " p " << p;
        EXPECT_EQ(next_word(ga), next_word(gb)) << dtype << " n " << n << " p " << p << ": generator state after";
      }
    }
  }
  auto ga = make_generator(9), gb = make_generator(9);
  auto a = torch::empty({30, 4}), b = torch::empty({30, 4});
  a.t().bernoulli_(0.3, ga);
  bernoulli_(b.t(), 0.3, gb);
  EXPECT_TRUE(same_bits(a, b)) << "transposed";
  auto ia = torch::empty({100}, torch::kInt64), ib = torch::empty({100}, torch::kInt64);
  ia.bernoulli_(0.6, ga);
  bernoulli_(ib, 0.6, gb);
  EXPECT_TRUE(ia.equal(ib)) << "int64";
  EXPECT_EQ(next_word(ga), next_word(gb));
#if TORCH_VERSION_MAJOR == 1
  EXPECT_EQ(bernoulli_path(torch::kFloat32), "words");
  EXPECT_EQ(bernoulli_path(torch::kFloat64), "words");
#endif
}

// The fast path is really taken where LibTorch's kernels are known: Debian's
// LibTorch 1.x on x86-64 runs, on CPUs with AVX2 and FMA, its AVX2 Box-Muller
// for float32 and, for float64, its scalar one as compiled for AVX2 (with the
// last multiply-add fused); on other CPUs the scalar one for both. (Elsewhere the
// probe decides; the test above checks the bits whichever path it picks.)
TEST(FastNormal, FastPathIsTakenOnLibTorch1) {
#if TORCH_VERSION_MAJOR == 1 && defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_EQ(normal_path(torch::kFloat32), "avx2");
    EXPECT_EQ(normal_path(torch::kFloat64), "scalar-fma");
  } else {
    EXPECT_EQ(normal_path(torch::kFloat32), "scalar");
    EXPECT_EQ(normal_path(torch::kFloat64), "scalar");
  }
#else
  GTEST_SKIP() << "float32 path here: " << normal_path(torch::kFloat32) << ", float64: " << normal_path(torch::kFloat64);
#endif
}

// training.engine auto (the default): the fused step wherever it applies,
// and then exactly the explicit fused engine's numbers; autograd elsewhere.
TEST(FusedStep, AutoEngineTakesTheFusedStepWhereItApplies) {
  const auto base = std::vector<std::string>{"model.depth=2", "model.width=8"};
  const auto with = [&](std::vector<std::string> s) {
    s.insert(s.end(), base.begin(), base.end());
    return cfg_with(s);
  };
  EXPECT_EQ(cfg_with({}).get_string("training.engine"), "auto");
  for (const std::string kind : {"whvi", "mfg", "mcd", "nf-whvi", "vsd"}) {
    EXPECT_EQ(experiment::engine_for(with({"model.kind=" + kind})), "fused") << kind;
    EXPECT_EQ(experiment::engine_for(with({"model.kind=" + kind, "likelihood.kind=softmax"})), "fused") << kind;
  }
  for (const auto& sets : std::vector<std::vector<std::string>>{
           {"model.kind=nf-whvi", "model.whvi.bias=bayesian"}, {"model.kind=vsd", "model.vsd.householder=2"},
           {"model.kind=vsd", "model.vsd.hierarchical=true"}, {"model.kind=nng"}, {"model.kind=sghmc"},
           {"model.kind=ensemble"}, {"model.kind=whvi", "inference.kind=ensemble"},
           {"model.kind=whvi", "training.engine=autograd"}, {"model.kind=whvi", "training.batched_splits=2"},
           {"model.kind=whvi", "training.device=cuda"}, {"model.kind=whvi", "likelihood.kind=student-t"},
           {"model.kind=whvi", "likelihood.kind=hetero-gaussian"}, {"model.kind=whvi", "training.kl_weight=0.5"},
           {"model.kind=whvi", "model.activation=cos"}, {"model.kind=whvi", "model.whvi.structure=gh"},
           {"model.kind=mcd", "model.architecture=simple-cnn"}})
    EXPECT_EQ(experiment::engine_for(with(sets)), "autograd") << sets.front() << " " << sets.back();
  // auto and fused: the same parameters to the bit after a short training
  set_threads(1);
  std::vector<torch::Tensor> ends[2];
  int e = 0;
  for (const std::string engine : {"auto", "fused"}) {
    const auto cfg = with({"model.kind=whvi", "training.engine=" + engine, "training.steps_fixed_noise=5",
                           "training.steps=15", "training.batch_size=16", "training.log_every=1000000"});
    auto inf = experiment::make_inference(5, cfg, 0.0, 1.0, make_generator(21));
    const auto x = torch::randn({50, 5}, make_generator(22));
    const auto y = torch::randn({50}, make_generator(23));
    experiment::train(*inf, x, y, cfg, make_generator(24), "t");
    EXPECT_EQ(inf->engine(), "fused") << engine;
    for (auto& p : inf->model().parameters()) ends[e].push_back(p.detach().clone());
    ++e;
  }
  for (size_t i = 0; i < ends[0].size(); ++i) EXPECT_TRUE(torch::equal(ends[0][i], ends[1][i])) << i;
  // a kind without a fused step says autograd
  auto vsd = experiment::make_inference(5, with({"model.kind=vsd", "model.vsd.householder=2"}), 0.0, 1.0, make_generator(21));
  vsd->begin(50, 10, make_generator(1));
  EXPECT_EQ(vsd->engine(), "autograd");
}

// likelihood.class_weights: the fused step's weighted softmax term and its
// gradient match autograd's (float64) on the same model and draws.
TEST(FusedStep, ClassWeightsMatchAutograd) {
  set_threads(1);
  for (const std::string kind : {"mfg", "whvi"}) {
    const auto cfg = cfg_with({"model.kind=" + kind, "model.depth=2", "model.width=8", "likelihood.kind=softmax",
                               "likelihood.class_weights=c0:3,c2:0.25", "training.dtype=float64"});
    const Variant v{kind, 6, {}, 3};
    auto a = make_model(v, cfg), b = make_model(v, cfg);
    a->to(torch::kFloat64);
    b->to(torch::kFloat64);
    const auto x = torch::randn({10, 6}, make_generator(3), torch::kFloat64);
    const auto y = torch::randint(3, {10}, make_generator(4), torch::kFloat64);
    for (auto* m : {a.get(), b.get()}) m->likelihood().fit_targets(y, {"c0", "c1", "c2"});
    for (auto& p : a->parameters()) p.mutable_grad() = torch::Tensor();
    const auto loss_a = infer::negative_elbo(*a, x, y, 250, 1, make_generator(11));
    loss_a.backward();
    for (auto& p : b->parameters()) p.mutable_grad() = torch::zeros_like(p);
    infer::FusedStep fused(*b);
    const double loss_b = fused.loss_and_grad(x, y, 250, 1, make_generator(11));
    EXPECT_NEAR(loss_b, loss_a.item<double>(), 1e-10 * std::fabs(loss_a.item<double>())) << kind;
    const auto pa = a->named_parameters(), pb = b->named_parameters();
    for (size_t i = 0; i < pa.size(); ++i) {
      const auto& ga = pa[i].value().grad();
      const double scale = std::max(ga.abs().max().item<double>(), 1e-12);
      EXPECT_LE((ga - pb[i].value().grad()).abs().max().item<double>() / scale, 1e-10) << kind << " " << pa[i].key();
    }
    // and the weights act: unweighted, the loss differs
    auto c = make_model(v, cfg_with({"model.kind=" + kind, "model.depth=2", "model.width=8",
                                     "likelihood.kind=softmax", "training.dtype=float64"}));
    c->to(torch::kFloat64);
    EXPECT_GT(std::fabs(infer::negative_elbo(*c, x, y, 250, 1, make_generator(11)).item<double>() - loss_b), 1e-3);
  }
}
