// Noisy K-FAC: see nng.h.
#include "common/draws.h"
#include "infer/nng.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/memory.h"
#include "infer/variational.h"
#include "models/conv.h"

namespace whvi::infer {

void NngOptions::finish() {
  true_fisher = fisher == "true";
  heavy_ball = update == "heavy-ball";
  WHVI_CHECK(kl_clip == 0 || heavy_ball, "model.nng.kl_clip = ", kl_clip, " clips the heavy-ball update of "
             "the authors' CIFAR-10 code; set model.nng.update: heavy-ball, or kl_clip: 0");
  noise_lr = training_lr * lr_factor;
}

NoisyKfac::NoisyKfac(std::shared_ptr<models::RegressionModel> model, const NngOptions& o)
    : model_(std::move(model)), opt_(o) {
  for (const auto& l : model_->layers())
    WHVI_CHECK(dynamic_cast<models::NngLayer*>(l.get()), "model.kind nng needs every layer to be an nng layer, but layer '",
               l->kind(), "' is not; set model.output_layer: auto");
  // every NNG layer (convolutions hold one each), in module order: the
  // trunk's, then the head's
  std::set<const void*> owned;
  for (const auto& mod : model_->modules(/*include_self=*/false)) {
    if (auto* nl = dynamic_cast<models::NngLayer*>(mod.get())) {
      layers_.push_back({nl, {}, {}, {}, {}, {}});
      for (const auto& p : nl->parameters()) owned.insert(p.unsafeGetTensorImpl());
    } else if (dynamic_cast<models::BatchNorm*>(mod.get())) {
      for (const auto& p : mod->parameters(/*recurse=*/false)) owned.insert(p.unsafeGetTensorImpl());
    }
  }
  // each layer's Kronecker factors (inputs+1)² and outputs², in doubles: the
  // factor, its random start and product, the eigenvectors and the sampling
  // factor, about six copies each, refused before begin() makes them
  double squares = 0;
  int64_t widest = 0;
  for (const auto& st : layers_) {
    const double da = static_cast<double>(st.layer->in_features() + 1), ds = static_cast<double>(st.layer->out_features());
    squares += da * da + ds * ds;
    widest = std::max({widest, st.layer->in_features(), st.layer->out_features()});
  }
  refuse_unless_room(6.0 * 8.0 * squares,
                     detail::concat("model.kind nng: the noisy K-FAC factors of ", layers_.size(),
                                    " layers (the widest ", widest, " units; each factor is units x units)"),
                     "lower model.width, or use model.kind mfg or whvi for wide layers");
  for (const auto& p : model_->likelihood().parameters()) owned.insert(p.unsafeGetTensorImpl());
  for (const auto& p : model_->named_parameters())
    WHVI_CHECK(owned.count(p.value().unsafeGetTensorImpl()), "model.kind nng trains only noisy K-FAC layers, but "
               "parameter '", p.key(), "' belongs to a layer of another kind; with a convolutional "
               "model.architecture set model.conv: nng");
}

NoisyKfac::~NoisyKfac() = default;

void NoisyKfac::to(torch::ScalarType dtype) { model_->to(dtype); }

void NoisyKfac::begin(int64_t n_train, int64_t total, const at::Generator& gen) {
  n_train_ = n_train;
  total_ = total;
  updates_ = 0;
  watch_ = {};
  recent_.assign(256, Watched{});
  torch::NoGradGuard ng;
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  for (auto& st : layers_) {
    const int64_t da = st.layer->in_features() + 1, ds = st.layer->out_features();
    // I + G Gᵀ, G ~ N(0, 0.1²): the authors' random positive definite start
    const auto ga = whvi::randn({da, da}, gen, f64) * 0.1;
    const auto gs = whvi::randn({ds, ds}, gen, f64) * 0.1;
    st.a = torch::eye(da, f64) + ga.mm(ga.t());
    st.s = torch::eye(ds, f64) + gs.mm(gs.t());
    st.momentum = torch::zeros_like(st.layer->mean());
    refresh(st);
  }
  noise_adam_.reset();
  if (!model_->likelihood().parameters().empty())
    noise_adam_ = std::make_unique<torch::optim::Adam>(model_->likelihood().parameters(),
                                                       torch::optim::AdamOptions(opt_.noise_lr));
}

void NoisyKfac::refresh(LayerState& st) {
  // Non-finite statistics (a diverging run) would make the eigendecomposition
  // throw; keep the last preconditioner and let the training loop's check
  // report the divergence with diagnose()'s account.
  if (!torch::isfinite(st.a).all().item<bool>() || !torch::isfinite(st.s).all().item<bool>()) return;
  const double n = static_cast<double>(n_train_);
  const double gamma_in = opt_.kl_weight / (n * opt_.prior_var), gamma = gamma_in + opt_.damping;
  const double da = static_cast<double>(st.a.size(0)), ds = static_cast<double>(st.s.size(0));
  const double pi = std::sqrt((st.a.trace().item<double>() / da + 1e-8) / (st.s.trace().item<double>() / ds + 1e-8));
  auto eig = [](const torch::Tensor& m) {
    auto [e, q] = torch::linalg_eigh(0.5 * (m + m.t()) + 1e-8 * torch::eye(m.size(0), m.options()));
    return std::pair{e.clamp_min(1e-10), q};
  };
  const auto [ea, qa] = eig(st.a);
  const auto [es, qs] = eig(st.s);
  const auto dtype = st.layer->mean().scalar_type();
  // preconditioners (A + π√γ I)⁻¹, (S + √γ/π I)⁻¹
  st.a_inv = (qa * (1.0 / (ea + pi * std::sqrt(gamma)))).mm(qa.t()).to(dtype);
  st.s_inv = (qs * (1.0 / (es + std::sqrt(gamma) / pi))).mm(qs.t()).to(dtype);
  // sampling: Σ = sqrt(λ/N) (F + c_in I)⁻¹ = L Lᵀ with L = Q diag(sqrt(sqrt(λ/N) / (e + c_in)))
  const double c = std::sqrt(opt_.kl_weight / n);
  const auto va = c / (ea + pi * std::sqrt(gamma_in)), vs = c / (es + std::sqrt(gamma_in) / pi);
  st.layer->set_sampling((qa * va.sqrt()).to(dtype), (qs * vs.sqrt()).to(dtype), va.log().sum().item<double>(),
                         vs.log().sum().item<double>());
}

void NoisyKfac::note_extreme_input(const torch::Tensor& xb) {
  // a divergence often follows a mini-batch holding an extreme row
  // (heavy-tailed features pass standardisation unchanged)
  const auto flat = xb.detach().reshape({xb.size(0), -1}).abs();
  const int64_t at = flat.reshape({-1}).argmax().item<int64_t>();
  step_input_max_ = flat.reshape({-1})[at].item<double>();
  step_input_feature_ = at % flat.size(1);
}

torch::Tensor NoisyKfac::step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) {
  const int64_t B = xb.size(0), P = opt_.particles;
  const auto xr = P > 1 ? xb.repeat({P, 1}) : xb;
  const auto yr = P > 1 ? yb.repeat({P}) : yb;
  auto& lik = model_->likelihood();
  for (auto& p : model_->parameters()) p.mutable_grad() = torch::Tensor();

  models::KfacCapture cap;
  models::ForwardCtx ctx;
  ctx.mode = models::Mode::kSample;
  ctx.gen = gen;
  ctx.draws = P;
  ctx.capture = &cap;
  ctx.training = true;
  note_extreme_input(xb);
  const auto f = model_->forward_standardized(xr, ctx);
  WHVI_ASSERT(cap.entries.size() == layers_.size());
  for (size_t l = 0; l < layers_.size(); ++l) WHVI_ASSERT(cap.entries[l].layer == layers_[l].layer);
  // per-row gradients of log p(ỹ | s) for S: ỹ from the model (true Fisher) or y
  const bool stats_now = updates_ % opt_.stats_every == 0;
  std::vector<torch::Tensor> gs;
  if (stats_now) {
    std::vector<torch::Tensor> ss;
    for (const auto& e : cap.entries) ss.push_back(e.s);
    // targets drawn from non-finite outputs would fail inside the sampler: a divergence
    WHVI_CHECK_AS(NonFiniteError, !opt_.true_fisher || torch::isfinite(f).all().item<bool>(),
                  "the network's outputs are not finite");
    const auto y_fisher = opt_.true_fisher ? lik.sample(f, gen) : yr;
    const auto lp = -lik.nll_sum(f, y_fisher);
    gs = torch::autograd::grad({lp}, ss, {}, /*retain_graph=*/true);
  }
  // the data term: (1/B) Σ_rows nll, so ∇M = -Σ_p G_p
  const auto nll = lik.nll_sum(f, yr);
  (nll / static_cast<double>(B)).backward();
  update_means(t, cap, gs, stats_now, B);
  if (noise_adam_ && !lik.frozen(t)) noise_adam_->step();
  torch::NoGradGuard ng;
  return nll.detach() * (static_cast<double>(n_train_) / static_cast<double>(B * P)) + model_->kl().detach();
}

