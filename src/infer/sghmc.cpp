// Stochastic-gradient Hamiltonian Monte Carlo (Chen, Fox & Guestrin 2014,
// eq. 15, with the estimated noise term β̂ = 0) on a deterministic network
// (model.kind: sghmc, layers of kind "linear", whose kl() is the negative log
// of their Gaussian prior):
//   U(θ) = (N/B) Σ_batch -log p(y | f_θ(x)) - log p(θ),
//   v ← (1 - α) v - η ∇U(θ) + N(0, 2 α η),   θ ← θ + v,
// with friction α = model.sghmc.friction. The step η is per parameter:
//  - model.sghmc.precondition (default): the scale-adapted SGHMC of
//    Springenberg et al. (2016, BOHAMIANN), η_i = h² m_i / N with h =
//    model.sghmc.lr and m_i = 1/sqrt(v̂_i), v̂ a moving average of the squared
//    gradient of U (rate max(1/(t+1), 0.01)) that adapts during the burn-in
//    only and is frozen afterwards, so the chain that fills the bank is an
//    SGHMC with a constant diagonal mass matrix. Without it the step of a
//    coordinate is the same whatever the scale of its gradient, and a data
//    set such as naval (U ~ 1e7 at the start) diverges at any useful step;
//  - otherwise η = h / N for every parameter (plain SGHMC, as Chen et al.).
// The injected noise is N(0, 2 α η_i) per coordinate (the estimated
// gradient-noise term β̂ is taken as 0). The noise variance
// is sampled too, with a Gamma(a, b) prior on its precision τ = exp(-log σ²)
// (in log σ²: -log p = a log σ² + b exp(-log σ²) + const), except during the
// likelihood's frozen first phase. After the burn-in (a fraction of all
// steps) every thin-th state goes into a bank of model.sghmc.samples samples;
// predictions average the network over the whole bank (S is ignored), and the
// predictive noise variance is the bank's mean noise variance.
#include <cmath>

#include "common/draws.h"
#include "common/errors.h"
#include "infer/inference.h"
#include "infer/variational.h"

namespace whvi::infer {
namespace {

struct SghmcOptions {
  double lr = 0.1, friction = 0.05, burn_in = 0.5;
  bool precondition = true;
  int64_t samples = 100;
  double noise_shape = 1, noise_rate = 1;
  template <class V>
  void visit(V& v) {
    v.num("model.sghmc.lr", lr, 1e-12, 100, "h: preconditioned, the step of coordinate i is h^2 / (N sqrt(v_i)) (0.1 chosen on validation data, results/selection/sghmc; BOHAMIANN's default is 0.01); plain, h / N (0.01 and above diverge on the toy problem; 0.001 works)");
    v.flag("model.sghmc.precondition", precondition, "scale-adapted SGHMC (Springenberg et al. 2016): a diagonal mass matrix from squared gradients averaged during the burn-in, frozen after it");
    v.num("model.sghmc.friction", friction, 1e-6, 1, "alpha: v <- (1 - alpha) v - eta grad U + N(0, 2 alpha eta)");
    v.num("model.sghmc.burn_in", burn_in, 0, 0.99, "fraction of the steps before samples are kept");
    v.num("model.sghmc.samples", samples, 1, 100000, "posterior samples kept (thinned evenly over the steps after the burn-in); predictions use all");
    v.num("model.sghmc.noise_prior_shape", noise_shape, 1e-6, options::kInf, "a: Gamma(a, b) prior on the noise precision (standardised scale)");
    v.num("model.sghmc.noise_prior_rate", noise_rate, 0, options::kInf, "b: Gamma(a, b) prior on the noise precision");
  }
};

class Sghmc : public Inference {
 public:
  Sghmc(std::shared_ptr<models::RegressionModel> model, const SghmcOptions& o) : model_(std::move(model)), opt_(o) {
    for (const auto& p : model_->named_parameters()) names_.push_back(p.key()), params_.push_back(p.value());
    for (const auto& p : params_) n_flat_ += p.numel();
    bank_ = torch::zeros({opt_.samples, n_flat_});
    count_ = torch::zeros({1}, torch::kInt64);
  }

