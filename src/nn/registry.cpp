// Every layer kind, in one place. A new kind is <kind>.cpp, one line here and
// its tests; the registry tests loop over registered_layer_kinds(). Each kind's
// options are declared in its own file and reach the schema from here.
#include <cmath>
#include <utility>

#include "nn/layer.h"

namespace whvi::models {

// The registered layer kinds, in registration order: a new one is its own file (defining
// `LayerKind <name>_layer_kind()`) and one X(<name>) line here.
#define WHVI_LAYER_KINDS(X)   \
  X(whvi)                     \
  X(mfg)                      \
  X(mcd)                      \
  X(nf_whvi)                  \
  X(linear)                   \
  X(nng)                      \
  X(vsd)                      \
  X(tt)                       \
  X(whvi_reshape)

#define WHVI_DECLARE(name) LayerKind name##_layer_kind();
WHVI_LAYER_KINDS(WHVI_DECLARE)
#undef WHVI_DECLARE

const std::vector<LayerKind>& layer_kinds() {
#define WHVI_ENTRY(name) name##_layer_kind(),
  static const std::vector<LayerKind> r = {WHVI_LAYER_KINDS(WHVI_ENTRY)};
#undef WHVI_ENTRY
  return r;
}

BayesianLayer::BayesianLayer(std::string kind, int64_t in, int64_t out)
    : kind_(std::move(kind)), in_(in), out_(out) {
  WHVI_CHECK(in >= 1 && out >= 1, "layer '", kind_, "': sizes must be >= 1, got ", in, " -> ", out);
}

torch::Tensor BayesianLayer::forward(const torch::Tensor& x, Mode mode, const at::Generator& gen) {
  ForwardCtx ctx;
  ctx.mode = mode;
  ctx.gen = gen;
  return forward(x, ctx);
}

torch::Tensor BayesianLayer::forward(const torch::Tensor& x, ForwardCtx& ctx) {
  const Mode mode = ctx.mode;
  const auto& gen = ctx.gen;
  WHVI_CHECK_AS(ShapeError, x.dim() == 2 && x.size(1) == in_, "layer '", kind_, "' (", in_, " -> ",
                out_, "): expected input [N, ", in_, "], got ", x.sizes());
  WHVI_ASSERT(mode == Mode::kMean || gen.defined());
  WHVI_ASSERT(ctx.draws >= 1 && x.size(0) % ctx.draws == 0);
  auto y = forward_impl(x, ctx);
  WHVI_ASSERT(y.dim() == 2 && y.size(0) == x.size(0) && y.size(1) == out_);
  return y;
}

namespace {
template <class T>
double kl_diag_backward_impl(const torch::Tensor& mu, const torch::Tensor& logvar, double prior_var) {
  // KL = 0.5 Σ (e^lv + mu²)/pv - lv + ln pv - 1;  dKL/dmu = mu/pv, dKL/dlv = 0.5 (e^lv/pv - 1)
  const int64_t n = mu.numel();
  const T* m = mu.data_ptr<T>();
  const T* lv = logvar.data_ptr<T>();
  T* gm = mu.grad().data_ptr<T>();
  T* glv = logvar.grad().data_ptr<T>();
  const double ipv = 1.0 / prior_var, lpv = std::log(prior_var);
  double kl = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = std::exp(static_cast<double>(lv[i])), mi = m[i];
    kl += (v + mi * mi) * ipv - lv[i] + (lpv - 1.0);
    gm[i] += static_cast<T>(mi * ipv);
    glv[i] += static_cast<T>(0.5 * (v * ipv - 1.0));
  }
  return 0.5 * kl;
}

template <class T>
double kl_diag_backward_exp_impl(const torch::Tensor& mu, const torch::Tensor& logvar, const torch::Tensor& ev_t,
                                 double prior_var) {
  const int64_t n = mu.numel();
  const T* m = mu.data_ptr<T>();
  const T* lv = logvar.data_ptr<T>();
  const T* ev = ev_t.data_ptr<T>();
  T* gm = mu.grad().data_ptr<T>();
  T* glv = logvar.grad().data_ptr<T>();
  const double ipv = 1.0 / prior_var, c = std::log(prior_var) - 1.0;
  // element i: its gradient added, its KL term added to `acc`
  const auto element = [&](int64_t i, double& acc) {
    const double v = ev[i], mi = m[i];
    acc += (v + mi * mi) * ipv - static_cast<double>(lv[i]) + c;
    gm[i] += static_cast<T>(mi * ipv);
    glv[i] += static_cast<T>(0.5 * (v * ipv - 1.0));
  };
  constexpr int64_t W = 8;
  double acc[W] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + W <= n; i += W)
    for (int64_t k = 0; k < W; ++k) element(i + k, acc[k]);
  for (; i < n; ++i) element(i, acc[0]);
  double kl = 0;
  for (int64_t k = 0; k < W; ++k) kl += acc[k];
  return 0.5 * kl;
}
}  // namespace

