// Mean-field Gaussian filters (model.conv: mfg) with the local
// reparameterisation of convolutions: mean = conv(x, μ) + μ_b,
// var = conv(x², σ²) + σ_b², sampled per output element; prior and
// initialisation as model.mfg.*.
#include <cmath>

#include "common/draws.h"
#include "nn/conv_filter.h"
#include "nn/layer_options.h"

namespace whvi::models {

namespace F = torch::nn::functional;

namespace {

struct MfgConvOptions {
  MfgOptions mfg;
  template <class V>
  void visit(V& v) {
    v.part(mfg);
  }
};

class MfgFilter final : public ConvFilter {
 public:
  MfgFilter(const MfgOptions& o, torch::nn::Module& m, const ConvShape& s, const at::Generator& gen) : s_(s) {
    const double fan_in = static_cast<double>(s.cin * s.ksize * s.ksize), a = 1.0 / std::sqrt(fan_in);
    torch::NoGradGuard ng;
    prior_var_ = o.prior_var > 0 ? o.prior_var : 1.0 / fan_in;
    bias_prior_var_ = o.bias_prior_var;
    const double lv = o.init_logvar, sc = o.init_mean_scale * a;
    w_ = m.register_parameter("w_mu", torch::empty({s.cout, s.cin, s.ksize, s.ksize}).uniform_(-sc, sc, gen));
    w_logvar_ = m.register_parameter("w_logvar", torch::full({s.cout, s.cin, s.ksize, s.ksize}, lv));
    b_ = m.register_parameter("b_mu", torch::zeros({s.cout}));
    b_logvar_ = m.register_parameter("b_logvar", torch::full({s.cout}, lv));
  }

  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) override {
    const auto opts = F::Conv2dFuncOptions().padding(s_.ksize / 2).stride(s_.stride);
    auto mean = F::conv2d(x, w_, F::Conv2dFuncOptions(opts).bias(b_));
    if (ctx.mode == Mode::kMean) return mean;
    auto var = F::conv2d(x.square(), w_logvar_.exp(), F::Conv2dFuncOptions(opts).bias(b_logvar_.exp()));
    return mean + var.sqrt() * whvi::randn(mean.sizes(), ctx.gen, mean.options());
  }

  torch::Tensor kl() override {
    return kl_diag_gaussian(w_, w_logvar_, prior_var_) + kl_diag_gaussian(b_, b_logvar_, bias_prior_var_);
  }

 private:
  ConvShape s_;
  double prior_var_ = 1, bias_prior_var_ = 1;
  torch::Tensor w_, w_logvar_, b_, b_logvar_;
};

std::unique_ptr<ConvFilter> make_mfg(const MfgConvOptions& o, torch::nn::Module& m, const ConvShape& s,
                                     const at::Generator& gen) {
  return std::make_unique<MfgFilter>(o.mfg, m, s, gen);
}

}  // namespace

FilterKind mfg_filter() { return filter_kind("mfg", make_mfg); }

}  // namespace whvi::models
