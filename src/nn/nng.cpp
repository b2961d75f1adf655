// NNG layer: see nng_layer.h.
#include <cmath>

#include "common/draws.h"
#include "common/errors.h"
#include "nn/nng_layer.h"

namespace whvi::models {

NngLayer::NngLayer(int64_t in, int64_t out, double prior_var, const at::Generator& gen, bool sample_rows)
    : BayesianLayer("nng", in, out), prior_var_(prior_var), sample_rows_(sample_rows) {
  torch::NoGradGuard ng;
  // M: Glorot-uniform (the authors' init); the bias row too.
  const double a = std::sqrt(6.0 / static_cast<double>(in + out));
  m_ = register_parameter("m", torch::empty({in + 1, out}).uniform_(-a, a, gen));
  // Until the optimiser sets them (it knows N): a tiny isotropic posterior.
  l_a_ = register_buffer("sampling_a", torch::eye(in + 1) * 1e-3);
  l_s_ = register_buffer("sampling_s", torch::eye(out) * 1e-3);
  logdet_ = register_buffer("sampling_logdet",
                            torch::tensor({2.0 * std::log(1e-3) * static_cast<double>(in + 1),
                                           2.0 * std::log(1e-3) * static_cast<double>(out)},
                                          torch::kFloat32));
}

void NngLayer::set_sampling(const torch::Tensor& l_a, const torch::Tensor& l_s, double logdet_a, double logdet_s) {
  torch::NoGradGuard ng;
  l_a_.copy_(l_a);
  l_s_.copy_(l_s);
  logdet_[0] = logdet_a;
  logdet_[1] = logdet_s;
}

torch::Tensor NngLayer::sample_weights(int64_t p, const at::Generator& gen, const torch::TensorOptions& o) const {
  const auto e = whvi::randn({p, in_features() + 1, out_features()}, gen, o);
  return m_ + torch::matmul(torch::matmul(l_a_, e), l_s_.t());  // [p, in+1, out]
}

torch::Tensor NngLayer::particles(int64_t p, bool weights, ForwardCtx& ctx, const torch::TensorOptions& o) const {
  const auto draw = [&] {
    return weights ? sample_weights(p, ctx.gen, o) : whvi::randn({p, in_features() + 1, out_features()}, ctx.gen, o);
  };
  if (!ctx.particles) return draw();
  const std::pair<const void*, int64_t> key{this, ctx.particle_chunk};
  if (const auto it = ctx.particles->drawn.find(key); it != ctx.particles->drawn.end()) {
    WHVI_ASSERT(it->second.size(0) == p);
    return it->second;
  }
  WHVI_ASSERT(!ctx.particles->frozen);
  return ctx.particles->drawn[key] = draw();
}

torch::Tensor NngLayer::forward_impl(const torch::Tensor& x, ForwardCtx& ctx) {
  const int64_t n = x.size(0), in = in_features(), out = out_features();
  const auto a_bar = torch::cat({x, torch::ones({n, 1}, x.options())}, 1);
  torch::Tensor s, w_mean;
  if (ctx.mode == Mode::kMean) {
    s = a_bar.mm(m_);
    w_mean = m_.detach();
  } else if (sample_rows_) {
    const int64_t p = ctx.draws, b = n / p;
    const auto e = particles(p, /*weights=*/false, ctx, x.options());
    const auto noise = torch::matmul(torch::matmul(a_bar.view({p, b, in + 1}).matmul(l_a_), e), l_s_.t());
    s = a_bar.mm(m_) + noise.view({n, out});
    if (ctx.capture) w_mean = m_.detach();
  } else {
    const int64_t p = ctx.draws, b = n / p;
    const auto w = particles(p, /*weights=*/true, ctx, x.options());  // [p, in+1, out]
    s = torch::bmm(a_bar.view({p, b, in + 1}), w).view({n, out});
    if (ctx.capture) w_mean = w.detach().mean(0);
  }
  if (ctx.capture) {
    if (s.requires_grad()) s.retain_grad();
    ctx.capture->entries.push_back({this, a_bar.detach(), s, w_mean});
  }
  return s;
}

torch::Tensor NngLayer::kl_impl() {
  // 0.5 [ tr(Σ_A) tr(Σ_S)/η + |M|²/η - d + d ln η - ln det(Σ_A ⊗ Σ_S) ],
  // ln det(Σ_A ⊗ Σ_S) = out ln det Σ_A + (in+1) ln det Σ_S.
  const double d = static_cast<double>(m_.numel());
  const double tr = l_a_.square().sum().item<double>() * l_s_.square().sum().item<double>();
  const double ld = static_cast<double>(out_features()) * logdet_[0].item<double>() +
                    static_cast<double>(in_features() + 1) * logdet_[1].item<double>();
  return 0.5 * (m_.square().sum() / prior_var_ + (tr / prior_var_ - d + d * std::log(prior_var_) - ld));
}

namespace {
// The noisy K-FAC layer's own options (its optimiser's are in infer/nng.h).
struct NngLayerOptions {
  double prior_var = 1;
  std::string sampling = "weights";
  template <class V>
  void visit(V& v) {
    v.num("model.nng.prior_var", prior_var, 1e-12, options::kInf, "eta: prior N(0, eta I) on the weights (authors' UCI config: 1)");
    v.pick("model.nng.sampling", sampling, {"weights", "rows"}, "fully connected layers: form each particle's weights (the authors) or only its effect on the rows, the same draw, cheaper for wide layers and small batches (the prior term then uses the mean)");
    v.late();
  }
};

LayerPtr make_nng_layer(int64_t in, int64_t out, const NngLayerOptions& o, const LayerContext& ctx) {
  return std::make_shared<NngLayer>(in, out, o.prior_var, ctx.gen, o.sampling == "rows");
}
}  // namespace

LayerKind nng_layer_kind() { return layer_kind("nng", make_nng_layer); }

}  // namespace whvi::models
