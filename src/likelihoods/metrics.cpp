#include "likelihoods/metrics.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/errors.h"

namespace whvi::metrics {
namespace {

torch::Tensor std_normal_cdf(const torch::Tensor& z) { return 0.5 * torch::erfc(-z * M_SQRT1_2); }

// A(mu, var) = E|X| for X ~ N(mu, var): mu (2 Phi(mu/sd) - 1) + 2 sd phi(mu/sd).
torch::Tensor abs_moment(const torch::Tensor& mu, double var) {
  const double sd = std::sqrt(var);
  const auto z = mu / sd;
  return mu * (2.0 * std_normal_cdf(z) - 1.0) + (2.0 * sd / std::sqrt(2.0 * M_PI)) * (-0.5 * z.square()).exp();
}

// The same with a variance per element.
torch::Tensor abs_moment(const torch::Tensor& mu, const torch::Tensor& var) {
  const auto sd = var.sqrt();
  const auto z = mu / sd;
  return mu * (2.0 * std_normal_cdf(z) - 1.0) + (2.0 / std::sqrt(2.0 * M_PI)) * sd * (-0.5 * z.square()).exp();
}

}  // namespace

// Coverage of the central 50/90/95% intervals and the calibration error from
// the PIT values (the mixture's CDF at each target).
void set_coverage(RegressionMetrics& m, const torch::Tensor& pit) {
  const auto dist = (pit - 0.5).abs();
  auto coverage = [&](double level) { return (dist <= 0.5 * level).to(torch::kFloat64).mean().item<double>(); };
  m.coverage_50 = coverage(0.50);
  m.coverage_90 = coverage(0.90);
  m.coverage_95 = coverage(0.95);
  double ce = 0;
  for (int i = 1; i <= 19; ++i) ce += std::fabs(0.05 * i - coverage(0.05 * i));
  m.calibration_error = ce / 19.0;
}

torch::Tensor mixture_cdf(const torch::Tensor& f, const torch::Tensor& y, const torch::Tensor& var) {
  return std_normal_cdf((y.unsqueeze(0) - f) / var.sqrt()).mean(0);
}

torch::Tensor mixture_crps(const torch::Tensor& f, const torch::Tensor& y, const torch::Tensor& var) {
  // as the scalar-variance form, with A(f_s - f_t, v_s + v_t) for the pairs
  const int64_t S = f.size(0);
  const auto first = abs_moment(y.unsqueeze(0) - f, var).mean(0);
  const auto diag = ((2.0 / std::sqrt(2.0 * M_PI)) * (2.0 * var).sqrt()).mean(0);  // A(0, 2 v_s), mean over s
  auto pair_sum = torch::zeros_like(y);
  if (S > 1) {
    const int64_t shifts = S <= 512 ? S - 1 : 255;
    for (int64_t k = 1; k <= shifts; ++k)
      pair_sum += abs_moment(f - torch::roll(f, k, 0), var + torch::roll(var, k, 0)).mean(0);
    pair_sum /= static_cast<double>(shifts);
  }
  const double Sd = static_cast<double>(S);
  return first - 0.5 * (diag / Sd + pair_sum * ((Sd - 1.0) / Sd));
}

RegressionMetrics regression_metrics(const torch::Tensor& f_in, const torch::Tensor& y_in, const torch::Tensor& var_in) {
  WHVI_CHECK_AS(ShapeError, f_in.dim() == 2 && y_in.dim() == 1 && f_in.size(1) == y_in.size(0) &&
                                var_in.sizes() == f_in.sizes(),
                "regression_metrics: expected f and var [S, N] and y [N], got ", f_in.sizes(), ", ",
                var_in.sizes(), " and ", y_in.sizes());
  RegressionMetrics m;
  if (y_in.size(0) == 0) {
    m.rmse = m.mnll = m.mnll_paper = m.coverage_50 = m.coverage_90 = m.coverage_95 = m.calibration_error = m.crps =
        std::nan("");
    return m;
  }
  const auto f = f_in.to(torch::kFloat64), y = y_in.to(torch::kFloat64), var = var_in.to(torch::kFloat64);
  WHVI_CHECK_AS(NonFiniteError, torch::isfinite(f).all().item<bool>() && torch::isfinite(var).all().item<bool>(),
                "the model's predictions contain NaN or inf");
  WHVI_CHECK_AS(NonFiniteError, (var > 0).all().item<bool>(), "a predicted variance is not positive");
  const double S = static_cast<double>(f.size(0));
  m.rmse = std::sqrt((f.mean(0) - y).square().mean().item<double>());
  const auto logp = -0.5 * ((2.0 * M_PI * var).log() + (f - y.unsqueeze(0)).square() / var);
  m.mnll = -(torch::logsumexp(logp, 0) - std::log(S)).mean().item<double>();
  m.mnll_paper = -logp.mean().item<double>();
  set_coverage(m, mixture_cdf(f, y, var));
  m.crps = mixture_crps(f, y, var).mean().item<double>();
  return m;
}

const std::vector<const char*>& regression_metric_names() {
  static const std::vector<const char*> names = {"rmse",        "mnll",        "mnll_paper",
                                                 "coverage_50", "coverage_90", "coverage_95",
                                                 "calibration_error", "crps"};
  return names;
}

double metric_value(const RegressionMetrics& m, const std::string& name) {
  if (name == "rmse") return m.rmse;
  if (name == "mnll") return m.mnll;
  if (name == "mnll_paper") return m.mnll_paper;
  if (name == "coverage_50") return m.coverage_50;
  if (name == "coverage_90") return m.coverage_90;
  if (name == "coverage_95") return m.coverage_95;
  if (name == "calibration_error") return m.calibration_error;
  if (name == "crps") return m.crps;
  WHVI_ASSERT(false && "unknown metric");
  return 0;
}

Metrics to_metrics(const RegressionMetrics& m) {
  Metrics out;
  for (const char* k : regression_metric_names()) out.emplace_back(k, metric_value(m, k));
  return out;
}

const std::vector<const char*>& classification_metric_names() {
  static const std::vector<const char*> names = {"error", "mnll", "mnll_paper", "ece", "brier"};
  return names;
}

ClassificationMetrics classification_metrics(const torch::Tensor& log_p_in, const torch::Tensor& y_in, int n_bins) {
  WHVI_CHECK_AS(ShapeError, log_p_in.dim() == 3 && y_in.dim() == 1 && log_p_in.size(1) == y_in.size(0) &&
                                log_p_in.size(0) >= 1 && log_p_in.size(2) >= 2 && n_bins >= 1,
                "classification_metrics needs log-probabilities [S, N, C] (C >= 2) and labels [N]");
  ClassificationMetrics m;
  const int64_t S = log_p_in.size(0), N = log_p_in.size(1), C = log_p_in.size(2);
  const double nan = std::nan("");
  if (N == 0) {
    m.error = m.mnll = m.mnll_paper = m.ece = m.brier = nan;
    return m;
  }
  const auto log_p = log_p_in.to(torch::kFloat64);
  const auto y = y_in.to(torch::kInt64);
  WHVI_CHECK(y.min().item<int64_t>() >= 0 && y.max().item<int64_t>() < C, "classification_metrics: a label is "
             "outside 0..", C - 1);
  const auto log_mean = torch::logsumexp(log_p, 0) - std::log(static_cast<double>(S));  // [N, C]
  const auto p_mean = log_mean.exp();
  const auto idx = y.unsqueeze(1);
  m.mnll = -log_mean.gather(1, idx).mean().item<double>();
  m.mnll_paper = -log_p.gather(2, idx.unsqueeze(0).expand({S, N, 1})).mean().item<double>();
  const auto [conf, pred] = p_mean.max(1);
  const auto correct = pred.eq(y).to(torch::kFloat64);
  m.error = 1.0 - correct.mean().item<double>();
  m.brier = (p_mean - torch::one_hot(y, C).to(torch::kFloat64)).square().sum(1).mean().item<double>();
  const auto bin = (conf * static_cast<double>(n_bins)).ceil().to(torch::kInt64).sub(1).clamp(0, n_bins - 1);
  const auto ca = conf.accessor<double, 1>();
  const auto ka = correct.accessor<double, 1>();
  const auto ba = bin.accessor<int64_t, 1>();
  std::vector<double> sum_acc(n_bins, 0.0), sum_conf(n_bins, 0.0);
  std::vector<int64_t> count(n_bins, 0);
  for (int64_t i = 0; i < N; ++i) {
    ++count[ba[i]];
    sum_acc[ba[i]] += ka[i];
    sum_conf[ba[i]] += ca[i];
  }
  m.ece = 0;
  for (int b = 0; b < n_bins; ++b) {
    ReliabilityBin r;
    r.lo = static_cast<double>(b) / n_bins;
    r.hi = static_cast<double>(b + 1) / n_bins;
    r.count = count[b];
    r.accuracy = count[b] ? sum_acc[b] / count[b] : nan;
    r.confidence = count[b] ? sum_conf[b] / count[b] : nan;
    if (count[b]) m.ece += (static_cast<double>(count[b]) / N) * std::fabs(r.accuracy - r.confidence);
    m.bins.push_back(r);
  }
  return m;
}

Metrics to_metrics(const ClassificationMetrics& m) {
  return {{"error", m.error}, {"mnll", m.mnll}, {"mnll_paper", m.mnll_paper}, {"ece", m.ece}, {"brier", m.brier}};
}

torch::Tensor mixture_cdf(const torch::Tensor& f, const torch::Tensor& y, double noise_var) {
  return std_normal_cdf((y.unsqueeze(0) - f) / std::sqrt(noise_var)).mean(0);
}

torch::Tensor mixture_crps(const torch::Tensor& f, const torch::Tensor& y, double noise_var) {
  // CRPS(F, y) = E|X - y| - 1/2 E|X - X'|, X, X' ~ F independent; for the
  // equal-weight mixture: (1/S) sum_s A(y - f_s, v) - 1/(2 S^2) sum_{s,t} A(f_s - f_t, 2v).
  const int64_t S = f.size(0);
  const auto first = abs_moment(y.unsqueeze(0) - f, noise_var).mean(0);
  // diagonal pairs s == t: A(0, 2v) = 2 sqrt(2v) phi(0)
  const double a0 = 2.0 * std::sqrt(2.0 * noise_var) / std::sqrt(2.0 * M_PI);
  auto pair_sum = torch::zeros_like(y);  // mean over ordered pairs s != t
  if (S > 1) {
    const int64_t shifts = S <= 512 ? S - 1 : 255;
    for (int64_t k = 1; k <= shifts; ++k)
      pair_sum += abs_moment(f - torch::roll(f, k, 0), 2.0 * noise_var).mean(0);
    pair_sum /= static_cast<double>(shifts);
  }
  const double Sd = static_cast<double>(S);
  const auto second = a0 / Sd + pair_sum * ((Sd - 1.0) / Sd);
  return first - 0.5 * second;
}

RegressionMetrics regression_metrics(const torch::Tensor& f_in, const torch::Tensor& y_in,
                                     double noise_var) {
  WHVI_CHECK_AS(ShapeError, f_in.dim() == 2 && y_in.dim() == 1 && f_in.size(1) == y_in.size(0),
                "regression_metrics: expected f [S, N] and y [N], got ", f_in.sizes(), " and ",
                y_in.sizes());
  WHVI_CHECK_AS(NonFiniteError, noise_var > 0 && std::isfinite(noise_var), "the noise variance is ", noise_var,
                " (in the target's units), not a positive number");
  RegressionMetrics m;
  if (y_in.size(0) == 0) {
    m.rmse = m.mnll = m.mnll_paper = m.coverage_50 = m.coverage_90 = m.coverage_95 =
        m.calibration_error = m.crps = std::nan("");
    return m;
  }
  const auto f = f_in.to(torch::kFloat64), y = y_in.to(torch::kFloat64);
  WHVI_CHECK_AS(NonFiniteError, torch::isfinite(f).all().item<bool>(), "the model's predictions contain NaN or inf");
  const double S = static_cast<double>(f.size(0));
  m.rmse = std::sqrt((f.mean(0) - y).square().mean().item<double>());
  const auto logp = -0.5 * (std::log(2.0 * M_PI * noise_var) + (f - y.unsqueeze(0)).square() / noise_var);
  m.mnll = -(torch::logsumexp(logp, 0) - std::log(S)).mean().item<double>();
  m.mnll_paper = -logp.mean().item<double>();
  set_coverage(m, mixture_cdf(f, y, noise_var));
  m.crps = mixture_crps(f, y, noise_var).mean().item<double>();
  return m;
}

Summary summarize(const std::vector<double>& v) {
  Summary s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / s.n);
  s.sem = s.std / std::sqrt(static_cast<double>(s.n));
  return s;
}

