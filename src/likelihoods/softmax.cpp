#include <cmath>
#include <sstream>

#include "common/errors.h"
#include "likelihoods/kind.h"

namespace whvi::likelihoods {

SoftmaxLikelihood::SoftmaxLikelihood(int64_t num_classes) : classes_(num_classes) {
  WHVI_CHECK(num_classes >= 2, "softmax likelihood: needs at least 2 classes, got ", num_classes);
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
  return -torch::log_softmax(f, 1).gather(1, idx.unsqueeze(1)).sum();
}

torch::Tensor SoftmaxLikelihood::sample(const torch::Tensor& f, const at::Generator& gen) const {
  torch::NoGradGuard ng;
  const auto p = torch::softmax(f.detach().to(torch::kFloat64), 1);
  return torch::multinomial(p, 1, true, gen).squeeze(1).to(f.scalar_type());
}

torch::Tensor SoftmaxLikelihood::to_original(const torch::Tensor& f) const {
  return torch::log_softmax(f.to(torch::kFloat64), -1);
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
  return likelihood_kind<options::None>("softmax", true, [](const options::None&, double, double, int64_t k) {
    return std::make_shared<SoftmaxLikelihood>(k);
  });
}

}  // namespace whvi::likelihoods
