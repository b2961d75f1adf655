// SWAG, the stochastic weight averaging Gaussian (Maddox, Izmailov, Garipov,
// Vetrov & Wilson 2019; model.kind: swag): a deterministic network is trained
// to its MAP in steps (infer/map_fit.h, as for last-layer Laplace), then, once
// after the steps, the optimiser goes on from the MAP at a constant learning
// rate over every training row, taking a snapshot θ_1..θ_T of all the network's
// weights every model.swag.epochs_between epochs. With θ̄ their mean,
//   Σ_diag = diag(mean_t θ_t² − θ̄²)   and   D = [θ_{T−K+1} − θ̄, ..., θ_T − θ̄]
// (the last K = model.swag.rank snapshots' deviations), the posterior is
//   N(θ̄, ½ Σ_diag + D Dᵀ / (2 (K − 1))),
// and the prediction is the Monte Carlo average over
//   θ = θ̄ + Σ_diag^{1/2} z₁ / √2 + D z₂ / √(2 (K − 1)),   z₁ ~ N(0, I), z₂ ~ N(0, I_K),
// the network evaluated at each θ (the likelihood adds its noise; a
// classifier's probabilities are the mean of the sampled softmaxes).
//
// Choices where the paper leaves room (docs/modelling.md, "SWAG"):
//  - The snapshots come from a phase after training (with stopping's best
//    parameters restored), with the run's optimiser (Adam by default, the paper
//    SGD) restarted at the learning rate of the last training step, held
//    constant; the objective is the MAP's (the scaled NLL plus the weights'
//    prior). Its mini-batches are training.batch_size rows, reshuffled every
//    epoch from a generator seeded by the run's training stream.
//  - D's columns are deviations from the mean of all T snapshots; the paper's
//    Algorithm 1 takes each from the running mean at its snapshot.
//  - The likelihood's own parameters (the Gaussian noise) keep training in the
//    phase and take its last value; they are not part of the posterior.
// Before the fit (stopping's measurements) the posterior is a point, the MAP
// network's own predictive.
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <chrono>
#include <numeric>

#include <spdlog/spdlog.h>

#include "common/draws.h"
#include "common/errors.h"
#include "common/rng.h"
#include "infer/inference.h"
#include "infer/map_fit.h"

namespace whvi::infer {
namespace {

struct SwagOptions {
  int64_t snapshots = 20, rank = 20, batch_size = 100;
  double epochs_between = 1;
  bool map_prior = true;
  template <class V>
  void visit(V& v) {
    v.num("model.swag.snapshots", snapshots, 2, 100000,
          "model.kind swag: weight snapshots T taken after training, whose mean and diagonal variance SWAG's "
          "Gaussian takes (Maddox et al. 2019: one per epoch)");
    v.num("model.swag.rank", rank, 2, 1000,
          "model.kind swag: rank K of the low-rank part of the covariance, the last K snapshots' deviations from "
          "their mean (the paper: 20); at most model.swag.snapshots");
    v.num("model.swag.epochs_between", epochs_between, 0.01, 1000,
          "model.kind swag: epochs through the training rows between snapshots, at the last training step's "
          "learning rate held constant");
    v.flag("model.swag.map_prior", map_prior,
           "model.kind swag: train the network, and take the snapshots, with the weights' Gaussian prior "
           "N(0, model.sghmc.prior_var) added to its NLL; off = the NLL alone");
    v.use("training.batch_size", batch_size);
  }
};

struct SwagAndOptimiser {
  SwagOptions swag;
  VariationalOptions optimiser;
  template <class V>
  void visit(V& v) {
    swag.visit(v);
    v.part(optimiser);
  }
};

class Swag final : public OnMapFit {
 public:
  Swag(std::unique_ptr<Inference> map, const SwagOptions& o) : OnMapFit(std::move(map)), opt_(o) {
    p_ = 0;
    for (const auto& w : weights()) p_ += w.numel();
    sqrt_diag_ = torch::zeros({p_}, torch::kFloat64);
    dev_ = torch::zeros({opt_.rank, p_}, torch::kFloat64);
  }

  void begin(int64_t n, int64_t total, const at::Generator& gen) override {
    // the phase's own seed, from a copy of the training stream (its state is left as it was)
    uint32_t w[2];
    whvi::detail::mt_words(gen.clone(), w, 2);  // two words of LibTorch's CPU generator, as its own calls draw them
    seed_ = derive_seed((static_cast<uint64_t>(w[0]) << 32) | w[1], 0, Stream::kTrain);
    OnMapFit::begin(n, total, gen);
  }
  torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) override {
    last_t_ = t;
    return OnMapFit::step(xb, yb, t, gen);
  }