void NoisyKfac::update_means(int64_t t, const models::KfacCapture& cap, const std::vector<torch::Tensor>& gs,
                             bool stats_now, int64_t B) {
  const int64_t P = opt_.particles;
  const bool decayed = t >= static_cast<int64_t>(opt_.decay_at * static_cast<double>(total_));
  const double alpha = opt_.lr * (decayed ? 0.1 : 1.0), beta = opt_.ema * (decayed ? 0.1 : 1.0);
  const double gamma_in = opt_.kl_weight / (static_cast<double>(n_train_) * opt_.prior_var);
  ++updates_;
  const bool refresh_now = updates_ % opt_.inverse_every == 0;
  torch::NoGradGuard ng;
  const double rows = static_cast<double>(B * P);
  std::vector<torch::Tensor> pre(layers_.size());  // heavy-ball: P per layer
  double fisher_norm = 0;                           // Σ_layers ⟨V, P⟩
  for (size_t l = 0; l < layers_.size(); ++l) {
    auto& st = layers_[l];
    const auto& e = cap.entries[l];
    if (stats_now) {
      // per example: A sums over a convolution's positions, S averages
      const auto a64 = e.a_bar.to(torch::kFloat64), g64 = gs[l].to(torch::kFloat64);
      st.a.mul_(1.0 - beta).add_(a64.t().mm(a64), beta / rows);
      st.s.mul_(1.0 - beta).add_(g64.t().mm(g64), beta / (rows * static_cast<double>(e.positions)));
    }
    auto& m = st.layer->mean();
    const auto v = m.grad() * (-1.0 / static_cast<double>(P)) - gamma_in * e.w_mean;
    if (refresh_now) refresh(st);
    if (opt_.heavy_ball) {
      pre[l] = st.a_inv.mm(v).mm(st.s_inv);
      fisher_norm += (v.to(torch::kFloat64) * pre[l].to(torch::kFloat64)).sum().item<double>();
      continue;
    }
    st.momentum.mul_(opt_.momentum).add_(v, 1.0 - opt_.momentum);
    const double corr = 1.0 - std::pow(opt_.momentum, static_cast<double>(updates_));
    const auto direction = st.a_inv.mm(st.momentum).mm(st.s_inv);
    watch(t, l, direction, alpha / corr, m);
    m.add_(direction, alpha / corr);
  }
  if (!opt_.heavy_ball) return;
  double nu = 1;
  if (opt_.kl_clip > 0 && alpha > 0) {
    const int64_t per_epoch = std::max<int64_t>(1, n_train_ / B);
    const double c = opt_.kl_clip * std::pow(0.95, static_cast<double>(t / per_epoch));
    if (fisher_norm > 0) nu = std::min(1.0, std::sqrt(c / (alpha * alpha * fisher_norm)));
  }
  for (size_t l = 0; l < layers_.size(); ++l) {
    auto& st = layers_[l];
    auto& m = st.layer->mean();
    st.momentum.mul_(opt_.momentum).add_(pre[l], nu);
    watch(t, l, st.momentum, alpha, m);
    m.add_(st.momentum, alpha);
  }
}

