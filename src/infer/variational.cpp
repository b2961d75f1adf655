// Variational inference: the negative ELBO on the standardised scale,
//   loss = (N / (B S)) Σ_{rows} -log p(y | f) + KL,
// KL = the layers' closed-form terms + their Monte Carlo terms from the
// forward context (planar flows), one independent draw of the network's
// randomness per (sample, row); minimised by Adam (or SGD with momentum, or
// RMSprop: training.optimizer; optim/rule.h) with lr_t = lr_0 (1 + γ t)^-p. The likelihood's parameters come last in the
// optimiser, at their own learning-rate factor, frozen while the likelihood
// says so (the Gaussian's first phase).
#include "infer/variational.h"
#include "models/export.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "infer/fused_step.h"
#include "optim/flat_optimizer.h"

namespace whvi::infer {

const std::string& VariationalOptions::engine_help() {
  static const std::string help =
      "how a variational step computes its gradient: fused (infer/fused_step.h: hand-written forward and backward on "
      "reused buffers, the same draws, the same numbers to float rounding, faster; MLPs of layer kinds " +
      models::layer_kinds_with(&models::LayerKind::fused_when) + " with the " +
      likelihoods::likelihoods_that(likelihoods::Capability::kFusedStep) +
      " likelihood on the CPU, one split at a time), autograd (LibTorch's, the reference), or auto: fused wherever it "
      "applies, autograd otherwise. Every split record says which ran (engine)";
  return help;
}

double VariationalOptions::kl_factor(int64_t t) const {
  if (kl_warmup <= 0 || t + 1 >= kl_warmup) return kl_weight;
  return kl_weight * static_cast<double>(t + 1) / static_cast<double>(kl_warmup);
}

double learning_rate(double lr0, double gamma, double power, int64_t t) {
  return lr0 * std::pow(1.0 + gamma * static_cast<double>(t), -power);
}

torch::Tensor negative_elbo(models::RegressionModel& model, const torch::Tensor& xb_in, const torch::Tensor& yb_in,
                            int64_t n_train, int64_t S, const at::Generator& gen, double kl_factor) {
  const int64_t B = xb_in.size(0);
  const auto xb = S > 1 ? xb_in.repeat({S, 1}) : xb_in;
  const auto yb = S > 1 ? yb_in.repeat({S}) : yb_in;
  models::ForwardCtx ctx;
  ctx.mode = models::Mode::kSample;
  ctx.gen = gen;
  ctx.draws = S;
  ctx.training = true;
  const auto f = model.forward_standardized(xb, ctx);
  const auto nll = model.likelihood().nll_sum(f, yb);
  const double scale = static_cast<double>(n_train) / static_cast<double>(B) / static_cast<double>(S);
  if (kl_factor != 1.0) {
    auto kl = model.kl();
    if (ctx.mc_kl.defined()) kl = kl + ctx.mc_kl;
    return scale * nll + kl_factor * kl;
  }
  // the plain ELBO keeps its exact operations (its numbers are pinned)
  auto loss = scale * nll + model.kl();
  if (ctx.mc_kl.defined()) loss = loss + ctx.mc_kl;
  return loss;
}

torch::Tensor predict_with(models::RegressionModel& model, const torch::Tensor& x_in, int64_t S,
                           const at::Generator& gen, models::ParticleCache* particles) {
  torch::NoGradGuard ng;
  const auto dtype = model.parameters().front().scalar_type();
  const auto x = x_in.to(dtype).contiguous();
  const int64_t N = x.size(0);
  const int64_t C = model.likelihood().out_dim();
  auto out = C == 1 ? torch::empty({S, N}, torch::kFloat64) : torch::empty({S, N, C}, torch::kFloat64);
  if (N == 0) return out;
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 17) / (N * C));
  // a long request (many samples or rows) says how far it is, every 10 s
  const auto t0 = std::chrono::steady_clock::now();
  auto last_log = t0;
  for (int64_t s = 0; s < S; s += chunk) {
    if (const auto now = std::chrono::steady_clock::now(); now - last_log > std::chrono::seconds(10)) {
      last_log = now;
      const double done = static_cast<double>(s) / static_cast<double>(S);
      const double spent = std::chrono::duration<double>(now - t0).count();
      spdlog::info("predicting: {} of {} Monte Carlo samples on {} rows, about {:.0f} s left", s, S, N,
                   spent * (1 - done) / std::max(done, 1e-9));
    }
    const int64_t c = std::min(chunk, S - s);
    models::ForwardCtx ctx;
    ctx.mode = models::Mode::kSample;
    ctx.gen = gen;
    ctx.draws = c;
    ctx.particles = particles;
    ctx.particle_chunk = s;
    auto f = model.forward_standardized(c == 1 ? x : x.repeat({c, 1}), ctx);
    f = C == 1 ? f.view({c, N}) : f.view({c, N, C});
    out.narrow(0, s, c).copy_(model.likelihood().to_original(f));
  }
  return out;
}

struct VariationalInference::Optimiser {
  std::unique_ptr<optim::FlatOptimizer<float>> f;
  std::unique_ptr<optim::FlatOptimizer<double>> d;
  template <class Fn>
  auto visit(Fn&& fn) {
    return f ? fn(*f) : fn(*d);
  }
};

VariationalInference::VariationalInference(std::shared_ptr<models::RegressionModel> model,
                                           const VariationalOptions& o)
    : model_(std::move(model)), opt_(o) {}

VariationalInference::~VariationalInference() = default;

void VariationalInference::to(torch::ScalarType dtype) {
  model_->to(dtype);
  dtype_ = dtype;
}

