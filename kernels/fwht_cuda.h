// Torch-free CUDA FWHT and fused WHVI kernels. Same conventions as
// kernels/fwht.h (Sylvester order, unnormalised with an explicit scale,
// row-major rows x d with a row stride). This header does not include CUDA
// headers, so host code built without CUDA can include it; the functions
// exist only when the library was built with CUDA (WHVI_HAVE_CUDA_KERNELS).
//
// Pointers are device pointers. `stream` is a cudaStream_t (nullptr: the
// legacy default stream). Every launch is checked; a CUDA error or an
// unsupported size throws whvi::kernels::KernelError (bad argument) or
// std::runtime_error (CUDA failure) naming the problem. Launches are
// asynchronous with respect to the host.
#pragma once

#include <cstdint>

#include "fwht.h"

namespace whvi::kernels::cuda {

// d <= 2^kMaxLog2DOnePass: one read and one write of global memory.
// Larger d (up to 2^kMaxLog2D): one extra pass over global memory per 5 bits.
constexpr int kMaxLog2DOnePass = 15;
constexpr int kMaxLog2D = 25;
// The fused WHVI kernels keep one row on chip: d <= 2^kMaxLog2DWhvi.
constexpr int kMaxLog2DWhvi = 15;

enum class DType { kFloat32, kFloat16, kBFloat16 };

// Number of CUDA devices usable by this process (0 when none or no driver).
int device_count();
// Human-readable name of the current device ("" when none).
const char* device_name();

// out[r, :] = scale * H_d in[r, :]; in == out allowed. Arithmetic is fp32
// for every dtype; half/bf16 are converted on load and store.
void fwht(DType dtype, const void* in, int64_t in_row_stride, void* out, int64_t out_row_stride,
          int64_t rows, int64_t d, float scale, void* stream);

// Fused WHVI forward/backward, float32, shapes as in kernels/fwht.h.
// Backward outputs are overwritten; nullptr skips an output.
void whvi_forward(const WhviShape& shape, const float* x, const float* eps, const float* s1,
                  const float* s2, const float* mu, const float* sg, float* y, void* stream);
void whvi_backward(const WhviShape& shape, const float* x, const float* eps, const float* s1,
                   const float* s2, const float* mu, const float* sg, const float* dy, float* dx,
                   float* ds1, float* ds2, float* dmu, float* dsg, void* stream);

// A device-to-device copy of the same bytes (the bandwidth reference used by
// the benchmark).
void copy(const void* in, void* out, int64_t bytes, void* stream);

}  // namespace whvi::kernels::cuda