void NoisyKfac::watch(int64_t t, size_t l, const torch::Tensor& direction, double step, const torch::Tensor& m) {
  if (watch_.bad_step >= 0) return;
  const double ratio = step * direction.norm().item<double>() / std::max(m.norm().item<double>(), 1e-30);
  if (!std::isfinite(ratio)) {
    watch_.bad_step = t;
    watch_.bad_layer = static_cast<int64_t>(l);
    return;
  }
  auto& slot = recent_[static_cast<size_t>(t) % recent_.size()];
  if (slot.step != t) slot = {t, -1, 0, step_input_max_, step_input_feature_};
  if (ratio >= slot.ratio) {
    slot.layer = static_cast<int64_t>(l);
    slot.ratio = ratio;
  }
  if (l == 0 && t % 100 == 0) watch_.noise = detail::concat(model_->likelihood().log_text(), " at step ", t + 1);
}

std::string NoisyKfac::diagnose() const {
  std::vector<Watched> seen;
  for (const auto& w : recent_)
    if (w.step >= 0 && w.layer >= 0) seen.push_back(w);
  if (seen.empty() && watch_.bad_step < 0) return {};
  auto layer_name = [&](int64_t l) {
    const auto* nl = layers_[static_cast<size_t>(l)].layer;
    return detail::concat("layer ", l + 1, " of ", layers_.size(), " (", nl->in_features(), "->",
                          nl->out_features(), ")");
  };
  std::ostringstream os;
  os << "noisy K-FAC: ";
  if (watch_.bad_step >= 0)
    os << "the mean update of " << layer_name(watch_.bad_layer) << " first became non-finite at step "
       << watch_.bad_step + 1 << "; ";
  if (!seen.empty()) {
    const auto big = *std::max_element(seen.begin(), seen.end(),
                                       [](const Watched& a, const Watched& b) { return a.ratio < b.ratio; });
    std::vector<double> r;
    for (const auto& w : seen) r.push_back(w.ratio);
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
    os << "over the " << seen.size() << " steps before, the relative update |dM|/|M| (largest layer) had median "
       << r[r.size() / 2] << " and peaked at " << big.ratio << " in " << layer_name(big.layer) << " at step "
       << big.step + 1;
    if (big.input_feature >= 0) {
      std::vector<double> xs;
      for (const auto& w : seen) xs.push_back(w.input_max);
      std::nth_element(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(xs.size() / 2), xs.end());
      os << ", whose mini-batch's largest |standardised input| was " << big.input_max << " (feature "
         << big.input_feature + 1 << "; median over those steps " << xs[xs.size() / 2] << ")";
    }
  }
  if (!watch_.noise.empty()) os << "; " << watch_.noise;
  return os.str();
}

