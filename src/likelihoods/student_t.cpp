// Student's t likelihood (likelihood.kind: student-t): see likelihood.h. On
// the standardised scale, per row, with nu = 2 + exp(rho) and scale^2 sigma^2,
//   -log p(y | f) = -lgamma((nu+1)/2) + lgamma(nu/2) + 0.5 ln(nu pi sigma^2)
//                   + (nu+1)/2 log1p((y - f)^2 / (nu sigma^2)),
// and in original units the location is f y_std + y_mean, the scale^2 sigma^2 y_std^2.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/errors.h"
#include "likelihoods/kind.h"
#include "likelihoods/student_t.h"

namespace whvi::likelihoods {

namespace {

// Continued fraction of the incomplete beta function (modified Lentz).
double beta_cf(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < kEps) break;
  }
  return h;
}

// The regularised incomplete beta function I_x(a, b).
double beta_inc(double a, double b, double x) {
  if (x <= 0) return 0.0;
  if (x >= 1) return 1.0;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_cf(a, b, x) / a;
  return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double t_cdf(double t, double nu) {
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  const double tail = 0.5 * beta_inc(0.5 * nu, 0.5, nu / (nu + t * t));
  return t > 0 ? 1.0 - tail : tail;
}

// M equally spaced quantiles (k + 1/2) / M of the precision lambda ~ Gamma(nu/2, rate nu/2).
torch::Tensor precision_quantiles(double nu, int64_t M) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  const auto p = (torch::arange(M, opts) + 0.5) / static_cast<double>(M);
  const auto a = torch::full({M}, 0.5 * nu, opts);
  auto lo = torch::zeros({M}, opts), hi = torch::full({M}, 1.0, opts);
  while ((torch::igamma(a, hi * (0.5 * nu)) < p).any().item<bool>()) hi = hi * 2;
  for (int it = 0; it < 200; ++it) {
    const auto mid = (lo + hi) / 2;
    const auto below = torch::igamma(a, mid * (0.5 * nu)) < p;
    lo = torch::where(below, mid, lo);
    hi = torch::where(below, hi, mid);
  }
  return (lo + hi) / 2;
}

}  // namespace

torch::Tensor student_t_cdf(const torch::Tensor& t_in, double nu) {
  auto t = t_in.to(torch::kFloat64).contiguous();
  auto out = torch::empty_like(t);
  const double* src = t.data_ptr<double>();
  double* dst = out.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = t_cdf(src[i], nu);
  return out;
}

metrics::RegressionMetrics student_t_metrics(const torch::Tensor& f_in, const torch::Tensor& y_in, double scale2,
                                           double nu) {
  WHVI_CHECK_AS(ShapeError, f_in.dim() == 2 && y_in.dim() == 1 && f_in.size(1) == y_in.size(0),
                "student-t metrics: expected f [S, N] and y [N], got ", f_in.sizes(), " and ", y_in.sizes());
  WHVI_CHECK(scale2 > 0 && std::isfinite(scale2) && nu > 2 && std::isfinite(nu), "student-t metrics: scale^2 ",
             scale2, " and degrees of freedom ", nu, " must be finite, positive and nu > 2");
  metrics::RegressionMetrics m;
  if (y_in.size(0) == 0) {
    m.rmse = m.mnll = m.mnll_paper = m.coverage_50 = m.coverage_90 = m.coverage_95 = m.calibration_error = m.crps =
        std::nan("");
    return m;
  }
  const auto f = f_in.to(torch::kFloat64), y = y_in.to(torch::kFloat64);
  WHVI_CHECK_AS(NonFiniteError, torch::isfinite(f).all().item<bool>(), "the model's predictions contain NaN or inf");
  const int64_t S = f.size(0), N = f.size(1);
  m.rmse = std::sqrt((f.mean(0) - y).square().mean().item<double>());
  const double c = std::lgamma(0.5 * (nu + 1)) - std::lgamma(0.5 * nu) - 0.5 * std::log(nu * M_PI * scale2);
  const auto logp = c - 0.5 * (nu + 1) * torch::log1p((y.unsqueeze(0) - f).square() / (nu * scale2));
  m.mnll = -(torch::logsumexp(logp, 0) - std::log(static_cast<double>(S))).mean().item<double>();
  m.mnll_paper = -logp.mean().item<double>();
  const auto pit = student_t_cdf((y.unsqueeze(0) - f) / std::sqrt(scale2), nu).mean(0);
  metrics::set_coverage(m, pit);
  // CRPS: each t as M Gaussians N(f_s, scale2 / lambda_k), laid out sample-major
  // so that the mixture's CRPS pairs every quantile with every other.
  const int64_t M = std::clamp<int64_t>(512 / S, 8, 64);
  const auto var_k = scale2 / precision_quantiles(nu, M);  // [M]
  const auto fm = f.unsqueeze(1).expand({S, M, N}).reshape({S * M, N});
  const auto vm = var_k.view({1, M, 1}).expand({S, M, N}).reshape({S * M, N});
  m.crps = metrics::mixture_crps(fm, y, vm).mean().item<double>();
  return m;
}

