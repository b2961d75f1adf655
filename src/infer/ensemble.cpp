// Deep ensembles (Lakshminarayanan, Pritzel & Blundell 2017) on the inference
// seam: ensemble.members networks of the run's config, each initialised from
// its own draws (the run's initialisation stream, member after member), trained
// side by side, predicting with the uniform mixture of the members.
//
//  - model.kind ensemble: deterministic networks ("linear" layers), each fit
//    on its own negative log likelihood, (N/B) Σ_batch -log p(y | f_m(x)),
//    plus, with ensemble.prior, the weights' Gaussian prior (a MAP fit).
//  - inference.kind ensemble with a variational model.kind (whvi, mfg, ...):
//    each member minimises its own negative ELBO.
//
// Choices where the paper leaves room, documented in docs/modelling.md:
//  - Every member sees the same mini-batches (the training loop owns the
//    batches); the members differ by their initial values (and, for variational
//    members, their draws). The paper shuffles per member, and found
//    initialisation alone enough.
//  - Regression: the members share one Gaussian noise variance (the first
//    member's likelihood, optimised on the sum of the members' NLLs with the
//    likelihood's schedule), so the predictive is exactly the uniform mixture
//    (1/M) Σ_m N(y; f_m(x), σ²) that the metrics score. The paper's members
//    predict their own variance: likelihood.kind hetero-gaussian where it exists.
//  - No adversarial training (the paper's optional extra).
//
// The members' objectives are independent but for the shared noise, so one
// Adam over all of them (per-coordinate updates) equals training each alone.
// Prediction: a deterministic member gives one sample; variational members
// give ceil(S / M) each, so every member has the same weight in the mixture.
#include <cmath>

#include "common/errors.h"
#include "infer/inference.h"
#include "infer/map_fit.h"
#include "infer/variational.h"
#include "models/export.h"
#include "optim/flat_optimizer.h"

namespace whvi::infer {
namespace {

struct EnsembleOptions {
  int64_t members = 5;
  bool prior = false;
  template <class V>
  void visit(V& v) {
    v.num("ensemble.members", members, 1, 1000, "networks in a deep ensemble (Lakshminarayanan et al. 2017: 5), each initialised from its own draws; the predictive is their uniform mixture");
    v.acts_only_when("plan.method", {"ensemble"});
    v.flag("ensemble.prior", prior, "deterministic members (model.kind ensemble): add the weights' Gaussian prior (model.sghmc.prior_var) to each member's NLL, a MAP fit; off = the NLL alone, as the paper");
    v.acts_only_when("plan.method", {"ensemble"});
  }
};

// The ensemble's options and its members' optimiser's (training.*, declared
// by the variational method).
struct EnsembleAndOptimiser {
  EnsembleOptions ensemble;
  VariationalOptions optimiser;
  template <class V>
  void visit(V& v) {
    ensemble.visit(v);
    v.part(optimiser);
  }
};

// A member is deterministic when its network draws nothing: linear layers only, no trunk.
bool deterministic(const models::RegressionModel& m) {
  if (m.has_trunk()) return false;
  for (const auto& l : m.layers())
    if (l->kind() != "linear") return false;
  return true;
}

class Ensemble : public Inference {
 public:
  Ensemble(std::vector<std::shared_ptr<models::RegressionModel>> members, const VariationalOptions& vo,
           const EnsembleOptions& eo)
      : members_(std::move(members)), vo_(vo), eo_(eo), deterministic_(deterministic(*members_.front())) {}

  void to(torch::ScalarType dtype) override {
    for (auto& m : members_) m->to(dtype);
    dtype_ = dtype;
  }

  void to_device(const torch::Device& device) override {
    for (auto& m : members_) m->to(device);
    device_ = device;
  }