Separation ood_separation(const std::vector<double>& in, const std::vector<double>& out) {
  WHVI_CHECK(!in.empty() && !out.empty(), "out-of-distribution scores need rows in and out of distribution");
  std::vector<std::pair<double, int>> all;  // (score, 1 = out)
  for (double v : in) all.emplace_back(v, 0);
  for (double v : out) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const double n_out = static_cast<double>(out.size()), n_in = static_cast<double>(in.size());
  double tp = 0, fp = 0, ap = 0, auc = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    double pos = 0, neg = 0;
    while (j < all.size() && all[j].first == all[i].first) (all[j].second ? pos : neg) += 1, ++j;
    // in rows tied with these out rows count half; those above them count fully
    auc += pos * (n_in - fp - neg) + 0.5 * pos * neg;
    tp += pos;
    fp += neg;
    ap += pos * (tp / (tp + fp));
    i = j;
  }
  return {auc / (n_out * n_in), ap / n_out};
}

Uncertainty predictive_uncertainty(const torch::Tensor& log_p) {
  WHVI_CHECK_AS(ShapeError, log_p.dim() == 3, "predictive_uncertainty needs log-probabilities [S, N, C]");
  const auto lp = log_p.to(torch::kFloat64);
  const auto ps = lp.exp();
  const auto p = ps.mean(0);
  const auto h = -(p * p.clamp_min(1e-300).log()).sum(1);
  const auto expected = -(ps * lp).sum(2).mean(0);
  const auto mi = (h - expected).clamp_min(0.0).contiguous();
  const auto hc = h.contiguous();
  Uncertainty u;
  u.entropy.assign(hc.data_ptr<double>(), hc.data_ptr<double>() + hc.numel());
  u.mutual_information.assign(mi.data_ptr<double>(), mi.data_ptr<double>() + mi.numel());
  return u;
}

