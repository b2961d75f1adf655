#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "common/errors.h"
#include "likelihoods/kind.h"
#include "likelihoods/softmax.h"
#include "onnx/graph.h"

namespace whvi::likelihoods {

namespace {
struct SoftmaxOptions {
  std::string class_weights = "none";
  template <class V>
  void visit(V& v) {
    v.text("likelihood.class_weights", class_weights,
           "softmax: weigh each training row by its class: none; balanced (class c weighs n / (C n_c) with n_c its "
           "training rows in the split, so every class counts as much in total: for imbalanced classes); or "
           "class:weight pairs, comma-separated, classes named as the data spell them (e.g. \"yes:3,no:1\"; "
           "classes not named weigh 1). The metrics stay the unweighted ones; the record lists the weights");
    v.late();
  }
};
}  // namespace

SoftmaxLikelihood::SoftmaxLikelihood(int64_t num_classes, std::string class_weights)
    : classes_(num_classes), weights_spec_(std::move(class_weights)) {
  WHVI_CHECK(num_classes >= 2, "softmax likelihood: needs at least 2 classes, got ", num_classes);
}

namespace {
// "name:w,name:w" -> the weight of each named class (by its name in `names`).
std::vector<double> explicit_weights(const std::string& spec, const std::vector<std::string>& names) {
  std::vector<double> w(names.size(), 1.0);
  std::stringstream items(spec);
  for (std::string item; std::getline(items, item, ',');) {
    const auto colon = item.rfind(':');
    WHVI_CHECK(colon != std::string::npos && colon > 0, "likelihood.class_weights: '", item.substr(0, 60),
               "' is not class:weight; write balanced, none, or e.g. \"yes:3,no:1\"");
    const std::string name = item.substr(0, colon), num = item.substr(colon + 1);
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    WHVI_CHECK(!num.empty() && *end == '\0' && std::isfinite(v) && v > 0 && v <= 1e6, "likelihood.class_weights: "
               "the weight of class '", name.substr(0, 60), "' is '", num.substr(0, 30), "'; give a number in (0, 1e6]");
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      std::string known;
      for (size_t k = 0; k < names.size() && k < 20; ++k) known += (k ? ", " : "") + names[k];
      throw Error("likelihood.class_weights: the data have no class '" + name.substr(0, 60) + "' (classes: " +
                  known + (names.size() > 20 ? ", ..." : "") + "); name classes as the data spell them");
    }
    w[static_cast<size_t>(it - names.begin())] = v;
  }
  return w;
}
}  // namespace

void SoftmaxLikelihood::fit_targets(const torch::Tensor& y_train, const std::vector<std::string>& class_names) {
  names_ = class_names;
  if (names_.size() != static_cast<size_t>(classes_)) {
    names_.clear();
    for (int64_t k = 0; k < classes_; ++k) names_.push_back(std::to_string(k));
  }
  if (weights_spec_ == "none" || weights_spec_.empty()) {
    weights_ = torch::Tensor();
    return;
  }
  std::vector<double> w;
  if (weights_spec_ == "balanced") {
    const auto counts = torch::bincount(y_train.to(torch::kInt64).flatten(), {}, classes_).to(torch::kFloat64);
    const double n = static_cast<double>(y_train.numel());
    for (int64_t k = 0; k < classes_; ++k) {
      const double c = counts[k].item<double>();
      w.push_back(c > 0 ? n / (static_cast<double>(classes_) * c) : 1.0);
    }
  } else {
    w = explicit_weights(weights_spec_, names_);
  }
  weights_ = torch::tensor(w, torch::kFloat64);
}

void SoftmaxLikelihood::set_temperature(double t) {
  WHVI_CHECK(std::isfinite(t) && t > 0, "softmax likelihood: a temperature must be a positive number, got ", t);
  temperature_ = t;
}

std::vector<std::pair<std::string, double>> SoftmaxLikelihood::fitted() const {
  if (temperature_ == 1.0) return {};
  return {{"temperature", temperature_}};
}

void SoftmaxLikelihood::set_fitted(const std::string& name, double value) {
  if (name != "temperature") Likelihood::set_fitted(name, value);
  set_temperature(value);
}