  // The snapshot phase from every training row (x standardised; y the targets as trained on).
  void fit(const torch::Tensor& x, const torch::Tensor& y) override {
    const int64_t n = x.size(0), b = std::min(opt_.batch_size, n);
    const int64_t per_epoch = (n + b - 1) / b;
    const int64_t every = std::max<int64_t>(1, std::llround(opt_.epochs_between * static_cast<double>(per_epoch)));
    const int64_t T = opt_.snapshots, K = opt_.rank;
    std::mt19937_64 rng(seed_);
    const auto gen = make_generator(seed_ + 1);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    int64_t pos = n;
    auto sum = torch::zeros({p_}, torch::kFloat64), sum_sq = torch::zeros({p_}, torch::kFloat64);
    auto last = torch::zeros({K, p_}, torch::kFloat64);  // the last K snapshots, slot t % K
    map_->begin(n, last_t_ + 1, gen);
    // a long phase (many snapshots, or many epochs between them) says how long, then how far
    const auto t0 = std::chrono::steady_clock::now();
    double next_note = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (t > 0) {
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double left = sec / static_cast<double>(t) * static_cast<double>(T - t);
        if (sec >= next_note && sec + left > 30) {
          spdlog::info("swag: {} of {} snapshots taken in {:.0f} s; about {:.0f} s to go (model.swag.snapshots)", t,
                       T, sec, left);
          next_note = sec + 60;
        }
      }
      for (int64_t k = 0; k < every; ++k) {
        if (pos + b > n) shuffle(order, rng), pos = 0;
        const auto idx = torch::tensor(std::vector<int64_t>(order.begin() + pos, order.begin() + pos + b));
        pos += b;
        map_->step(x.index_select(0, idx), y.index_select(0, idx), last_t_, gen);
      }
      const auto theta = flat();
      sum += theta;
      sum_sq += theta.square();
      last.select(0, t % K).copy_(theta);
    }
    map_->end();
    const auto mean = sum / static_cast<double>(T);
    sqrt_diag_.copy_((sum_sq / static_cast<double>(T) - mean.square()).clamp_min(0).sqrt());
    dev_.copy_(last - mean.unsqueeze(0));
    set_flat(mean);
    steps_ = T * every;
    spdlog::info("swag: {} snapshots, one every {} steps ({} epoch(s)), rank {}, {} weights", T, every,
                 opt_.epochs_between, K, p_);
  }

