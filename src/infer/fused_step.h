// The fused training step (training.engine: fused): the
// negative ELBO of variational.cpp and its gradient without autograd. The
// forward pass runs layer by layer on buffers kept from step to step
// (BayesianLayer::fused_forward), the likelihood's gradient (Gaussian or softmax) is
// written out, and the backward pass calls each layer's fused_backward, which
// adds the data term's and its KL's gradients straight into the parameters'
// .grad() (the optimiser's flat gradient buffer). No autograd graph, no
// per-step allocation of the large tensors, a handful of LibTorch calls per
// layer (GEMMs through OpenBLAS, the WHVI layer through its fused kernel).
//
// The draws are those of the autograd step from the same generator in the
// same order, so both paths give the same numbers to float rounding
// (tests/test_fused_step.cpp: loss and every gradient within 1e-5 relative in
// float32, 1e-12 in float64, and a finite-difference check). The autograd
// step stays the reference (training.engine: autograd); the default, auto,
// takes the fused step wherever it applies (engine_for()).
//
// Supported: MLPs (model.architecture mlp) of layers whose kind implements
// the fused step (mcd, mfg; whvi with its default structure and nf-whvi,
// each with a deterministic or no bias) with relu or tanh activations, the Gaussian or
// the softmax likelihood, on the CPU. fused_unsupported() names what is not.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/layer.h"
#include "models/regression_model.h"

namespace whvi::infer {

// Why `model` cannot take the fused step; empty if it can.
std::string fused_unsupported(const models::RegressionModel& model);


class FusedStep {
 public:
  explicit FusedStep(models::RegressionModel& model);
  // The negative ELBO of the mini-batch (xb [B, D], yb [B], standardised) with
  // S Monte Carlo samples per row, as negative_elbo(); ADDS its gradient into
  // every parameter's .grad() (which must exist: the optimiser's buffers).
  double loss_and_grad(const torch::Tensor& xb, const torch::Tensor& yb, int64_t n_train, int64_t S,
                       const at::Generator& gen);

 private:
  models::RegressionModel& model_;
  std::vector<models::FusedCache> caches_;
  std::vector<torch::Tensor> acts_, dacts_;  // activation outputs and their gradients, per hidden layer
  torch::Tensor df_;                           // dL/df [rows, outputs]
  // The likelihood's term of the mini-batch at the network's outputs: returns
  // -Σ log p(y | f), sets df_ = scale x its gradient in f (and the Gaussian's
  // noise gradient).
  double gaussian_nll_and_grad(const torch::Tensor& f, const torch::Tensor& yb, double scale);
  double softmax_nll_and_grad(const torch::Tensor& logits, const torch::Tensor& yb, double scale);
};

}  // namespace whvi::infer
