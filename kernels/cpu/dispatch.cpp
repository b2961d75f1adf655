// Public CPU entry points: argument checks, SIMD level selection, and the
// unfused WHVI reference.
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "isa.h"

namespace whvi::kernels {
namespace {

const IsaKernels* table_for(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar: return isa_scalar_kernels();
    case SimdLevel::kAvx2: return isa_avx2_kernels();
    case SimdLevel::kAvx512: return isa_avx512_kernels();
  }
  return nullptr;
}

bool cpu_has(SimdLevel level) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  switch (level) {
    case SimdLevel::kScalar: return true;
    case SimdLevel::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SimdLevel::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma");
  }
  return false;
#else
  return level == SimdLevel::kScalar;
#endif
}

SimdLevel initial_level() {
  if (const char* env = std::getenv("WHVI_SIMD"); env && *env) {
    const SimdLevel forced = parse_simd_level(env);
    if (!simd_level_supported(forced))
      throw KernelError(std::string("WHVI_SIMD=") + env +
                        " is not supported by this CPU or build; unset it or choose one of the "
                        "supported levels (see `whvi --version`)");
    return forced;
  }
  const auto levels = supported_simd_levels();
  return levels.back();
}

// The active level's kernel table: the one source of truth for the level
// (active_simd_level() reads the table's own `level`), one atomic pointer
// read per call. Until set_simd_level runs, the first use installs the level
// WHVI_SIMD names or the best one supported (initial_level may throw).
std::atomic<const IsaKernels*> g_active_table{nullptr};

const IsaKernels* active_table() {
  const IsaKernels* t = g_active_table.load(std::memory_order_acquire);
  if (__builtin_expect(t == nullptr, 0)) {
    static const IsaKernels* const initial = table_for(initial_level());
    const IsaKernels* expected = nullptr;
    g_active_table.compare_exchange_strong(expected, initial, std::memory_order_acq_rel);
    t = g_active_table.load(std::memory_order_acquire);
  }
  return t;
}

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

// The argument checks as one inline predicate: a valid call pays a few
// compares; only a failing one calls fail_fwht_args, which names the problem.
inline bool fwht_args_ok(const void* in, int64_t in_stride, const void* out, int64_t out_stride,
                         int64_t rows, int64_t d) {
  return is_power_of_two(d) && d <= (int64_t{1} << kMaxLog2DCpu) && rows >= 0 &&
         (rows == 0 || (in && out)) && in_stride >= d && out_stride >= d &&
         (in != out || in_stride == out_stride);
}

// Called only when fwht_args_ok failed: always throws (the last throw is the
// fallback should the two ever disagree, so a bad call never runs).
[[noreturn, gnu::cold, gnu::noinline]] void fail_fwht_args(const void* in, int64_t in_stride, const void* out,
                                                           int64_t out_stride, int64_t rows, int64_t d) {
  if (!is_power_of_two(d) || d > (int64_t{1} << kMaxLog2DCpu))
    throw KernelError("FWHT size d=" + std::to_string(d) +
                      " is not supported: d must be a power of two between 1 and 2^" +
                      std::to_string(kMaxLog2DCpu) + " (zero-pad the input to the next power of two)");
  if (rows < 0) throw KernelError("FWHT: negative row count " + std::to_string(rows));
  if (rows > 0 && (!in || !out)) throw KernelError("FWHT: null data pointer");
  if (in_stride < d || out_stride < d)
    throw KernelError("FWHT: row stride (" + std::to_string(in_stride) + ", " +
                      std::to_string(out_stride) + ") smaller than d=" + std::to_string(d));
  if (in == out && in_stride != out_stride)
    throw KernelError("FWHT: in-place transform needs equal input and output row strides");
  throw KernelError("FWHT: invalid arguments (d=" + std::to_string(d) + ", rows=" + std::to_string(rows) + ")");
}

inline void check_fwht_args(const void* in, int64_t in_stride, const void* out, int64_t out_stride,
                            int64_t rows, int64_t d) {
  if (!fwht_args_ok(in, in_stride, out, out_stride, rows, d)) fail_fwht_args(in, in_stride, out, out_stride, rows, d);
}

