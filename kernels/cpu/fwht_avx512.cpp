// AVX-512F level (compiled with -mavx512f -mavx2 -mfma; used only when the CPU has AVX-512F).
#include "isa.h"

#if defined(__AVX512F__)
#include <immintrin.h>

namespace whvi::kernels::isa_avx512 {

// In-register stages as in fwht_avx2.cpp: r = sign .* x + swap_h(x).
struct Avx512F {
  using T = float;
  using V = __m512;
  static constexpr int W = 16, LOGW = 4, LOGR_MAX = 4;
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V set1(T a) { return _mm512_set1_ps(a); }
  // The first n in-register stages (lane strides 1 .. 2^(n-1)), n <= LOGW.
  static V inreg_n(V x, int n) {
    const V s1 = _mm512_setr_ps(1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1);
    const V s2 = _mm512_setr_ps(1, 1, -1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 1, 1, -1, -1);
    const V s4 = _mm512_setr_ps(1, 1, 1, 1, -1, -1, -1, -1, 1, 1, 1, 1, -1, -1, -1, -1);
    const V s8 = _mm512_setr_ps(1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1);
    if (n > 0) x = _mm512_fmadd_ps(x, s1, _mm512_permute_ps(x, 0xB1));
    if (n > 1) x = _mm512_fmadd_ps(x, s2, _mm512_permute_ps(x, 0x4E));
    if (n > 2) x = _mm512_fmadd_ps(x, s4, _mm512_shuffle_f32x4(x, x, 0xB1));
    if (n > 3) x = _mm512_fmadd_ps(x, s8, _mm512_shuffle_f32x4(x, x, 0x4E));
    return x;
  }
  static V inreg(V x) { return inreg_n(x, LOGW); }
};

struct Avx512D {
  using T = double;
  using V = __m512d;
  static constexpr int W = 8, LOGW = 3, LOGR_MAX = 4;
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V set1(T a) { return _mm512_set1_pd(a); }
  static V inreg_n(V x, int n) {
    const V s1 = _mm512_setr_pd(1, -1, 1, -1, 1, -1, 1, -1);
    const V s2 = _mm512_setr_pd(1, 1, -1, -1, 1, 1, -1, -1);
    const V s4 = _mm512_setr_pd(1, 1, 1, 1, -1, -1, -1, -1);
    if (n > 0) x = _mm512_fmadd_pd(x, s1, _mm512_permute_pd(x, 0x55));
    if (n > 1) x = _mm512_fmadd_pd(x, s2, _mm512_shuffle_f64x2(x, x, 0xB1));
    if (n > 2) x = _mm512_fmadd_pd(x, s4, _mm512_shuffle_f64x2(x, x, 0x4E));
    return x;
  }
  static V inreg(V x) { return inreg_n(x, LOGW); }
};

#include "fwht_impl.h"

WHVI_DEFINE_ISA_TABLE(table, Avx512F, Avx512D, ::whvi::kernels::SimdLevel::kAvx512)

}  // namespace whvi::kernels::isa_avx512

namespace whvi::kernels {
const IsaKernels* isa_avx512_kernels() { return isa_avx512::table(); }
}  // namespace whvi::kernels

#else
namespace whvi::kernels {
const IsaKernels* isa_avx512_kernels() { return nullptr; }
}  // namespace whvi::kernels
#endif
