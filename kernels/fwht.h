// Torch-free Fast Walsh-Hadamard Transform kernels and the fused WHVI
// matrix-vector kernel, CPU side. The CUDA side is in kernels/fwht_cuda.h.
//
// Conventions shared by every kernel in kernels/:
//  * H_d is the Sylvester (natural-order) Hadamard matrix with entries +-1:
//    H_1 = [1], H_2k = [[H_k, H_k], [H_k, -H_k]].  H_d H_d = d I.
//  * Data are row-major: `rows` rows of `d` contiguous elements; consecutive
//    rows are `row_stride` elements apart (row_stride >= d).
//  * The transform is unnormalised; `scale` multiplies the result (pass
//    1/sqrt(d) for the orthonormal transform).
//  * d must be a power of two, 1 <= d <= 2^kMaxLog2DCpu. Anything else throws
//    KernelError naming the size; no kernel silently returns its input.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace whvi::kernels {

// A bad argument from the caller (size, pointer, thread count).
struct KernelError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

constexpr int kMaxLog2DCpu = 30;

inline bool is_power_of_two(int64_t d) { return d > 0 && (d & (d - 1)) == 0; }
inline int log2_exact(int64_t d) {
  int l = 0;
  while ((int64_t{1} << l) < d) ++l;
  return l;
}

// ---- SIMD level ------------------------------------------------------------
// One binary serves every x86-64 CPU: each level lives in its own translation
// unit compiled with that level's flags, and the level is chosen at run time
// (best available, or forced with set_simd_level / the WHVI_SIMD environment
// variable: scalar | avx2 | avx512).
enum class SimdLevel { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* simd_level_name(SimdLevel level);
SimdLevel parse_simd_level(const std::string& name);  // throws KernelError
bool simd_level_supported(SimdLevel level);           // compiled in and CPU has it
std::vector<SimdLevel> supported_simd_levels();
SimdLevel active_simd_level();
// Throws KernelError if `level` is not supported on this CPU/build.
void set_simd_level(SimdLevel level);

// ---- Batched FWHT ------------------------------------------------------------
// out[r, :] = scale * H_d in[r, :] for r < rows.
// in == out (same pointer and stride) is the in-place transform; otherwise the
// two arrays must not overlap. Rows are spread over `threads` threads
// (threads <= 0: all hardware threads). Supported T: float, double.
template <class T>
void fwht_cpu(const T* in, int64_t in_row_stride, T* out, int64_t out_row_stride,
              int64_t rows, int64_t d, T scale, int threads);

// Same, forcing a SIMD level (for tests and benchmarks of every level).
template <class T>
void fwht_cpu_level(SimdLevel level, const T* in, int64_t in_row_stride, T* out,
                    int64_t out_row_stride, int64_t rows, int64_t d, T scale, int threads);

// ---- Fused WHVI matrix-vector product ---------------------------------------
// Shapes (all row-major, contiguous):
//   x      [batch, d]            input rows (already zero-padded to d)
//   s1, s2 [blocks, d]           diagonal factors of each stacked block
//   mu, sg [groups, d]           mean and std of g; groups = shared_g ? 1 : blocks
//   eps    [batch, groups, d]    standard-normal noise, one draw per row
//   y      [batch, blocks, d]    output
// For row i and block k (group q = shared_g ? 0 : k):
//   g      = mu[q] + sg[q] * eps[i, q]
//   y[i,k] = s1[k] * H( g * H( s2[k] * x[i] ) )        (H unnormalised)
// eps == nullptr means eps = 0 (the mean weight matrix: g = mu).
// hu, hw [batch, blocks, d], optional: the forward also writes the two
// intermediate transforms u = H(s2[k] * x[i]) and w = H(g * u) there, and the
// backward given them does not recompute them (the same numbers, bit for bit,
// two transforms fewer per row and block).
struct WhviShape {
  int64_t batch = 0;
  int64_t blocks = 1;
  int64_t d = 1;
  bool shared_g = false;
  int64_t groups() const { return shared_g ? 1 : blocks; }
};

template <class T>
void whvi_forward_cpu(const WhviShape& shape, const T* x, const T* eps, const T* s1, const T* s2,
                      const T* mu, const T* sg, T* y, int threads, T* hu = nullptr,
                      T* hw = nullptr);

// Gradients of sum(dy * y) with respect to every input. Outputs are
// overwritten (not accumulated). Any output pointer may be nullptr to skip it.
// eps == nullptr as in the forward (then dsg is zero). hu, hw: the forward's
// intermediates for these same inputs, or nullptr to recompute them.
//   dx [batch, d]; ds1, ds2 [blocks, d]; dmu, dsg [groups, d]
template <class T>
void whvi_backward_cpu(const WhviShape& shape, const T* x, const T* eps, const T* s1,
                       const T* s2, const T* mu, const T* sg, const T* dy, T* dx, T* ds1,
                       T* ds2, T* dmu, T* dsg, int threads, const T* hu = nullptr,
                       const T* hw = nullptr);

// Unfused reference: the same operation composed of separate elementwise
// passes and fwht_cpu calls with the scalar level. Used by tests and by the
// benchmark's correctness check.
template <class T>
void whvi_forward_reference(const WhviShape& shape, const T* x, const T* eps, const T* s1,
                            const T* s2, const T* mu, const T* sg, T* y);

}  // namespace whvi::kernels
