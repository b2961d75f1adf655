// Tests of the Torch operators in src/ops/ and of the benchmark harness.
#include <dlfcn.h>

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/bench_fwht.h"
#include "bench/bench_train.h"
#include "common/errors.h"
#include "common/io.h"
#include "common/runtime.h"
#include "ops/fwht_op.h"

using whvi::ops::fwht;
using whvi::ops::hadamard_matrix;

namespace {

torch::Tensor dense_fwht(const torch::Tensor& x, double scale) {
  return torch::matmul(x.to(torch::kFloat64), hadamard_matrix(x.size(-1))) * scale;
}

double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

TEST(HadamardMatrix, SylvesterRecursionAndOrthogonality) {
  auto h4 = hadamard_matrix(4);
  auto want = torch::tensor({1, 1, 1, 1, 1, -1, 1, -1, 1, 1, -1, -1, 1, -1, -1, 1},
                            torch::kFloat64).reshape({4, 4});
  EXPECT_TRUE(torch::equal(h4, want));
  auto h = hadamard_matrix(64);
  EXPECT_TRUE(torch::allclose(torch::matmul(h, h), 64 * torch::eye(64, torch::kFloat64)));
}

TEST(FwhtOp, MatchesDenseForShapesAndDtypes) {
  torch::manual_seed(0);
  for (auto dt : {torch::kFloat32, torch::kFloat64})
    for (int64_t d : {1, 2, 4, 32, 512, 2048}) {
      auto x = torch::randn({3, 2, d}, dt);
      auto y = fwht(x, 0.5);
      EXPECT_EQ(y.sizes(), x.sizes());
      EXPECT_EQ(y.scalar_type(), dt);
      const double err = max_abs(y.to(torch::kFloat64) - dense_fwht(x, 0.5));
      EXPECT_LE(err, (dt == torch::kFloat32 ? 1e-5 : 1e-12) * std::sqrt(double(d)) * 4) << "d=" << d;
    }
}

TEST(FwhtOp, NonContiguousInputs) {
  torch::manual_seed(1);
  auto base = torch::randn({16, 8, 64}, torch::kFloat64);
  std::vector<torch::Tensor> views = {
      base.transpose(0, 1),                                   // permuted leading dims
      base.select(1, 3),                                      // evenly strided rows (stride 512)
      base.slice(0, 0, 16, 3),                                // stepped rows
      base.transpose(1, 2).slice(2, 0, 8),                    // last dim stride != 1 (d = 8)
      base.slice(2, 0, 64, 2).contiguous().slice(0, 0, 16, 2),
  };
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& v = views[i];
    auto y = fwht(v, 1.0);
    EXPECT_TRUE(y.is_contiguous());
    EXPECT_LE(max_abs(y - dense_fwht(v, 1.0)), 1e-11) << "view " << i;
  }
  // the input is never modified (no aliasing)
  auto copy = base.clone();
  fwht(base, 1.0);
  EXPECT_TRUE(torch::equal(copy, base));
}

TEST(FwhtOp, InvolutionAndEmptyBatch) {
  auto x = torch::randn({5, 4096}, torch::kFloat64);
  EXPECT_LE(max_abs(fwht(fwht(x, 1.0), 1.0 / 4096) - x), 1e-12);
  auto e = torch::randn({0, 16});
  EXPECT_EQ(fwht(e, 1.0).sizes(), e.sizes());
}

TEST(FwhtOp, GradientMatchesFiniteDifferences) {
  torch::manual_seed(2);
  auto x = torch::randn({3, 16}, torch::kFloat64).requires_grad_(true);
  auto w = torch::randn({3, 16}, torch::kFloat64);
  const double scale = 0.25;
  auto loss_of = [&](const torch::Tensor& v) { return (fwht(v, scale) * w).sum(); };
  auto g = torch::autograd::grad({loss_of(x)}, {x})[0];
  auto xd = x.detach();
  const double h = 1e-6;
  for (int64_t i = 0; i < xd.numel(); ++i) {
    auto p = xd.clone(), m = xd.clone();
    p.view(-1)[i] += h;
    m.view(-1)[i] -= h;
    const double fd = (loss_of(p).item<double>() - loss_of(m).item<double>()) / (2 * h);
    EXPECT_NEAR(g.view(-1)[i].item<double>(), fd, 1e-7);
  }
  // backward is itself differentiable: d/dv <H^T v, u> = scale * H u
  auto v = torch::randn({3, 16}, torch::kFloat64).requires_grad_(true);
  auto g2 = torch::autograd::grad({fwht(x, scale)}, {x}, {v}, true, true)[0];
  auto u = torch::randn({3, 16}, torch::kFloat64);
  auto gv = torch::autograd::grad({(g2 * u).sum()}, {v})[0];
  EXPECT_LE(max_abs(gv - dense_fwht(u, scale)), 1e-12);
}