torch::Tensor lognormal_mixture_mean(const torch::Tensor& mu, const torch::Tensor& var) {
  return (mu.to(torch::kFloat64) + 0.5 * var.to(torch::kFloat64)).exp().mean(0);
}

torch::Tensor lognormal_mixture_crps(const torch::Tensor& mu_in, const torch::Tensor& var_in, const torch::Tensor& y_log) {
  // in blocks of rows: the mixture's CDF on the grid is [S, M, rows]
  constexpr int64_t kBlock = 64;
  if (y_log.size(0) > kBlock) {
    std::vector<torch::Tensor> parts;
    for (int64_t i = 0; i < y_log.size(0); i += kBlock) {
      const int64_t n = std::min<int64_t>(kBlock, y_log.size(0) - i);
      parts.push_back(lognormal_mixture_crps(mu_in.narrow(1, i, n), var_in.narrow(1, i, n), y_log.narrow(0, i, n)));
    }
    return torch::cat(parts);
  }
  const auto mu = mu_in.to(torch::kFloat64), sd = var_in.to(torch::kFloat64).sqrt();
  const auto t_y = y_log.to(torch::kFloat64);
  const auto lo = torch::minimum(std::get<0>((mu - 10 * sd).min(0)), t_y);  // [N]
  const auto hi = torch::maximum(std::get<0>((mu + 10 * sd).max(0)), t_y);
  constexpr int64_t M = 800;
  const auto u = torch::linspace(0.0, 1.0, M, torch::kFloat64).unsqueeze(1);  // [M, 1]
  // ∫_a^b g(t) e^t dt on M points of [a, b] per row; cdf(t) of the mixture, t [M, N]
  const auto cdf = [&](const torch::Tensor& t) {
    return (0.5 * torch::erfc(-(t.unsqueeze(0) - mu.unsqueeze(1)) / (sd.unsqueeze(1) * std::sqrt(2.0)))).mean(0);
  };
  const auto integral = [&](const torch::Tensor& a, const torch::Tensor& b, bool below) {
    const auto t = a.unsqueeze(0) + (b - a).unsqueeze(0) * u;  // [M, N]
    const auto F = cdf(t);
    const auto g = (below ? F.square() : (1 - F).square()) * t.exp();
    return torch::trapezoid(g, t, 0);
  };
  return integral(lo, t_y, true) + integral(t_y, hi, false);
}

Metrics in_target_units(const Metrics& log_scale, const torch::Tensor& mu, const torch::Tensor& var,
                        const torch::Tensor& y_log) {
  Metrics out = log_scale;
  if (y_log.size(0) == 0) return out;
  const auto y = y_log.to(torch::kFloat64).exp();
  const double mean_log_y = y_log.to(torch::kFloat64).mean().item<double>();
  for (auto& [k, v] : out) {
    if (k == "mnll" || k == "mnll_paper") v += mean_log_y;
    if (k == "rmse") v = (lognormal_mixture_mean(mu, var) - y).square().mean().sqrt().item<double>();
    if (k == "crps") v = lognormal_mixture_crps(mu, var, y_log).mean().item<double>();
  }
  return out;
}

}  // namespace whvi::metrics
