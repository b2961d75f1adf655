// Differentiable Torch operators over the kernels in kernels/.
//
// fwht(x, scale): y = scale * H_D x along the last dimension (D = x.size(-1),
//   a power of two), Sylvester order, unnormalised H (scale = 1/sqrt(D) gives
//   the orthonormal transform). Any shape; contiguous or not (a copy is made
//   only when the rows are not evenly strided). Never aliases its input.
//   CPU: float32/float64. CUDA (when built with a CUDA LibTorch): float32,
//   float16, bfloat16. Backward: the same transform of the gradient (H is
//   symmetric), itself differentiable.
//
// whvi_matvec(x, eps, s1, s2, mu, sigma, shared_g): the fused WHVI product
//   y[i, k] = s1[k] * H( (mu[q] + sigma[q] * eps[i, q]) * H( s2[k] * x[i] ) )
//   x [B, D]; s1, s2 [K, D]; mu, sigma [G, D]; eps [B, G, D] or undefined
//   (= the mean, g = mu); returns [B, K, D]. G = 1 if shared_g else K; q = 0
//   if shared_g else k. Gradients for x, s1, s2, mu, sigma.
#pragma once

#include <torch/torch.h>

namespace whvi::ops {

torch::Tensor fwht(const torch::Tensor& x, double scale = 1.0);

// Not differentiable: writes scale * H x into `out` (contiguous, same shape,
// dtype and device as x, not overlapping x; out == x is the in-place
// transform). For benchmarks and inner loops that own their buffers.
void fwht_out(const torch::Tensor& x, torch::Tensor& out, double scale = 1.0);

torch::Tensor whvi_matvec(const torch::Tensor& x, const torch::Tensor& eps,
                          const torch::Tensor& s1, const torch::Tensor& s2,
                          const torch::Tensor& mu, const torch::Tensor& sigma,
                          bool shared_g = false);

// Explicit Sylvester Hadamard matrix (D x D, entries +-1), for references.
torch::Tensor hadamard_matrix(int64_t d, torch::ScalarType dtype = torch::kFloat64);

}  // namespace whvi::ops
