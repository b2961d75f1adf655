// The fused training step: see fused_step.h.
#include "infer/fused_step.h"

#include <cmath>

#include "common/errors.h"
#include "common/rng.h"
#include "infer/inference.h"
#include "infer/plan.h"
#include "infer/variational.h"
#include "likelihoods/gaussian.h"
#include "likelihoods/likelihood.h"
#include "likelihoods/softmax.h"
#include "nn/fused_ops.h"

namespace whvi::infer {
namespace {
constexpr double kLnTwoPi = 1.8378770664093453;
}  // namespace

std::string fused_unsupported(const models::RegressionModel& model) {
  if (model.has_trunk())
    return "training.engine fused: model.architecture must be mlp (convolutional and RFF trunks take the "
           "autograd step); set training.engine: autograd";
  const auto& a = model.activation();
  if (a != "relu" && a != "tanh")
    return "training.engine fused: model.activation '" + a + "' has no fused step (relu, tanh); set "
           "training.engine: autograd";
  auto& lik = const_cast<models::RegressionModel&>(model).likelihood();
  if (*lik.fused_loss() == '\0')
    return "training.engine fused: this likelihood.kind has no fused step (supported: " +
           likelihoods::likelihoods_that(likelihoods::Capability::kFusedStep) + "); set training.engine: autograd";
  for (const auto& l : model.layers())
    if (!l->fused())
      return "training.engine fused: layer kind '" + l->kind() + "' (with these options) has no fused step "
             "(supported: " + models::layer_kinds_with(&models::LayerKind::fused_when) + "); set training.engine: autograd";
  return "";
}

std::string engine_for(const MethodPlan& p) {
  const auto& vo = p.variational;
  if (!vo.auto_engine) return vo.engine;
  if (!capabilities_of(p.method).fused_step || p.device != "cpu" || p.batched_splits != 1 || p.arch != "mlp" ||
      !likelihoods::likelihood_can(p.likelihood_kind, likelihoods::Capability::kFusedStep) || !vo.plain_elbo())
    return "autograd";
  // the layers decide with their options: a network of this plan on 8 inputs
  const auto probe = make_network(8, p, 0.0, 1.0, make_generator(0),
                                  likelihoods::likelihood_can(p.likelihood_kind, likelihoods::Capability::kClassification) ? 2 : 0);
  return fused_unsupported(*probe).empty() ? "fused" : "autograd";
}

FusedStep::FusedStep(models::RegressionModel& model) : model_(model) {
  const auto why = fused_unsupported(model);
  WHVI_CHECK(why.empty(), why);
  const size_t L = model.layers().size();
  caches_.resize(L);
  acts_.resize(L);
  dacts_.resize(L);
}

double FusedStep::loss_and_grad(const torch::Tensor& xb_in, const torch::Tensor& yb_in, int64_t n_train, int64_t S,
                                const at::Generator& gen) {
  c10::InferenceMode guard;  // no autograd dispatch at all (cheaper than NoGradGuard); buffers made here stay here
  const auto& layers = model_.layers();
  const size_t L = layers.size();
  const bool relu = model_.activation() == "relu";
  const int64_t B = xb_in.size(0);
  const auto xb = S > 1 ? xb_in.repeat({S, 1}) : xb_in;
  const auto yb = S > 1 ? yb_in.repeat({S}) : yb_in;
  WHVI_CHECK_AS(ShapeError, xb.dim() == 2 && xb.size(1) == layers[0]->in_features(), "fused step: expected input [N, ",
                layers[0]->in_features(), "], got ", xb.sizes());
  // forward: layer l's output z_l, then the activation a_l = act(z_l)
  std::vector<torch::Tensor> z(L);
  torch::Tensor h = xb;
  for (size_t l = 0; l < L; ++l) {
    z[l] = layers[l]->fused()->fused_forward(h, gen, caches_[l]);
    if (l + 1 == L) break;
    auto& a = acts_[l];
    if (!a.defined() || a.sizes() != z[l].sizes() || a.scalar_type() != z[l].scalar_type())
      a = torch::empty(z[l].sizes(), z[l].options());
    if (relu) models::fused_ops::relu_out(a, z[l]);
    else at::tanh_out(a, z[l]);
    h = a;
  }
  const double scale = static_cast<double>(n_train) / static_cast<double>(B) / static_cast<double>(S);
  const double nll = std::string(model_.likelihood().fused_loss()) == "softmax"
                         ? softmax_nll_and_grad(z[L - 1], yb, scale)
                         : gaussian_nll_and_grad(z[L - 1], yb, scale);
  // backward
  torch::Tensor g = df_;
  for (size_t l = L; l-- > 0;) {
    auto dh = layers[l]->fused()->fused_backward(g, caches_[l], l > 0);
    if (l == 0) break;
    // through the activation of layer l-1
    auto& d = dacts_[l - 1];
    if (!d.defined() || d.sizes() != dh.sizes() || d.scalar_type() != dh.scalar_type())
      d = torch::empty(dh.sizes(), dh.options());
    if (relu) {
      models::fused_ops::relu_backward_out(d, z[l - 1], dh);
    } else {  // tanh' = 1 - a²
      const auto& a = acts_[l - 1];
      at::mul_out(d, a, a).neg_().add_(1.0).mul_(dh);
    }
    g = d;
  }
  double kl = 0;
  for (const auto& l : layers) kl += l->fused()->fused_kl_backward();
  return scale * nll + kl;
}

double FusedStep::softmax_nll_and_grad(const torch::Tensor& logits, const torch::Tensor& yb, double scale) {
  // nll = -Σ log softmax(f)_y; d nll / d f = softmax(f) - onehot(y), times scale
  // with class weights (likelihood.class_weights) row i's terms are times w[y_i]
  const auto logp = at::log_softmax(logits, 1);
  const auto idx = yb.to(torch::kInt64).unsqueeze(1);
  const auto& w = static_cast<likelihoods::SoftmaxLikelihood&>(model_.likelihood()).class_weights();
  const auto w_rows = w.defined() ? w.to(logp.scalar_type()).index_select(0, idx.squeeze(1)).unsqueeze(1) : torch::Tensor();
  const double nll = w.defined() ? -(logp.gather(1, idx) * w_rows).sum().item<double>()
                                 : -logp.gather(1, idx).sum().item<double>();
  if (!df_.defined() || df_.sizes() != logp.sizes() || df_.scalar_type() != logp.scalar_type())
    df_ = torch::empty(logp.sizes(), logp.options());  // kept from step to step, as the Gaussian's
  at::exp_out(df_, logp);
  df_.scatter_add_(1, idx, torch::full({idx.size(0), 1}, -1.0, df_.options()));
  if (w.defined()) df_.mul_(w_rows);
  df_.mul_(scale);
  return nll;
}

double FusedStep::gaussian_nll_and_grad(const torch::Tensor& z_out, const torch::Tensor& yb, double scale) {
  // the Gaussian likelihood: nll = ½ Σ (ln 2π + lnv + (y - f)² e^-lnv)
  auto& lik = static_cast<likelihoods::GaussianLikelihood&>(model_.likelihood());
  auto& lnv_t = lik.log_noise_var();
  double lnv = 0;  // one element: read it, not item() (a dispatch)
  AT_DISPATCH_FLOATING_TYPES(lnv_t.scalar_type(), "fused_lnv", [&] { lnv = static_cast<double>(*lnv_t.data_ptr<scalar_t>()); });
  const double prec = std::exp(-lnv);
  const auto f = z_out.view({-1});
  const int64_t rows = f.numel();
  if (!df_.defined() || df_.numel() != rows || df_.scalar_type() != f.scalar_type())
    df_ = torch::empty({rows, 1}, f.options());
  auto df = df_.view({-1});
  models::fused_ops::sub_out(df, f, yb);                // f - y
  const double sse = df.square().sum().item<double>();  // LibTorch's summation order
  models::fused_ops::scale_out(df, df, scale * prec);
  const double nll = 0.5 * (static_cast<double>(rows) * (kLnTwoPi + lnv) + sse * prec);
  models::fused_ops::add_scalar_(lnv_t.mutable_grad(), scale * 0.5 * (static_cast<double>(rows) - sse * prec));
  return nll;
}

}  // namespace whvi::infer
