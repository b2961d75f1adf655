// NF-WHVI (paper §2.4, supplement C): the WHVI layer W = S1 H diag(g) H S2
// with q(g) a diagonal Gaussian q0 pushed through K planar flows
// (Rezende & Mohamed 2015; nn/planar_flow.h, with the invertibility
// constraint wᵀû > -1, so every flow is invertible).
// The KL term has no closed form; it is split as
//   KL(q_K || p) = KL(q0 || p) + E_q0[ log p(z_0) - log p(z_K) - Σ_k log|det J_k| ],   p = N(0, λ I),
// the first term in closed form (kl()), the second as its Monte Carlo
// estimate, the mean over the rows of each forward in Mode::kSample, added to
// the forward context as a tensor carrying its gradient to μ, σ and the flow
// parameters. The split is exact (log q_K(z_K) = log q0(z_0) - Σ log|det J_k|)
// and its estimator is exactly 0 when the flows are the identity, where the
// plain estimator log q0(z_0) - Σ log|det J| - log p(z_K) keeps the full noise
// of log q0 - log p: on naval validation rows that noise alone (0 flows, i.e.
// WHVI's q) doubled the RMSE after 10,000 steps (docs/modelling.md, NF-WHVI). The authors' public
// code adds the log-determinants, evaluates the prior at z_0 only and
// detaches the term (shared/notes/whvi-reference.md §2.3).
//
// Sampling: local reparameterisation no longer applies, so g itself is drawn,
// one independent draw per row (data point x MC sample), as the WHVI layer
// draws its noise; each row's g goes through the flows. The product is the
// explicit s1 ⊙ H (g ⊙ H (s2 ⊙ x)) through the differentiable FWHT op.
// Mode::kMean: g = f_K(...f_1(μ)).
//
// Fused step (infer/fused_step.h; a deterministic or no bias): the same draws,
// the flows and their backward pass written out as loops over rows, the
// product through the fused WHVI kernel with g = 0 + 1 · z_K (its mean 0, its
// scale 1 and z_K as its noise), and the per-row gradient of g as
// Σ_k H(s2 ⊙ x) ⊙ H(s1 ⊙ dy) (the kernel sums it over rows). The flows'
// Monte Carlo KL term is part of the loss fused_kl_backward returns; its
// gradient joins the data term's on the way back through the flows.
//
// Everything else (S1, S2, μ and log σ² init, prior λ, blocks, shared g, the
// bias) follows the WHVI layer and its model.whvi.* options; the initial
// values are drawn in the same order, so with 0 flows this layer is the WHVI
// layer. Flow parameters: u, w ~ N(0, 0.01²), b = 0 (model.nf_whvi.flows each
// group of g).
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/draws.h"
#include "common/runtime.h"
#include "fwht.h"
#include "nn/fused_ops.h"
#include "nn/layer.h"
#include "nn/planar_flow.h"
#include "nn/whvi_params.h"
#include "ops/fwht_op.h"

namespace whvi::models {
namespace {


class NfWhviLayer : public BayesianLayer, public FusedLayer {
 public:
  NfWhviLayer(int64_t in, int64_t out, const WhviOptions& o, int64_t flows, const at::Generator& gen)
      : BayesianLayer("nf-whvi", in, out), p_(*this, in, out, o, gen), flows_(flows) {
    torch::NoGradGuard ng;
    if (flows_ > 0) {
      u_ = register_parameter("flow_u", whvi::randn({flows_, p_.groups, p_.d}, gen) * 0.01);
      w_ = register_parameter("flow_w", whvi::randn({flows_, p_.groups, p_.d}, gen) * 0.01);
      b_ = register_parameter("flow_b", torch::zeros({flows_, p_.groups}));
    }
  }

