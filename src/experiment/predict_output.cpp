// whvi predict's output lines (predict_output.h).
#include "experiment/predict_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/io.h"
#include "likelihoods/likelihood.h"

namespace whvi::experiment::predict_output {
namespace {
using nlohmann::json;

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// What the calibration guarantees or changes, for the log.
std::string calibration_text(const calibration::Fitted& c) {
  if (c.kind == "temperature")
    return "probabilities temperature-scaled (T = " + num(c.value) + ", fitted on " + std::to_string(c.rows) +
           " held-out rows)";
  if (c.kind == "cqr")
    return "conformalized quantile regression's " + num(c.level) + " intervals (the model's interval widened by Q = " +
           num(c.value) + ", from " + std::to_string(c.rows) + " held-out rows): they cover a new row's target with "
           "probability at least " + num(c.level) + " when the rows are exchangeable with the training data";
  return "conformal " + num(c.level) + " intervals/sets (q = " + num(c.value) + " from " + std::to_string(c.rows) +
         " held-out rows): they cover a new row's target with probability at least " + num(c.level) +
         " when the rows are exchangeable with the training data";
}

}  // namespace

void RowNamer::check(bool finite, int64_t i) const {
  WHVI_CHECK(finite, "'", input, "' row ", rows[static_cast<size_t>(i)],
             ": the model's prediction is not a finite number (the row is too far outside the training data); "
             "check the row");
}

std::string classification_lines(const torch::Tensor& f, const json& classes, const calibration::Fitted& cal,
                                 const RowNamer& where) {
  const auto logp = f.dim() == 3 ? f : f.unsqueeze(0);  // [S, n, C]
  const auto ps = logp.exp();
  const auto p_raw = ps.mean(0);
  const auto p = cal.kind == "temperature" ? calibration::probabilities(cal, logp) : p_raw;
  const auto entropy = -(p * p.clamp_min(1e-300).log()).sum(1);
  const auto expected = -(ps * logp).sum(2).mean(0);
  const auto mi = (-(p_raw * p_raw.clamp_min(1e-300).log()).sum(1) - expected).clamp_min(0.0);
  const auto sets = cal.kind == "conformal" ? calibration::conformal_sets(cal, logp) : torch::Tensor();
  const auto best = p.max(1);
  const auto conf = std::get<0>(best), arg = std::get<1>(best);
  const auto finite = p.isfinite().all(1) & entropy.isfinite() & mi.isfinite();
  std::string text;
  for (int64_t i = 0; i < p.size(0); ++i) {
    where.check(finite[i].item<bool>(), i);
    for (int64_t c = 0; c < p.size(1); ++c) text += num(p[i][c].item<double>()) + ",";
    text += csv_field(classes[arg[i].item<int64_t>()].get<std::string>()) + "," + num(conf[i].item<double>()) + "," +
            num(entropy[i].item<double>()) + "," + num(mi[i].item<double>());
    if (sets.defined()) {
      std::string set;
      for (int64_t c = 0; c < p.size(1); ++c)
        if (sets[i][c].item<bool>()) set += (set.empty() ? "" : "|") + classes[c].get<std::string>();
      text += "," + csv_field(set);
    }
    text += "\n";
  }
  return text;
}

std::string regression_lines(const torch::Tensor& f, likelihoods::Likelihood& lik, double noise_var, double interval,
                             const calibration::Fitted& cal, bool log_target, const RowNamer& where) {
  torch::Tensor mean, epi, alea, lo, hi;
  if (f.dim() == 3 && std::isfinite(noise_var) && noise_var > 0) {
    // Gaussian components from a model that integrates its uncertainty out (gp, blr):
    // the likelihood's σ² is the aleatoric part, the rest of each variance epistemic
    const auto [mu, var] = likelihoods::regression_samples(f, noise_var);
    std::tie(lo, hi) = lik.predictive_interval(f, interval);
    if (log_target) {  // y log-normal given f ~ N(mu, var − σ²): Var(y | f) = (e^σ² − 1) e^(2f + σ²)
      const auto m = (mu + 0.5 * var).exp();
      mean = m.mean(0);
      const auto total = (2 * mu + 2 * var).exp().mean(0) - mean.square();
      const auto a2 = (std::exp(noise_var) - 1) * (2 * mu + 2 * var - noise_var).exp().mean(0);
      alea = a2.sqrt();
      epi = (total - a2).clamp_min(0).sqrt();
      lo = lo.exp(), hi = hi.exp();
    } else {
      mean = mu.mean(0);
      alea = torch::full_like(mean, std::sqrt(noise_var));
      epi = (mu.var(0, /*unbiased=*/false) + (var - noise_var).clamp_min(0).mean(0)).sqrt();
    }
  } else if (log_target) {
    // a model of ln y: the log-normal mixture's moments (law of total
    // variance over the samples) and the log scale's interval, exponentiated
    const auto [mu, var] = lik.predictive_moments(f);
    const auto m = (mu + 0.5 * var).exp();  // E[y | sample s]
    mean = m.mean(0);
    epi = m.var(0, /*unbiased=*/false).sqrt();
    alea = ((var.exp() - 1) * (2 * mu + var).exp()).mean(0).sqrt();
    std::tie(lo, hi) = lik.predictive_interval(f, interval);
    lo = lo.exp(), hi = hi.exp();
  } else if (f.dim() == 3) {
    // hetero-gaussian, mixture: each sample has its own mean and variance per row
    const auto [mu, var] = lik.predictive_moments(f);
    mean = mu.mean(0);
    epi = mu.var(0, /*unbiased=*/false).sqrt();
    alea = var.mean(0).sqrt();
    std::tie(lo, hi) = lik.predictive_interval(f, interval);
  } else {
    const auto mu = f.dim() == 2 ? f : f.view({f.size(0), -1});  // [S, n]
    mean = mu.mean(0);
    epi = mu.var(0, /*unbiased=*/false).sqrt();
    alea = torch::full_like(mean, std::sqrt(std::max(noise_var, 0.0)));
    std::tie(lo, hi) = lik.predictive_interval(mu, interval);
  }
  const auto sd = (epi.square() + alea.square()).sqrt();
  const auto finite = mean.isfinite() & sd.isfinite() & lo.isfinite() & hi.isfinite();
  torch::Tensor clo, chi;  // the conformal interval (an infinite one is written as inf)
  if (calibration::gives_interval(cal)) std::tie(clo, chi) = calibration::conformal_interval(cal, lik, f);
  if (clo.defined() && log_target) clo = clo.exp(), chi = chi.exp();  // ln is monotone: the coverage holds
  std::string text;
  for (int64_t i = 0; i < mean.size(0); ++i) {
    where.check(finite[i].item<bool>(), i), text += num(mean[i].item<double>()) + "," + num(sd[i].item<double>()) + "," + num(epi[i].item<double>()) + "," +
            num(alea[i].item<double>()) + "," + num(lo[i].item<double>()) + "," + num(hi[i].item<double>());
    if (clo.defined()) text += "," + num(clo[i].item<double>()) + "," + num(chi[i].item<double>());
    text += "\n";
  }
  return text;
}

void log_predictive(const likelihoods::Likelihood& lik, const calibration::Fitted& cal) {
  if (cal.on()) spdlog::info("predict: {}", calibration_text(cal));
  if (const auto text = lik.fitted_text(); !text.empty()) spdlog::info("predict: {}", text);
}

std::string output_header(const PredictOptions& o, bool classify, const json& classes, const calibration::Fitted& cal) {
  const bool conformal = calibration::gives_interval(cal);
  std::vector<std::string> own = {"row"};
  if (!classify) {
    own.insert(own.end(), {"mean", "std", "epistemic_std", "aleatoric_std", "lower", "upper"});
    if (conformal) own.insert(own.end(), {"conformal_lower", "conformal_upper"});
  } else {
    for (const auto& c : classes) own.push_back("p_" + c.get<std::string>());
    own.insert(own.end(), {"predicted", "confidence", "entropy", "mutual_information"});
    if (conformal) own.push_back("conformal_set");
  }
  for (size_t i = 0; i < o.keep.size(); ++i) {
    const auto& k = o.keep[i];
    WHVI_CHECK(std::find(o.keep.begin(), o.keep.begin() + static_cast<std::ptrdiff_t>(i), k) ==
                   o.keep.begin() + static_cast<std::ptrdiff_t>(i),
               "--keep names the column '", printable(k, 60), "' twice; name each column once");
    WHVI_CHECK(std::find(own.begin(), own.end(), k) == own.end(), "--keep: the column '", printable(k, 60),
               "' has the name of a column whvi writes itself; rename it in the input, or leave it out of --keep");
  }
  std::string head = "row,";
  for (const auto& k : o.keep) head += csv_field(k) + ",";
  for (size_t i = 1; i < own.size(); ++i) head += csv_field(own[i]) + (i + 1 < own.size() ? "," : "\n");
  return head;
}

std::string with_prefixes(const std::string& text, const std::vector<std::string>& prefix) {
  std::string joined;
  size_t line = 0;
  for (size_t a = 0; a < text.size(); ++line) {
    const size_t b = text.find('\n', a);
    joined += prefix[line];
    joined.append(text, a, b - a + 1);
    a = b + 1;
  }
  return joined;
}

}  // namespace whvi::experiment::predict_output
