// Batched splits: see batched.h.
#include "train/batched.h"

#include <chrono>
#include <cmath>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "infer/variational.h"

namespace whvi::train {

std::string batched_unsupported(const config::Config& cfg, infer::Inference& example) {
  if (cfg.get_int("evaluation.every") > 0)
    return "training.batched_splits: learning curves (evaluation.every) are taken one split at a time; set "
           "evaluation.every: 0 or training.batched_splits: 1";
  if (cfg.get_bool("data.augment"))
    return "training.batched_splits: data.augment is for image data, which is not batched over splits; set "
           "training.batched_splits: 1";
  if (!dynamic_cast<infer::VariationalInference*>(&example))
    return "training.batched_splits: model.kind " + cfg.get_string("model.kind") + " is trained by " +
           example.method() + ", not variational inference; batched splits support whvi, mfg and mcd; set "
           "training.batched_splits: 1";
  if (!infer::VariationalOptions::from(cfg).plain_elbo())
    return "training.batched_splits: training.kl_warmup and training.kl_weight are applied one split at a time; set "
           "training.batched_splits: 1";
  if (cfg.get_string("likelihood.kind") != "gaussian")
    return "training.batched_splits: likelihood.kind " + cfg.get_string("likelihood.kind") +
           " is not batched over splits (supported: gaussian); set training.batched_splits: 1";
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

void train_group(std::vector<SplitTask>& tasks, const config::Config& cfg) {
  WHVI_ASSERT(!tasks.empty());
  const auto o = LoopOptions::from(cfg);
  const int64_t S = static_cast<int64_t>(tasks.size());
  std::vector<infer::VariationalInference*> vi;
  std::vector<models::RegressionModel*> models;
  std::vector<likelihoods::Likelihood*> liks;
  std::vector<at::Generator> gens;
  std::vector<torch::Tensor> xs, ys;
  std::vector<int64_t> n(S), offset(S);
  const int64_t total = o.total_steps;
  int64_t B = -1, rows = 0;
  for (int64_t s = 0; s < S; ++s) {
    auto& t = tasks[s];
    const auto why = batched_unsupported(cfg, *t.inference);
    WHVI_CHECK(why.empty(), why);
    t.inference->to(o.dtype);
    vi.push_back(dynamic_cast<infer::VariationalInference*>(t.inference));
    models.push_back(&t.inference->model());
    liks.push_back(&t.inference->likelihood());
    gens.push_back(t.gen);
    xs.push_back(t.x.to(o.dtype).contiguous());
    ys.push_back(t.y.to(o.dtype).contiguous());
    n[s] = xs.back().size(0);
    WHVI_CHECK(n[s] > 0, t.label, ": the training set is empty");
    const int64_t b = std::min<int64_t>(o.batch_size, n[s]);
    WHVI_CHECK(B < 0 || b == B, "training.batched_splits: split '", t.label, "' has ", n[s],
               " training rows, fewer than training.batch_size = ", o.batch_size,
               ", so its mini-batches differ in size from the others'; lower training.batch_size or set "
               "training.batched_splits: 1");
    B = b;
    offset[s] = rows;
    rows += n[s];
    t.inference->begin(n[s], total, t.gen);
  }
  const auto x_all = torch::cat(xs), y_all = torch::cat(ys);
  const int64_t D = x_all.size(1), M = vi.front()->mc_samples();

  constexpr double kMaxAbsParam = 1e6;
  constexpr int64_t kCheckEvery = 100;
  std::vector<torch::Tensor> perm(S);
  std::vector<int64_t> pos(S, 0);
  for (int64_t s = 0; s < S; ++s) perm[s] = torch::randperm(n[s], gens[s], torch::kInt64);
  std::vector<bool> alive(S, true);
  int64_t n_alive = S;
  const std::string group_label = tasks.front().label + (S > 1 ? " (+" + std::to_string(S - 1) + " batched)" : "");
  auto t0 = std::chrono::steady_clock::now();
  torch::Tensor loss_vec;
  auto fail = [&](int64_t s, int64_t t, const std::string& what) {
    if (!alive[s]) return;
    tasks[s].error = divergence_message(tasks[s].label, t, what, cfg);
    spdlog::error("{}", *tasks[s].error);
    alive[s] = false;
    --n_alive;
  };
  for (int64_t t = 0; t < total && n_alive > 0; ++t) {
    std::vector<torch::Tensor> idx(S);
    for (int64_t s = 0; s < S; ++s) {
      if (pos[s] + B > n[s]) {
        perm[s] = torch::randperm(n[s], gens[s], torch::kInt64);
        pos[s] = 0;
      }
      idx[s] = perm[s].narrow(0, pos[s], B) + offset[s];
      pos[s] += B;
    }
    const auto index = torch::cat(idx);
    const auto xb = x_all.index_select(0, index).view({S, B, D});
    const auto yb = y_all.index_select(0, index).view({S, B});
    loss_vec = group_objective(models, xb, yb, n, M, gens);  // [S]: each split's negative ELBO
    for (int64_t s = 0; s < S; ++s)
      if (alive[s]) vi[s]->zero_grad(t);
    if (n_alive == S) {
      loss_vec.sum().backward();
    } else {
      std::vector<int64_t> keep;
      for (int64_t s = 0; s < S; ++s)
        if (alive[s]) keep.push_back(s);
      loss_vec.index_select(0, torch::tensor(keep, torch::kInt64)).sum().backward();
    }
    for (int64_t s = 0; s < S; ++s)
      if (alive[s]) vi[s]->apply(t);

    const bool last = t + 1 == total;
    const bool log_line = (t + 1) % o.log_every == 0 || last;
    if (log_line || (t + 1) % kCheckEvery == 0) {
      const auto lv = loss_vec.detach().to(torch::kFloat64).contiguous();
      const double* l = lv.data_ptr<double>();
      for (int64_t s = 0; s < S; ++s) {
        if (!alive[s]) continue;
        tasks[s].stats.final_loss = l[s];
        if (!std::isfinite(l[s])) fail(s, t + 1, detail::concat("the loss is ", l[s]));
        const double max_abs = vi[s]->max_abs_param();
        if (!(max_abs <= kMaxAbsParam)) fail(s, t + 1, detail::concat("a parameter reached magnitude ", max_abs));
      }
      if (log_line) {
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double mean = 0;
        for (int64_t s = 0; s < S; ++s)
          if (alive[s]) mean += l[s] / static_cast<double>(n_alive);
        spdlog::info("{} step {}/{}  mean -ELBO {:.5g} over {} split(s)  lr {:.3g}  {:.4g} steps/s", group_label,
                     t + 1, total, mean, n_alive, vi.front()->step_size(t), (t + 1) / std::max(secs, 1e-9));
      }
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int64_t s = 0; s < S; ++s) {
    auto& st = tasks[s].stats;
    st.steps = total;
    st.seconds = secs;
    st.steps_per_second = total / std::max(secs, 1e-9);
    st.final_lr = vi[s]->step_size(std::max<int64_t>(total - 1, 0));
    tasks[s].inference->end();
    if (!alive[s]) continue;
    auto& lik = *liks[s];
    if (const auto problem = lik.health_problem()) {
      fail(s, total, *problem);
      continue;
    }
    const int64_t n_fit = std::min<int64_t>(n[s], 2048);
    const auto fit = tasks[s].inference->mean_standardized(xs[s].narrow(0, 0, n_fit));
    if (const auto problem = lik.fit_problem(fit, ys[s].narrow(0, 0, n_fit))) fail(s, total, *problem);
  }
}

}  // namespace whvi::train