  // z [n, groups, D] through the flows; returns z_K and Σ_k log|det J_k| [n].
  std::pair<torch::Tensor, torch::Tensor> flow(const torch::Tensor& z) const {
    if (flows_ == 0) return {z, torch::zeros({z.size(0)}, z.options())};
    return planar_flows(z, u_, w_, b_);
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    const int64_t n = x.size(0), d = p_.d, groups = p_.groups;
    const double lambda = p_.opt.prior_var;
    auto xp = d == in_features() ? x : torch::constant_pad_nd(x, {0, d - in_features()});
    torch::Tensor g;
    if (ctx.mode == Mode::kSample) {
      const auto eps = whvi::randn({n, groups, d}, ctx.gen, x.options());
      const auto z0 = p_.g_mu + (0.5 * p_.g_logvar).exp() * eps;
      auto [zk, logdet] = flow(z0);
      if (flows_ > 0) {
        // log p(z_0) - log p(z_K) = (|z_K|² - |z_0|²) / (2λ)
        const auto corr = (zk.square().sum({1, 2}) - z0.square().sum({1, 2})) / (2.0 * lambda) - logdet;
        ctx.add_kl(corr.mean());
      }
      g = zk;
    } else {
      g = flow(p_.g_mu.unsqueeze(0)).first.expand({n, groups, d});
    }
    // y[i, k] = s1[k] ⊙ H (g[i, q] ⊙ H (s2[k] ⊙ x[i]))
    auto t = ops::fwht(xp.unsqueeze(1) * p_.s2);  // [n, blocks, D]
    auto y = p_.s1 * ops::fwht(t * g);             // g [n, groups, D] broadcasts when groups = 1
    return p_.finish(y.reshape({n, p_.blocks * d}), out_features(), ctx);
  }

  // The closed-form part: KL(q0 || p) of g and the Bayesian bias's KL (the
  // flows' correction goes into the context).
  torch::Tensor kl_impl() override { return p_.closed_form_kl(); }

  FusedLayer* fused() override { return p_.opt.bias != "bayesian" ? this : nullptr; }
  torch::Tensor fused_forward(const torch::Tensor& x, const at::Generator& gen, FusedCache& c) override;
  torch::Tensor fused_backward(const torch::Tensor& g, FusedCache& c, bool need_dx) override;
  double fused_kl_backward() override {
    return kl_diag_gaussian_backward(p_.g_mu, p_.g_logvar, p_.g_prior_var) + mc_kl_;
  }

 private:
  template <class T>
  void flows_forward(int64_t n, T* zs, T* uh, T* h);
  template <class T>
  void flows_backward(int64_t n, const T* zs, const T* uh, const T* h, const T* eps, const T* sg, T* dz);

