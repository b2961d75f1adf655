// Batched splits: see batched.h.
#include "train/batched.h"

#include <chrono>
#include <cmath>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "infer/variational.h"

namespace whvi::train {

std::string batched_unsupported(const GroupPlan& plan, infer::Inference& example) {
  const auto& b = plan.batched;
  if (b.evaluation_every > 0)
    return "training.batched_splits: learning curves (evaluation.every) are taken one split at a time; set "
           "evaluation.every: 0 or training.batched_splits: 1";
  if (b.augment)
    return "training.batched_splits: data.augment is for image data, which is not batched over splits; set "
           "training.batched_splits: 1";
  if (!example.split_step())
    return "training.batched_splits: model.kind " + b.model_kind + " is trained by " +
           example.method() + ", not variational inference; batched splits support " +
           models::model_kinds_with(&models::LayerKind::batched_when, "variational") + "; set "
           "training.batched_splits: 1";
  if (!plan.plain_elbo)
    return "training.batched_splits: training.kl_warmup and training.kl_weight are applied one split at a time; set "
           "training.batched_splits: 1";
  if (!likelihoods::likelihood_can(b.likelihood, likelihoods::Capability::kBatchedSplits))
    return "training.batched_splits: likelihood.kind " + b.likelihood +
           " is not batched over splits (supported: " + likelihoods::likelihoods_that(likelihoods::Capability::kBatchedSplits) +
           "); set training.batched_splits: 1";
  return models::group_unsupported(example.model());
}

torch::Tensor group_objective(const std::vector<models::RegressionModel*>& models, const torch::Tensor& xb_in,
                              const torch::Tensor& yb_in, const std::vector<int64_t>& n_train, int64_t M,
                              const std::vector<at::Generator>& gens) {
  const int64_t S = xb_in.size(0), B = xb_in.size(1);
  WHVI_ASSERT(static_cast<int64_t>(models.size()) == S && static_cast<int64_t>(n_train.size()) == S);
  const auto xb = M > 1 ? xb_in.repeat({1, M, 1}) : xb_in;
  const auto yb = M > 1 ? yb_in.repeat({1, M}) : yb_in;
  std::vector<double> scale(S);
  for (int64_t s = 0; s < S; ++s)
    scale[s] = static_cast<double>(n_train[s]) / static_cast<double>(B) / static_cast<double>(M);
  std::vector<likelihoods::Likelihood*> liks;
  for (auto* m : models) liks.push_back(&m->likelihood());
  torch::Tensor kl;
  const auto f = models::forward_group(models, xb, models::Mode::kSample, gens, &kl);
  const auto nll = liks.front()->nll_sum_group(liks, f, yb);
  return torch::tensor(scale, torch::TensorOptions().dtype(f.scalar_type())) * nll + kl;
}

namespace {

constexpr double kMaxAbsParam = 1e6;
constexpr int64_t kCheckEvery = 100;

// The state of one group's training: every split's rows in one table, its own
// permutation of them, and whether it is still alive.
class GroupTrainer {
 public:
  GroupTrainer(std::vector<SplitTask>& tasks, const GroupPlan& plan)
      : tasks_(tasks), plan_(plan), o_(plan.loop.options), S_(static_cast<int64_t>(tasks.size())) {
    n_.resize(S_);
    offset_.resize(S_);
    int64_t rows = 0;
    for (int64_t s = 0; s < S_; ++s) {
      auto& t = tasks_[s];
      const auto why = batched_unsupported(plan_, *t.inference);
      WHVI_CHECK(why.empty(), why);
      t.inference->to(o_.dtype);
      steps_.push_back(t.inference->split_step());
      models_.push_back(&t.inference->model());
      gens_.push_back(t.gen);
      xs_.push_back(t.x.to(o_.dtype).contiguous());
      ys_.push_back(t.y.to(o_.dtype).contiguous());
      n_[s] = xs_.back().size(0);
      WHVI_CHECK(n_[s] > 0, t.label, ": the training set is empty");
      const int64_t b = std::min<int64_t>(o_.batch_size, n_[s]);
      WHVI_CHECK(B_ < 0 || b == B_, "training.batched_splits: split '", t.label, "' has ", n_[s],
                 " training rows, fewer than training.batch_size = ", o_.batch_size,
                 ", so its mini-batches differ in size from the others'; lower training.batch_size or set "
                 "training.batched_splits: 1");
      B_ = b;
      offset_[s] = rows;
      rows += n_[s];
      t.inference->begin(n_[s], o_.total_steps, t.gen);
    }
    x_all_ = torch::cat(xs_);
    y_all_ = torch::cat(ys_);
    for (int64_t s = 0; s < S_; ++s) perm_.push_back(torch::randperm(n_[s], gens_[s], torch::kInt64));
    pos_.assign(S_, 0);
    alive_.assign(S_, true);
    n_alive_ = S_;
    label_ = tasks_.front().label + (S_ > 1 ? " (+" + std::to_string(S_ - 1) + " batched)" : "");
  }

