// Portable level: one lane "vectors"; the compiler may still vectorise the
// strided passes with the baseline x86-64 (SSE2) instructions.
#include "isa.h"

namespace whvi::kernels::isa_scalar {

template <class T_>
struct Scalar {
  using T = T_;
  using V = T_;
  static constexpr int W = 1, LOGW = 0, LOGR_MAX = 3;
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V set1(T a) { return a; }
  static V inreg_n(V a, int) { return a; }
  static V inreg(V a) { return a; }
};

#include "fwht_impl.h"

}  // namespace whvi::kernels::isa_scalar

namespace whvi::kernels {
namespace isa_scalar {
WHVI_DEFINE_ISA_TABLE(table, Scalar<float>, Scalar<double>, ::whvi::kernels::SimdLevel::kScalar)
}
const IsaKernels* isa_scalar_kernels() { return isa_scalar::table(); }
}  // namespace whvi::kernels
