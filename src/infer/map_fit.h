// One deterministic network trained to its MAP, for the methods that build a
// posterior on top of one (infer/laplace.cpp).
#pragma once

#include <memory>

#include "infer/inference.h"
#include "infer/variational.h"

namespace whvi::infer {

// A network of linear layers trained to the MAP of its weights: the
// mini-batch's negative log likelihood scaled to the n training rows plus, with
// prior, the weights' Gaussian prior (model.sghmc.prior_var; without it the
// likelihood alone, a maximum-likelihood fit regularised by stopping), with the
// optimiser of training.* (infer/ensemble.cpp: a deep ensemble of one member
// with ensemble.prior as prior). Its state's keys are those of that ensemble
// ("member0.").
std::unique_ptr<Inference> make_map_fit(const NetworkMaker& net, const VariationalOptions& vo, bool prior);

// A method that trains a MAP network in steps and fits a posterior on it once
// after them (ClosedForm::fit from every training row; infer/laplace.cpp,
// infer/swag.cpp): the steps, their bookkeeping, the likelihood and the network
// are the MAP fit's.
class OnMapFit : public Inference, public ClosedForm {
 public:
  explicit OnMapFit(std::unique_ptr<Inference> map) : map_(std::move(map)) {}
  void to(torch::ScalarType dtype) override { map_->to(dtype); }
  void to_device(const torch::Device& device) override { map_->to_device(device); }
  void begin(int64_t n, int64_t total, const at::Generator& gen) override { map_->begin(n, total, gen); }
  torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) override {
    return map_->step(xb, yb, t, gen);
  }
  double step_size(int64_t t) const override { return map_->step_size(t); }
  double max_abs_param() const override { return map_->max_abs_param(); }
  void end() override { map_->end(); }
  ClosedForm* after_steps() override { return this; }
  torch::Tensor mean_standardized(const torch::Tensor& x) override { return map_->mean_standardized(x); }
  likelihoods::Likelihood& likelihood() override { return map_->likelihood(); }
  models::RegressionModel& model() override { return map_->model(); }

 protected:
  std::unique_ptr<Inference> map_;
};

// For tests of model.kind laplace (infer/laplace.cpp): its output layer's MAP
// weights θ* (float64, output by output: [w_{:,c}, b_c]) and design [h(x), 1].
torch::Tensor laplace_theta(Inference& laplace);
torch::Tensor laplace_design(Inference& laplace, const torch::Tensor& x);

}  // namespace whvi::infer
