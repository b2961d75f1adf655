#include "train/stopping.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/minimise.h"
#include "common/rng.h"
#include "data/source.h"
#include "likelihoods/likelihood.h"

namespace whvi::train {

bool StoppingOptions::resolve(std::string* why_off) {
  asked = mode == "validation";
  if (mode == "off") return false;
  auto off = [&](const std::string& why) {
    WHVI_CHECK(!asked, "training.stopping validation: ", why, "; set training.stopping: off (or auto)");
    if (why_off) *why_off = why;
    return false;
  };
  const std::string method = inference_kind.empty() || inference_kind == "auto" ? infer::method_of(model_kind) : inference_kind;
  if (infer::capabilities_of(method).keeps_samples)
    return off("SGHMC predicts with the samples it keeps after its burn-in, not with the parameters of one step");
  if (infer::fits_in_closed_form(method)) return off("model.kind " + model_kind + " is fitted in closed form, with no steps to stop");
  if (batched_splits > 1) return off("batched splits (training.batched_splits) train their group to the same step");
  if (device != "cpu")
    return off("the validation rows are measured on the CPU during training, and training.device is " + device);
  if (asked) return true;
  if (dataset.empty() || data::is_benchmark(dataset)) {  // a base config names no data set
    if (why_off) *why_off = "one of the papers' benchmarks keeps its paper's fixed schedule";
    return false;
  }
  return true;
}

int64_t auto_every(int64_t budget) {
  return std::max(kMinEvery, (budget + kMeasurementsPerBudget / 2) / kMeasurementsPerBudget);
}

int64_t StoppingOptions::every_for(int64_t fit_rows) const {
  if (!every_auto || every_epochs <= 0 || batch_size <= 0) return every;
  const int64_t epoch = (std::max<int64_t>(fit_rows, 1) + batch_size - 1) / batch_size;
  return std::min(every, std::max(kMinEvery, every_epochs * epoch));
}

Holdout carve_holdout(int64_t n, double fraction, uint64_t seed, const std::string& fraction_key,
                      const std::string& off) {
  const int64_t n_val = std::max<int64_t>(1, std::llround(fraction * static_cast<double>(n)));
  WHVI_CHECK(n - n_val >= 2, fraction_key, " = ", fraction, " of ", n, " training rows leaves ", n - n_val,
             " to train on (at least 2 are needed); lower it or set ", off);
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  std::mt19937_64 g(seed);
  shuffle(rows, g);
  Holdout h;
  h.validation.assign(rows.end() - n_val, rows.end());
  h.fit.assign(rows.begin(), rows.end() - n_val);
  std::sort(h.fit.begin(), h.fit.end());
  std::sort(h.validation.begin(), h.validation.end());
  return h;
}

ValidationStopping::ValidationStopping(infer::Inference& inf, torch::Tensor x_val, torch::Tensor y_val,
                                       const StoppingOptions& o, at::Generator gen)
    : inf_(inf), x_(std::move(x_val)), y_(std::move(y_val)), o_(o), gen_(std::move(gen)) {}

bool ValidationStopping::measure(int64_t steps) {
  torch::NoGradGuard ng;
  const auto f = inf_.predict(x_, o_.mc_samples, gen_);
  WHVI_CHECK_AS(NonFiniteError, f.isfinite().all().item<bool>(), "the predictions on the stopping rows are not finite");
  const auto m = inf_.likelihood().evaluate(f, y_);
  double nll = std::nan("");
  for (const auto& [key, value] : m.metrics)
    if (key == "mnll") nll = value;
  steps_.push_back(static_cast<double>(steps));
  nll_.push_back(nll);
  if (std::isfinite(nll) && (best_step_ < 0 || nll < best_nll_)) {
    best_nll_ = nll;
    best_step_ = steps;
    since_best_ = 0;
    const auto state = inf_.state();
    best_.clear();
    for (const auto& [key, t] : state) best_.push_back(t.detach().clone());
    return false;
  }
  ++since_best_;
  return since_best_ >= o_.patience && steps >= o_.min_steps;
}

double fit_noise_var(const torch::Tensor& f, const torch::Tensor& y) {
  torch::NoGradGuard ng;
  const auto r2 = (y.to(torch::kFloat64).unsqueeze(0) - f.to(torch::kFloat64)).square();  // [S, N]
  const double log_s = std::log(static_cast<double>(f.size(0)));
  const auto nll = [&](double log_v) {
    const auto lp = -0.5 * (std::log(2 * M_PI) + log_v) - r2 * (0.5 * std::exp(-log_v));
    return -(torch::logsumexp(lp, 0) - log_s).mean().item<double>();
  };
  const double centre = std::log(std::max(r2.mean().item<double>(), 1e-300));
  double best = centre, best_nll = nll(centre);
  for (double d = -14; d <= 4 + 1e-9; d += 0.05)
    if (const double v = nll(centre + d); v < best_nll) best_nll = v, best = centre + d;
  // golden section between the grid point's neighbours (the bracket is below 1e-10 after 43 shrinks)
  const double mid = golden_section_min(nll, best - 0.05, best + 0.05, 60);
  return std::exp(nll(mid) <= best_nll ? mid : best);
}

double fit_sample_temperature(const torch::Tensor& lp, const torch::Tensor& y, double min_t, double prior_sd) {
  torch::NoGradGuard ng;
  WHVI_CHECK_AS(ShapeError, lp.dim() == 3 && y.dim() == 1 && y.size(0) == lp.size(1),
                "fit_sample_temperature needs log-probabilities [S, N, C] and labels [N]");
  const auto l = lp.to(torch::kFloat64);
  const auto idx = y.to(torch::kInt64).view({1, -1, 1}).expand({l.size(0), l.size(1), 1});
  const double log_s = std::log(static_cast<double>(l.size(0)));
  const auto nll = [&](double log_t) {
    const auto lt = torch::log_softmax(l / std::exp(log_t), 2).gather(2, idx).squeeze(2);  // [S, N]
    const double penalty = prior_sd > 0 ? log_t * log_t / (2 * prior_sd * prior_sd * static_cast<double>(l.size(1))) : 0;
    return -(torch::logsumexp(lt, 0) - log_s).mean().item<double>() + penalty;
  };
  WHVI_CHECK(min_t >= 0.05 && min_t <= 1, "fit_sample_temperature: the lowest temperature must lie in [0.05, 1]");
  const double lo = std::log(min_t), hi = std::log(20.0), step = 0.02;
  double best = 0, best_nll = nll(0);
  for (double t = lo; t <= hi + 1e-12; t += step)
    if (const double v = nll(t); v < best_nll) best_nll = v, best = t;
  const double mid = golden_section_min(nll, std::max(lo, best - step), std::min(hi, best + step), 60);
  return std::exp(nll(mid) <= best_nll ? mid : best);
}

void set_temperature(infer::Inference& inf, double t) {
  for (auto* lik : inf.predicting_likelihoods())
    if (lik->has_temperature()) lik->set_temperature(t);
}

double temperature_of(infer::Inference& inf) {
  return inf.likelihood().temperature();
}

std::optional<std::pair<double, double>> ValidationStopping::refit_temperature() {
  if (o_.temperature == "keep" || best_step_ < 0) return std::nullopt;
  if (!inf_.likelihood().has_temperature()) return std::nullopt;
  torch::NoGradGuard ng;
  const double before = temperature_of(inf_);
  set_temperature(inf_, 1.0);
  const auto lp = inf_.predict(x_, o_.mc_samples, gen_);
  WHVI_CHECK_AS(NonFiniteError, lp.isfinite().all().item<bool>(), "the predictions on the stopping rows are not finite");
  const double after =
      fit_sample_temperature(lp, y_, o_.temperature == "soften" ? 1.0 : 0.05, o_.temperature == "prior" ? 1.0 : 0.0);
  set_temperature(inf_, after);
  spdlog::info("stopping: at the kept step {} the predictive's temperature {:.4g} -> {:.4g}, fitted on the {} "
               "held-out rows", best_step_, before, after, y_.size(0));
  return std::make_pair(before, after);
}

std::optional<std::pair<double, double>> ValidationStopping::refit_noise() {
  if (o_.noise == "keep" || best_step_ < 0 || (o_.noise == "frozen" && best_step_ >= o_.min_steps))
    return std::nullopt;
  auto* g = &inf_.likelihood();
  if (!g->refits_noise()) return std::nullopt;
  torch::NoGradGuard ng;
  const auto f = inf_.predict(x_, o_.mc_samples, gen_);
  WHVI_CHECK_AS(NonFiniteError, f.isfinite().all().item<bool>(), "the predictions on the stopping rows are not finite");
  const double before = g->noise_var_original();
  g->set_noise_var_original(fit_noise_var(f, y_));
  const double after = g->noise_var_original();
  spdlog::info("stopping: at the kept step {} the noise variance {:.4g} -> {:.4g}, fitted on the {} held-out rows",
               best_step_, before, after, y_.size(0));
  return std::make_pair(before, after);
}

void ValidationStopping::restore_best() {
  if (best_.empty()) return;
  torch::NoGradGuard ng;
  const auto state = inf_.state();
  WHVI_ASSERT(state.size() == best_.size());
  for (size_t i = 0; i < state.size(); ++i) state[i].second.copy_(best_[i]);
}

}  // namespace whvi::train
