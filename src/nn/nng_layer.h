// The layer of noisy natural gradient (NNG, noisy K-FAC; Zhang, Sun, Duvenaud
// & Grosse 2018; shared/notes/baselines.md §4): a matrix-variate Gaussian
// posterior over W̄ = [W; b] ((in+1) x out, the bias as the last row),
//   vec W̄ ~ N(vec M, Σ_A ⊗ Σ_S),   Σ_A = L_A L_Aᵀ,  Σ_S = L_S L_Sᵀ,
// where the factors come from Kronecker-factored Fisher statistics A = E[ā āᵀ]
// and S = E[g gᵀ] that the NNG optimiser (infer/nng.cpp) maintains and turns
// into L_A, L_S. The layer holds M and the sampling factors (what prediction
// needs, and what a checkpoint stores); it samples and records.
//
// Sampling: one weight particle per draw (ForwardCtx::draws), shared by that
// draw's rows, W̄_p = M + L_A E_p L_Sᵀ (no local reparameterisation, as the
// authors). Mode::kMean uses M. With model.nng.sampling: rows the same
// particle's effect on the rows is formed as ā M + ((ā L_A) E) L_Sᵀ: the same
// draw E and the same distribution, at rows·(in² + in·out + out²) flops
// instead of in²·out + in·out² (for 4,096-wide layers and a batch of 32,
// about 1/80th), without forming W̄; the prior term of the update then uses M
// (the sampled W̄'s mean) where the authors use the sampled W̄. With ForwardCtx::capture set the layer
// records ā (the input with a 1 appended) and its pre-activation s (with its
// gradient kept) for the optimiser.
#pragma once

#include "nn/layer.h"

namespace whvi::models {

struct KfacCapture {
  struct Entry {
    class NngLayer* layer;
    torch::Tensor a_bar;  // [rows, in+1], detached
    torch::Tensor s;      // [rows, out], in the graph
    torch::Tensor w_mean; // mean over the draws of the sampled W̄ [(in+1), out], detached
    // Rows of a_bar and s per example: 1 for a fully connected layer, the
    // output's spatial positions |T| for a convolution (the optimiser averages
    // S over positions and sums A over them: KFC, Grosse & Martens 2016).
    int64_t positions = 1;
  };
  std::vector<Entry> entries;
};

class NngLayer : public BayesianLayer {
 public:
  // sample_rows: model.nng.sampling rows (above).
  NngLayer(int64_t in, int64_t out, double prior_var, const at::Generator& gen, bool sample_rows = false);

  torch::Tensor& mean() { return m_; }         // M [(in+1), out], a parameter
  // Sets the sampling factors (L_A, L_S: Σ_A = L_A L_Aᵀ, Σ_S = L_S L_Sᵀ) and
  // log det Σ_A, log det Σ_S (for the KL).
  void set_sampling(const torch::Tensor& l_a, const torch::Tensor& l_s, double logdet_a, double logdet_s);
  double prior_var() const { return prior_var_; }
  // What the particles are drawn from: M, L_A, L_S.
  std::array<torch::Tensor, 3> drawn_from() const { return {m_, l_a_, l_s_}; }
  // p weight particles W̄_i = M + L_A E_i L_Sᵀ, [p, in+1, out], E from `gen`.
  torch::Tensor sample_weights(int64_t p, const at::Generator& gen, const torch::TensorOptions& o) const;
  // What a sampled forward pass needs for p particles: the draws E [p, in+1, out]
  // (model.nng.sampling: rows) or the particles W̄ (weights); with
  // ctx.particles set, the ones kept there when there are some, else drawn
  // from ctx.gen and kept.
  torch::Tensor particles(int64_t p, bool weights, ForwardCtx& ctx, const torch::TensorOptions& o) const;

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override;
  // KL( MN(M, Σ_A, Σ_S) || N(0, η I) ) in closed form (for the reported
  // objective; the optimiser applies the prior through its own update).
  torch::Tensor kl_impl() override;

 private:
  double prior_var_ = 1;
  bool sample_rows_ = false;
  torch::Tensor m_, l_a_, l_s_, logdet_;  // logdet_: [2] buffer
};

}  // namespace whvi::models