  WhviParams p_;
  int64_t flows_ = 0;
  torch::Tensor u_, w_, b_;
  // per flow and group, from the last fused_forward: w·u, |w|², s = m(w·u) - w·u,
  // c = w·û, m'(w·u)
  struct FlowScalars {
    double wu, r, s, c, dm;
  };
  std::vector<FlowScalars> fs_;
  double mc_kl_ = 0;  // the flows' Monte Carlo KL term of the last fused_forward
};

// softplus as LibTorch's (beta 1, threshold 20), in double
inline double softplus(double a) { return a > 20.0 ? a : std::log1p(std::exp(a)); }

// zs [K + 1, n, G, D]: z_0 filled in; writes z_1 .. z_K, û [K, G, D], h [K, n, G],
// the flow scalars and the Monte Carlo KL term (mean over rows of
// (|z_K|² - |z_0|²) / 2λ - Σ_k log|det J_k|).
template <class T>
void NfWhviLayer::flows_forward(int64_t n, T* zs, T* uh, T* h) {
  const int64_t K = flows_, G = p_.groups, D = p_.d;
  const T* up = u_.data_ptr<T>();
  const T* wp = w_.data_ptr<T>();
  const T* bp = b_.data_ptr<T>();
  fs_.assign(static_cast<size_t>(K * G), {});
  std::vector<double> logdet(static_cast<size_t>(n), 0.0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t g = 0; g < G; ++g) {
      const T* u = up + (k * G + g) * D;
      const T* w = wp + (k * G + g) * D;
      T* uhk = uh + (k * G + g) * D;
      auto& f = fs_[static_cast<size_t>(k * G + g)];
      f.wu = 0;
      f.r = 0;
      for (int64_t j = 0; j < D; ++j) {
        f.wu += static_cast<double>(w[j]) * static_cast<double>(u[j]);
        f.r += static_cast<double>(w[j]) * static_cast<double>(w[j]);
      }
      const double sp = softplus(f.wu);
      f.s = -1.0 + std::max(sp, 1e-6) - f.wu;
      // m'(w·u): softplus's slope (1 above its threshold, as LibTorch's), 0 where clamp_min holds it
      f.dm = sp < 1e-6 ? 0.0 : f.wu > 20.0 ? 1.0 : 1.0 / (1.0 + std::exp(-f.wu));
      f.c = 0;
      for (int64_t j = 0; j < D; ++j) {
        uhk[j] = static_cast<T>(static_cast<double>(u[j]) + f.s * static_cast<double>(w[j]) / f.r);
        f.c += static_cast<double>(w[j]) * static_cast<double>(uhk[j]);
      }
      const T* zin = zs + k * n * G * D;
      T* zout = zs + (k + 1) * n * G * D;
      for (int64_t i = 0; i < n; ++i) {
        const T* zi = zin + (i * G + g) * D;
        T* zo = zout + (i * G + g) * D;
        double a = static_cast<double>(bp[k * G + g]);
        for (int64_t j = 0; j < D; ++j) a += static_cast<double>(w[j]) * static_cast<double>(zi[j]);
        const T hi = static_cast<T>(std::tanh(a));
        h[(k * n + i) * G + g] = hi;
        for (int64_t j = 0; j < D; ++j) zo[j] = zi[j] + hi * uhk[j];
        const double hd = static_cast<double>(hi);
        logdet[static_cast<size_t>(i)] += std::log1p((1.0 - hd * hd) * f.c);
      }
    }
  const double lambda = p_.opt.prior_var;
  const T* z0 = zs;
  const T* zk = zs + K * n * G * D;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double q0 = 0, qk = 0;
    for (int64_t j = 0; j < G * D; ++j) {
      q0 += static_cast<double>(z0[i * G * D + j]) * static_cast<double>(z0[i * G * D + j]);
      qk += static_cast<double>(zk[i * G * D + j]) * static_cast<double>(zk[i * G * D + j]);
    }
    sum += (qk - q0) / (2.0 * lambda) - logdet[static_cast<size_t>(i)];
  }
  mc_kl_ = sum / static_cast<double>(n);
}

torch::Tensor NfWhviLayer::fused_forward(const torch::Tensor& x, const at::Generator& gen, FusedCache& c) {
  torch::NoGradGuard ng;
  WHVI_CHECK(x.is_cpu(), "training.engine fused: the NF-WHVI layer's fused step runs on the CPU; set training.engine: autograd");
  const int64_t n = x.size(0), d = p_.d, G = p_.groups, K = flows_;
  const auto o = x.options();
  const auto xp = p_.fused_input(x, in_features(), c);
  p_.fused_noise(n, o, gen, c);
  const auto &eps = c[2], &sg = c[3];
  auto& zs = c.buffer(4, {K + 1, n, G, d}, o);
  auto& uh = c.buffer(5, {std::max<int64_t>(K, 1), G, d}, o);
  auto& h = c.buffer(6, {std::max<int64_t>(K, 1), n, G}, o);
  auto& zero = c.buffer(7, {G, d}, o);
  auto& one = c.buffer(8, {G, d}, o);
  zero.zero_();
  one.fill_(1);
  auto& y = c.buffer(9, {n, p_.blocks, d}, o);
  auto& hu = c.buffer(11, {n, p_.blocks, d}, o);
  auto& hw = c.buffer(12, {n, p_.blocks, d}, o);
  const auto sh = p_.kernel_shape(n);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "nf_whvi_fused_forward", [&] {
    // z_0 = μ + σ ε, as the autograd step's (σ ε first)
    const scalar_t* mu = p_.g_mu.data_ptr<scalar_t>();
    const scalar_t* sgp = sg.data_ptr<scalar_t>();
    const scalar_t* ep = eps.data_ptr<scalar_t>();
    scalar_t* z0 = zs.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < G * d; ++j) {
        const scalar_t se = sgp[j] * ep[i * G * d + j];
        z0[i * G * d + j] = mu[j] + se;
      }
    if (K > 0) flows_forward<scalar_t>(n, z0, uh.data_ptr<scalar_t>(), h.data_ptr<scalar_t>());
    else mc_kl_ = 0;
    kernels::whvi_forward_cpu<scalar_t>(sh, xp.data_ptr<scalar_t>(), z0 + K * n * G * d, p_.s1.data_ptr<scalar_t>(),
                                        p_.s2.data_ptr<scalar_t>(), zero.data_ptr<scalar_t>(),
                                        one.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), threads(),
                                        hu.data_ptr<scalar_t>(), hw.data_ptr<scalar_t>());
  });
  return p_.fused_output(y, out_features(), c, 10);
}

