// Helpers shared by the CUDA kernels in kernels/cuda/: error checks that
// throw, the launch macro, and dynamic shared memory.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

// Throws std::runtime_error("file:line: expr: cuda error string") when a CUDA
// runtime call fails.
#define WHVI_CUDA_CHECK(expr) \
  ::whvi::kernels::cuda::detail::check_cuda((expr), #expr, __FILE__, __LINE__)

// Every launch is followed by this: a bad configuration or an earlier
// asynchronous fault surfaces here, with the launch site's file:line.
#define WHVI_CHECK_LAUNCH() \
  ::whvi::kernels::cuda::detail::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// WHVI_LAUNCH(kernel, grid, block, smem, stream)(args...). A macro so that a
// host-side emulator can replace the triple-chevron launch.
#ifndef WHVI_LAUNCH
#define WHVI_LAUNCH(kernel, grid, block, smem, stream) kernel<<<(grid), (block), (smem), (stream)>>>
#endif

namespace whvi::kernels::cuda::detail {

inline void check_cuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

// The block's dynamic shared memory (16-byte aligned).
template <class T>
__device__ __forceinline__ T* dynamic_smem() {
  extern __shared__ float4 whvi_dynamic_smem[];
  return reinterpret_cast<T*>(whvi_dynamic_smem);
}

}  // namespace whvi::kernels::cuda::detail
