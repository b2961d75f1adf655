// Monte Carlo dropout (Gal & Ghahramani 2016), as the WHVI authors ran it:
// a deterministic linear layer followed by dropout on its outputs (before
// the activation), active in training and at test time; no dropout after the
// output layer. Inverted dropout (kept units scaled by 1/(1-p)), one mask per
// row. The KL of the variational interpretation is the weight decay
//   (1-p) l^2/2 (|W|^2 + |b|^2)   (l: model.mcd.length_scale; p = 0 at the output).
// Init: LibTorch's Linear default, U(+-1/sqrt(fan_in)) for W and b.
#include <cmath>

#include "common/draws.h"
#include "nn/fused_ops.h"
#include "nn/layer.h"
#include "nn/layer_options.h"
#include "onnx/graph.h"

namespace whvi::models {
namespace {

class McdLayer : public BayesianLayer, public FusedLayer, public GroupLayer {
 public:
  McdLayer(int64_t in, int64_t out, const McdOptions& o, bool is_output, const at::Generator& gen)
      : BayesianLayer("mcd", in, out) {
    p_ = is_output ? 0.0 : o.dropout;
    const double l = o.length_scale;
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
    auto keep = whvi::bernoulli_(torch::empty_like(y), 1.0 - p_, gen);
    return y * keep * (1.0 / (1.0 - p_));
  }

  torch::Tensor kl_impl() override { return decay_ * (w_.square().sum() + b_.square().sum()); }

  // Export: the same per-row mask, drawn by RandomUniformLike at every call.
  std::string export_onnx(onnx::Graph& g, const std::string& x) const override {
    const auto y = onnx::linear(g, x, w_, b_);
    if (p_ == 0.0) return y;
    const auto keep = g.op("Less", {g.op("RandomUniformLike", {y}), g.scalar(1.0 - p_)});
    const auto mask = g.op("Cast", {keep}, {onnx::Attr::integer("to", static_cast<int64_t>(onnx::Elem::kFloat))});
    return g.op("Mul", {y, g.op("Mul", {mask, g.scalar(1.0 / (1.0 - p_))})});
  }

  // Fused step: the same draws as forward_impl (one Bernoulli per output
  // element). The GEMM and the mask's draws, and the two GEMMs of the
  // backward pass, are independent: fused_ops::both runs each pair at once
  // when the run has two threads.
  FusedLayer* fused() override { return this; }
  torch::Tensor fused_forward(const torch::Tensor& x, const at::Generator& gen, FusedCache& c) override {
    torch::NoGradGuard ng;
    const int64_t n = x.size(0), out = out_features();
    const auto o = x.options();
    c[0] = x;
    auto& y = c.buffer(1, {n, out}, o);
    if (p_ == 0.0) {
      fused_ops::addmm_out(y, b_, x, w_);
      return y;
    }
    auto& keep = c.buffer(2, {n, out}, o);
    auto& z = c.buffer(3, {n, out}, o);
    fused_ops::both([&] { fused_ops::addmm_out(y, b_, x, w_); }, [&] { whvi::bernoulli_(keep, 1.0 - p_, gen); });
    fused_ops::mul_scale_out(z, y, keep, 1.0 / (1.0 - p_));
    return z;
  }
  torch::Tensor fused_backward(const torch::Tensor& g, FusedCache& c, bool need_dx) override {
    torch::NoGradGuard ng;
    const auto& x = c[0];
    torch::Tensor dy = g;
    if (p_ != 0.0) {
      auto& d = c.buffer(4, g.sizes(), g.options());
      fused_ops::mul_scale_out(d, g, c[2], 1.0 / (1.0 - p_));
      dy = d;
    }
    auto grads = [&] {
      fused_ops::xt_mm_out(w_.mutable_grad(), x, dy, 1.0);
      fused_ops::add_(b_.mutable_grad(), dy.sum(0));
    };
    if (!need_dx) {
      grads();
      return {};
    }
    auto& dx = c.buffer(5, x.sizes(), g.options());
    fused_ops::both(grads, [&] { fused_ops::mm_wt_out(dx, dy, w_); });
    return dx;
  }
  double fused_kl_backward() override {
    torch::NoGradGuard ng;
    w_.mutable_grad().add_(w_, 2.0 * decay_);
    b_.mutable_grad().add_(b_, 2.0 * decay_);
    return decay_ * (w_.square().sum().item<double>() + b_.square().sum().item<double>());
  }

  GroupLayer* group() override { return this; }
  torch::Tensor forward_group(const std::vector<BayesianLayer*>& group, const torch::Tensor& x, Mode mode,
                              const std::vector<at::Generator>& gens, torch::Tensor* kl) override {
    const auto w = stack_group<McdLayer>(group, [](McdLayer& l) { return l.w_; });  // [S, in, out]
    const auto b = stack_group<McdLayer>(group, [](McdLayer& l) { return l.b_; });  // [S, out]
    if (kl) *kl = decay_ * (w.square().sum({1, 2}) + b.square().sum(1));
    auto y = torch::baddbmm(b.unsqueeze(1), x, w);
    if (mode == Mode::kMean || p_ == 0.0) return y;
    const int64_t r = x.size(1), out = out_features();
    const auto keep = draw_per_split(gens, [&](const at::Generator& g) {
      return whvi::bernoulli_(torch::empty({r, out}, y.options()), 1.0 - p_, g);
    });
    return y * keep * (1.0 / (1.0 - p_));
  }

 private:
  double p_ = 0, decay_ = 0;
  torch::Tensor w_, b_;
};

}  // namespace

LayerPtr make_mcd_layer(int64_t in, int64_t out, const McdOptions& o, const LayerContext& ctx) {
  return std::make_shared<McdLayer>(in, out, o, ctx.is_output, ctx.gen);
}

LayerKind mcd_layer_kind() { return layer_kind("mcd", make_mcd_layer).fused("").batched("").exports(""); }

}  // namespace whvi::models