// dz [n, G, D]: dL/dz_K of the data term on entry. Adds the Monte Carlo KL
// term's gradient, goes back through the flows (their parameters' gradients
// into .grad()) and through z_0 = μ + σ ε (μ's and log σ²'s).
template <class T>
void NfWhviLayer::flows_backward(int64_t n, const T* zs, const T* uh, const T* h, const T* eps, const T* sg, T* dz) {
  const int64_t K = flows_, G = p_.groups, D = p_.d;
  const double inv_ln = 1.0 / (p_.opt.prior_var * static_cast<double>(n));
  const double dld = -1.0 / static_cast<double>(n);  // d(mean of -Σ log|det J|) / d log|det J_k| of a row
  if (K > 0) {
    const T* zk = zs + K * n * G * D;
    for (int64_t j = 0; j < n * G * D; ++j) dz[j] += static_cast<T>(static_cast<double>(zk[j]) * inv_ln);
  }
  const T* up = K > 0 ? u_.data_ptr<T>() : nullptr;
  const T* wp = K > 0 ? w_.data_ptr<T>() : nullptr;
  std::vector<double> duh(static_cast<size_t>(D)), dw(static_cast<size_t>(D));
  for (int64_t k = K; k-- > 0;)
    for (int64_t g = 0; g < G; ++g) {
      const T* u = up + (k * G + g) * D;
      const T* w = wp + (k * G + g) * D;
      const T* uhk = uh + (k * G + g) * D;
      const auto& f = fs_[static_cast<size_t>(k * G + g)];
      std::fill(duh.begin(), duh.end(), 0.0);
      std::fill(dw.begin(), dw.end(), 0.0);
      double dc = 0, db = 0;
      const T* zin = zs + k * n * G * D;
      for (int64_t i = 0; i < n; ++i) {
        const T* zi = zin + (i * G + g) * D;
        T* dzi = dz + (i * G + g) * D;
        const double hi = static_cast<double>(h[(k * n + i) * G + g]);
        double dh = 0;
        for (int64_t j = 0; j < D; ++j) dh += static_cast<double>(dzi[j]) * static_cast<double>(uhk[j]);
        const double omh2 = 1.0 - hi * hi, q = 1.0 + omh2 * f.c;
        dh += dld * (-2.0 * hi * f.c / q);
        dc += dld * omh2 / q;
        const double da = dh * omh2;
        db += da;
        for (int64_t j = 0; j < D; ++j) {
          duh[static_cast<size_t>(j)] += hi * static_cast<double>(dzi[j]);
          dw[static_cast<size_t>(j)] += da * static_cast<double>(zi[j]);
          dzi[j] = static_cast<T>(static_cast<double>(dzi[j]) + da * static_cast<double>(w[j]));
        }
      }
      // c = w·û; û = u + s w / r with r = |w|², s = m(w·u) - w·u
      double duh_w = 0;
      for (int64_t j = 0; j < D; ++j) {
        dw[static_cast<size_t>(j)] += dc * static_cast<double>(uhk[j]);
        duh[static_cast<size_t>(j)] += dc * static_cast<double>(w[j]);
        duh_w += duh[static_cast<size_t>(j)] * static_cast<double>(w[j]);
      }
      const double ds = duh_w / f.r, dr = -f.s / (f.r * f.r) * duh_w, dwu = ds * (f.dm - 1.0);
      T* gu = u_.mutable_grad().data_ptr<T>() + (k * G + g) * D;
      T* gw = w_.mutable_grad().data_ptr<T>() + (k * G + g) * D;
      for (int64_t j = 0; j < D; ++j) {
        const double wj = static_cast<double>(w[j]);
        const double du = duh[static_cast<size_t>(j)] + dwu * wj;
        const double dwj = dw[static_cast<size_t>(j)] + f.s / f.r * duh[static_cast<size_t>(j)] + 2.0 * wj * dr +
                           dwu * static_cast<double>(u[j]);
        gu[j] += static_cast<T>(du);
        gw[j] += static_cast<T>(dwj);
      }
      b_.mutable_grad().data_ptr<T>()[k * G + g] += static_cast<T>(db);
    }
  // z_0 = μ + σ ε (and the KL term's -|z_0|² / 2λ)
  const T* z0 = zs;
  T* gmu = p_.g_mu.mutable_grad().data_ptr<T>();
  T* glv = p_.g_logvar.mutable_grad().data_ptr<T>();
  for (int64_t j = 0; j < G * D; ++j) {
    double dmu = 0, dsg = 0;
    for (int64_t i = 0; i < n; ++i) {
      double dzi = static_cast<double>(dz[i * G * D + j]);
      if (K > 0) dzi -= static_cast<double>(z0[i * G * D + j]) * inv_ln;
      dmu += dzi;
      dsg += dzi * static_cast<double>(eps[i * G * D + j]);
    }
    gmu[j] += static_cast<T>(dmu);
    glv[j] += static_cast<T>(dsg * static_cast<double>(sg[j]) * 0.5);  // d σ / d log σ² = σ / 2
  }
}

