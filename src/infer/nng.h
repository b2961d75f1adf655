// Noisy natural gradient (noisy K-FAC; Zhang, Sun, Duvenaud & Grosse 2018;
// shared/notes/baselines.md §4) on the inference seam. Per iteration, with P
// weight particles (model.nng.particles) shared by the mini-batch's rows:
//  1. sample W̄_p = M + L_A E L_Sᵀ in every layer (nn/nng_layer.h);
//  2. forward; G = ∇_W̄ (1/B) Σ_b log p(y_b | x_b, W̄) (averaged over particles);
//  3. V = G - γ_in W̄ (the particles' mean W̄), γ_in = λ / (N η);
//  4. A ← (1-β) A + β E[ā āᵀ],  S ← (1-β) S + β E[g gᵀ], g = ∂ log p(ỹ | s)/∂s per
//     row, ỹ drawn from the model's predictive (the true Fisher; model.nng.fisher:
//     empirical uses the observed y);
//  5. every model.nng.inverse_every steps: π = sqrt((tr A/dim A)/(tr S/dim S)),
//     (A + π√γ I)⁻¹, (S + √γ/π I)⁻¹ for the update (γ = γ_in + damping), and the
//     sampling factors Σ_A = sqrt(λ/N) (A + π√γ_in I)⁻¹, Σ_S = sqrt(λ/N) (S + √γ_in/π I)⁻¹;
//  6. model.nng.update bias-corrected (the authors' UCI code): momentum on the
//     gradient, m ← μ m + (1-μ) V, M ← M + α (A^γ)⁻¹ (m / (1-μ^k)) (S^γ)⁻¹;
//     heavy-ball (the authors' CIFAR-10 code, tensorflow K-FAC's): momentum on
//     the preconditioned gradient P = (A^γ)⁻¹ V (S^γ)⁻¹, v ← μ v + ν P, M ← M + α v,
//     with the KL clip ν = min(1, sqrt(C_e / (α² Σ_layers ⟨V, P⟩))),
//     C_e = model.nng.kl_clip · 0.95^e in epoch e = ⌊k / ⌊N/B⌋⌋ (ν = 1 when
//     kl_clip is 0): no step's squared norm in the preconditioner's metric
//     exceeds C_e.
// α and β are multiplied by 0.1 after model.nng.decay_at of the steps (the
// authors: after 500 of 1000 epochs). Step 4 runs every model.nng.stats_every
// steps (the authors' CIFAR code: 10). The Gaussian likelihood's noise is
// learned by Adam on the same data term (training.lr × likelihood.lr_factor,
// frozen in its first phase), where the authors sample it from a Gamma
// posterior: one likelihood for every method here; the softmax has no
// parameters.
//
// Convolutions (model.conv: nng, models/conv.h) are NNG layers over im2col
// patches: A sums ā āᵀ over the output positions and S averages g gᵀ over
// them, so A ⊗ S is KFC's Fisher Ω ⊗ Γ (Grosse & Martens 2016; the authors'
// |T| (A ⊗ S) with their A, S both averaged). Batch normalisation's scale and
// shift stay at 1 and 0 (the authors train only the means; its running
// statistics update); a parameter of any other kind is refused by name.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "infer/inference.h"
#include "nn/nng_layer.h"

