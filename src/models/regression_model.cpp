#include "models/regression_model.h"

#include <cmath>

namespace whvi::models {

RegressionModel::RegressionModel(int64_t d_in, const config::Config& cfg, double y_mean,
                                 double y_std)
    : y_mean_(y_mean), y_std_(y_std) {
  WHVI_CHECK(y_std > 0 && std::isfinite(y_std) && std::isfinite(y_mean),
             "regression model: bad target statistics mean=", y_mean, " std=", y_std);
  const std::string kind = cfg.get_string("model.kind");
  const int64_t depth = cfg.get_int("model.depth"), width = cfg.get_int("model.width");
  activation_ = cfg.get_string("model.activation");
  std::string out_kind = cfg.get_string("model.output_layer");
  if (out_kind == "auto") out_kind = kind == "mcd" ? "mcd" : "mfg";
  if (out_kind == "same") out_kind = kind;
  int64_t in = d_in;
  for (int64_t l = 0; l < depth; ++l) {
    layers_.push_back(make_layer(kind, in, width, cfg, {false}));
    register_module("layer" + std::to_string(l), layers_.back());
    in = width;
  }
  layers_.push_back(make_layer(out_kind, in, 1, cfg, {true}));
  register_module("layer" + std::to_string(depth), layers_.back());
  log_noise_var_ = register_parameter(
      "log_noise_var", torch::full({1}, cfg.get_float("likelihood.init_log_noise_var")));
}

torch::Tensor RegressionModel::forward_std(const torch::Tensor& x, Mode mode) {
  torch::Tensor h = x;
  for (size_t l = 0; l < layers_.size(); ++l) {
    h = layers_[l]->forward(h, mode);
    if (l + 1 == layers_.size()) break;
    if (activation_ == "relu") h = torch::relu(h);
    else if (activation_ == "cos") h = torch::cos(h);
    else h = torch::tanh(h);
  }
  return h.squeeze(1);
}

torch::Tensor RegressionModel::kl() {
  torch::Tensor total = layers_[0]->kl();
  for (size_t l = 1; l < layers_.size(); ++l) total = total + layers_[l]->kl();
  return total;
}

int64_t RegressionModel::num_params() const { return count_trainable(*this); }

torch::Tensor gaussian_log_prob(const torch::Tensor& y, const torch::Tensor& f,
                                const torch::Tensor& log_var) {
  static const double kLog2Pi = std::log(2.0 * M_PI);  // ln(2 pi), not log2(pi) as the authors' code
  return -0.5 * (kLog2Pi + log_var + (y - f).square() * (-log_var).exp());
}

}  // namespace whvi::models
