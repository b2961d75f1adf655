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

// For tests of model.kind laplace (infer/laplace.cpp): its output layer's MAP
// weights θ* (float64, output by output: [w_{:,c}, b_c]) and design [h(x), 1].
torch::Tensor laplace_theta(Inference& laplace);
torch::Tensor laplace_design(Inference& laplace, const torch::Tensor& x);

}  // namespace whvi::infer
