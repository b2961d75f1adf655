#include <sys/resource.h>
#include "common/runtime.h"
#include "common/draws.h"
#include "common/memory.h"

#include <dlfcn.h>
#include <unistd.h>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "fwht.h"
#include "fwht_cuda.h"

namespace whvi {

double peak_rss_mib() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: KiB
}
namespace {
std::atomic<int> g_threads{0};
std::atomic<bool> g_flushed{false};

// OpenBLAS is reached through the libblas.so.3 LibTorch links; look its
// entry points up at run time so a reference-BLAS system still runs.
template <class Fn>
Fn blas_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}
}  // namespace

SgemmFn blas_sgemm() {
  static const auto f = blas_symbol<SgemmFn>("sgemm_");
  return f;
}
DgemmFn blas_dgemm() {
  static const auto f = blas_symbol<DgemmFn>("dgemm_");
  return f;
}

int hardware_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(std::min(hw, 1u << 20)) : 1;
}

int max_threads() { return std::min(4 * hardware_threads(), 1024); }

unsigned long long usable_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  unsigned long long bytes = pages > 0 && page > 0 ? static_cast<unsigned long long>(pages) *
                                                         static_cast<unsigned long long>(page)
                                                   : 0;
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(f);
    unsigned long long limit = 0;
    if (in >> limit && limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  }
  // ulimit -v: the address space left under it (what is mapped now, libraries included, is taken)
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && page > 0) {
    std::ifstream statm("/proc/self/statm");
    unsigned long long mapped_pages = 0;
    statm >> mapped_pages;
    const unsigned long long mapped = mapped_pages * static_cast<unsigned long long>(page);
    const unsigned long long room = lim.rlim_cur > mapped ? lim.rlim_cur - mapped : 1;
    if (bytes == 0 || room < bytes) bytes = room;
  }
  return bytes;
}

int set_threads(int n) {
  WHVI_CHECK(n <= max_threads(), "--threads ", n, " is more than ", max_threads(), " (4 x the ",
             hardware_threads(), " cores of this machine, at most 1024); use --threads 0 for all cores");
  if (n <= 0) n = hardware_threads();
  // Subnormals flushed to zero: on the calling thread, which the pool's and
  // whvi's own threads created later inherit, and on the pool's threads that
  // exist already (one item per thread).
  g_flushed = at::globalContext().setFlushDenormal(true);
  at::set_num_threads(n);
  at::parallel_for(0, n, 1, [](int64_t, int64_t) { at::globalContext().setFlushDenormal(true); });
  // OpenBLAS ignores LibTorch's setting, and its threads busy-wait as LibTorch's
  // OpenMP pool does: with both pools at n > 1 on a 2-core machine, fused MFG and
  // MCD steps ran 5x slower than on one thread (results/bench/cpu-epyc-avx2-train-threads.md).
  // So OpenBLAS always runs on the calling thread; LibTorch's pool parallelises.
  if (auto f = blas_symbol<void (*)(int)>("openblas_set_num_threads")) f(1);
  g_threads = n;
  return n;
}

bool denormals_flushed() { return g_flushed.load(); }

int threads() {
  if (g_threads.load() == 0) set_threads(0);
  return g_threads.load();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  return "unknown";
}

std::string blas_info() {
  if (auto f = blas_symbol<char* (*)()>("openblas_get_config")) {
    std::string out = "OpenBLAS ";
    out += f();
    if (auto g = blas_symbol<int (*)()>("openblas_get_num_threads"))
      out += " (threads " + std::to_string(g()) + ")";
    return out;
  }
  return "not OpenBLAS (matmul may be ~60x slower: apt-get install libopenblas0-pthread)";
}

bool cuda_available() {
#ifdef WHVI_HAVE_CUDA_KERNELS
  return kernels::cuda::device_count() > 0;
#else
  return false;
#endif
}

std::string cuda_device_name() {
#ifdef WHVI_HAVE_CUDA_KERNELS
  if (cuda_available()) return kernels::cuda::device_name();
#endif
  return "";
}

std::string torch_version() { return TORCH_VERSION; }

std::string version_string() {
  std::ostringstream os;
  os << "whvi " << WHVI_VERSION << " (commit " << git_commit() << ")\n";
  os << "LibTorch " << torch_version() << "\n";
  os << "BLAS: " << blas_info() << "\n";
  os << "CPU: " << cpu_model() << "; SIMD levels:";
  for (auto l : kernels::supported_simd_levels()) os << ' ' << kernels::simd_level_name(l);
  os << " (active " << kernels::simd_level_name(kernels::active_simd_level()) << ")\n";
  os << "Random draws (LibTorch's bits on every path): normal float32 " << normal_path(at::kFloat) << ", float64 "
     << normal_path(at::kDouble) << "; bernoulli " << bernoulli_path(at::kFloat) << "\n";
#ifdef WHVI_HAVE_CUDA_KERNELS
  os << "CUDA kernels: built; ";
  os << (cuda_available() ? "device: " + cuda_device_name() : std::string("no CUDA device found"));
#else
  os << "CUDA kernels: not built (no CUDA toolkit at configure time)";
#endif
#ifdef WHVI_TORCH_CUDA
  os << "; LibTorch CUDA dispatch: on";
#else
  os << "; LibTorch CUDA dispatch: off (CPU-only LibTorch)";
#endif
  os << "\nThreads: " << threads() << "; subnormal floats: "
     << (denormals_flushed() ? "flushed to zero" : "kept (this CPU cannot flush them)");
  return os.str();
}

void refuse_unless_room(double need_bytes, const std::string& what, const std::string& fix) {
  const double have = static_cast<double>(usable_memory_bytes());
  if (!(have > 0) || need_bytes <= have) return;
  throw Error(what + " would need about " + std::to_string(static_cast<int64_t>(need_bytes / (1 << 20)) + 1) +
              " MiB, more than the " + std::to_string(static_cast<int64_t>(have / (1 << 20))) +
              " MiB this process can use (memory, cgroup or ulimit -v); " + fix);
}

}  // namespace whvi
