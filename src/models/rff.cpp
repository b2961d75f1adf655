// Random Fourier features of an RBF kernel (Rahimi & Recht 2007; the GP
// approximation of Cutajar et al. 2017 that the WHVI paper's Fig. 13 uses,
// shared/notes/whvi-reference.md §7.2): model.architecture: rff.
//
//   phi(x) = sqrt(sigma^2 / N_RF) [sin(x Omega / l), cos(x Omega / l)],   Omega [D, N_RF] ~ N(0, 1) fixed
//
// so that phi(x) . phi(x') -> sigma^2 exp(-|x - x'|^2 / (2 l^2)) as N_RF grows
// (tested). A linear layer on top with weights w ~ N(0, I) a priori is then a
// GP with that kernel: the output layer is mean-field Gaussian (model.kind:
// mfg) or one WHVI matrix holding the whole weight vector (model.kind: whvi
// with model.output_layer: whvi-reshape, whvi_reshape.cpp).
//
// Omega is drawn from the initialisation stream and kept as a buffer (it is
// redrawn identically from the seed when a checkpoint is loaded); the length
// scale l (initial sqrt(D) / 2, as the authors' vardl) and sigma^2 (initial 1)
// are optimised with the rest unless model.rff.learn_hyper is false.
#include <cmath>

#include "common/draws.h"
#include "models/trunk.h"

namespace whvi::models {
namespace {

class RffTrunk : public Trunk {
 public:
  RffTrunk(int64_t d_in, int64_t n_rf, double length_scale, bool learn, const at::Generator& gen) : n_rf_(n_rf) {
    torch::NoGradGuard ng;
    omega_ = register_buffer("omega", whvi::randn({d_in, n_rf}, gen));
    const double l0 = length_scale > 0 ? length_scale : 0.5 * std::sqrt(static_cast<double>(d_in));
    auto log_l = torch::full({}, std::log(l0)), log_s2 = torch::zeros({});
    if (learn) {
      log_l_ = register_parameter("log_length_scale", log_l);
      log_s2_ = register_parameter("log_sigma2", log_s2);
    } else {
      log_l_ = register_buffer("log_length_scale", log_l);
      log_s2_ = register_buffer("log_sigma2", log_s2);
    }
  }
  torch::Tensor forward(const torch::Tensor& x, ForwardCtx&) override {
    const auto z = x.matmul(omega_) * (-log_l_).exp();
    const auto scale = (0.5 * log_s2_).exp() / std::sqrt(static_cast<double>(n_rf_));
    return torch::cat({torch::sin(z), torch::cos(z)}, 1) * scale;
  }
  torch::Tensor kl() override { return torch::zeros({}, omega_.options()); }
  int64_t features() const override { return 2 * n_rf_; }

 private:
  int64_t n_rf_;
  torch::Tensor omega_, log_l_, log_s2_;
};

}  // namespace

namespace {
struct RffOptions {
  int64_t features = 256;
  double length_scale = 0;
  bool learn_hyper = true;
  template <class V>
  void visit(V& v) {
    v.num("model.rff.features", features, 1, 1 << 20, "N_RF: random Fourier features (the trunk has 2 N_RF outputs: sin and cos)");
    v.num("model.rff.length_scale", length_scale, 0, 1e6, "initial RBF length scale (0: sqrt(D)/2, as the authors' vardl)");
    v.flag("model.rff.learn_hyper", learn_hyper, "optimise the length scale and the kernel variance with the ELBO (false: fixed at their initial values)");
  }
};

std::shared_ptr<Trunk> make_rff_trunk(const std::string&, int64_t d_in, const RffOptions& o, const at::Generator& gen) {
  return std::make_shared<RffTrunk>(d_in, o.features, o.length_scale, o.learn_hyper, gen);
}
}  // namespace

std::vector<TrunkKind> rff_trunk_kinds() { return {trunk_kind("rff", make_rff_trunk)
              .described("random Fourier features of an RBF kernel, a GP approximation, Fig. 13; src/models/rff.cpp; "
                         "usually with model.depth 0")}; }

}  // namespace whvi::models
