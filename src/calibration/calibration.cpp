#include "calibration/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/errors.h"
#include "common/minimise.h"
#include "likelihoods/metrics.h"

namespace whvi::calibration {

using nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool classifies(const likelihoods::Likelihood& lik) { return std::string(lik.task()) == "classification"; }

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// The mixture's class probabilities [N, C] of log-probability samples [S, N, C].
torch::Tensor mixture_probabilities(const torch::Tensor& f) {
  return f.to(torch::kFloat64).exp().mean(0);
}

}  // namespace

void check_rows(const CalibrationOptions& o, int64_t rows) {
  if (o.kind != "conformal" && o.kind != "cqr") return;
  // q is finite only when ⌈(n+1)·level⌉ <= n
  const int64_t need = static_cast<int64_t>(std::ceil(o.level / (1 - o.level) - 1e-9));
  WHVI_CHECK(rows >= need, "calibration.kind ", o.kind, " at calibration.level ", o.level, " needs at least ", need,
             " calibration rows and this split has ", rows, "; raise calibration.fraction or lower calibration.level");
}

namespace {

// A kind's fit: the fitted value (q or T) from the calibration rows' predictions.
struct Kind {
  const char* name;
  bool regression, classification;  // the tasks it serves
  double (*fit)(const CalibrationOptions&, const likelihoods::Likelihood&, const torch::Tensor&, const torch::Tensor&);
  const char* help;  // calibration.kind's help for it
};

double fit_conformal(const CalibrationOptions& o, const likelihoods::Likelihood& lik, const torch::Tensor& f,
                     const torch::Tensor& y) {
  check_rows(o, y.size(0));
  if (classifies(lik)) {
    const auto p = mixture_probabilities(f);
    return conformal_quantile(1 - p.gather(1, y.to(torch::kInt64).unsqueeze(1)).squeeze(1), o.level);
  }
  const auto [mu, sd] = predictive_moments(lik, f);
  return conformal_quantile((y.to(torch::kFloat64) - mu).abs() / sd, o.level);
}

// CQR (Romano, Patterson & Candès 2019) on the model's own predictive
// quantiles: the score max(lo − y, y − hi) of its central `level` interval
// [lo, hi], its conformal quantile Q (negative where the interval is too wide).
double fit_cqr(const CalibrationOptions& o, const likelihoods::Likelihood& lik, const torch::Tensor& f,
               const torch::Tensor& y) {
  check_rows(o, y.size(0));
  const auto [lo, hi] = lik.predictive_interval(f, o.level);
  const auto yy = y.to(torch::kFloat64);
  return conformal_quantile(torch::maximum(lo - yy, yy - hi), o.level);
}

double fit_temp(const CalibrationOptions&, const likelihoods::Likelihood&, const torch::Tensor& f,
                const torch::Tensor& y) {
  return fit_temperature(mixture_probabilities(f), y);
}

// The registered kinds: a new one is its fit here, one line, and its test.
const std::vector<Kind>& kinds() {
  static const std::vector<Kind> k = {
      {"conformal", true, true, fit_conformal,
       "split-conformal intervals (regression) or prediction sets (classification) with guaranteed coverage "
       "calibration.level"},
      {"cqr", true, false, fit_cqr,
       "conformalized quantile regression: the model's central calibration.level interval [lo, hi] widened (or "
       "narrowed) by the conformal quantile Q of max(lo - y, y - hi), guaranteed coverage calibration.level with "
       "widths that follow the model's (heteroscedastic, skewed) predictive"},
      {"temperature", false, true, fit_temp, "temperature scaling of a classifier's probabilities"},
  };
  return k;
}

const Kind& kind_of(const std::string& name) { return options::find_kind(kinds(), name, "calibration.kind"); }

// The regression numbers of interval [lo, hi] against y: coverage and mean width.
json interval_numbers(const torch::Tensor& lo, const torch::Tensor& hi, const torch::Tensor& y) {
  const auto yy = y.to(torch::kFloat64);
  return {{"coverage", num(((yy >= lo) & (yy <= hi)).to(torch::kFloat64).mean().item<double>())},
          {"mean_width", num((hi - lo).mean().item<double>())}};
}

json classification_numbers(const torch::Tensor& p, const torch::Tensor& y) {
  const auto m = metrics::classification_metrics(p.clamp_min(1e-300).log().unsqueeze(0), y);
  return {{"mnll", num(m.mnll)}, {"ece", num(m.ece)}, {"error", num(m.error)}, {"brier", num(m.brier)}};
}

}  // namespace

std::vector<std::string> calibration_kinds() {
  std::vector<std::string> out = {"none"};
  for (const auto& k : kinds()) out.push_back(k.name);
  return out;
}

std::string calibration_help() {
  std::string out;
  for (const auto& k : kinds()) out += std::string("; ") + k.name + " = " + k.help;
  return "post-hoc calibration fitted on held-out training rows: none" + out;
}

json Fitted::to_json() const {
  return {{"kind", kind}, {"level", level}, {"value", num(value)}, {"rows", rows}};
}

Fitted Fitted::from_json(const json& j) {
  Fitted c;
  try {
    c.kind = j.at("kind").get<std::string>();
    c.level = j.at("level").get<double>();
    c.value = j.at("value").is_null() ? kInf : j.at("value").get<double>();
    c.rows = j.at("rows").get<int64_t>();
  } catch (const std::exception&) {
    throw Error("the stored calibration is damaged");
  }
  if (c.kind != "none") kind_of(c.kind);
  WHVI_CHECK(c.level >= 0 && c.level < 1 && c.rows >= 0 && !std::isnan(c.value) && (c.kind == "cqr" || !(c.value <= 0)),
             "the stored calibration is damaged");
  return c;
}