  void to(torch::ScalarType dtype) override {
    model_->to(dtype);
    params_.clear();
    for (const auto& p : model_->named_parameters()) params_.push_back(p.value());
    bank_ = bank_.to(dtype);
  }

  void begin(int64_t n_train, int64_t total, const at::Generator&) override {
    n_train_ = n_train;
    burn_ = static_cast<int64_t>(std::floor(opt_.burn_in * static_cast<double>(total)));
    thin_ = std::max<int64_t>(1, (total - burn_) / opt_.samples);
    WHVI_CHECK(total - burn_ >= opt_.samples, "sghmc: ", total - burn_, " steps after the burn-in (",
               burn_, " of ", total, ") cannot fill model.sghmc.samples = ", opt_.samples,
               " samples; lower model.sghmc.samples or model.sghmc.burn_in, or train longer");
    velocity_.clear();
    v_hat_.clear();
    for (const auto& p : params_) velocity_.push_back(torch::zeros_like(p)), v_hat_.push_back(torch::Tensor());
    lik_params_ = model_->likelihood().parameters();
    torch::NoGradGuard ng;
    count_.zero_();
  }

  torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) override {
    for (auto& p : params_) p.mutable_grad() = torch::Tensor();
    const auto u = potential(xb, yb, gen);
    u.backward();
    const double n = static_cast<double>(n_train_), a = opt_.friction;
    const bool lik_frozen = model_->likelihood().frozen(t);
    torch::NoGradGuard ng;
    for (size_t i = 0; i < params_.size(); ++i) {
      auto& p = params_[i];
      if (lik_frozen && is_likelihood_param(p)) continue;
      auto& v = velocity_[i];
      const auto& g = p.grad();
      if (opt_.precondition) {
        auto& vh = v_hat_[i];
        if (!vh.defined()) vh = g.square();
        else if (t < burn_) vh.lerp_(g.square(), std::max(1.0 / static_cast<double>(t + 1), 0.01));
        const auto eta = (vh.sqrt() + 1e-12).reciprocal() * (opt_.lr * opt_.lr / n);
        v.mul_(1.0 - a).addcmul_(eta, g, -1.0).addcmul_((2.0 * a * eta).sqrt(), whvi::randn(p.sizes(), gen, p.options()));
      } else {
        const double eta = opt_.lr / n;
        v.mul_(1.0 - a).add_(g, -eta).add_(whvi::randn(p.sizes(), gen, p.options()), std::sqrt(2.0 * a * eta));
      }
      p.add_(v);
    }
    if (t >= burn_ && (t - burn_ + 1) % thin_ == 0) {
      const int64_t k = count_.item<int64_t>();
      if (k < opt_.samples) {
        bank_[k].copy_(flatten());
        count_[0] = k + 1;
      }
    }
    return u.detach();
  }

  // the plain step h/N, or h²/N (to be multiplied by the preconditioner)
  double step_size(int64_t) const override {
    const double n = static_cast<double>(std::max<int64_t>(n_train_, 1));
    return opt_.precondition ? opt_.lr * opt_.lr / n : opt_.lr / n;
  }

  double max_abs_param() const override {
    double m = 0;
    for (const auto& p : params_) {
      const double a = p.detach().abs().max().item<double>();
      if (!(a <= m)) m = a;
    }
    return m;
  }

  void end() override {
    torch::NoGradGuard ng;
    for (auto& p : params_) p.mutable_grad() = torch::Tensor();
    velocity_.clear();
    v_hat_.clear();
    const int64_t k = count_.item<int64_t>();
    WHVI_CHECK(k > 0, "sghmc: no sample was stored; train longer or lower model.sghmc.burn_in");
    // the predictive noise: the bank's mean noise variance (written into the likelihood)
    set_noise_from_bank();
  }

