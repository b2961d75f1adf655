// Internal: the table of row kernels each instruction-set translation unit
// provides, and the accessors the dispatcher (dispatch.cpp) calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../fwht.h"

namespace whvi::kernels {

struct IsaKernels {
  void (*fwht_f)(const float*, int64_t, float*, int64_t, int64_t, int, float, int);
  void (*fwht_d)(const double*, int64_t, double*, int64_t, int64_t, int, double, int);
  void (*whvi_fwd_f)(const WhviShape&, const float*, const float*, const float*, const float*,
                     const float*, const float*, float*, int, float*, float*);
  void (*whvi_fwd_d)(const WhviShape&, const double*, const double*, const double*,
                     const double*, const double*, const double*, double*, int, double*, double*);
  void (*whvi_bwd_f)(const WhviShape&, const float*, const float*, const float*, const float*,
                     const float*, const float*, const float*, float*, float*, float*, float*,
                     float*, int, const float*, const float*);
  void (*whvi_bwd_d)(const WhviShape&, const double*, const double*, const double*,
                     const double*, const double*, const double*, const double*, double*, double*,
                     double*, double*, double*, int, const double*, const double*);
  SimdLevel level;  // the level these kernels were compiled for
};

// Each returns nullptr when that level was not compiled in.
const IsaKernels* isa_scalar_kernels();
const IsaKernels* isa_avx2_kernels();
const IsaKernels* isa_avx512_kernels();

}  // namespace whvi::kernels