namespace whvi::infer {

struct NngOptions {
  double prior_var = 1;  // model.nng.prior_var (declared by the nng layer)
  double kl_weight = 1, lr = 0.01, ema = 0.001, damping = 0, momentum = 0.9, decay_at = 0.5;
  int64_t particles = 10, inverse_every = 10, stats_every = 1;
  std::string fisher = "true", update = "bias-corrected";
  bool true_fisher = true, heavy_ball = false;  // from fisher, update
  double kl_clip = 0;
  double training_lr = 0.001, lr_factor = 1;  // training.lr, likelihood.lr_factor
  double noise_lr = 1e-3;                     // their product: the noise variance's step
  void finish();
  template <class V>
  void visit(V& v) {
    v.num("model.nng.kl_weight", kl_weight, 1e-12, options::kInf, "lambda: the KL weight (1: the ELBO)");
    v.num("model.nng.lr", lr, 0, 10, "alpha: step of the mean update (authors: 0.01)");
    v.num("model.nng.ema", ema, 1e-9, 1, "beta: moving-average rate of the Kronecker factors (authors: 1e-3)");
    v.num("model.nng.damping", damping, 0, options::kInf, "extrinsic damping added to gamma_in = lambda / (N eta) (authors: 0)");
    v.num("model.nng.momentum", momentum, 0, 0.999, "momentum of the mean update (authors: 0.9); see model.nng.update");
    v.pick("model.nng.update", update, {"bias-corrected", "heavy-ball"}, "mean update: bias-corrected momentum on the gradient, then preconditioned (the authors' UCI code) or heavy-ball momentum on the preconditioned gradient with the KL clip (their CIFAR-10 code)");
    v.late();
    v.num("model.nng.kl_clip", kl_clip, 0, options::kInf, "C: heavy-ball steps are scaled so that their squared norm in the preconditioner's metric is at most C x 0.95^epoch (authors' CIFAR-10: 1e-2 with batch norm, 1e-3 without); 0 = off");
    v.late();
    v.num("model.nng.decay_at", decay_at, 0, 1, "alpha and beta x0.1 after this fraction of the steps (authors: after 500 of 1000 epochs)");
    v.num("model.nng.particles", particles, 1, 1024, "weight samples per training step, each shared by the mini-batch (authors: 10)");
    v.num("model.nng.inverse_every", inverse_every, 1, 1e9, "steps between eigendecompositions of the factors (authors: 1; whvi bench train --kinds nng:model.nng.inverse_every=1,nng measures the cost of each)");
    v.num("model.nng.stats_every", stats_every, 1, 1e9, "steps between updates of the Kronecker factors' moving averages (authors: 1 on UCI, 10 on CIFAR-10)");
    v.late();
    v.pick("model.nng.fisher", fisher, {"true", "empirical"}, "S from gradients of targets drawn from the model (true Fisher, the authors) or of the observed targets");
    v.use("model.nng.prior_var", prior_var);
    v.use("training.lr", training_lr);
    v.use("likelihood.lr_factor", lr_factor);
  }
};

class NoisyKfac : public Inference {
 public:
  NoisyKfac(std::shared_ptr<models::RegressionModel> model, const NngOptions& o);
  ~NoisyKfac() override;
  void to(torch::ScalarType dtype) override;
  void begin(int64_t n_train, int64_t total_steps, const at::Generator& gen) override;
  torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) override;
  double step_size(int64_t t) const override;
  double max_abs_param() const override;
  void end() override;
  torch::Tensor predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) override;
  // Predicting changes nothing but the kept particles (predict()), which a
  // mutex guards and which are only read once kept.
  bool predicts_concurrently() const override { return true; }
  // its particles are weights: every row of a call meets the same ones
  bool draws_weights_only() const override { return true; }
  torch::Tensor mean_standardized(const torch::Tensor& x) override;
  likelihoods::Likelihood& likelihood() override { return model_->likelihood(); }
  int64_t num_params() const override { return model_->num_params(); }
  NamedTensors state() override;
  const char* method() const override { return "nng"; }
  models::RegressionModel& model() override { return *model_; }
  // Which layer's mean update first became non-finite, and the largest
  // relative update ‖ΔM‖/‖M‖ before it (with its step and the noise variance).
  std::string diagnose() const override;

  // The Kronecker factors of layer l (float64), for tests.
  const torch::Tensor& factor_a(size_t l) const { return layers_[l].a; }
  const torch::Tensor& factor_s(size_t l) const { return layers_[l].s; }
  // The preconditioner (A^γ)⁻¹ ⊗ (S^γ)⁻¹ of layer l in use, for tests.
  const torch::Tensor& preconditioner_a(size_t l) const { return layers_[l].a_inv; }
  const torch::Tensor& preconditioner_s(size_t l) const { return layers_[l].s_inv; }
  // How many predict() calls reused the particles an earlier call drew, for tests.
  int64_t particle_reuses() const { return reuses_.load(); }

 private:
  struct LayerState {
    models::NngLayer* layer;
    torch::Tensor a, s, momentum, a_inv, s_inv;
  };
  void refresh(LayerState& st);
  // the largest |input| of the mini-batch and its feature, for diagnose()
  void note_extreme_input(const torch::Tensor& xb);
  // the Kronecker factors' moving averages (when stats_now) and the means'
  // update from the captured step; B rows in the mini-batch
  void update_means(int64_t t, const models::KfacCapture& cap, const std::vector<torch::Tensor>& gs, bool stats_now,
                    int64_t B);
  void watch(int64_t t, size_t l, const torch::Tensor& direction, double step, const torch::Tensor& m);
  std::shared_ptr<models::RegressionModel> model_;
  NngOptions opt_;
  std::vector<LayerState> layers_;  // the network's NNG layers, trunk first, in module order
  int64_t n_train_ = 0, total_ = 0, updates_ = 0;
  std::unique_ptr<torch::optim::Adam> noise_adam_;
  // The last prediction's weight particles, with what they were drawn from (predict()).
  struct Kept;
  std::shared_ptr<Kept> kept_;
  std::mutex kept_mutex_;
  std::atomic<int64_t> reuses_{0};
  // For diagnose(): the first non-finite update (step, layer; -1: none yet),
  // the likelihood's last logged state, and the largest relative update
  // ‖ΔM‖/‖M‖ over the layers of each of the last 256 steps, with the largest
  // |standardised input| of that step's mini-batch and its feature.
  struct Watch {
    int64_t bad_step = -1, bad_layer = -1;
    std::string noise;
  } watch_;
  struct Watched {
    int64_t step = -1, layer = -1;
    double ratio = 0;
    double input_max = 0;
    int64_t input_feature = -1;
  };
  std::vector<Watched> recent_;
  double step_input_max_ = 0;  // of the mini-batch of the step under way
  int64_t step_input_feature_ = -1;
};

}  // namespace whvi::infer