double NoisyKfac::step_size(int64_t t) const {
  const bool decayed = t >= static_cast<int64_t>(opt_.decay_at * static_cast<double>(total_));
  return opt_.lr * (decayed ? 0.1 : 1.0);
}

double NoisyKfac::max_abs_param() const {
  double m = 0;
  for (const auto& p : model_->parameters()) {
    const double a = p.detach().abs().max().item<double>();
    if (!(a <= m)) m = a;
  }
  return m;
}

void NoisyKfac::end() {
  for (auto& p : model_->parameters()) p.mutable_grad() = torch::Tensor();
  noise_adam_.reset();
}

// `whvi predict` predicts one row at a time, each from the same generator
// state (experiment/predict.cpp), and forming NNG's particles costs far more
// than applying them to a row. So a prediction keeps the particles it drew
// (up to kMaxKeptBytes of them), and the next one reuses them while S, the
// number of rows (which sets the chunks of samples), the generator's state and
// every layer's M, L_A and L_S are those they were drawn from: the same
// numbers as drawing them again, and the generator left where drawing them
// left it.
struct NoisyKfac::Kept {
  models::ParticleCache cache;
  int64_t S = 0, rows = 0;
  torch::Tensor before, after;        // the generator's state
  std::vector<torch::Tensor> values;  // each layer's M, L_A, L_S (copies)
};

namespace {
constexpr int64_t kMaxKeptBytes = int64_t{1} << 30;
}  // namespace

torch::Tensor NoisyKfac::predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) {
  int64_t bytes = 0;
  for (const auto& st : layers_) bytes += st.layer->mean().numel() * S * st.layer->mean().element_size();
  if (bytes > kMaxKeptBytes) return predict_with(*model_, x, S, gen);
  at::Generator g = gen;  // a handle: its state is the caller's
  const auto before = g.get_state();
  std::shared_ptr<Kept> kept;
  {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    kept = kept_;
  }
  const auto same_values = [&](const Kept& k) {
    size_t i = 0;
    for (const auto& st : layers_)
      for (const auto& t : st.layer->drawn_from())
        if (!torch::equal(t, k.values[i++])) return false;
    return true;
  };
  if (kept && kept->S == S && kept->rows == x.size(0) && torch::equal(kept->before, before) && same_values(*kept)) {
    auto out = predict_with(*model_, x, S, gen, &kept->cache);
    WHVI_ASSERT(torch::equal(g.get_state(), before));  // every draw was a kept one
    g.set_state(kept->after);
    ++reuses_;
    return out;
  }
  auto fresh = std::make_shared<Kept>();
  auto out = predict_with(*model_, x, S, gen, &fresh->cache);
  fresh->cache.frozen = true;
  fresh->S = S, fresh->rows = x.size(0), fresh->before = before, fresh->after = g.get_state();
  for (const auto& st : layers_)
    for (const auto& t : st.layer->drawn_from()) fresh->values.push_back(t.detach().clone());
  std::lock_guard<std::mutex> lock(kept_mutex_);
  kept_ = std::move(fresh);
  return out;
}

torch::Tensor NoisyKfac::mean_standardized(const torch::Tensor& x) {
  torch::NoGradGuard ng;
  return model_->forward_standardized(x.to(model_->parameters().front().scalar_type()), models::Mode::kMean);
}

NamedTensors NoisyKfac::state() {
  NamedTensors out;
  for (const auto& p : model_->named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : model_->named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

namespace {
std::unique_ptr<Inference> make_nng(const NetworkMaker& make_network, const NngOptions& o) {
  return std::make_unique<NoisyKfac>(make_network(), o);
}
}  // namespace

MethodKind nng_method() {
  return method_kind("nng", make_nng,
                     Capabilities()
                         .runs_on_cpu_only("its optimiser is its own")
                         .steps_by("model.nng.lr", "model.nng.damping", "extra damping steadies the K-FAC step")
                         .kl_weighted_by("model.nng.kl_weight")
                         .trains(Capabilities::Trunks::kConvolutional)
                         .trains_only_filters("nng"));
}

}  // namespace whvi::infer
