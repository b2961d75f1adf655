// How a checkpoint's rows become the network's inputs beyond their encoding
// (shared by whvi predict and whvi export): the values missing cells take and
// the one-hot inputs that training never set.
#pragma once

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "experiment/checkpoint.h"

namespace whvi::experiment {

// The raw value each input takes where its cell is missing: the stored x_fill
// (the training split's median / most frequent category) or, for a checkpoint
// whose training rows had no missing cell, a numeric column's training mean
// and a text column's most frequent category (its one-hot's largest mean).
// `columns`: the input encoding's "columns".
torch::Tensor input_fill(const nlohmann::json& columns, const CheckpointMeta& meta);
// The one-hot (and missing-indicator) inputs that the training rows never set
// (x_mean 0): zero at prediction time, as in training. Bool [inputs].
torch::Tensor never_set_inputs(const nlohmann::json& columns, const torch::Tensor& x_mean);

}  // namespace whvi::experiment