StudentTLikelihood::StudentTLikelihood(const StudentTOptions& o, double y_mean, double y_std)
    : opt_(o), y_mean_(y_mean), y_std_(y_std) {
  WHVI_CHECK(y_std > 0 && std::isfinite(y_std) && std::isfinite(y_mean),
             "student-t likelihood: bad target statistics mean=", y_mean, " std=", y_std);
  WHVI_CHECK(o.init_df > 2, "likelihood.student_t.init_df must be above 2, got ", o.init_df);
  log_scale2_ = register_parameter("log_scale2", torch::full({1}, o.init_log_scale2));
  log_df_minus_2_ = register_parameter("log_df_minus_2", torch::full({1}, std::log(o.init_df - 2.0)));
}

torch::Tensor StudentTLikelihood::nll_sum(const torch::Tensor& f, const torch::Tensor& y) {
  const auto nu = 2.0 + log_df_minus_2_.exp();
  const auto half = 0.5 * (nu + 1.0);
  const auto per_row = torch::lgamma(0.5 * nu) - torch::lgamma(half) + 0.5 * (torch::log(nu * M_PI) + log_scale2_);
  return static_cast<double>(f.numel()) * per_row.squeeze(0) +
         (half * torch::log1p((y - f).square() * (-log_scale2_).exp() / nu)).sum();
}

torch::Tensor StudentTLikelihood::sample(const torch::Tensor&, const at::Generator&) const {
  throw Error("likelihood.kind student-t: drawing targets from the model is not written (noisy K-FAC's true "
              "Fisher needs it); set model.nng.fisher: empirical or likelihood.kind: gaussian");
}

torch::Tensor StudentTLikelihood::to_original(const torch::Tensor& f) const {
  return f.to(torch::kFloat64) * y_std_ + y_mean_;
}

double StudentTLikelihood::df() const { return 2.0 + std::exp(log_df_minus_2_.item<double>()); }

double StudentTLikelihood::scale2_original() const {
  return std::exp(log_scale2_.item<double>()) * y_std_ * y_std_;
}

double StudentTLikelihood::noise_var_original() const {
  const double nu = df();
  return scale2_original() * nu / (nu - 2.0);
}

Evaluation StudentTLikelihood::evaluate(const torch::Tensor& f, const torch::Tensor& y) {
  return {metrics::to_metrics(student_t_metrics(f, y, scale2_original(), df())), {}};
}

torch::Tensor StudentTLikelihood::predictive_cdf(const torch::Tensor& f, const torch::Tensor& y) const {
  const auto g = f.to(torch::kFloat64);
  return student_t_cdf((y.to(torch::kFloat64).unsqueeze(0) - g) / std::sqrt(scale2_original()), df()).mean(0);
}

std::optional<std::string> StudentTLikelihood::fit_problem(const torch::Tensor& f, const torch::Tensor& y) const {
  return regression_fit_problem(f, y);
}

std::optional<std::string> StudentTLikelihood::health_problem() const {
  const double ls = log_scale2_.item<double>();
  if (!std::isfinite(ls) || !std::isfinite(df()))
    return std::string("the student-t scale or degrees of freedom is not finite");
  if (ls <= std::max(std::log(100.0), opt_.init_log_scale2 + std::log(10.0))) return std::nullopt;
  std::ostringstream os;
  os << "the student-t scale^2 grew to " << std::exp(ls) << " times the variance of the training targets";
  return os.str();
}

std::string StudentTLikelihood::log_text() const {
  char buf[80];
  std::snprintf(buf, sizeof buf, "scale^2 %.4g df %.3g", std::exp(log_scale2_.item<double>()), df());
  return buf;
}

LikelihoodKind student_t_likelihood_kind() {
  return likelihood_kind<StudentTOptions>("student-t", false, [](const StudentTOptions& o, double m, double s, int64_t) {
    return std::make_shared<StudentTLikelihood>(o, m, s);
  }).described("regression: Student's t noise with a learned scale and learned degrees of freedom, robust to "
               "outlying targets");
}

}  // namespace whvi::likelihoods