TEST(FwhtOp, ErrorsNameTheProblem) {
  auto expect_msg = [](const std::function<void()>& f, const std::string& sub) {
    try {
      f();
      ADD_FAILURE() << "no exception; expected '" << sub << "'";
    } catch (const whvi::Error& e) {
      EXPECT_NE(std::string(e.what()).find(sub), std::string::npos) << e.what();
    }
  };
  expect_msg([] { fwht(torch::randn({2, 24}), 1.0); }, "D=24");
  expect_msg([] { fwht(torch::ones({2, 8}, torch::kInt32), 1.0); }, "dtype");
  expect_msg([] { fwht(torch::tensor(3.0), 1.0); }, "scalar");
}

// ---- whvi_matvec ----------------------------------------------------------------

struct Params {
  torch::Tensor x, eps, s1, s2, mu, sg;
};

Params make_params(int64_t B, int64_t K, int64_t D, bool shared, bool with_eps, torch::ScalarType dt) {
  const int64_t G = shared ? 1 : K;
  Params p;
  p.x = torch::randn({B, D}, dt);
  p.eps = with_eps ? torch::randn({B, G, D}, dt) : torch::Tensor();
  p.s1 = torch::randn({K, D}, dt);
  p.s2 = torch::randn({K, D}, dt);
  p.mu = torch::randn({G, D}, dt);
  p.sg = torch::rand({G, D}, dt);
  return p;
}

// The same product composed from fwht ops and Torch elementwise ops.
torch::Tensor composed(const Params& p, bool shared) {
  const int64_t K = p.s1.size(0);
  auto g = p.eps.defined() ? p.mu.unsqueeze(0) + p.sg.unsqueeze(0) * p.eps : p.mu.unsqueeze(0);
  if (shared) g = g.expand({g.size(0), K, g.size(2)});
  auto a = p.s2.unsqueeze(0) * p.x.unsqueeze(1);  // [B, K, D]
  return p.s1.unsqueeze(0) * fwht(g * fwht(a, 1.0), 1.0);
}

TEST(WhviMatvecOp, ForwardAndGradientsMatchComposition) {
  torch::manual_seed(3);
  for (bool shared : {false, true})
    for (bool with_eps : {true, false}) {
      auto p = make_params(6, 3, 32, shared, with_eps, torch::kFloat64);
      for (auto* t : {&p.x, &p.s1, &p.s2, &p.mu, &p.sg}) t->requires_grad_(true);
      auto y = whvi::ops::whvi_matvec(p.x, p.eps, p.s1, p.s2, p.mu, p.sg, shared);
      auto y_ref = composed(p, shared);
      ASSERT_EQ(y.sizes(), y_ref.sizes());
      EXPECT_LE(max_abs(y - y_ref), 1e-10);
      auto w = torch::randn_like(y);
      std::vector<torch::Tensor> inputs = {p.x, p.s1, p.s2, p.mu, p.sg};
      auto g = torch::autograd::grad({(y * w).sum()}, inputs, {}, false, false, true);
      auto g_ref = torch::autograd::grad({(y_ref * w).sum()}, inputs, {}, false, false, true);
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!with_eps && i == 4) {  // sigma does not enter the mean
          EXPECT_TRUE(!g[i].defined() || max_abs(g[i]) == 0.0);
          continue;
        }
        EXPECT_LE(max_abs(g[i] - g_ref[i]), 1e-9 * (1 + max_abs(g_ref[i])))
            << "input " << i << " shared=" << shared << " eps=" << with_eps;
      }
    }
}

