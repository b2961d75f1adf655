// Post-hoc calibration (calibration.kind), fitted on held-out rows only: a
// share of each split's training rows (calibration.fraction) is carved out
// before training, never trained on, and the trained model's predictions on
// them fix the calibration; the test rows then get calibrated and
// uncalibrated numbers side by side, and `whvi predict` writes the calibrated
// outputs. Kinds (one registration each, calibration.cpp):
//   conformal    split-conformal prediction, for either task. Regression: the
//                score |y − μ|/σ (μ, σ the predictive mixture's mean and sd),
//                its ⌈(n+1)·level⌉-th smallest value q over the n calibration
//                rows, and the interval μ ± qσ. Classification: the score
//                1 − p_y (p the predictive probabilities), its q the same way,
//                and the set {c : p_c ≥ 1 − q}. For rows exchangeable with the
//                calibration rows the coverage is at least `level` (and below
//                level + 1/(n+1) where the scores have no ties).
//   cqr          regression: conformalized quantile regression (Romano,
//                Patterson & Candès 2019) on the model's own predictive: the
//                score max(lo − y, y − hi) of its central `level` interval
//                [lo, hi], its conformal quantile Q as above, and the interval
//                [lo − Q, hi + Q]: the same guarantee, with widths that follow
//                the predictive's (heteroscedastic, skewed, multimodal).
//   temperature  classification: the predictive probabilities p become
//                softmax(ln p / T), T minimising the calibration rows' NLL.
// Nothing here reads the config: the experiment passes the options.
#pragma once

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "common/options.h"
#include "likelihoods/likelihood.h"

namespace whvi::calibration {

// calibration.kind's values (none and the registered kinds) and help.
std::vector<std::string> calibration_kinds();
std::string calibration_help();

struct CalibrationOptions {
  std::string kind = "none";
  double fraction = 0.2, level = 0.95;
  template <class V>
  void visit(V& v) {
    static const std::string help = calibration_help();
    v.pick("calibration.kind", kind, calibration_kinds(), help.c_str());
    v.idle_when("calibration.kind", {"none"});
    v.num("calibration.fraction", fraction, 0.01, 0.9,
          "share of each split's training rows held out (not trained on) to fit the calibration");
    v.idle_when("calibration.kind", {"none"});
    v.num("calibration.level", level, 0.5, 0.999, "conformal, cqr: the coverage guaranteed");
    v.idle_when("calibration.kind", {"none"});
  }
};

// A fitted calibration: what `whvi predict` needs, stored in the checkpoint.
struct Fitted {
  std::string kind = "none";
  double level = 0, value = 0;  // conformal: q; temperature: T
  int64_t rows = 0;             // calibration rows it was fitted on
  bool on() const { return kind != "none"; }
  nlohmann::json to_json() const;
  static Fitted from_json(const nlohmann::json& j);  // throws whvi::Error when damaged
};

// The calibration of kind o.kind fitted on predictions f (predict()'s output
// in original units) of the calibration rows with targets y. Refuses a kind
// that does not fit the likelihood's task, naming the one that does.
Fitted fit(const CalibrationOptions& o, const likelihoods::Likelihood& lik, const torch::Tensor& f,
           const torch::Tensor& y);

// Refuses a split's `rows` calibration rows where the kind's fit needs more
// (conformal, cqr: level / (1 - level)), before training, not after.
void check_rows(const CalibrationOptions& o, int64_t rows);

// Refuses a kind that does not serve the task (before training), naming the one that does.
void check_task(const CalibrationOptions& o, bool classification);

// The test rows' numbers with and without the calibration, for the record.
nlohmann::json evaluate(const Fitted& c, likelihoods::Likelihood& lik, const torch::Tensor& f, const torch::Tensor& y);

// Regression: the predictive mixture's mean and sd per row of f (from
// lik.predictive_moments of each sample: any regression likelihood).
std::pair<torch::Tensor, torch::Tensor> predictive_moments(const likelihoods::Likelihood& lik, const torch::Tensor& f);
// Whether c calibrates a regression interval (conformal, cqr).
bool gives_interval(const Fitted& c);
// Conformal regression: the interval μ ± qσ per row (cqr: [lo − Q, hi + Q]
// of the model's central calibration.level interval).
std::pair<torch::Tensor, torch::Tensor> conformal_interval(const Fitted& c, const likelihoods::Likelihood& lik,
                                                           const torch::Tensor& f);
// Interval [lo, hi] against targets y by decile of its width (the narrowest
// tenth of the rows first): each decile's rows, mean width and coverage, the
// conditional coverage an average hides.
nlohmann::json coverage_by_width_decile(const torch::Tensor& lo, const torch::Tensor& hi, const torch::Tensor& y);
// Classification: the predictive probabilities [N, C] (the mixture's, then
// temperature-scaled where c is temperature scaling).
torch::Tensor probabilities(const Fitted& c, const torch::Tensor& f);
// Conformal classification: the prediction sets, [N, C] booleans.
torch::Tensor conformal_sets(const Fitted& c, const torch::Tensor& f);

// The ⌈(n+1)·level⌉-th smallest of n scores (+inf when that exceeds n): the
// split-conformal quantile.
double conformal_quantile(const torch::Tensor& scores, double level);
// The temperature T in [0.05, 20] minimising the mean NLL of softmax(ln p / T)
// for probabilities p [N, C] and labels y [N].
double fit_temperature(const torch::Tensor& p, const torch::Tensor& y);

std::vector<options::Spec> option_specs();

}  // namespace whvi::calibration
