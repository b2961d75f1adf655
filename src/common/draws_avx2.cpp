// LibTorch's AVX2 Box-Muller (normal_fill_16_AVX2 in
// ATen/native/cpu/DistributionTemplates.h) on blocks of 16 uniforms, built with
// -mavx2 -mfma like LibTorch's AVX2 kernels, with the same log256_ps and
// sincos256_ps (ATen/native/cpu/avx_mathfun.h). Called only when the CPU has
// AVX2 and FMA and the probe in draws.cpp found LibTorch gives these bits.
//
// This file includes nothing but intrinsics and avx_mathfun.h, so no inline
// function shared with other translation units is compiled here with AVX2.
#include <cstdint>

#if defined(WHVI_NORMAL_AVX2) && defined(__AVX2__) && defined(__FMA__)
#define CPU_CAPABILITY_AVX2
#include <ATen/native/cpu/avx_mathfun.h>

namespace whvi {

bool normal_avx2_built() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

void normal_avx2_blocks(float* data, int64_t blocks, float mean, float std) {
  const __m256 two_pi = _mm256_set1_ps(static_cast<float>(2.0f * 3.14159265358979323846));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 minus_two = _mm256_set1_ps(-2.0f);
  const __m256 mean_v = _mm256_set1_ps(mean);
  const __m256 std_v = _mm256_set1_ps(std);
  for (int64_t b = 0; b < blocks; ++b, data += 16) {
    const __m256 u1 = _mm256_sub_ps(one, _mm256_loadu_ps(data));
    const __m256 u2 = _mm256_loadu_ps(data + 8);
    const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(minus_two, log256_ps(u1)));
    const __m256 theta = _mm256_mul_ps(two_pi, u2);
    __m256 sintheta, costheta;
    sincos256_ps(theta, &sintheta, &costheta);
    const __m256 n1 = _mm256_mul_ps(radius, costheta);
    const __m256 n2 = _mm256_mul_ps(radius, sintheta);
    _mm256_storeu_ps(data, _mm256_fmadd_ps(n1, std_v, mean_v));
    _mm256_storeu_ps(data + 8, _mm256_fmadd_ps(n2, std_v, mean_v));
  }
}

}  // namespace whvi
#else
namespace whvi {
bool normal_avx2_built() { return false; }
void normal_avx2_blocks(float*, int64_t, float, float) {}
}  // namespace whvi
#endif
