// Data augmentation of image mini-batches (data.augment).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace whvi::data {

// The standard CIFAR augmentation of a mini-batch of flattened C x H x W
// images [B, C*H*W]: each image zero-padded by 4 pixels on every side,
// cropped back to H x W at an offset drawn uniformly from the 9 x 9
// positions, then mirrored left-right with probability 1/2; offsets and
// flips from `gen` (offsets [B, 2], then flips [B]). Zero is the mean pixel
// after the loaders' standardisation.
torch::Tensor augment_images(const torch::Tensor& xb, const std::vector<int64_t>& chw, const at::Generator& gen);

}  // namespace whvi::data
