// A network as ONNX nodes (`whvi export`; onnx/graph.h): its layers'
// sampling forward passes (BayesianLayer::export_onnx) with the activations
// between them, as RegressionModel::forward_standardized in Mode::kSample.
#pragma once

#include <string>

#include "models/regression_model.h"
#include "onnx/graph.h"

namespace whvi::models {

// The network on the standardised rows named `x` ([R, d_in]), every row its
// own draw: the output's name ([R], or [R, C] for C > 1 outputs); "" with
// `why` set (a phrase naming the part that does not export) otherwise.
std::string export_network(onnx::Graph& g, const RegressionModel& model, const std::string& x, std::string& why);

// The output layer's inputs ([R, width]; as features_standardized), "" with
// `why` set where a part does not export.
std::string export_features(onnx::Graph& g, const RegressionModel& model, const std::string& x, std::string& why);
// What the model's likelihood makes of network outputs `f` (its to_original),
// "" with `why` set where the likelihood does not export.
std::string export_likelihood(onnx::Graph& g, RegressionModel& model, const std::string& f, std::string& why);
// S predictive samples of the rows named `x` ([N, d_in]) as a variational
// method's predict() gives them: S copies of the rows, every row its own draw,
// then the likelihood's to_original: [S, N] or [S, N, C]; "" with `why` set.
std::string export_samples(onnx::Graph& g, RegressionModel& model, const std::string& x, int64_t S, std::string& why);

}  // namespace whvi::models
