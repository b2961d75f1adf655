// Monte Carlo dropout (Gal & Ghahramani 2016), as the WHVI authors ran it:
// a deterministic linear layer followed by dropout on its outputs (before
// the activation), active in training and at test time; no dropout after the
// output layer. Inverted dropout (kept units scaled by 1/(1-p)), one mask per
// row. The KL of the variational interpretation is the weight decay
//   (1-p) l^2/2 (|W|^2 + |b|^2)   (l: model.mcd.length_scale; p = 0 at the output).
// Init: LibTorch's Linear default, U(+-1/sqrt(fan_in)) for W and b.
#include <cmath>

#include "models/layer.h"

namespace whvi::models {
namespace {

class McdLayer : public BayesianLayer {
 public:
  McdLayer(int64_t in, int64_t out, const config::Config& cfg, bool is_output, const at::Generator& gen)
      : BayesianLayer("mcd", in, out) {
    p_ = is_output ? 0.0 : cfg.get_float("model.mcd.dropout");
    const double l = cfg.get_float("model.mcd.length_scale");
    decay_ = (1.0 - p_) * l * l / 2.0;
    const double a = 1.0 / std::sqrt(static_cast<double>(in));
    torch::NoGradGuard ng;
    w_ = register_parameter("w", torch::empty({in, out}).uniform_(-a, a, gen));
    b_ = register_parameter("b", torch::empty({out}).uniform_(-a, a, gen));
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) override {
    const Mode mode = ctx.mode;
    const auto& gen = ctx.gen;
    auto y = torch::addmm(b_, x, w_);
    if (mode == Mode::kMean || p_ == 0.0) return y;
    auto keep = torch::empty_like(y).bernoulli_(1.0 - p_, gen);
    return y * keep * (1.0 / (1.0 - p_));
  }

  torch::Tensor kl_impl() override { return decay_ * (w_.square().sum() + b_.square().sum()); }

 private:
  double p_ = 0, decay_ = 0;
  torch::Tensor w_, b_;
};

}  // namespace

LayerPtr make_mcd_layer(int64_t in, int64_t out, const config::Config& cfg, const LayerContext& ctx) {
  return std::make_shared<McdLayer>(in, out, cfg, ctx.is_output, ctx.gen);
}

}  // namespace whvi::models