  // Predicting changes nothing but the kept draws (draws()), which a mutex guards.
  bool predicts_concurrently() const override { return true; }
  // S weight vectors drawn from the posterior, applied to every row alike
  bool draws_weights_only() const override { return true; }
  torch::Tensor predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) override {
    torch::NoGradGuard ng;
    if (!sqrt_diag_.any().item<bool>() && !dev_.any().item<bool>()) return map_->predict(x, S, gen);
    const auto theta = draws(S, gen);
    // the samples in chunks of at most 2^24 activations
    const int64_t width = std::max<int64_t>(model().layers().front()->out_features(), x.size(1));
    const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 24) / std::max<int64_t>(1, x.size(0) * width));
    std::vector<torch::Tensor> out;
    for (int64_t s = 0; s < S; s += chunk) out.push_back(forward_at(theta.narrow(0, s, std::min(chunk, S - s)), x));
    auto f = torch::cat(out, 0);
    return likelihood().to_original(f.size(2) == 1 ? f.squeeze(2) : f);
  }

  // the network's parameters (at θ̄ after the fit) and the covariance's diagonal and deviations
  int64_t num_params() const override { return map_->num_params() + p_ * (1 + dev_.size(0)); }
  NamedTensors state() override {
    auto out = map_->state();
    out.emplace_back("swag.sqrt_diag", sqrt_diag_);
    out.emplace_back("swag.deviations", dev_);
    return out;
  }
  const char* method() const override { return "swag"; }
  std::vector<std::pair<std::string, double>> learned() const override {
    return {{"swag_snapshots", static_cast<double>(opt_.snapshots)}, {"swag_steps", static_cast<double>(steps_)}};
  }

 private:
  // S weight draws θ = θ̄ + diag^{1/2} z₁/√2 + D z₂/√(2(K − 1)), [S, P] in float64. `whvi predict`
  // predicts row by row from the same generator state, so the last draws are kept and
  // reused, with the generator left where drawing them left it, while the generator's
  // state, S and the Gaussian are those they were drawn from: the same numbers, drawn once.
  // Once kept they are only read, so several threads may predict at once.
  torch::Tensor draws(int64_t S, const at::Generator& gen) {
    at::Generator g = gen;  // a handle: its state is the caller's
    const auto before = g.get_state();
    const auto mean = flat();
    std::shared_ptr<const Drawn> c;
    {
      std::lock_guard<std::mutex> lock(drawn_mutex_);
      c = drawn_;
    }
    if (c && c->theta.size(0) == S && torch::equal(c->before, before) && torch::equal(c->mean, mean) &&
        torch::equal(c->sqrt_diag, sqrt_diag_) && torch::equal(c->dev, dev_)) {
      g.set_state(c->after);
      return c->theta;
    }
    const int64_t K = dev_.size(0);
    const auto z1 = whvi::randn({S, p_}, gen, sqrt_diag_.options());
    const auto z2 = whvi::randn({S, K}, gen, dev_.options());
    auto d = std::make_shared<Drawn>();
    d->theta = mean.unsqueeze(0) + z1 * sqrt_diag_.unsqueeze(0) * std::sqrt(0.5) +
               z2.mm(dev_) / std::sqrt(2.0 * static_cast<double>(K - 1));
    d->before = before;
    d->after = g.get_state();
    d->mean = mean;
    d->sqrt_diag = sqrt_diag_.clone();
    d->dev = dev_.clone();
    std::lock_guard<std::mutex> lock(drawn_mutex_);
    drawn_ = d;
    return d->theta;
  }

  // the network's weights, layer by layer (w [in, out], then b [out]: its linear layers' own order)
  std::vector<torch::Tensor> weights() {
    std::vector<torch::Tensor> out;
    for (const auto& l : model().layers()) {
      auto p = l->named_parameters();
      out.push_back(p["w"]);
      out.push_back(p["b"]);
    }
    return out;
  }
  torch::Tensor flat() {
    std::vector<torch::Tensor> parts;
    for (const auto& w : weights()) parts.push_back(w.detach().reshape({-1}).to(torch::kFloat64));
    return torch::cat(parts);
  }
  void set_flat(const torch::Tensor& theta) {
    torch::NoGradGuard ng;
    int64_t at = 0;
    for (auto& w : weights()) {
      w.copy_(theta.narrow(0, at, w.numel()).view_as(w));
      at += w.numel();
    }
  }
  // The network at every row of theta [S, P] at once: the model's forward pass
  // (RegressionModel::forward_standardized: linear layers, the activation
  // between them) with batched matrix products, [S, N, C] in float64.
  torch::Tensor forward_at(const torch::Tensor& theta, const torch::Tensor& x) {
    const auto dtype = model().parameters().front().scalar_type();
    const auto th = theta.to(dtype);
    const int64_t S = th.size(0);
    auto h = x.to(dtype).unsqueeze(0).expand({S, x.size(0), x.size(1)});
    const auto& layers = model().layers();
    const auto& act = model().activation();
    int64_t at = 0;
    for (size_t l = 0; l < layers.size(); ++l) {
      const int64_t in = layers[l]->in_features(), o = layers[l]->out_features();
      const auto w = th.narrow(1, at, in * o).view({S, in, o});
      const auto b = th.narrow(1, at + in * o, o).view({S, 1, o});
      at += in * o + o;
      h = torch::baddbmm(b, h, w);
      if (l + 1 < layers.size()) h = act == "relu" ? torch::relu(h) : act == "cos" ? torch::cos(h) : torch::tanh(h);
    }
    return h.to(torch::kFloat64);
  }

  SwagOptions opt_;
  struct Drawn {
    torch::Tensor theta, before, after, mean, sqrt_diag, dev;
  };
  std::shared_ptr<const Drawn> drawn_;  // the last draws (draws())
  std::mutex drawn_mutex_;
  int64_t p_ = 0, last_t_ = 0, steps_ = 0;
  uint64_t seed_ = 0;
  torch::Tensor sqrt_diag_, dev_;
};

std::unique_ptr<Inference> make_swag(const NetworkMaker& make_network, const SwagAndOptimiser& o) {
  WHVI_CHECK(!o.optimiser.fused,
             "training.engine fused: model.kind swag trains its MAP network through autograd; set training.engine: autograd");
  WHVI_CHECK(o.swag.rank <= o.swag.snapshots, "model.swag.rank (", o.swag.rank, ") is more than model.swag.snapshots (",
             o.swag.snapshots, "): the deviations come from the last snapshots; lower the rank or take more snapshots");
  return std::make_unique<Swag>(make_map_fit(make_network, o.optimiser, o.swag.map_prior), o.swag);
}

}  // namespace

MethodKind swag_method() { return method_kind("swag", make_swag); }

}  // namespace whvi::infer
