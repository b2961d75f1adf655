// Test metrics for regression from Monte Carlo predictive samples.
//
// The predictive distribution is the Monte Carlo mixture
//   p(y | x) = (1/S) sum_s N(y | f_s(x), noise_var),
// and every metric is a property of that mixture (not of a single Gaussian
// fitted to it), in original units.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace whvi::metrics {

struct RegressionMetrics {
  double rmse = 0;        // RMSE of the MC-mean prediction
  double mnll = 0;        // -mean_n log mean_s p(y_n | f_s): the predictive density
  double mnll_paper = 0;  // mean_n mean_s -log p(y_n | f_s): the WHVI authors' convention
  // Fraction of test targets inside the central 50/90/95% interval of the
  // mixture. y lies inside the central level-a interval exactly when its PIT
  // value F(y) (the mixture CDF at y) is within a/2 of 1/2, so no quantile is
  // searched for.
  double coverage_50 = 0, coverage_90 = 0, coverage_95 = 0;
  // mean over a = 0.05, 0.10, ..., 0.95 of |a - coverage(a)|
  double calibration_error = 0;
  // Continuous ranked probability score of the mixture (closed form for a
  // mixture of Gaussians, Grimit et al. 2006), mean over test points; lower is
  // better, in the units of y.
  double crps = 0;
};

// The metric names in the order they are written and tabulated.
const std::vector<const char*>& regression_metric_names();
double metric_value(const RegressionMetrics& m, const std::string& name);

// f: [S, N] predictive means of S samples, y: [N], both in original units;
// noise_var: the likelihood's noise variance in original units. Computed in
// float64; the mean over samples of p uses a stable log-sum-exp. N = 0 gives
// NaN everywhere.
RegressionMetrics regression_metrics(const torch::Tensor& f, const torch::Tensor& y,
                                     double noise_var);

// The mixture's CDF at y (the PIT value), [N].
torch::Tensor mixture_cdf(const torch::Tensor& f, const torch::Tensor& y, double noise_var);
// The mixture's CRPS at each y, [N]. Exact for S <= 512; above, the mean over
// pairs of distinct samples is estimated from 255 cyclic pairings (unbiased).
torch::Tensor mixture_crps(const torch::Tensor& f, const torch::Tensor& y, double noise_var);

// The same metrics for a mixture whose components have their own variances:
// p(y | x) = (1/S) Σ_s N(y | f_s(x), var_s(x)); f, var [S, N], y [N], original
// units (a heteroscedastic likelihood).
RegressionMetrics regression_metrics(const torch::Tensor& f, const torch::Tensor& y, const torch::Tensor& var);
torch::Tensor mixture_cdf(const torch::Tensor& f, const torch::Tensor& y, const torch::Tensor& var);
torch::Tensor mixture_crps(const torch::Tensor& f, const torch::Tensor& y, const torch::Tensor& var);

// Sets the coverages and the calibration error from the PIT values of the
// targets (the predictive CDF at each), [N].
void set_coverage(RegressionMetrics& m, const torch::Tensor& pit);

// Named metric values in the order they are written and tabulated.
using Metrics = std::vector<std::pair<std::string, double>>;

// data.target_transform: log. A model of log y predicts the log-normal mixture
// p(y | x) = (1/S) Σ_s LN(y | μ_s, v_s); mu, var [S, N] are its components on the
// log scale, y_log [N] = ln y.
//   lognormal_mixture_mean: E[y] = (1/S) Σ_s exp(μ_s + v_s/2), [N]
//   lognormal_mixture_crps: ∫ (F(z) − 1{y ≤ z})² dz in y's units, [N], by the
//     trapezoid rule in t = ln z on either side of ln y (800 points each, within
//     ±10 sd of the components), accurate to about 1e-4 relative
torch::Tensor lognormal_mixture_mean(const torch::Tensor& mu, const torch::Tensor& var);
torch::Tensor lognormal_mixture_crps(const torch::Tensor& mu, const torch::Tensor& var, const torch::Tensor& y_log);
// The metrics of that model (computed on the log scale as `log_scale`) in the
// target's units: the densities gain the Jacobian (mnll and mnll_paper +
// mean ln y), the RMSE is that of E[y], the CRPS the log-normal mixture's; the
// coverages and calibration error (PIT values) do not change under ln.
Metrics in_target_units(const Metrics& log_scale, const torch::Tensor& mu, const torch::Tensor& var,
                        const torch::Tensor& y_log);
Metrics to_metrics(const RegressionMetrics& m);

// ---- classification --------------------------------------------------------------
//
// The predictive distribution is the Monte Carlo average of the class
// probabilities, p̄(c | x) = (1/S) Σ_s p_s(c | x), and the metrics are:
//   error       fraction of test points whose argmax_c p̄ (first on ties) is not the label
//   mnll        -mean_n log p̄(y_n | x_n)  (from log-probabilities by log-sum-exp)
//   mnll_paper  -mean_n mean_s log p_s(y_n | x_n)  (the WHVI authors' convention)
//   ece         expected calibration error over kEceBins equal-width bins of the
//               confidence max_c p̄: Σ_b (n_b / N) |accuracy_b - confidence_b|,
//               bin b = (b/B, (b+1)/B] (a confidence of exactly 0 goes to bin 0)
//   brier       mean_n Σ_c (p̄_c - [c = y_n])², in [0, 2]
inline constexpr int kEceBins = 15;
const std::vector<const char*>& classification_metric_names();

struct ReliabilityBin {
  double lo = 0, hi = 0;
  int64_t count = 0;
  double accuracy = 0, confidence = 0;  // means over the bin's points (NaN when empty)
};

struct ClassificationMetrics {
  double error = 0, mnll = 0, mnll_paper = 0, ece = 0, brier = 0;
  std::vector<ReliabilityBin> bins;  // kEceBins of them
};

// log_p: [S, N, C] log class probabilities of S samples; y: [N] class indices
// (any dtype holding integers). Computed in float64. N = 0 gives NaN metrics
// and empty bins.
ClassificationMetrics classification_metrics(const torch::Tensor& log_p, const torch::Tensor& y,
                                             int bins = kEceBins);
Metrics to_metrics(const ClassificationMetrics& m);

// mean, population std (ddof 0), standard error std/sqrt(n) of values.
struct Summary {
  double mean = 0, std = 0, sem = 0;
  int64_t n = 0;
};
Summary summarize(const std::vector<double>& values);

// Out-of-distribution detection: how well a score (higher = more likely out of
// distribution) tells `out` rows (positives) from `in` rows (negatives).
// AUROC = P(s_out > s_in) + P(s_out = s_in) / 2 (the Mann-Whitney statistic);
// AUPR = average precision with the out rows as positives, rows ranked by
// decreasing score, a run of tied scores counted at its end (so ties never
// help). Both need at least one row of each.
struct Separation {
  double auroc = 0, aupr = 0;
};
Separation ood_separation(const std::vector<double>& in, const std::vector<double>& out);

// Per row of predictive log-probabilities log_p [S, N, C] (S Monte Carlo
// samples): the predictive entropy H[mean_s p_s] (total uncertainty) and the
// mutual information H[mean_s p_s] - mean_s H[p_s] (epistemic), in nats.
struct Uncertainty {
  std::vector<double> entropy, mutual_information;
};
Uncertainty predictive_uncertainty(const torch::Tensor& log_p);

}  // namespace whvi::metrics