std::string SoftmaxLikelihood::fitted_text() const {
  if (temperature_ == 1.0) return "";
  std::ostringstream o;
  o.precision(4);
  o << "each sample's logits divided by the temperature " << temperature_
    << " fitted at the kept step (training.stopping_temperature)";
  return o.str();
}

std::vector<std::pair<std::string, double>> SoftmaxLikelihood::learned() const {
  std::vector<std::pair<std::string, double>> out;
  if (temperature_ != 1.0) out.emplace_back("temperature", temperature_);
  if (!weights_.defined()) return out;
  for (int64_t k = 0; k < classes_; ++k)
    out.emplace_back("class_weight/" + names_[static_cast<size_t>(k)], weights_[k].item<double>());
  return out;
}

namespace {
torch::Tensor labels_of(const torch::Tensor& y, int64_t rows, int64_t classes) {
  WHVI_CHECK_AS(ShapeError, y.dim() == 1 && y.size(0) == rows, "softmax likelihood: ", rows,
                " rows of outputs but labels of shape ", y.sizes());
  return y.to(torch::kInt64);
}
}  // namespace

torch::Tensor SoftmaxLikelihood::nll_sum(const torch::Tensor& f, const torch::Tensor& y) {
  WHVI_CHECK_AS(ShapeError, f.dim() == 2 && f.size(1) == classes_, "softmax likelihood: outputs of shape ",
                f.sizes(), ", expected [rows, ", classes_, "]");
  const auto idx = labels_of(y, f.size(0), classes_);
  const auto lp = torch::log_softmax(f, 1).gather(1, idx.unsqueeze(1)).squeeze(1);
  if (!weights_.defined()) return -lp.sum();
  return -(lp * weights_.to(f.scalar_type()).index_select(0, idx)).sum();
}

torch::Tensor SoftmaxLikelihood::sample(const torch::Tensor& f, const at::Generator& gen) const {
  torch::NoGradGuard ng;
  const auto p = torch::softmax(f.detach().to(torch::kFloat64), 1);
  return torch::multinomial(p, 1, true, gen).squeeze(1).to(f.scalar_type());
}

torch::Tensor SoftmaxLikelihood::to_original(const torch::Tensor& f) const {
  const auto f64 = f.to(torch::kFloat64);
  return torch::log_softmax(temperature_ == 1.0 ? f64 : f64 / temperature_, -1);
}

std::string SoftmaxLikelihood::export_onnx(onnx::Graph& g, const std::string& f) const {
  const auto z = temperature_ == 1.0 ? f : g.op("Div", {f, g.scalar(temperature_)});
  return g.op("LogSoftmax", {z}, {onnx::Attr::integer("axis", -1)});
}

Evaluation SoftmaxLikelihood::evaluate(const torch::Tensor& f, const torch::Tensor& y) {
  const auto m = metrics::classification_metrics(f, y);
  return {metrics::to_metrics(m), m.bins};
}

std::optional<std::string> SoftmaxLikelihood::fit_problem(const torch::Tensor& f, const torch::Tensor& y) const {
  const auto idx = labels_of(y, f.size(0), classes_);
  const double nll =
      -torch::log_softmax(f.to(torch::kFloat64), 1).gather(1, idx.unsqueeze(1)).mean().item<double>();
  const double uniform = std::log(static_cast<double>(classes_));
  if (nll <= 10.0 * uniform) return std::nullopt;
  std::ostringstream os;
  os << "the mean network's training negative log-likelihood is " << nll << " nats per row (predicting "
     << "every class equally gives " << uniform << ")";
  return os.str();
}

double SoftmaxLikelihood::noise_var_original() const { return std::nan(""); }

LikelihoodKind softmax_likelihood_kind() {
  return likelihood_kind<SoftmaxOptions>("softmax", true, [](const SoftmaxOptions& o, double, double, int64_t k) {
    return std::make_shared<SoftmaxLikelihood>(k, o.class_weights);
  }).described("classification: a categorical likelihood over the network's C outputs").with_fused_step();
}

}  // namespace whvi::likelihoods
