#include "train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "optim/flat_adam.h"

namespace whvi::train {
namespace {


// Throws the divergence error for `label` at step t.
[[noreturn]] void diverged(const std::string& label, int64_t t, const std::string& what,
                           const config::Config& cfg) {
  throw Error(detail::concat(label, ": training diverged at step ", t, ": ", what,
                             ". Most likely cause: ", divergence_suspects(cfg),
                             ". Lower the learning rate (or restore those settings) and run again; "
                             "nothing was written for this split"));
}

template <class T>
TrainStats train_impl(models::RegressionModel& model, const torch::Tensor& x_in,
                      const torch::Tensor& y_in, const config::Config& cfg, const at::Generator& gen,
                      const std::string& label) {
  const auto dtype = std::is_same_v<T, float> ? torch::kFloat32 : torch::kFloat64;
  const auto x = x_in.to(dtype).contiguous();
  const auto y = y_in.to(dtype).contiguous();
  const int64_t N = x.size(0);
  WHVI_CHECK(N > 0, "training: the training set is empty");
  const int64_t B = std::min<int64_t>(cfg.get_int("training.batch_size"), N);
  const int64_t S = cfg.get_int("training.mc_samples");
  const int64_t total = cfg.get_int("training.steps_fixed_noise") + cfg.get_int("training.steps");
  const double lr0 = cfg.get_float("training.lr"), gamma = cfg.get_float("training.lr_gamma"),
               power = cfg.get_float("training.lr_power");
  const int64_t log_every = cfg.get_int("training.log_every");
  const bool tty = ::isatty(STDERR_FILENO);

  // Parameter order: the network's, then the likelihood's (which have their
  // own learning-rate factor and are frozen while the likelihood says so).
  auto& lik = model.likelihood();
  const auto lik_params = lik.parameters();
  std::vector<torch::Tensor> params;
  for (auto& p : model.parameters())
    if (std::none_of(lik_params.begin(), lik_params.end(), [&](const torch::Tensor& q) { return p.is_same(q); }))
      params.push_back(p);
  const size_t first_lik = params.size();
  params.insert(params.end(), lik_params.begin(), lik_params.end());
  optim::FlatAdam<T> adam(params, dtype);
  for (size_t i = first_lik; i < params.size(); ++i) adam.segment(i).lr_factor = lik.lr_factor();

  constexpr double kMaxAbsParam = 1e6;
  constexpr int64_t kCheckEvery = 100;
  torch::Tensor perm = torch::randperm(N, gen, torch::kInt64);
  int64_t pos = 0;
  TrainStats st;
  const auto t0 = std::chrono::steady_clock::now();
  auto last_print = t0;
  double loss_value = std::nan("");
  for (int64_t t = 0; t < total; ++t) {
    for (size_t i = first_lik; i < params.size(); ++i) adam.segment(i).frozen = lik.frozen(t);
    if (pos + B > N) {
      perm = torch::randperm(N, gen, torch::kInt64);
      pos = 0;
    }
    const auto idx = perm.narrow(0, pos, B);
    pos += B;
    const auto loss = negative_elbo(model, x.index_select(0, idx), y.index_select(0, idx), N, S, gen);
    adam.zero_grad();
    loss.backward();
    const double lr = learning_rate(lr0, gamma, power, t);
    adam.step(lr);
    st.final_lr = lr;

    const bool last = t + 1 == total;
    const bool log_line = (t + 1) % log_every == 0 || last;
    const auto now = std::chrono::steady_clock::now();
    const bool progress = tty && std::chrono::duration<double>(now - last_print).count() > 0.25;
    if (log_line || progress || (t + 1) % kCheckEvery == 0) {
      loss_value = loss.template item<double>();
      if (!std::isfinite(loss_value))
        diverged(label, t + 1, detail::concat("the loss is ", loss_value), cfg);
      const double max_abs = adam.max_abs_param();
      if (!(max_abs <= kMaxAbsParam))
        diverged(label, t + 1, detail::concat("a parameter reached magnitude ", max_abs), cfg);
      const double secs = std::chrono::duration<double>(now - t0).count();
      const double rate = (t + 1) / std::max(secs, 1e-9);
      if (progress && !log_line) {
        std::fprintf(stderr, "\r%s step %lld/%lld  -ELBO %.4g  lr %.3g  %.0f steps/s   ", label.c_str(),
                     static_cast<long long>(t + 1), static_cast<long long>(total), loss_value, lr, rate);
        last_print = now;
      } else if (log_line) {
        if (tty) std::fprintf(stderr, "\r%*s\r", 100, "");
        spdlog::info("{} step {}/{}  -ELBO {:.5g}  {}  lr {:.3g}  {:.0f} steps/s", label, t + 1, total,
                     loss_value, lik.log_text(), lr, rate);
      }
    }
  }
  st.steps = total;
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.steps_per_second = total / std::max(st.seconds, 1e-9);
  st.final_loss = loss_value;
  // Leave the parameters as ordinary tensors (the flat buffers go away).
  torch::NoGradGuard ng;
  for (auto& p : params) {
    p.set_data(p.detach().clone());
    p.mutable_grad() = torch::Tensor();
  }
  // Final health checks: an exploded likelihood parameter (the Gaussian's
  // noise variance) or a fit far worse than the constant predictor is
  // divergence, not a result.
  if (const auto problem = lik.health_problem()) diverged(label, total, *problem, cfg);
  const int64_t n_fit = std::min<int64_t>(N, 2048);
  const auto fit = model.forward_standardized(x.narrow(0, 0, n_fit), models::Mode::kMean);
  const double fit_rmse = (fit - y.narrow(0, 0, n_fit)).square().mean().sqrt().template item<double>();
  if (!(fit_rmse <= 10.0))
    diverged(label, total,
             detail::concat("the mean network's training RMSE is ", fit_rmse,
                            " standard deviations of the targets (a constant predictor has 1)"),
             cfg);
  return st;
}

}  // namespace

double learning_rate(double lr0, double gamma, double power, int64_t t) {
  return lr0 * std::pow(1.0 + gamma * static_cast<double>(t), -power);
}

torch::Tensor negative_elbo(models::RegressionModel& model, const torch::Tensor& xb_in, const torch::Tensor& yb_in,
                            int64_t n_train, int64_t S, const at::Generator& gen) {
  const int64_t B = xb_in.size(0);
  const auto xb = S > 1 ? xb_in.repeat({S, 1}) : xb_in;
  const auto yb = S > 1 ? yb_in.repeat({S}) : yb_in;
  const auto f = model.forward_standardized(xb, models::Mode::kSample, gen);
  // sum of -log p over the batch and samples, times N / (B S)
  const auto nll = model.likelihood().nll_sum(f, yb);
  const double scale = static_cast<double>(n_train) / static_cast<double>(B) / static_cast<double>(S);
  return scale * nll + model.kl();
}

std::string divergence_suspects(const config::Config& cfg) {
  std::ostringstream os;
  os << "training.lr = " << cfg.get_float("training.lr") << " (default "
     << config::find_param("training.lr")->def << ")";
  for (const auto& p : config::schema()) {
    if (p.type != config::Type::kFloat || p.key == "training.lr") continue;
    if (p.key.rfind("model.", 0) != 0 && p.key.rfind("likelihood.", 0) != 0 &&
        p.key.rfind("training.", 0) != 0)
      continue;
    const double d = std::strtod(p.def.c_str(), nullptr), v = cfg.get_float(p.key);
    if (d == 0 || v == d) continue;
    const double r = std::fabs(v / d);
    if (r > 10 || r < 0.1)
      os << ", " << p.key << " = " << v << " (default " << p.def << ")";
  }
  return os.str();
}

TrainStats train_regression(models::RegressionModel& model, const torch::Tensor& x,
                            const torch::Tensor& y, const config::Config& cfg,
                            const at::Generator& gen, const std::string& label) {
  if (cfg.get_string("training.dtype") == "float64") {
    model.to(torch::kFloat64);
    return train_impl<double>(model, x, y, cfg, gen, label);
  }
  model.to(torch::kFloat32);
  return train_impl<float>(model, x, y, cfg, gen, label);
}

torch::Tensor predict_samples(models::RegressionModel& model, const torch::Tensor& x_in, int64_t S,
                              const at::Generator& gen) {
  torch::NoGradGuard ng;
  const auto dtype = model.parameters().front().scalar_type();
  const auto x = x_in.to(dtype).contiguous();
  const int64_t N = x.size(0);
  auto out = torch::empty({S, N}, torch::kFloat64);
  if (N == 0) return out;
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 17) / N);
  for (int64_t s = 0; s < S; s += chunk) {
    const int64_t c = std::min(chunk, S - s);
    auto f = model.forward_standardized(c == 1 ? x : x.repeat({c, 1}), models::Mode::kSample, gen);
    out.narrow(0, s, c).copy_(model.likelihood().to_original(f.view({c, N})));
  }
  return out;
}

double noise_var_original(models::RegressionModel& model) { return model.likelihood().noise_var_original(); }

}  // namespace whvi::train