  torch::Tensor predict(const torch::Tensor& x_in, int64_t, const at::Generator&) override {
    torch::NoGradGuard ng;
    const int64_t k = count_.item<int64_t>();
    WHVI_CHECK(k > 0, "sghmc: the sample bank is empty (the model was not trained)");
    const auto saved = flatten();
    const auto x = x_in.to(params_.front().scalar_type()).contiguous();
    auto out = torch::empty({k, x.size(0)}, torch::kFloat64);
    for (int64_t s = 0; s < k; ++s) {
      unflatten(bank_[s]);
      if (x.size(0) > 0)
        out[s].copy_(model_->likelihood().to_original(model_->forward_standardized(x, models::Mode::kMean).view({1, -1}))[0]);
    }
    unflatten(saved);
    return out;
  }

  torch::Tensor mean_standardized(const torch::Tensor& x_in) override {
    const auto f = predict(x_in, 0, {});
    const auto& lik = model_->likelihood();
    // back to the standardised scale through the likelihood's affine map
    const auto zero = lik.to_original(torch::zeros({1, 1}, torch::kFloat64)).item<double>();
    const auto one = lik.to_original(torch::ones({1, 1}, torch::kFloat64)).item<double>() - zero;
    return ((f.mean(0) - zero) / one).to(params_.front().scalar_type());
  }

  likelihoods::Likelihood& likelihood() override { return model_->likelihood(); }
  int64_t num_params() const override { return model_->num_params(); }
  NamedTensors state() override {
    NamedTensors out;
    for (const auto& p : model_->named_parameters()) out.emplace_back(p.key(), p.value());
    out.emplace_back("sghmc.bank", bank_);
    out.emplace_back("sghmc.count", count_);
    return out;
  }
  const char* method() const override { return "sghmc"; }
  models::RegressionModel& model() override { return *model_; }

 private:
  bool is_likelihood_param(const torch::Tensor& p) const {
    for (const auto& q : lik_params_)
      if (p.is_same(q)) return true;
    return false;
  }

  torch::Tensor potential(const torch::Tensor& xb, const torch::Tensor& yb, const at::Generator& gen) {
    models::ForwardCtx ctx;
    ctx.mode = models::Mode::kSample;
    ctx.gen = gen;
    const auto f = model_->forward_standardized(xb, ctx);
    const double scale = static_cast<double>(n_train_) / static_cast<double>(xb.size(0));
    auto u = scale * model_->likelihood().nll_sum(f, yb) + model_->kl();
    for (const auto& q : lik_params_) u = u + (opt_.noise_shape * q + opt_.noise_rate * (-q).exp()).sum();
    return u;
  }

  torch::Tensor flatten() const {
    std::vector<torch::Tensor> flat;
    for (const auto& p : params_) flat.push_back(p.detach().reshape({-1}));
    return torch::cat(flat);
  }
  void unflatten(const torch::Tensor& v) {
    int64_t off = 0;
    for (auto& p : params_) {
      p.detach().copy_(v.narrow(0, off, p.numel()).view(p.sizes()));
      off += p.numel();
    }
  }
  void set_noise_from_bank() {
    // offsets of the likelihood's parameters in the flat layout
    int64_t off = 0;
    const int64_t k = count_.item<int64_t>();
    for (auto& p : params_) {
      if (is_likelihood_param(p)) {
        const auto lnv = bank_.narrow(0, 0, k).narrow(1, off, p.numel()).to(torch::kFloat64);
        p.detach().copy_(lnv.exp().mean(0).log().view(p.sizes()));
      }
      off += p.numel();
    }
  }

  std::shared_ptr<models::RegressionModel> model_;
  SghmcOptions opt_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_, velocity_, v_hat_, lik_params_;
  int64_t n_flat_ = 0, n_train_ = 0, burn_ = 0, thin_ = 1;
  torch::Tensor bank_, count_;
};

}  // namespace

namespace {
std::unique_ptr<Inference> make_sghmc(const NetworkMaker& make_network, const SghmcOptions& o) {
  return std::make_unique<Sghmc>(make_network(), o);
}
}  // namespace

MethodKind sghmc_method() {
  return method_kind("sghmc", make_sghmc,
                     Capabilities()
                         .only_for({"gaussian"}, "it samples the gaussian likelihood's noise variance")
                         .runs_on_cpu_only("its optimiser is its own")
                         .keeps_samples_after_burn_in("model.sghmc.samples")
                         .steps_by("model.sghmc.lr")
                         .minimises("U"));
}

}  // namespace whvi::infer
