#include "bench/bench_fwht.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "common/errors.h"
#include "common/runtime.h"
#include "fwht.h"
#include "ops/fwht_op.h"
#ifdef WHVI_TORCH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace whvi::bench {
namespace {

constexpr int64_t kMaxSize = int64_t{1} << 30;  // the largest --sizes entry (docs/architecture.md, "Conventions")

// Batches up to this many elements also get a per-call measurement.
constexpr int64_t kPerCallMaxElems = int64_t{1} << 16;

struct Stats {
  double median_ms = 0, min_ms = 0;
  int repeats = 0;
};

void sync(const torch::Device& dev) {
#ifdef WHVI_TORCH_CUDA
  if (dev.is_cuda()) c10::cuda::getCurrentCUDAStream().synchronize();
#else
  (void)dev;
#endif
}

// Times f: up to `warmup` untimed calls (fewer when they take longer than
// max_seconds), then up to `repeats` timed calls (at least 3, fewer when they
// would take longer than max_seconds in total).
Stats time_it(const std::function<void()>& f, const torch::Device& dev, int warmup, int repeats,
              double max_seconds) {
  std::vector<double> ms;
  auto one = [&]() -> double {
#ifdef WHVI_TORCH_CUDA
    if (dev.is_cuda()) {
      at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
      start.record();
      f();
      stop.record();
      stop.synchronize();
      return start.elapsed_time(stop);
    }
#endif
    const auto t0 = std::chrono::steady_clock::now();
    f();
    sync(dev);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  // warm-up calls stop after max_seconds too: a huge --warmup never runs for minutes unseen
  double warm = 0;
  for (int i = 0; i < warmup && warm <= max_seconds * 1e3; ++i) warm += one();
  double total = 0;
  for (int i = 0; i < repeats; ++i) {
    ms.push_back(one());
    total += ms.back();
    if (i >= 2 && total > max_seconds * 1e3) break;
  }
  std::sort(ms.begin(), ms.end());
  Stats s;
  s.repeats = static_cast<int>(ms.size());
  s.min_ms = ms.front();
  s.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return s;
}

torch::ScalarType parse_dtype(const std::string& s) {
  if (s == "float32") return torch::kFloat32;
  if (s == "float64") return torch::kFloat64;
  if (s == "float16") return torch::kFloat16;
  if (s == "bfloat16") return torch::kBFloat16;
  throw Error("bench fwht: unknown --dtype '" + s + "'; use float32, float64, float16 or bfloat16");
}

double tolerance(torch::ScalarType st, int64_t d) {
  const double lg = std::max<double>(1, std::log2(static_cast<double>(d)));
  switch (st) {
    case torch::kFloat64: return 1e-14 * lg;
    case torch::kFloat16: return 2e-3 * lg;
    case torch::kBFloat16: return 1.5e-2 * lg;
    default: return 2e-6 * lg;
  }
}

// max |y - ref| / max |ref| over rows checked against an independent
// reference: the explicit Hadamard product in float64 for D <= 4096,
// otherwise the portable (scalar) kernel in float64 on the CPU.
double check_fwht(const torch::Tensor& x, const torch::Tensor& y) {
  const int64_t d = x.size(1), rows = std::min<int64_t>(x.size(0), 64);
  auto xs = x.slice(0, 0, rows).to(torch::kCPU, torch::kFloat64).contiguous();
  auto ys = y.slice(0, 0, rows).to(torch::kCPU, torch::kFloat64);
  torch::Tensor ref;
  if (d <= 4096) {
    ref = torch::matmul(xs, ops::hadamard_matrix(d, torch::kFloat64));
  } else {
    ref = torch::empty_like(xs);
    kernels::fwht_cpu_level<double>(kernels::SimdLevel::kScalar, xs.data_ptr<double>(), d,
                                    ref.data_ptr<double>(), d, rows, d, 1.0, 1);
  }
  const double scale = ref.abs().max().item<double>();
  return (ys - ref).abs().max().item<double>() / std::max(scale, 1e-300);
}

}  // namespace

nlohmann::json bench_record(const std::string& benchmark, const std::string& command, uint64_t seed) {
  nlohmann::json doc;
  doc["benchmark"] = benchmark;
  doc["cpu_model"] = cpu_model();
  doc["threads"] = threads();
  doc["simd_level"] = kernels::simd_level_name(kernels::active_simd_level());
  doc["blas"] = blas_info();
  doc["torch_version"] = torch_version();
  doc["whvi_commit"] = git_commit();
  doc["command"] = command;
  doc["seed"] = seed;
  return doc;
}

namespace {

// The device, after checking every option (before anything is allocated).
torch::Device checked_device(const FwhtBenchOptions& o, torch::ScalarType st) {
  WHVI_CHECK(o.device == "cpu" || o.device == "cuda", "bench fwht: --device must be cpu or cuda, got '",
             o.device, "'");
  WHVI_CHECK(o.batch >= 1, "bench fwht: --batch must be a positive integer, got ", o.batch);
  WHVI_CHECK(o.repeats >= 1, "bench fwht: --repeats must be a positive integer, got ", o.repeats);
  torch::Device dev(torch::kCPU);
  if (o.device == "cuda") {
#ifdef WHVI_TORCH_CUDA
    WHVI_CHECK(torch::cuda::is_available(), "bench fwht: --device cuda but no CUDA device is visible");
    dev = torch::Device(torch::kCUDA);
#else
    throw Error(
        "bench fwht: --device cuda needs a build against a CUDA LibTorch (this build's LibTorch is "
        "CPU-only; see docs/kernels.md 'CUDA')");
#endif
  } else {
    WHVI_CHECK(st == torch::kFloat32 || st == torch::kFloat64, "bench fwht: --dtype ", o.dtype,
               " is CUDA-only; on CPU use float32 or float64");
  }
  WHVI_CHECK(o.warmup >= 0, "bench fwht: --warmup must be >= 0, got ", o.warmup);
  WHVI_CHECK(std::isfinite(o.max_seconds) && o.max_seconds > 0, "bench fwht: --max-seconds must be a "
             "positive finite number, got ", o.max_seconds);
  for (int64_t d : o.sizes) {
    WHVI_CHECK(d >= 1 && d <= kMaxSize, "bench fwht: size ", d,
               " in --sizes is out of range: sizes are powers of two from 1 to 2^30 = ", kMaxSize);
    WHVI_CHECK(kernels::is_power_of_two(d), "bench fwht: size ", d,
               " in --sizes is not a power of two");
  }
  return dev;
}

// Refuses, before allocating anything, what cannot fit: the largest size's
// working set against half the machine's memory.
void refuse_what_cannot_fit(const FwhtBenchOptions& o, torch::ScalarType st) {
  const unsigned long long mem = usable_memory_bytes();
  if (mem == 0 || o.device != "cpu") return;
  const long double elem = static_cast<long double>(c10::elementSize(st));
  for (int64_t d : o.sizes) {
    const long double rows = static_cast<long double>(o.batch) * d * elem * (o.backward ? 8 : 4);
    const long double dense = d <= o.max_dense_d ? static_cast<long double>(d) * d * elem : 0;
    const long double need = rows + dense;
    if (need <= 0.5L * mem) continue;
    const double gib = static_cast<double>(need / (1024.0L * 1024 * 1024));
    const double have = static_cast<double>(mem) / (1024.0 * 1024 * 1024);
    char buf[512];
    if (dense > rows)
      std::snprintf(buf, sizeof buf,
                    "bench fwht: the dense %lld x %lld Hadamard matrix (--max-dense-d %lld) with "
                    "--batch %lld needs about %.1f GiB, more than half of this machine's %.1f GiB; "
                    "lower --max-dense-d (the dense product is skipped above it) or --sizes",
                    static_cast<long long>(d), static_cast<long long>(d),
                    static_cast<long long>(o.max_dense_d), static_cast<long long>(o.batch), gib, have);
    else
      std::snprintf(buf, sizeof buf,
                    "bench fwht: --batch %lld at D = %lld (%s) needs about %.1f GiB, more than "
                    "half of this machine's %.1f GiB; use a smaller --batch or smaller --sizes",
                    static_cast<long long>(o.batch), static_cast<long long>(d), o.dtype.c_str(), gib, have);
    throw Error(buf);
  }
}

// Per-call cost for batches that sit in cache: many calls on the same
// buffers timed as one loop (a clock read per call would dominate), through
// the kernel's C API and through the LibTorch op the layers use.
void time_per_call(nlohmann::json& row, const torch::Tensor& x, torch::Tensor& out, const FwhtBenchOptions& o,
                   const torch::Device& dev) {
  const int64_t b = x.size(0), d = x.size(1);
  const int64_t calls = std::max<int64_t>(16, (int64_t{1} << 20) / (b * d));
  const int nt = threads();
  auto per_call_ns = [&](const std::function<void()>& f) {
    const auto s = time_it(
        [&] {
          for (int64_t c = 0; c < calls; ++c) f();
        },
        dev, std::max(o.warmup, 1), o.repeats, o.max_seconds);
    return s.median_ms * 1e6 / static_cast<double>(calls);
  };
  double kernel_ns = 0;
  if (x.scalar_type() == torch::kFloat32) {
    const float* xin = x.data_ptr<float>();
    float* yo = out.data_ptr<float>();
    kernel_ns = per_call_ns([&] { kernels::fwht_cpu<float>(xin, d, yo, d, b, d, 1.0f, nt); });
  } else {
    const double* xin = x.data_ptr<double>();
    double* yo = out.data_ptr<double>();
    kernel_ns = per_call_ns([&] { kernels::fwht_cpu<double>(xin, d, yo, d, b, d, 1.0, nt); });
  }
  const double op_ns = per_call_ns([&] { ops::fwht_out(x, out, 1.0); });
  row["calls_per_sample"] = calls;
  row["kernel_call_ns"] = kernel_ns;
  row["op_call_ns"] = op_ns;
  row["op_overhead_ns"] = op_ns - kernel_ns;
  std::printf("%8s per call (%lld calls timed as one loop): kernel C API %.1f ns, LibTorch op "
              "%.1f ns (+%.1f ns)\n",
              "", static_cast<long long>(calls), kernel_ns, op_ns, op_ns - kernel_ns);
}

// One size's timings and their table line.
struct SizeTimings {
  Stats fw, cp, mm, fwb, mmb;
  bool dense = false;
};

// The dense product and the forward+backward passes of one size.
void time_dense_and_backward(nlohmann::json& row, SizeTimings& t, const torch::Tensor& x, const FwhtBenchOptions& o,
                             torch::ScalarType st, const torch::Device& dev) {
  const int64_t d = x.size(1);
  torch::Tensor h;
  t.dense = d <= o.max_dense_d;
  if (t.dense) {
    h = ops::hadamard_matrix(d, st).to(dev);
    auto z = torch::empty_like(x);
    t.mm = time_it([&] { torch::mm_out(z, x, h); }, dev, o.warmup, o.repeats, o.max_seconds);
    row["matmul_ms"] = t.mm.median_ms;
    row["matmul_min_ms"] = t.mm.min_ms;
    row["matmul_repeats"] = t.mm.repeats;
    row["speedup_vs_matmul"] = t.mm.median_ms / t.fw.median_ms;
  }
  if (!o.backward) return;
  auto xg = x.detach().clone().requires_grad_(true);
  auto g = torch::randn_like(x);
  t.fwb = time_it(
      [&] {
        auto yy = ops::fwht(xg, 1.0);
        torch::autograd::grad({yy}, {xg}, {g});
      },
      dev, o.warmup, o.repeats, o.max_seconds);
  row["fwht_fwd_bwd_ms"] = t.fwb.median_ms;
  if (!t.dense) return;
  auto hg = h.detach();
  t.mmb = time_it(
      [&] {
        auto yy = torch::matmul(xg, hg);
        torch::autograd::grad({yy}, {xg}, {g});
      },
      dev, o.warmup, o.repeats, o.max_seconds);
  row["matmul_fwd_bwd_ms"] = t.mmb.median_ms;
  row["speedup_fwd_bwd_vs_matmul"] = t.mmb.median_ms / t.fwb.median_ms;
}

void print_row(const nlohmann::json& row, const SizeTimings& t, bool backward) {
  auto cell = [](bool have, double v, const char* f) {
    char buf[32];
    if (have) std::snprintf(buf, sizeof buf, f, v); else std::snprintf(buf, sizeof buf, "%s", "-");
    return std::string(buf);
  };
  const bool dense = t.dense, bw = backward, bwd = backward && dense;
  std::printf("%8lld %7lld | %10s %10s %10s | %9.1f %9.1f %8s | %10s %10s %8s\n",
              static_cast<long long>(row["d"].get<int64_t>()), static_cast<long long>(row["batch"].get<int64_t>()),
              cell(true, t.fw.median_ms, "%.4f").c_str(), cell(dense, t.mm.median_ms, "%.4f").c_str(),
              cell(true, t.cp.median_ms, "%.4f").c_str(), row["fwht_gbps"].get<double>(),
              row["fwht_gflops"].get<double>(), cell(dense, t.mm.median_ms / t.fw.median_ms, "%.1fx").c_str(),
              cell(bw, t.fwb.median_ms, "%.4f").c_str(), cell(bwd, t.mmb.median_ms, "%.4f").c_str(),
              cell(bwd, t.mmb.median_ms / t.fwb.median_ms, "%.1fx").c_str());
  std::fflush(stdout);
}

// Checks the kernel at size d, times it and returns its row.
nlohmann::json bench_size(int64_t d, const FwhtBenchOptions& o, torch::ScalarType st, const torch::Device& dev) {
  const int64_t b = o.batch;
  auto x = torch::randn({b, d}, torch::TensorOptions().dtype(st).device(dev));
  auto y = ops::fwht(x, 1.0);
  const double err = check_fwht(x, y);
  const double tol = tolerance(st, d);
  if (!(err <= tol))
    throw Error("bench fwht: the FWHT kernel is WRONG at D=" + std::to_string(d) + " (relative error " +
                std::to_string(err) + " > tolerance " + std::to_string(tol) + "); refusing to report timings");
  // Forward timings write into preallocated outputs (FWHT, copy and dense
  // product alike), so first-touch page faults of fresh allocations are
  // not timed; the forward+backward timings go through autograd and do
  // allocate, for both.
  SizeTimings t;
  auto out = torch::empty_like(x);
  t.fw = time_it([&] { ops::fwht_out(x, out, 1.0); }, dev, o.warmup, o.repeats, o.max_seconds);
  t.cp = time_it([&] { out.copy_(x); }, dev, o.warmup, o.repeats, o.max_seconds);
  nlohmann::json row;
  const double bytes = 2.0 * static_cast<double>(b * d) * x.element_size();
  const double flops = static_cast<double>(b) * d * std::log2(static_cast<double>(d));
  row["d"] = d;
  row["batch"] = b;
  row["fwht_ms"] = t.fw.median_ms;
  row["fwht_min_ms"] = t.fw.min_ms;
  row["fwht_repeats"] = t.fw.repeats;
  row["fwht_ns_per_row"] = t.fw.median_ms * 1e6 / b;
  row["copy_ms"] = t.cp.median_ms;
  row["fwht_gbps"] = bytes / (t.fw.median_ms * 1e-3) * 1e-9;
  row["copy_gbps"] = bytes / (t.cp.median_ms * 1e-3) * 1e-9;
  row["fwht_vs_copy"] = t.cp.median_ms / t.fw.median_ms;
  row["fwht_gflops"] = flops / (t.fw.median_ms * 1e-3) * 1e-9;
  row["check_rel_error"] = err;
  row["matmul_ms"] = nullptr;
  row["speedup_vs_matmul"] = nullptr;
  if (!dev.is_cuda() && b * d <= kPerCallMaxElems) time_per_call(row, x, out, o, dev);
  time_dense_and_backward(row, t, x, o, st, dev);
  print_row(row, t, o.backward);
  return row;
}

}  // namespace

nlohmann::json run_fwht_bench(const FwhtBenchOptions& o) {
  const auto st = parse_dtype(o.dtype);
  const torch::Device dev = checked_device(o, st);
  refuse_what_cannot_fit(o, st);
  torch::manual_seed(o.seed);
  nlohmann::json rows = nlohmann::json::array();
  std::printf("%8s %7s | %10s %10s %10s | %9s %9s %8s | %10s %10s %8s\n", "D", "batch", "fwht_ms",
              "matmul_ms", "copy_ms", "GB/s", "GFLOP/s", "speedup", "fwht+bw_ms", "mm+bw_ms",
              "speedup");
  for (int64_t d : o.sizes) rows.push_back(bench_size(d, o, st, dev));
  auto doc = bench_record("fwht", o.command_line, o.seed);
  doc["device"] = o.device == "cuda" ? cuda_device_name() : "cpu";
  doc["dtype"] = o.dtype;
  doc["batch"] = o.batch;
  doc["timing"] = "median (and min) over repeats after warm-up; wall clock on CPU, CUDA events on GPU";
  doc["rows"] = rows;
  return doc;
}

}  // namespace whvi::bench