TEST(WhviMatvecOp, Float32MatchesFloat64) {
  torch::manual_seed(4);
  auto p = make_params(8, 2, 256, false, true, torch::kFloat64);
  auto y64 = whvi::ops::whvi_matvec(p.x, p.eps, p.s1, p.s2, p.mu, p.sg, false);
  auto f = [](const torch::Tensor& t) { return t.to(torch::kFloat32); };
  auto y32 = whvi::ops::whvi_matvec(f(p.x), f(p.eps), f(p.s1), f(p.s2), f(p.mu), f(p.sg), false);
  EXPECT_LE(max_abs(y32.to(torch::kFloat64) - y64) / max_abs(y64), 1e-5);
}

TEST(WhviMatvecOp, ShapeErrorsNameTheTensor) {
  auto p = make_params(2, 2, 8, false, true, torch::kFloat32);
  try {
    whvi::ops::whvi_matvec(p.x, p.eps, p.s1, p.s2, p.mu.slice(1, 0, 4), p.sg, false);
    FAIL();
  } catch (const whvi::ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("mu"), std::string::npos) << e.what();
  }
  EXPECT_THROW(whvi::ops::whvi_matvec(p.x.to(torch::kFloat64), p.eps, p.s1, p.s2, p.mu, p.sg, false),
               whvi::ShapeError);
  EXPECT_THROW(whvi::ops::whvi_matvec(p.x, p.eps, p.s1, p.s2, p.mu, p.sg, true), whvi::ShapeError);
}

// ---- runtime + bench ----------------------------------------------------------------

TEST(Runtime, ThreadsReachLibTorch) {
  EXPECT_EQ(whvi::set_threads(1), 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(whvi::threads(), 1);
  whvi::set_threads(2);
  EXPECT_EQ(at::get_num_threads(), 2);
  // OpenBLAS stays on one thread (its pool and LibTorch's would spin against each other)
  if (void* f = dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))
    EXPECT_EQ(reinterpret_cast<int (*)()>(f)(), 1);
  whvi::set_threads(1);
}

// set_threads flushes subnormal floats to zero on the calling thread, on
// LibTorch's pool threads (those that exist and those created later) and on
// threads started afterwards: 1e-30f * 1e-10f, a subnormal in IEEE
// arithmetic, is 0 on each. A pool thread that kept IEEE subnormals would make
// the product nonzero there, and numbers depend on which thread ran a chunk.
TEST(Runtime, SubnormalsAreFlushedToZeroOnEveryThread) {
  // the product's bits: a float comparison would itself read a subnormal as 0
  // on a thread with DAZ set, as gtest's main thread now has
  const auto product = [] {
    volatile float a = 1e-30f, b = 1e-10f;  // volatile: computed at run time, on this thread
    const float p = a * b;
    uint32_t bits = 0;
    std::memcpy(&bits, &p, sizeof bits);
    return bits;
  };
  // first the pool's threads of a run that kept IEEE subnormals: set_threads
  // must reach threads that exist already, not only those it creates
  at::globalContext().setFlushDenormal(false);
  at::set_num_threads(3);
  std::atomic<int> kept{0};
  at::parallel_for(0, 3, 1, [&](int64_t, int64_t) {
    at::globalContext().setFlushDenormal(false);
    if (product() != 0) ++kept;
  });
  ASSERT_EQ(kept.load(), 3) << "the test needs every pool thread keeping subnormals first";
  for (const int n : {3, 2, 1}) {
    whvi::set_threads(n);
    ASSERT_TRUE(whvi::denormals_flushed()) << "an x86-64 CPU can flush subnormals";
    EXPECT_EQ(product(), 0u) << n;
    std::mutex m;
    std::vector<uint32_t> seen;
    at::parallel_for(0, 64, 1, [&](int64_t, int64_t) {
      const uint32_t p = product();
      std::lock_guard<std::mutex> lock(m);
      seen.push_back(p);
    });
    EXPECT_FALSE(seen.empty());  // one entry per chunk, one chunk per pool thread
    for (const uint32_t p : seen) EXPECT_EQ(p, 0u) << n;
    std::thread t([&] { EXPECT_EQ(product(), 0u) << n; });
    t.join();
    // and LibTorch's own kernels: a large product spread over the pool
    const auto x = (torch::full({1 << 18}, 1e-30f) * 1e-10f).view(torch::kInt32);
    EXPECT_EQ(x.ne(0).sum().item<int64_t>(), 0) << n;
  }
  whvi::set_threads(1);
}

