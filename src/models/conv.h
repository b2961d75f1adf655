// Convolutional trunks for image data (see conv.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nn/conv_filter.h"
#include "nn/layer.h"
#include "models/trunk.h"

namespace whvi::models {

struct ConvOptions;  // nn/layer_options.h

// One convolution of the kind model.conv names (its filter: nn/conv_filter.h),
// on [N, C, H, W].
class ConvLayer : public torch::nn::Module {
 public:
  // ksize x ksize filters (3 or 1), padding ksize / 2, the given stride.
  // o: the trunk's typed options, read from the config (o.filter builds the
  // filter of the kind it names).
  ConvLayer(const ConvOptions& o, int64_t cin, int64_t cout, const at::Generator& gen, int64_t ksize = 3,
            int64_t stride = 1);
  ~ConvLayer() override;
  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx);
  torch::Tensor kl();
  // lowrank-mcd: the rank of its filter matrix; whvi: the padded patch size D.
  int64_t rank() const;

 private:
  std::unique_ptr<ConvFilter> filter_;
};

// Batch normalisation over (N, H, W) per channel: batch statistics in a
// training step (ForwardCtx::training; the running averages updated with
// momentum 0.1), the running averages otherwise; scale and shift optimised.
class BatchNorm : public torch::nn::Module {
 public:
  explicit BatchNorm(int64_t channels);
  torch::Tensor forward(const torch::Tensor& x, const ForwardCtx& ctx);

 private:
  torch::Tensor gamma_, beta_, mean_, var_;
};

class ConvTrunk : public Trunk {
 public:
  // arch: model.architecture (not mlp); d_in: the flattened image size, which
  // fixes the image shape (3072 -> 3x32x32, 784 -> 1x28x28).
  ConvTrunk(const std::string& arch, int64_t d_in, const ConvOptions& co, const at::Generator& gen);
  ~ConvTrunk() override;
  // x [N, C*H*W] -> [N, features()]
  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) override;
  torch::Tensor kl() override;
  int64_t features() const override { return features_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<int64_t> shape_;
  int64_t features_ = 0;
};

// The image shape [C, H, W] of a flattened input of d_in values (an error
// naming the fix when it is not an image size whvi knows).
std::vector<int64_t> image_shape_for(int64_t d_in);

}  // namespace whvi::models