  void begin(int64_t n_train, int64_t, const at::Generator&) override {
    n_train_ = n_train;
    auto& lik = likelihood();
    const auto lik_params = lik.parameters();
    params_.clear();
    for (auto& member : members_) {
      const auto own = member->likelihood().parameters();
      for (auto& p : member->parameters())
        if (std::none_of(own.begin(), own.end(), [&](const torch::Tensor& q) { return p.is_same(q); }))
          params_.push_back(p);
    }
    first_lik_ = params_.size();
    params_.insert(params_.end(), lik_params.begin(), lik_params.end());
      if (dtype_ == torch::kFloat64)
      opt_d_ = std::make_unique<optim::FlatOptimizer<double>>(params_, dtype_, vo_.optimiser.rule);
    else
      opt_f_ = std::make_unique<optim::FlatOptimizer<float>>(params_, dtype_, vo_.optimiser.rule);
    visit([&](auto& a) {
      for (size_t i = first_lik_; i < params_.size(); ++i) a.segment(i).lr_factor = lik.lr_factor();
      return 0;
    });
  }

  torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) override {
    auto& lik = likelihood();
    const int64_t S = deterministic_ ? 1 : vo_.mc_samples;
    const int64_t B = xb.size(0);
    const auto xs = S > 1 ? xb.repeat({S, 1}) : xb;
    const auto ys = S > 1 ? yb.repeat({S}) : yb;
    const double scale = static_cast<double>(n_train_) / static_cast<double>(B) / static_cast<double>(S);
    const bool with_kl = !deterministic_ || eo_.prior;
    torch::Tensor total;
    for (auto& member : members_) {
      models::ForwardCtx ctx;
      ctx.mode = models::Mode::kSample;
      ctx.gen = gen;
      ctx.draws = S;
      ctx.training = true;
      const auto f = member->forward_standardized(xs, ctx);
      auto loss = scale * lik.nll_sum(f, ys);
      const double w = vo_.kl_factor(t);  // training.kl_warmup, training.kl_weight (1: the ELBO, its exact operations)
      if (with_kl) loss = loss + (w == 1.0 ? member->kl() : w * member->kl());
      if (ctx.mc_kl.defined()) loss = loss + (w == 1.0 ? ctx.mc_kl : w * ctx.mc_kl);
      total = total.defined() ? total + loss : loss;
    }
    visit([&](auto& a) {
      for (size_t i = first_lik_; i < params_.size(); ++i) a.segment(i).frozen = lik.frozen(t);
      a.zero_grad();
      total.backward();
      a.step(step_size(t));
      return 0;
    });
    // the log shows the members' mean objective
    return total.detach() / static_cast<double>(members_.size());
  }

  double step_size(int64_t t) const override { return learning_rate(vo_.lr, vo_.lr_gamma, vo_.lr_power, t); }

  double max_abs_param() const override {
    return const_cast<Ensemble*>(this)->visit([](auto& a) { return a.max_abs_param(); });
  }

  void end() override {
    torch::NoGradGuard ng;
    for (auto& p : params_) {
      p.set_data(p.detach().clone());
      p.mutable_grad() = torch::Tensor();
    }
    opt_f_.reset();
    opt_d_.reset();
    params_.clear();
    if (!device_.is_cpu()) {
      for (auto& m : members_) m->to(torch::kCPU);
      device_ = torch::kCPU;
    }
  }

  bool predicts_concurrently() const override { return true; }  // no state changes
  // members without draws (MAP networks) give every row the same prediction alone or in a block
  bool draws_weights_only() const override { return deterministic_; }
  torch::Tensor predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) override {
    const int64_t M = static_cast<int64_t>(members_.size());
    const int64_t k = deterministic_ ? 1 : (std::max<int64_t>(S, 1) + M - 1) / M;
    std::vector<torch::Tensor> parts;
    for (auto& member : members_) parts.push_back(predict_with(*member, x, k, gen));
    return torch::cat(parts, 0);
  }

  // Export: each member's share of the S samples as predict() draws them, concatenated.
  std::string export_onnx(onnx::Graph& g, const std::string& x, int64_t S, std::string& why) override {
    const int64_t M = static_cast<int64_t>(members_.size());
    const int64_t k = deterministic_ ? 1 : (std::max<int64_t>(S, 1) + M - 1) / M;
    std::vector<std::string> parts;
    for (auto& member : members_) {
      parts.push_back(models::export_samples(g, *member, x, k, why));
      if (parts.back().empty()) return "";
    }
    return parts.size() == 1 ? parts[0] : g.op("Concat", parts, {onnx::Attr::integer("axis", 0)});
  }

