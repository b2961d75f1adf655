// A feature extractor before the fully connected layers (model.architecture
// other than mlp): the convolutional trunks (conv.cpp) and the random Fourier
// features of a GP approximation (rff.cpp).
#pragma once

#include <memory>
#include <string>

#include <torch/torch.h>

#include "config/config.h"
#include "models/layer.h"

namespace whvi::models {

class Trunk : public torch::nn::Module {
 public:
  // x [N, d_in] -> [N, features()]
  virtual torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) = 0;
  virtual torch::Tensor kl() = 0;
  virtual int64_t features() const = 0;
};

// The trunk of model.architecture (not mlp) for inputs of d_in columns.
std::shared_ptr<Trunk> make_trunk(const std::string& arch, int64_t d_in, const config::Config& cfg,
                                  const at::Generator& gen);
std::shared_ptr<Trunk> make_rff_trunk(int64_t d_in, const config::Config& cfg, const at::Generator& gen);
std::shared_ptr<Trunk> make_resnet18_trunk(int64_t d_in, const config::Config& cfg, const at::Generator& gen);

}  // namespace whvi::models