torch::Tensor NfWhviLayer::fused_backward(const torch::Tensor& g, FusedCache& c, bool need_dx) {
  torch::NoGradGuard ng;
  const int64_t n = g.size(0), d = p_.d, in = in_features(), G = p_.groups, K = flows_;
  const int64_t blocks = p_.blocks;
  const auto o = g.options();
  const auto &xp = c[0], &eps = c[2], &sg = c[3], &zs = c[4], &uh = c[5], &h = c[6], &zero = c[7], &one = c[8],
             &hu = c[11], &hw = c[12];
  const auto dy = p_.fused_dy(g, c, 13);
  auto& dx = c.buffer(14, {n, d}, o);
  auto& ds1 = c.buffer(15, p_.s1.sizes(), o);
  auto& ds2 = c.buffer(16, p_.s2.sizes(), o);
  auto& v = c.buffer(17, {n, blocks, d}, o);
  auto& dz = c.buffer(18, {n, G, d}, o);
  const auto sh = p_.kernel_shape(n);
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "nf_whvi_fused_backward", [&] {
    const scalar_t* zk = zs.data_ptr<scalar_t>() + K * n * G * d;
    kernels::whvi_backward_cpu<scalar_t>(sh, xp.data_ptr<scalar_t>(), zk, p_.s1.data_ptr<scalar_t>(),
                                         p_.s2.data_ptr<scalar_t>(), zero.data_ptr<scalar_t>(),
                                         one.data_ptr<scalar_t>(), dy.data_ptr<scalar_t>(),
                                         need_dx ? dx.data_ptr<scalar_t>() : nullptr, ds1.data_ptr<scalar_t>(),
                                         ds2.data_ptr<scalar_t>(), nullptr, nullptr, threads(),
                                         hu.data_ptr<scalar_t>(), hw.data_ptr<scalar_t>());
    // dL/dg of each row: Σ over the group's blocks of H(s2 ⊙ x) ⊙ H(s1 ⊙ dy)
    const scalar_t* s1 = p_.s1.data_ptr<scalar_t>();
    const scalar_t* dyp = dy.data_ptr<scalar_t>();
    scalar_t* vp = v.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < blocks * d; ++j) vp[i * blocks * d + j] = s1[j] * dyp[i * blocks * d + j];
    kernels::fwht_cpu<scalar_t>(vp, d, vp, d, n * blocks, d, scalar_t(1), threads());
    const scalar_t* hup = hu.data_ptr<scalar_t>();
    scalar_t* dzp = dz.data_ptr<scalar_t>();
    std::fill(dzp, dzp + n * G * d, scalar_t(0));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < blocks; ++k) {
        const int64_t q = p_.opt.shared_g ? 0 : k;
        scalar_t* dzi = dzp + (i * G + q) * d;
        const scalar_t* a = hup + (i * blocks + k) * d;
        const scalar_t* b = vp + (i * blocks + k) * d;
        for (int64_t j = 0; j < d; ++j) dzi[j] += a[j] * b[j];
      }
    flows_backward<scalar_t>(n, zs.data_ptr<scalar_t>(), uh.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(),
                             eps.data_ptr<scalar_t>(), sg.data_ptr<scalar_t>(), dzp);
  });
  p_.fused_add_grads(ds1, ds2, g);
  if (!need_dx) return {};
  return d == in ? dx : dx.narrow(1, 0, in);
}

}  // namespace

// model.nf_whvi.* and WHVI's own options (declared by the whvi layer kind)
struct NfWhviOptions {
  WhviOptions whvi;
  int64_t flows = 3;
  template <class V>
  void visit(V& v) {
    v.num("model.nf_whvi.flows", flows, 0, 1000, "planar flows on each WHVI layer's g (paper: 10 on the toy problem, 3 on the CNNs); the other settings are model.whvi.*");
    v.part(whvi);
  }
};

LayerPtr make_nf_whvi_layer(int64_t in, int64_t out, const NfWhviOptions& no, const LayerContext& ctx) {
  const WhviOptions& o = no.whvi;
  WHVI_CHECK(o.is_default_structure(), "nf-whvi supports only WHVI's own structure (S1 H G H S2 with optimised S); "
             "remove model.whvi.structure and model.whvi.s_posterior, or use model.kind: whvi");
  return std::make_shared<NfWhviLayer>(in, out, o, no.flows, ctx.gen);
}

LayerKind nf_whvi_layer_kind() { return layer_kind("nf-whvi", make_nf_whvi_layer).fused("with a deterministic or no bias"); }

}  // namespace whvi::models
