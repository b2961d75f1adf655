// AVX2 + FMA level (compiled with -mavx2 -mfma; used only when the CPU has both).
#include "isa.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace whvi::kernels::isa_avx2 {

// In-register stage with lane stride h: r = sign .* x + swap_h(x), where
// sign is -1 on the lanes whose bit h is set. Exact: one rounding, like a+b.
struct Avx2F {
  using T = float;
  using V = __m256;
  static constexpr int W = 8, LOGW = 3, LOGR_MAX = 3;
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V set1(T a) { return _mm256_set1_ps(a); }
  // The first n in-register stages (lane strides 1 .. 2^(n-1)), n <= LOGW.
  static V inreg_n(V x, int n) {
    const V s1 = _mm256_setr_ps(1, -1, 1, -1, 1, -1, 1, -1);
    const V s2 = _mm256_setr_ps(1, 1, -1, -1, 1, 1, -1, -1);
    const V s4 = _mm256_setr_ps(1, 1, 1, 1, -1, -1, -1, -1);
    if (n > 0) x = _mm256_fmadd_ps(x, s1, _mm256_permute_ps(x, 0xB1));
    if (n > 1) x = _mm256_fmadd_ps(x, s2, _mm256_permute_ps(x, 0x4E));
    if (n > 2) x = _mm256_fmadd_ps(x, s4, _mm256_permute2f128_ps(x, x, 0x01));
    return x;
  }
  static V inreg(V x) { return inreg_n(x, LOGW); }
};

struct Avx2D {
  using T = double;
  using V = __m256d;
  static constexpr int W = 4, LOGW = 2, LOGR_MAX = 3;
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V set1(T a) { return _mm256_set1_pd(a); }
  static V inreg_n(V x, int n) {
    const V s1 = _mm256_setr_pd(1, -1, 1, -1);
    const V s2 = _mm256_setr_pd(1, 1, -1, -1);
    if (n > 0) x = _mm256_fmadd_pd(x, s1, _mm256_permute_pd(x, 0x5));
    if (n > 1) x = _mm256_fmadd_pd(x, s2, _mm256_permute2f128_pd(x, x, 0x01));
    return x;
  }
  static V inreg(V x) { return inreg_n(x, LOGW); }
};

#define WHVI_FWHT_BLOCK_BYTES (16 * 1024)
#include "fwht_impl.h"

WHVI_DEFINE_ISA_TABLE(table, Avx2F, Avx2D, ::whvi::kernels::SimdLevel::kAvx2)

}  // namespace whvi::kernels::isa_avx2

namespace whvi::kernels {
const IsaKernels* isa_avx2_kernels() { return isa_avx2::table(); }
}  // namespace whvi::kernels

#else
namespace whvi::kernels {
const IsaKernels* isa_avx2_kernels() { return nullptr; }
}  // namespace whvi::kernels
#endif
