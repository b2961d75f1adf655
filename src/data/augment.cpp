#include "data/augment.h"

namespace whvi::data {

torch::Tensor augment_images(const torch::Tensor& xb, const std::vector<int64_t>& chw, const at::Generator& gen) {
  const int64_t B = xb.size(0), C = chw[0], H = chw[1], W = chw[2], P = 4;
  const auto offsets = torch::randint(0, 2 * P + 1, {B, 2}, gen, torch::kInt64);
  const auto flips = torch::rand({B}, gen) < 0.5;
  const auto padded = torch::constant_pad_nd(xb.view({B, C, H, W}), {P, P, P, P});
  auto out = torch::empty({B, C, H, W}, xb.options());
  const auto* off = offsets.data_ptr<int64_t>();
  const auto* flip = flips.data_ptr<bool>();
  for (int64_t i = 0; i < B; ++i) {
    auto crop = padded[i].narrow(1, off[2 * i], H).narrow(2, off[2 * i + 1], W);
    out[i].copy_(flip[i] ? crop.flip({2}) : crop);
  }
  return out.view({B, C * H * W});
}

}  // namespace whvi::data