double kl_diag_gaussian_backward_exp(const torch::Tensor& mu, const torch::Tensor& logvar, const torch::Tensor& exp_logvar,
                                     double prior_var) {
  WHVI_ASSERT(mu.is_contiguous() && logvar.is_contiguous() && exp_logvar.is_contiguous() && mu.grad().defined() &&
              logvar.grad().defined() && mu.grad().is_contiguous() && logvar.grad().is_contiguous());
  WHVI_ASSERT(mu.numel() == logvar.numel() && exp_logvar.numel() == mu.numel() &&
              exp_logvar.scalar_type() == mu.scalar_type() && logvar.scalar_type() == mu.scalar_type());
  return mu.scalar_type() == torch::kFloat64 ? kl_diag_backward_exp_impl<double>(mu, logvar, exp_logvar, prior_var)
                                             : kl_diag_backward_exp_impl<float>(mu, logvar, exp_logvar, prior_var);
}

double kl_diag_gaussian_backward(const torch::Tensor& mu, const torch::Tensor& logvar, double prior_var) {
  WHVI_ASSERT(mu.is_contiguous() && logvar.is_contiguous() && mu.grad().defined() && logvar.grad().defined());
  WHVI_ASSERT(mu.grad().is_contiguous() && logvar.grad().is_contiguous() && mu.numel() == logvar.numel());
  return mu.scalar_type() == torch::kFloat64 ? kl_diag_backward_impl<double>(mu, logvar, prior_var)
                                             : kl_diag_backward_impl<float>(mu, logvar, prior_var);
}

int64_t count_trainable(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters())
    if (p.requires_grad()) n += p.numel();
  return n;
}

int64_t BayesianLayer::num_params() const { return count_trainable(*this); }

const LayerKind& find_layer_kind(const std::string& kind) { return options::find_kind(layer_kinds(), kind, "layer kind"); }

LayerPtr make_layer(const std::string& kind, int64_t in, int64_t out, const options::Resolved& o,
                    const LayerContext& ctx) {
  WHVI_ASSERT(ctx.gen.defined());
  return find_layer_kind(kind).make(in, out, o, ctx);
}

std::vector<std::string> registered_layer_kinds() { return options::kind_names(layer_kinds()); }

std::string layer_kinds_with(const char* LayerKind::*capability) {
  std::string out;
  for (const auto& k : layer_kinds()) {
    const char* when = k.*capability;
    if (when == nullptr) continue;
    out += (out.empty() ? "" : ", ") + k.name + (*when ? std::string(" (") + when + ")" : "");
  }
  return out;
}

torch::Tensor kl_diag_gaussian(const torch::Tensor& mu, const torch::Tensor& logvar,
                               double prior_var) {
  // 0.5 * sum( var/pv + mu^2/pv - 1 - log(var/pv) )
  const double lpv = std::log(prior_var);
  return 0.5 * ((logvar.exp() + mu.square()) / prior_var - logvar + (lpv - 1.0)).sum();
}

torch::Tensor kl_diag_gaussian_per_split(const torch::Tensor& mu, const torch::Tensor& logvar, double prior_var) {
  const double lpv = std::log(prior_var);
  return 0.5 * ((logvar.exp() + mu.square()) / prior_var - logvar + (lpv - 1.0)).flatten(1).sum(1);
}

}  // namespace whvi::models
