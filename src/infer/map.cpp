// model.kind map: one deterministic network trained to the MAP of its weights,
// the plain network every Bayesian method here is measured against. Its
// objective is the mini-batch's negative log likelihood scaled to the n
// training rows plus, with model.map.prior (on by default), the weights'
// Gaussian prior N(0, model.sghmc.prior_var) (the linear layer's own prior:
// 1/fan_in by default); off, the likelihood alone, a maximum-likelihood fit
// that stopping on held-out rows regularises. The optimiser is training.*'s.
// Its predictive is the likelihood's at the MAP weights: no weight
// uncertainty, so predict() gives one sample for any S (its epistemic variance
// is 0 and its intervals are the noise's alone).
//
// It is the MAP fit that laplace and swag build their posteriors on
// (infer/map_fit.h), on its own: a deep ensemble of one member with a prior.
#include "infer/map_fit.h"

namespace whvi::infer {

namespace {

struct MapOptions {
  bool prior = true;
  VariationalOptions optimiser;
  template <class V>
  void visit(V& v) {
    v.flag("model.map.prior", prior,
           "model.kind map: add the weights' Gaussian prior N(0, model.sghmc.prior_var) to the NLL (the MAP); off = the "
           "NLL alone (maximum likelihood, regularised by stopping on held-out rows)");
    v.late();
    v.part(optimiser);
  }
};

// The MAP fit under its own name: every call is the fit's.
class Map : public Inference {
 public:
  explicit Map(std::unique_ptr<Inference> fit) : fit_(std::move(fit)) {}
  void to(torch::ScalarType dtype) override { fit_->to(dtype); }
  void to_device(const torch::Device& device) override { fit_->to_device(device); }
  void begin(int64_t n, int64_t total, const at::Generator& gen) override { fit_->begin(n, total, gen); }
  torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) override {
    return fit_->step(xb, yb, t, gen);
  }
  double step_size(int64_t t) const override { return fit_->step_size(t); }
  double max_abs_param() const override { return fit_->max_abs_param(); }
  void end() override { fit_->end(); }
  bool predicts_concurrently() const override { return fit_->predicts_concurrently(); }
  bool draws_weights_only() const override { return fit_->draws_weights_only(); }
  torch::Tensor predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) override {
    return fit_->predict(x, S, gen);
  }
  std::string export_onnx(onnx::Graph& g, const std::string& x, int64_t S, std::string& why) override {
    return fit_->export_onnx(g, x, S, why);
  }
  torch::Tensor mean_standardized(const torch::Tensor& x) override { return fit_->mean_standardized(x); }
  likelihoods::Likelihood& likelihood() override { return fit_->likelihood(); }
  std::vector<likelihoods::Likelihood*> predicting_likelihoods() override { return fit_->predicting_likelihoods(); }
  int64_t num_params() const override { return fit_->num_params(); }
  NamedTensors state() override { return fit_->state(); }
  const char* method() const override { return "map"; }
  models::RegressionModel& model() override { return fit_->model(); }

 private:
  std::unique_ptr<Inference> fit_;
};

std::unique_ptr<Inference> make_map(const NetworkMaker& net, const MapOptions& o) {
  return std::make_unique<Map>(make_map_fit(net, o.optimiser, o.prior));
}

}  // namespace

MethodKind map_method() { return method_kind("map", make_map, Capabilities().minimises("-log posterior")); }

}  // namespace whvi::infer
