// Planar flows (Rezende & Mohamed 2015) with the invertibility constraint,
// used by NF-WHVI (nf_whvi.cpp). One flow k maps z [.., G, D] to
//   z + û_k tanh(w_kᵀ z + b_k),  û = u + (m(wᵀu) - wᵀu) w / |w|²,  m(a) = -1 + max(softplus(a), 1e-6),
// so wᵀû = m(wᵀu) > -1 and the map is invertible, with
//   log|det J_k| = log(1 + (1 - tanh²(w_kᵀ z + b_k)) w_kᵀ û_k).
#pragma once

#include <utility>

#include <torch/torch.h>

namespace whvi::models {

// û from u, w [.., D] (the last dimension is the vector).
inline torch::Tensor planar_u_hat(const torch::Tensor& u, const torch::Tensor& w) {
  const auto wu = (w * u).sum(-1, true);
  // softplus(a) underflows to 0 for a < -37 (float64), where wᵀû = -1 would
  // make the Jacobian singular: keep a margin of 1e-6 (representable in float32)
  return u + (-1.0 + torch::softplus(wu).clamp_min(1e-6) - wu) * w / w.square().sum(-1, true);
}

// z [n, G, D] through flows u, w [K, G, D], b [K, G]: returns z_K and
// Σ_k log|det J_k| summed over the G groups, [n].
inline std::pair<torch::Tensor, torch::Tensor> planar_flows(torch::Tensor z, const torch::Tensor& u,
                                                            const torch::Tensor& w, const torch::Tensor& b) {
  auto logdet = torch::zeros({z.size(0)}, z.options());
  for (int64_t k = 0; k < u.size(0); ++k) {
    const auto uh = planar_u_hat(u[k], w[k]);
    const auto h = torch::tanh((z * w[k]).sum(-1) + b[k]);  // [n, G]
    const auto wu = (w[k] * uh).sum(-1);                     // [G]
    logdet = logdet + torch::log1p((1.0 - h.square()) * wu).sum(-1);
    z = z + h.unsqueeze(-1) * uh;
  }
  return {z, logdet};
}

}  // namespace whvi::models
