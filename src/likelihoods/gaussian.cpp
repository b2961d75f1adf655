#include <cmath>
#include <sstream>

#include "common/draws.h"
#include "common/errors.h"
#include "likelihoods/likelihood.h"

namespace whvi::likelihoods {

namespace {
constexpr double kLnTwoPi = 1.8378770664093453;  // ln(2 pi)
}

GaussianOptions GaussianOptions::from(const config::Config& cfg) {
  GaussianOptions o;
  o.init_log_noise_var = cfg.get_float("likelihood.init_log_noise_var");
  o.steps_fixed = cfg.get_int("training.steps_fixed_noise");
  o.lr_factor = cfg.get_float("likelihood.lr_factor");
  return o;
}

GaussianLikelihood::GaussianLikelihood(const GaussianOptions& o, double y_mean, double y_std)
    : opt_(o), y_mean_(y_mean), y_std_(y_std) {
  WHVI_CHECK(y_std > 0 && std::isfinite(y_std) && std::isfinite(y_mean),
             "gaussian likelihood: bad target statistics mean=", y_mean, " std=", y_std);
  log_noise_var_ = register_parameter("log_noise_var", torch::full({1}, o.init_log_noise_var));
}

torch::Tensor GaussianLikelihood::nll_sum(const torch::Tensor& f, const torch::Tensor& y) {
  const auto& lnv = log_noise_var_;
  return 0.5 * (static_cast<double>(f.numel()) * (kLnTwoPi + lnv) + (y - f).square().sum() * (-lnv).exp());
}

torch::Tensor Likelihood::nll_sum_group(const std::vector<Likelihood*>&, const torch::Tensor&, const torch::Tensor&) {
  throw Error(std::string("training.batched_splits: the ") + task() + " likelihood cannot train splits as one "
              "batched model (supported: gaussian); set training.batched_splits: 1");
}

torch::Tensor GaussianLikelihood::nll_sum_group(const std::vector<Likelihood*>& group, const torch::Tensor& f,
                                                const torch::Tensor& y) {
  std::vector<torch::Tensor> lnvs;
  for (auto* l : group) lnvs.push_back(static_cast<GaussianLikelihood*>(l)->log_noise_var_);
  const auto lnv = torch::cat(lnvs);  // [S]
  return 0.5 * (static_cast<double>(f.size(1)) * (kLnTwoPi + lnv) + (y - f).square().sum(1) * (-lnv).exp());
}

torch::Tensor GaussianLikelihood::sample(const torch::Tensor& f, const at::Generator& gen) const {
  torch::NoGradGuard ng;
  const double sd = std::exp(0.5 * log_noise_var_.item<double>());
  return f.detach() + sd * whvi::randn(f.sizes(), gen, f.options());
}

torch::Tensor GaussianLikelihood::to_original(const torch::Tensor& f) const {
  return f.to(torch::kFloat64) * y_std_ + y_mean_;
}

double GaussianLikelihood::noise_var_original() const {
  return std::exp(log_noise_var_.item<double>()) * y_std_ * y_std_;
}

double Evaluation::metric(const std::string& name) const {
  for (const auto& [k, v] : metrics)
    if (k == name) return v;
  return std::nan("");
}

Evaluation GaussianLikelihood::evaluate(const torch::Tensor& f, const torch::Tensor& y) {
  return {train::to_metrics(train::regression_metrics(f, y, noise_var_original())), {}};
}

std::optional<std::string> GaussianLikelihood::fit_problem(const torch::Tensor& f, const torch::Tensor& y) const {
  const double rmse = (f.to(torch::kFloat64) - y.to(torch::kFloat64)).square().mean().sqrt().item<double>();
  if (rmse <= 10.0) return std::nullopt;
  std::ostringstream os;
  os << "the mean network's training RMSE is " << rmse
     << " standard deviations of the targets (a constant predictor has 1)";
  return os.str();
}

std::optional<std::string> GaussianLikelihood::health_problem() const {
  const double lnv = log_noise_var_.item<double>();
  if (lnv <= std::max(std::log(100.0), opt_.init_log_noise_var + std::log(10.0))) return std::nullopt;
  std::ostringstream os;
  os << "the noise variance grew to " << std::exp(lnv) << " times the variance of the training targets";
  return os.str();
}

std::string GaussianLikelihood::log_text() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "noise var %.4g", std::exp(log_noise_var_.item<double>()));
  return buf;
}

std::shared_ptr<Likelihood> make_likelihood(const config::Config& cfg, double y_mean, double y_std,
                                            int64_t num_classes) {
  const std::string kind = cfg.get_string("likelihood.kind");
  const std::string ds = cfg.get_string("data.dataset");
  if (kind == "gaussian") {
    WHVI_CHECK(num_classes == 0, cfg.source(), ": data set '", ds, "' is a classification data set (",
               num_classes, " classes), but likelihood.kind is gaussian; set likelihood.kind: softmax");
    return std::make_shared<GaussianLikelihood>(GaussianOptions::from(cfg), y_mean, y_std);
  }
  if (kind == "hetero-gaussian") {
    WHVI_CHECK(num_classes == 0, cfg.source(), ": data set '", ds, "' is a classification data set (",
               num_classes, " classes), but likelihood.kind is hetero-gaussian; set likelihood.kind: softmax");
    return std::make_shared<HeteroGaussianLikelihood>(y_mean, y_std);
  }
  if (kind == "softmax") {
    WHVI_CHECK(num_classes >= 2, cfg.source(), ": likelihood.kind softmax needs a classification data set "
               "(eeg, magic, letter), but '", ds, "' has real-valued targets; set likelihood.kind: gaussian");
    return std::make_shared<SoftmaxLikelihood>(num_classes);
  }
  throw Error("likelihood.kind '" + kind + "' is not registered; registered: gaussian, hetero-gaussian, softmax");
}

std::vector<std::string> registered_likelihoods() { return {"gaussian", "hetero-gaussian", "softmax"}; }

}  // namespace whvi::likelihoods
