// whvi predict's output: the header line and the text of each row's
// prediction (regression moments and interval, class probabilities), from a
// chunk's predictive samples; what the checkpoint's calibration does, for the log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "calibration/calibration.h"
#include "experiment/experiment.h"

namespace whvi::likelihoods {
class Likelihood;
}

namespace whvi::experiment::predict_output {

// Names row i of a chunk in an error: a prediction that is not a finite
// number is an error naming the row, never a "nan" written with exit status 0.
struct RowNamer {
  const std::string& input;
  const std::vector<int64_t>& rows;  // each chunk row's 1-based row in the file (the header is row 1)
  void check(bool finite, int64_t i) const;
};

// Output lines of a classifier: class probabilities, the predicted class, its
// probability, the predictive entropy and the mutual information (with
// temperature scaling, the first four are the calibrated predictive's; the
// mutual information is the samples'); with conformal sets, the set's classes.
std::string classification_lines(const torch::Tensor& f, const nlohmann::json& classes,
                                 const calibration::Fitted& cal, const RowNamer& where);

// Output lines of a regression model: the predictive mean and sd, its
// epistemic and aleatoric parts and the central interval (and the conformal one).
std::string regression_lines(const torch::Tensor& f, likelihoods::Likelihood& lik, double noise_var, double interval,
                             const calibration::Fitted& cal, bool log_target, const RowNamer& where);

// What the checkpoint's predictive carries besides the network, for the log.
void log_predictive(const likelihoods::Likelihood& lik, const calibration::Fitted& cal);

// The output's header line: row, the kept columns, then the predictions'.
// Every name once: a kept column named twice, or named like one of whvi's
// own (row, mean, p_<class>, ...), is refused.
std::string output_header(const PredictOptions& o, bool classify, const nlohmann::json& classes,
                          const calibration::Fitted& cal);

// Each line of `text` with its row's prefix (number and kept cells) before it.
std::string with_prefixes(const std::string& text, const std::vector<std::string>& prefix);

}  // namespace whvi::experiment::predict_output