void check_whvi_args(const WhviShape& s, const void* x, const void* s1, const void* s2,
                     const void* mu, const void* sg) {
  if (!is_power_of_two(s.d) || s.d > (int64_t{1} << kMaxLog2DCpu))
    throw KernelError("WHVI: block size d=" + std::to_string(s.d) +
                      " is not a power of two in [1, 2^" + std::to_string(kMaxLog2DCpu) + "]");
  if (s.batch < 0 || s.blocks < 1)
    throw KernelError("WHVI: bad shape batch=" + std::to_string(s.batch) +
                      " blocks=" + std::to_string(s.blocks));
  if ((s.batch > 0 && !x) || !s1 || !s2 || !mu || !sg) throw KernelError("WHVI: null input pointer");
}

template <class T>
auto fwht_fn(const IsaKernels* t) {
  if constexpr (std::is_same_v<T, float>) return t->fwht_f; else return t->fwht_d;
}
template <class T>
auto fwd_fn(const IsaKernels* t) {
  if constexpr (std::is_same_v<T, float>) return t->whvi_fwd_f; else return t->whvi_fwd_d;
}
template <class T>
auto bwd_fn(const IsaKernels* t) {
  if constexpr (std::is_same_v<T, float>) return t->whvi_bwd_f; else return t->whvi_bwd_d;
}

}  // namespace

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar: return "scalar";
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kAvx512: return "avx512";
  }
  return "?";
}

SimdLevel parse_simd_level(const std::string& name) {
  for (SimdLevel l : {SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx512})
    if (name == simd_level_name(l)) return l;
  throw KernelError("unknown SIMD level '" + name + "'; expected scalar, avx2 or avx512");
}

// Computed once: asking the CPU (__builtin_cpu_supports) on every FWHT call
// cost more than a whole D = 64 transform.
bool simd_level_supported(SimdLevel level) {
  static const bool supported[3] = {table_for(SimdLevel::kScalar) != nullptr && cpu_has(SimdLevel::kScalar),
                                    table_for(SimdLevel::kAvx2) != nullptr && cpu_has(SimdLevel::kAvx2),
                                    table_for(SimdLevel::kAvx512) != nullptr && cpu_has(SimdLevel::kAvx512)};
  const int i = static_cast<int>(level);
  return i >= 0 && i < 3 && supported[i];
}

std::vector<SimdLevel> supported_simd_levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx512})
    if (simd_level_supported(l)) out.push_back(l);
  return out;
}

SimdLevel active_simd_level() { return active_table()->level; }

void set_simd_level(SimdLevel level) {
  if (!simd_level_supported(level))
    throw KernelError(std::string("SIMD level '") + simd_level_name(level) +
                      "' is not supported by this CPU or build");
  g_active_table.store(table_for(level), std::memory_order_release);
}

// Both entry points after their checks: the transform with table t (d is a
// checked power of two, so its log2 is its count of trailing zeros).
template <class T>
inline void run_fwht(const IsaKernels* t, const T* in, int64_t in_row_stride, T* out, int64_t out_row_stride,
                     int64_t rows, int64_t d, T scale, int threads) {
  if (rows == 0) return;
  fwht_fn<T>(t)(in, in_row_stride, out, out_row_stride, rows, __builtin_ctzll(static_cast<unsigned long long>(d)),
                scale, resolve_threads(threads));
}

template <class T>
void fwht_cpu_level(SimdLevel level, const T* in, int64_t in_row_stride, T* out,
                    int64_t out_row_stride, int64_t rows, int64_t d, T scale, int threads) {
  check_fwht_args(in, in_row_stride, out, out_row_stride, rows, d);
  if (!simd_level_supported(level))
    throw KernelError(std::string("SIMD level '") + simd_level_name(level) + "' is not supported");
  run_fwht<T>(table_for(level), in, in_row_stride, out, out_row_stride, rows, d, scale, threads);
}

// fwht_cpu_level at the active level, without re-checking that level (it was
// checked when it was set).
template <class T>
void fwht_cpu(const T* in, int64_t in_row_stride, T* out, int64_t out_row_stride, int64_t rows,
              int64_t d, T scale, int threads) {
  check_fwht_args(in, in_row_stride, out, out_row_stride, rows, d);
  run_fwht<T>(active_table(), in, in_row_stride, out, out_row_stride, rows, d, scale, threads);
}