TEST(BenchFwht, WritesTheDocumentedFields) {
  whvi::bench::FwhtBenchOptions o;
  o.sizes = {64, 256};
  o.batch = 8;
  o.repeats = 3;
  o.warmup = 1;
  const auto doc = whvi::bench::run_fwht_bench(o);
  for (const char* k : {"device", "cpu_model", "threads", "dtype", "rows", "command", "whvi_commit"})
    EXPECT_TRUE(doc.contains(k)) << k;
  ASSERT_EQ(doc["rows"].size(), 2u);
  for (const auto& r : doc["rows"]) {
    for (const char* k : {"d", "batch", "fwht_ms", "matmul_ms", "copy_ms", "fwht_gbps",
                          "fwht_gflops", "speedup_vs_matmul", "fwht_fwd_bwd_ms"})
      EXPECT_TRUE(r.contains(k)) << k;
    EXPECT_GT(r["fwht_ms"].get<double>(), 0);
    EXPECT_LT(r["check_rel_error"].get<double>(), 1e-5);
  }
}

TEST(BenchFwht, RejectsBadOptions) {
  whvi::bench::FwhtBenchOptions o;
  o.sizes = {100};
  EXPECT_THROW(whvi::bench::run_fwht_bench(o), whvi::Error);
  o.sizes = {64};
  o.dtype = "bfloat16";
  EXPECT_THROW(whvi::bench::run_fwht_bench(o), whvi::Error);
}

}  // namespace

TEST(BenchTrain, WritesOneRowPerKindAndWidthAndRefusesBadOptions) {
  whvi::bench::TrainBenchOptions o;
  o.kinds = {"whvi", "mcd"};
  o.widths = {8, 16};
  o.depth = 1;
  o.batch = 16;
  o.rows = 64;
  o.steps = 20;
  o.warmup = 5;
  o.command_line = "test";
  const auto doc = whvi::bench::run_train_bench(o);
  ASSERT_EQ(doc["rows"].size(), 4u);
  for (const char* k : {"cpu_model", "threads", "simd_level", "whvi_commit", "command"})
    EXPECT_TRUE(doc.contains(k)) << k;
  EXPECT_EQ(doc["rows"][0]["kind"], "whvi");
  EXPECT_EQ(doc["rows"][3]["kind"], "mcd");
  EXPECT_EQ(doc["rows"][3]["width"], 16);
  for (const auto& r : doc["rows"]) {
    EXPECT_GT(r["steps_per_second"].get<double>(), 0);
    EXPECT_NEAR(r["ms_per_step"].get<double>() * r["steps_per_second"].get<double>(), 1000.0, 1e-6);
    EXPECT_GT(r["params"].get<int64_t>(), 0);
    EXPECT_GT(r["peak_rss_mib"].get<double>(), 0);
  }
  // a wider network has more parameters
  EXPECT_GT(doc["rows"][1]["params"].get<int64_t>(), doc["rows"][0]["params"].get<int64_t>());
  auto bad = o;
  bad.kinds = {"nope"};
  EXPECT_THROW(whvi::bench::run_train_bench(bad), whvi::Error);
  bad = o;
  bad.batch = 1000;  // more than the rows
  EXPECT_THROW(whvi::bench::run_train_bench(bad), whvi::Error);
}

// Records carry no absolute path of this machine: an absolute argv[0] becomes
// "whvi"; a relative one and the arguments are kept, shell-quoted.
TEST(CommandLine, AbsoluteBinaryPathIsRecordedAsWhvi) {
  const char* abs[] = {"/tmp/bin/whvi-copy", "train", "--set", "a=b c"};
  EXPECT_EQ(whvi::join_command_line(4, abs), "whvi train --set 'a=b c'");
  const char* rel[] = {"build/whvi", "table"};
  EXPECT_EQ(whvi::join_command_line(2, rel), "build/whvi table");
}
