// Fill values and never-set inputs of a checkpoint's encoding (encoding.h).
#include "experiment/encoding.h"

#include <algorithm>

namespace whvi::experiment {
namespace {
// (categories, is a missing indicator) of each column; its inputs' count
struct Col {
  int64_t k;
  bool indicator;
  int64_t width() const { return k == 0 || indicator ? 1 : k; }
};
std::vector<Col> cols_of(const nlohmann::json& columns) {
  std::vector<Col> out;
  for (const auto& c : columns)
    out.push_back({static_cast<int64_t>(c["categories"].size()), c.value("missing_indicator", false)});
  return out;
}
}  // namespace

torch::Tensor input_fill(const nlohmann::json& columns, const CheckpointMeta& meta) {
  if (meta.x_fill.defined()) return meta.x_fill;
  const auto& x_mean = meta.x_mean;
  auto fill = torch::zeros_like(x_mean);
  int64_t c0 = 0;
  for (const auto& c : cols_of(columns)) {
    const int64_t w = c.width();
    if (c.indicator) fill[c0] = 0.0;
    else if (c.k == 0) fill[c0] = x_mean[c0];
    else fill[c0 + x_mean.narrow(0, c0, w).argmax().item<int64_t>()] = 1.0;
    c0 += w;
  }
  return fill;
}

torch::Tensor never_set_inputs(const nlohmann::json& columns, const torch::Tensor& x_mean) {
  auto onehot = torch::zeros({x_mean.numel()}, torch::kBool);
  int64_t c0 = 0;
  for (const auto& c : cols_of(columns)) {
    if (c.k > 0 && !c.indicator) onehot.narrow(0, c0, c.k).fill_(true);
    if (c.indicator) onehot[c0] = true;  // 0/1, zeroed as in training
    c0 += c.width();
  }
  return onehot & (x_mean == 0);
}

}  // namespace whvi::experiment