  torch::Tensor mean_standardized(const torch::Tensor& x) override {
    torch::NoGradGuard ng;
    torch::Tensor sum;
    for (auto& member : members_) {
      const auto f = member->forward_standardized(x.to(member->parameters().front().scalar_type()),
                                                  models::Mode::kMean);
      sum = sum.defined() ? sum + f : f;
    }
    return sum / static_cast<double>(members_.size());
  }

  likelihoods::Likelihood& likelihood() override { return members_.front()->likelihood(); }
  std::vector<likelihoods::Likelihood*> predicting_likelihoods() override {
    std::vector<likelihoods::Likelihood*> out;
    for (auto& member : members_) out.push_back(&member->likelihood());
    return out;
  }

  int64_t num_params() const override {
    int64_t n = 0;
    for (size_t m = 0; m < members_.size(); ++m) {
      n += members_[m]->num_params();
      if (m > 0)
        for (const auto& p : members_[m]->likelihood().parameters()) n -= p.numel();
    }
    return n;
  }

  NamedTensors state() override {
    NamedTensors out;
    for (size_t m = 0; m < members_.size(); ++m) {
      const std::string prefix = "member" + std::to_string(m) + ".";
      for (const auto& p : members_[m]->named_parameters()) out.emplace_back(prefix + p.key(), p.value());
      for (const auto& b : members_[m]->named_buffers()) out.emplace_back(prefix + b.key(), b.value());
    }
    return out;
  }

  const char* method() const override { return "ensemble"; }
  models::RegressionModel& model() override { return *members_.front(); }
  int64_t members() const { return static_cast<int64_t>(members_.size()); }

 private:
  template <class Fn>
  double visit(Fn&& fn) {
    WHVI_ASSERT(opt_f_ || opt_d_);
    return opt_f_ ? fn(*opt_f_) : fn(*opt_d_);
  }

  std::vector<std::shared_ptr<models::RegressionModel>> members_;
  VariationalOptions vo_;
  EnsembleOptions eo_;
  bool deterministic_;
  torch::ScalarType dtype_ = torch::kFloat32;
  torch::Device device_ = torch::kCPU;
  int64_t n_train_ = 0;
  std::vector<torch::Tensor> params_;
  size_t first_lik_ = 0;
  std::unique_ptr<optim::FlatOptimizer<float>> opt_f_;
  std::unique_ptr<optim::FlatOptimizer<double>> opt_d_;
};

}  // namespace

namespace {
std::unique_ptr<Inference> make_ensemble(const NetworkMaker& make_network, const EnsembleAndOptimiser& o) {
  const auto& eo = o.ensemble;
  const auto& vo = o.optimiser;
  WHVI_CHECK(!vo.fused, "training.engine fused: a deep ensemble has no fused step; set training.engine: autograd");
  std::vector<std::shared_ptr<models::RegressionModel>> members;
  for (int64_t m = 0; m < eo.members; ++m) members.push_back(make_network());
  return std::make_unique<Ensemble>(std::move(members), vo, eo);
}
}  // namespace

MethodKind ensemble_method() {
  return method_kind("ensemble", make_ensemble,
                     Capabilities().with_weighted_kl().trains(Capabilities::Trunks::kAsMembers).of_members());
}

std::unique_ptr<Inference> make_map_fit(const NetworkMaker& net, const VariationalOptions& vo, bool prior) {
  EnsembleAndOptimiser o;
  o.ensemble.members = 1;
  o.ensemble.prior = prior;
  o.optimiser = vo;
  auto fit = make_ensemble(net, o);
  WHVI_CHECK(deterministic(fit->model()), "a MAP fit (model.kind map, laplace, swag) needs a network of linear layers; set model.output_layer: auto");
  return fit;
}

}  // namespace whvi::infer