double conformal_quantile(const torch::Tensor& scores, double level) {
  const int64_t n = scores.numel();
  const auto k = static_cast<int64_t>(std::ceil((static_cast<double>(n) + 1) * level - 1e-12));
  if (k > n || n == 0) return kInf;
  return std::get<0>(scores.to(torch::kFloat64).reshape({-1}).sort()).index({k - 1}).item<double>();
}

double fit_temperature(const torch::Tensor& p, const torch::Tensor& y) {
  const auto logp = p.to(torch::kFloat64).clamp_min(1e-300).log();
  const auto idx = y.to(torch::kInt64).unsqueeze(1);
  const auto nll = [&](double log_t) {
    return -torch::log_softmax(logp / std::exp(log_t), 1).gather(1, idx).mean().item<double>();
  };
  // golden-section search on ln T over [ln 0.05, ln 20] (the NLL is
  // unimodal in 1/T: a log-partition function minus a linear term)
  return std::exp(golden_section_min(nll, std::log(0.05), std::log(20.0)));
}

std::pair<torch::Tensor, torch::Tensor> predictive_moments(const likelihoods::Likelihood& lik, const torch::Tensor& f) {
  const auto [mu, var] = lik.predictive_moments(f);
  const auto mean = mu.mean(0);
  return {mean, (mu.var(0, /*unbiased=*/false) + var.mean(0)).sqrt()};
}

void check_task(const CalibrationOptions& o, bool classification) {
  if (o.kind == "none") return;
  const auto& k = kind_of(o.kind);
  WHVI_CHECK(classification ? k.classification : k.regression, "calibration.kind ", o.kind, " is for ",
             k.regression ? "regression" : "classification", " and this is ",
             classification ? "classification" : "regression",
             "; set calibration.kind: conformal (either task) or none");
}

Fitted fit(const CalibrationOptions& o, const likelihoods::Likelihood& lik, const torch::Tensor& f,
           const torch::Tensor& y) {
  Fitted c;
  if (o.kind == "none") return c;
  check_task(o, classifies(lik));
  const auto& k = kind_of(o.kind);
  c.kind = o.kind;
  c.level = gives_interval(c) || o.kind == "conformal" ? o.level : 0;
  c.rows = y.size(0);
  c.value = k.fit(o, lik, f, y);
  return c;
}

bool gives_interval(const Fitted& c) { return c.kind == "conformal" || c.kind == "cqr"; }

std::pair<torch::Tensor, torch::Tensor> conformal_interval(const Fitted& c, const likelihoods::Likelihood& lik,
                                                           const torch::Tensor& f) {
  if (c.kind == "cqr") {
    const auto [lo, hi] = lik.predictive_interval(f, c.level);
    return {lo - c.value, hi + c.value};
  }
  const auto [mu, sd] = predictive_moments(lik, f);
  return {mu - c.value * sd, mu + c.value * sd};
}

json coverage_by_width_decile(const torch::Tensor& lo, const torch::Tensor& hi, const torch::Tensor& y) {
  const auto width = (hi - lo).to(torch::kFloat64).reshape({-1});
  const auto yy = y.to(torch::kFloat64).reshape({-1});
  const auto hit = ((yy >= lo.reshape({-1})) & (yy <= hi.reshape({-1}))).to(torch::kFloat64);
  const int64_t n = width.numel();
  const auto order = std::get<1>(width.sort(/*stable=*/true, 0, false));
  json out = json::array();
  for (int d = 0; d < 10; ++d) {
    const int64_t a = n * d / 10, b = n * (d + 1) / 10;
    if (b <= a) continue;
    const auto idx = order.slice(0, a, b);
    out.push_back({{"decile", d + 1},
                   {"rows", b - a},
                   {"mean_width", num(width.index_select(0, idx).mean().item<double>())},
                   {"coverage", num(hit.index_select(0, idx).mean().item<double>())}});
  }
  return out;
}

torch::Tensor probabilities(const Fitted& c, const torch::Tensor& f) {
  const auto p = mixture_probabilities(f);
  if (c.kind != "temperature") return p;
  return torch::softmax(p.clamp_min(1e-300).log() / c.value, 1);
}

torch::Tensor conformal_sets(const Fitted& c, const torch::Tensor& f) {
  return mixture_probabilities(f) >= 1 - c.value;
}

json evaluate(const Fitted& c, likelihoods::Likelihood& lik, const torch::Tensor& f, const torch::Tensor& y) {
  json out = c.to_json();
  if (c.kind == "temperature") {
    out["uncalibrated"] = classification_numbers(probabilities(Fitted{}, f), y);
    out["calibrated"] = classification_numbers(probabilities(c, f), y);
  } else if (c.kind == "conformal" && classifies(lik)) {
    const auto sets = conformal_sets(c, f);
    const auto hit = sets.gather(1, y.to(torch::kInt64).unsqueeze(1)).squeeze(1);
    out["calibrated"] = {{"coverage", num(hit.to(torch::kFloat64).mean().item<double>())},
                         {"mean_set_size", num(sets.to(torch::kFloat64).sum(1).mean().item<double>())}};
  } else if (gives_interval(c)) {
    const auto [lo, hi] = lik.predictive_interval(f, c.level);
    out["uncalibrated"] = interval_numbers(lo, hi, y);
    out["uncalibrated"]["by_width_decile"] = coverage_by_width_decile(lo, hi, y);
    const auto [clo, chi] = conformal_interval(c, lik, f);
    out["calibrated"] = interval_numbers(clo, chi, y);
    out["calibrated"]["by_width_decile"] = coverage_by_width_decile(clo, chi, y);
  }
  return out;
}

std::vector<options::Spec> option_specs() { return options::declare<CalibrationOptions>(); }

}  // namespace whvi::calibration