template <class T>
void whvi_forward_cpu(const WhviShape& shape, const T* x, const T* eps, const T* s1, const T* s2,
                      const T* mu, const T* sg, T* y, int threads, T* hu, T* hw) {
  check_whvi_args(shape, x, s1, s2, mu, sg);
  if (shape.batch > 0 && !y) throw KernelError("WHVI: null output pointer");
  if (shape.batch == 0) return;
  fwd_fn<T>(active_table())(shape, x, eps, s1, s2, mu, sg, y, resolve_threads(threads), hu, hw);
}

template <class T>
void whvi_backward_cpu(const WhviShape& shape, const T* x, const T* eps, const T* s1,
                       const T* s2, const T* mu, const T* sg, const T* dy, T* dx, T* ds1, T* ds2,
                       T* dmu, T* dsg, int threads, const T* hu, const T* hw) {
  check_whvi_args(shape, x, s1, s2, mu, sg);
  if (shape.batch > 0 && !dy) throw KernelError("WHVI: null output-gradient pointer");
  if (shape.batch == 0) {  // empty batch: every parameter gradient is zero
    const int64_t kd = shape.blocks * shape.d, gd = shape.groups() * shape.d;
    for (auto [p, n] : {std::pair{ds1, kd}, {ds2, kd}, {dmu, gd}, {dsg, gd}})
      if (p) std::fill(p, p + n, T(0));
    return;
  }
  bwd_fn<T>(active_table())(shape, x, eps, s1, s2, mu, sg, dy, dx, ds1, ds2, dmu, dsg,
                            resolve_threads(threads), hu, hw);
  if (dsg && !eps) std::fill(dsg, dsg + shape.groups() * shape.d, T(0));
}

template <class T>
void whvi_forward_reference(const WhviShape& sh, const T* x, const T* eps, const T* s1,
                            const T* s2, const T* mu, const T* sg, T* y) {
  check_whvi_args(sh, x, s1, s2, mu, sg);
  const int64_t d = sh.d;
  std::vector<T> g(d);
  for (int64_t i = 0; i < sh.batch; ++i)
    for (int64_t k = 0; k < sh.blocks; ++k) {
      const int64_t q = sh.shared_g ? 0 : k;
      T* yi = y + (i * sh.blocks + k) * d;
      for (int64_t j = 0; j < d; ++j) yi[j] = s2[k * d + j] * x[i * d + j];
      fwht_cpu_level<T>(SimdLevel::kScalar, yi, d, yi, d, 1, d, T(1), 1);
      for (int64_t j = 0; j < d; ++j)
        g[j] = mu[q * d + j] + (eps ? sg[q * d + j] * eps[(i * sh.groups() + q) * d + j] : T(0));
      for (int64_t j = 0; j < d; ++j) yi[j] *= g[j];
      fwht_cpu_level<T>(SimdLevel::kScalar, yi, d, yi, d, 1, d, T(1), 1);
      for (int64_t j = 0; j < d; ++j) yi[j] *= s1[k * d + j];
    }
}

#define WHVI_INSTANTIATE(T)                                                                       \
  template void fwht_cpu<T>(const T*, int64_t, T*, int64_t, int64_t, int64_t, T, int);            \
  template void fwht_cpu_level<T>(SimdLevel, const T*, int64_t, T*, int64_t, int64_t, int64_t, T, \
                                  int);                                                           \
  template void whvi_forward_cpu<T>(const WhviShape&, const T*, const T*, const T*, const T*,     \
                                    const T*, const T*, T*, int, T*, T*);                         \
  template void whvi_backward_cpu<T>(const WhviShape&, const T*, const T*, const T*, const T*,    \
                                     const T*, const T*, const T*, T*, T*, T*, T*, T*, int,       \
                                     const T*, const T*);                                         \
  template void whvi_forward_reference<T>(const WhviShape&, const T*, const T*, const T*,         \
                                          const T*, const T*, const T*, T*);
WHVI_INSTANTIATE(float)
WHVI_INSTANTIATE(double)

}  // namespace whvi::kernels
