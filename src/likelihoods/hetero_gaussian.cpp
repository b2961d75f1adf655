// The heteroscedastic Gaussian likelihood (likelihood.kind: hetero-gaussian):
// see likelihood.h. On the standardised scale, per row,
//   -log p(y | mu, s) = 0.5 (ln 2 pi + s + (y - mu)^2 e^{-s}),
// and in original units mean = mu y_std + y_mean, log variance = s + 2 ln y_std.
#include <cmath>
#include <sstream>

#include "common/draws.h"
#include "common/errors.h"
#include "likelihoods/hetero_gaussian.h"
#include "likelihoods/kind.h"

namespace whvi::likelihoods {

namespace {
constexpr double kLnTwoPi = 1.8378770664093453;  // ln(2 pi)
}

HeteroGaussianLikelihood::HeteroGaussianLikelihood(double y_mean, double y_std) : y_mean_(y_mean), y_std_(y_std) {
  WHVI_CHECK(y_std > 0 && std::isfinite(y_std) && std::isfinite(y_mean),
             "hetero-gaussian likelihood: bad target statistics mean=", y_mean, " std=", y_std);
}

torch::Tensor HeteroGaussianLikelihood::nll_sum(const torch::Tensor& f, const torch::Tensor& y) {
  WHVI_CHECK_AS(ShapeError, f.dim() == 2 && f.size(1) == 2 && y.dim() == 1 && y.size(0) == f.size(0),
                "hetero-gaussian likelihood: expected outputs [M, 2] and targets [M], got ", f.sizes(), " and ",
                y.sizes());
  const auto mu = f.select(1, 0), s = f.select(1, 1);
  return 0.5 * (static_cast<double>(y.size(0)) * kLnTwoPi + s.sum() + ((y - mu).square() * (-s).exp()).sum());
}

torch::Tensor HeteroGaussianLikelihood::sample(const torch::Tensor& f, const at::Generator& gen) const {
  torch::NoGradGuard ng;
  const auto mu = f.detach().select(1, 0), s = f.detach().select(1, 1);
  return mu + (0.5 * s).exp() * whvi::randn(mu.sizes(), gen, mu.options());
}

torch::Tensor HeteroGaussianLikelihood::to_original(const torch::Tensor& f) const {
  const auto g = f.to(torch::kFloat64);
  return torch::stack({g.select(-1, 0) * y_std_ + y_mean_, g.select(-1, 1) + 2.0 * std::log(y_std_)}, -1);
}

Evaluation HeteroGaussianLikelihood::evaluate(const torch::Tensor& f, const torch::Tensor& y) {
  const auto [mean, var] = regression_samples(f, std::nan(""));
  return {metrics::to_metrics(metrics::regression_metrics(mean, y, var)), {}};
}

std::optional<std::string> HeteroGaussianLikelihood::fit_problem(const torch::Tensor& f, const torch::Tensor& y) const {
  return regression_fit_problem(f.dim() == 2 ? f.select(1, 0) : f, y);
}

std::pair<torch::Tensor, torch::Tensor> regression_samples(const torch::Tensor& f, double noise_var) {
  if (f.dim() == 3) {
    WHVI_CHECK_AS(ShapeError, f.size(2) == 2, "regression predictions: expected [S, N] or [S, N, 2], got ",
                  f.sizes());
    return {f.select(2, 0), f.select(2, 1).exp()};
  }
  return {f, torch::full_like(f, noise_var)};
}

LikelihoodKind hetero_gaussian_likelihood_kind() {
  return likelihood_kind<options::None>("hetero-gaussian", false, [](const options::None&, double m, double s, int64_t) {
    return std::make_shared<HeteroGaussianLikelihood>(m, s);
  }).described("regression: the network outputs a mean and a log variance per input, so the noise depends on the "
               "input; the predictive is the mixture over samples");
}

}  // namespace whvi::likelihoods