  void run() {
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t total = o_.total_steps;
    for (int64_t t = 0; t < total && n_alive_ > 0; ++t) {
      const auto loss = step(t);
      const bool log_line = (t + 1) % o_.log_every == 0 || t + 1 == total;
      if (log_line || (t + 1) % kCheckEvery == 0) check(t, loss, log_line, t0);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int64_t s = 0; s < S_; ++s) finish(s, secs);
  }

 private:
  // One step of every live split on its next mini-batch; returns the splits'
  // negative ELBOs [S].
  torch::Tensor step(int64_t t) {
    std::vector<torch::Tensor> idx(S_);
    for (int64_t s = 0; s < S_; ++s) {
      if (pos_[s] + B_ > n_[s]) {
        perm_[s] = torch::randperm(n_[s], gens_[s], torch::kInt64);
        pos_[s] = 0;
      }
      idx[s] = perm_[s].narrow(0, pos_[s], B_) + offset_[s];
      pos_[s] += B_;
    }
    const int64_t D = x_all_.size(1), M = steps_.front()->mc_samples();
    const auto index = torch::cat(idx);
    const auto xb = x_all_.index_select(0, index).view({S_, B_, D});
    const auto yb = y_all_.index_select(0, index).view({S_, B_});
    auto loss = group_objective(models_, xb, yb, n_, M, gens_);  // [S]: each split's negative ELBO
    for (int64_t s = 0; s < S_; ++s)
      if (alive_[s]) steps_[s]->zero_grad(t);
    if (n_alive_ == S_) {
      loss.sum().backward();
    } else {
      std::vector<int64_t> keep;
      for (int64_t s = 0; s < S_; ++s)
        if (alive_[s]) keep.push_back(s);
      loss.index_select(0, torch::tensor(keep, torch::kInt64)).sum().backward();
    }
    for (int64_t s = 0; s < S_; ++s)
      if (alive_[s]) steps_[s]->apply(t);
    return loss;
  }

  // The divergence checks after step t (and the log line).
  void check(int64_t t, const torch::Tensor& loss, bool log_line, std::chrono::steady_clock::time_point t0) {
    const auto lv = loss.detach().to(torch::kFloat64).contiguous();
    const double* l = lv.data_ptr<double>();
    for (int64_t s = 0; s < S_; ++s) {
      if (!alive_[s]) continue;
      tasks_[s].stats.final_loss = l[s];
      if (!std::isfinite(l[s])) fail(s, t + 1, detail::concat("the loss is ", l[s]));
      const double max_abs = tasks_[s].inference->max_abs_param();
      if (!(max_abs <= kMaxAbsParam)) fail(s, t + 1, detail::concat("a parameter reached magnitude ", max_abs));
    }
    if (!log_line) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double mean = 0;
    for (int64_t s = 0; s < S_; ++s)
      if (alive_[s]) mean += l[s] / static_cast<double>(n_alive_);
    spdlog::info("{} step {}/{}  mean -ELBO {:.5g} over {} split(s)  lr {:.3g}  {:.4g} steps/s", label_, t + 1,
                 o_.total_steps, mean, n_alive_, tasks_.front().inference->step_size(t),
                 (t + 1) / std::max(secs, 1e-9));
  }

  // Split s's statistics, its method's end() and the final health checks.
  void finish(int64_t s, double secs) {
    const int64_t total = o_.total_steps;
    auto& st = tasks_[s].stats;
    st.steps = total;
    st.seconds = secs;
    st.steps_per_second = total / std::max(secs, 1e-9);
    st.final_lr = tasks_[s].inference->step_size(std::max<int64_t>(total - 1, 0));
    tasks_[s].inference->end();
    if (!alive_[s]) return;
    auto& lik = tasks_[s].inference->likelihood();
    if (const auto problem = lik.health_problem()) {
      fail(s, total, *problem);
      return;
    }
    const int64_t n_fit = std::min<int64_t>(n_[s], 2048);
    const auto fit = tasks_[s].inference->mean_standardized(xs_[s].narrow(0, 0, n_fit));
    if (const auto problem = lik.fit_problem(fit, ys_[s].narrow(0, 0, n_fit))) fail(s, total, *problem);
  }

  void fail(int64_t s, int64_t t, const std::string& what) {
    if (!alive_[s]) return;
    tasks_[s].error = divergence_message(tasks_[s].label, t, what, plan_.loop.suspects);
    spdlog::error("{}", *tasks_[s].error);
    alive_[s] = false;
    --n_alive_;
  }

  std::vector<SplitTask>& tasks_;
  const GroupPlan& plan_;
  const LoopOptions o_;
  const int64_t S_;
  int64_t B_ = -1, n_alive_ = 0;
  std::vector<infer::SplitStep*> steps_;
  std::vector<models::RegressionModel*> models_;
  std::vector<at::Generator> gens_;
  std::vector<torch::Tensor> xs_, ys_, perm_;
  torch::Tensor x_all_, y_all_;
  std::vector<int64_t> n_, offset_, pos_;
  std::vector<bool> alive_;
  std::string label_;
};

}  // namespace

void train_group(std::vector<SplitTask>& tasks, const GroupPlan& plan) {
  WHVI_ASSERT(!tasks.empty());
  GroupTrainer(tasks, plan).run();
}

}  // namespace whvi::train