void VariationalInference::to_device(const torch::Device& device) {
  WHVI_CHECK(device.is_cpu() || !opt_.fused, "training.engine fused runs on the CPU (training.device ", device.str(),
             "); set training.engine: autograd");
  model_->to(device);
  device_ = device;
}

void VariationalInference::begin(int64_t n_train, int64_t, const at::Generator&) {
  n_train_ = n_train;
  // Parameter order: the network's, then the likelihood's.
  auto& lik = model_->likelihood();
  const auto lik_params = lik.parameters();
  params_.clear();
  for (auto& p : model_->parameters())
    if (std::none_of(lik_params.begin(), lik_params.end(), [&](const torch::Tensor& q) { return p.is_same(q); }))
      params_.push_back(p);
  first_lik_ = params_.size();
  params_.insert(params_.end(), lik_params.begin(), lik_params.end());
  optimiser_ = std::make_unique<Optimiser>();
  if (dtype_ == torch::kFloat64)
    optimiser_->d = std::make_unique<optim::FlatOptimizer<double>>(params_, dtype_, opt_.optimiser.rule);
  else
    optimiser_->f = std::make_unique<optim::FlatOptimizer<float>>(params_, dtype_, opt_.optimiser.rule);
  optimiser_->visit([&](auto& a) {
    for (size_t i = first_lik_; i < params_.size(); ++i) a.segment(i).lr_factor = lik.lr_factor();
    return 0;
  });
  fused_.reset();
  WHVI_CHECK(!opt_.fused || opt_.plain_elbo(),
             "training.engine fused computes the plain ELBO; training.kl_warmup and training.kl_weight need "
             "training.engine: autograd (or auto)");
  const bool fused = opt_.fused || (opt_.auto_engine && opt_.plain_elbo() && device_.is_cpu() &&
                                    fused_unsupported(*model_).empty());
  if (fused) fused_ = std::make_unique<FusedStep>(*model_);
  engine_ = fused ? "fused" : "autograd";
}

torch::Tensor VariationalInference::step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t,
                                         const at::Generator& gen) {
  WHVI_ASSERT(optimiser_);
  auto& lik = model_->likelihood();
  if (fused_) {
    double loss = 0;
    optimiser_->visit([&](auto& a) {
      for (size_t i = first_lik_; i < params_.size(); ++i) a.segment(i).frozen = lik.frozen(t);
      a.zero_grad();
      loss = fused_->loss_and_grad(xb, yb, n_train_, opt_.mc_samples, gen);
      a.step(step_size(t));
      return 0;
    });
    return torch::scalar_tensor(loss, torch::kFloat64);
  }
  const auto loss = negative_elbo(*model_, xb, yb, n_train_, opt_.mc_samples, gen, opt_.kl_factor(t));
  optimiser_->visit([&](auto& a) {
    for (size_t i = first_lik_; i < params_.size(); ++i) a.segment(i).frozen = lik.frozen(t);
    a.zero_grad();
    loss.backward();
    a.step(step_size(t));
    return 0;
  });
  return loss;
}

void VariationalInference::zero_grad(int64_t t) {
  WHVI_ASSERT(optimiser_);
  auto& lik = model_->likelihood();
  optimiser_->visit([&](auto& a) {
    for (size_t i = first_lik_; i < params_.size(); ++i) a.segment(i).frozen = lik.frozen(t);
    a.zero_grad();
    return 0;
  });
}

void VariationalInference::apply(int64_t t) {
  WHVI_ASSERT(optimiser_);
  optimiser_->visit([&](auto& a) {
    a.step(step_size(t));
    return 0;
  });
}

double VariationalInference::step_size(int64_t t) const {
  return learning_rate(opt_.lr, opt_.lr_gamma, opt_.lr_power, t);
}

double VariationalInference::kl_value() {
  torch::NoGradGuard ng;
  return model_->kl().item<double>();
}

double VariationalInference::max_abs_param() const {
  WHVI_ASSERT(optimiser_);
  return optimiser_->visit([](auto& a) { return a.max_abs_param(); });
}

void VariationalInference::end() {
  // Leave the parameters as ordinary tensors (the flat buffers go away).
  torch::NoGradGuard ng;
  for (auto& p : params_) {
    p.set_data(p.detach().clone());
    p.mutable_grad() = torch::Tensor();
  }
  optimiser_.reset();
  fused_.reset();
  params_.clear();
  if (!device_.is_cpu()) {
    model_->to(torch::kCPU);
    device_ = torch::kCPU;
  }
}

// Export: S copies of the rows, every row its own draw (models/export.h).
std::string VariationalInference::export_onnx(onnx::Graph& g, const std::string& x, int64_t S, std::string& why) {
  return models::export_samples(g, *model_, x, S, why);
}

torch::Tensor VariationalInference::predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) {
  return predict_with(*model_, x, S, gen);
}

torch::Tensor VariationalInference::mean_standardized(const torch::Tensor& x) {
  torch::NoGradGuard ng;
  return model_->forward_standardized(x.to(model_->parameters().front().scalar_type()), models::Mode::kMean);
}

int64_t VariationalInference::num_params() const { return model_->num_params(); }

NamedTensors VariationalInference::state() {
  NamedTensors out;
  for (const auto& p : model_->named_parameters()) out.emplace_back(p.key(), p.value());
  // buffers: batch normalisation's running statistics, fixed random features
  for (const auto& b : model_->named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

namespace {
std::unique_ptr<Inference> make_variational(const NetworkMaker& make_network, const VariationalOptions& o) {
  return std::make_unique<VariationalInference>(make_network(), o);
}
}  // namespace

MethodKind variational_method() {
  return method_kind("variational", make_variational,
                     Capabilities().with_fused_step().with_weighted_kl().trains(Capabilities::Trunks::kAll).as_member());
}

}  // namespace whvi::infer
