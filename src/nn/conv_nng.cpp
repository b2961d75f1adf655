// Noisy K-FAC filters (model.conv: nng; shared/notes/baselines.md §4.3): the
// filter matrix with its bias row, W̄ [C_in·k² + 1, C_out] (rows in im2col
// order), is an NNG layer's matrix-variate Gaussian (nn/nng_layer.h); one
// weight particle per draw (ForwardCtx::draws), shared by the draw's images
// and positions, applied as a plain convolution. In a training step with a
// capture it records the im2col patches with a 1 appended and the output per
// position for the optimiser (KFC: A sums patch outer products over
// positions, S averages the output-gradient ones; infer/nng.cpp). Options
// model.nng.*; only model.kind nng trains it.
#include "common/errors.h"
#include "nn/conv_filter.h"
#include "nn/nng_layer.h"

namespace whvi::models {

namespace F = torch::nn::functional;

namespace {

struct NngConvOptions {
  double prior_var = 1;  // model.nng.prior_var
  template <class V>
  void visit(V& v) {
    v.use("model.nng.prior_var", prior_var);
  }
};

class NngFilter final : public ConvFilter {
 public:
  NngFilter(const NngConvOptions& o, torch::nn::Module& m, const ConvShape& s, const at::Generator& gen) : s_(s) {
    nng_ = m.register_module("nng", std::make_shared<NngLayer>(s.cin * s.ksize * s.ksize, s.cout, o.prior_var, gen));
  }

  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) override {
    const int64_t ks = s_.ksize, cout = s_.cout;
    const int64_t n = x.size(0), k = s_.cin * ks * ks;
    // W̄ [k+1, cout] -> filters [cout, cin, ks, ks] (im2col's row order is
    // channel, then kernel row, then column: the filters' own layout) and bias
    auto conv = [&](const torch::Tensor& xi, const torch::Tensor& w) {
      return F::conv2d(xi, w.narrow(0, 0, k).t().reshape({cout, s_.cin, ks, ks}),
                       F::Conv2dFuncOptions().padding(ks / 2).stride(s_.stride).bias(w.select(0, k)));
    };
    torch::Tensor out, w_mean;
    if (ctx.mode == Mode::kMean) {
      out = conv(x, nng_->mean());
      w_mean = nng_->mean().detach();
    } else {
      const int64_t p = ctx.draws, b = n / p;
      WHVI_ASSERT(b * p == n);
      const auto w = nng_->particles(p, /*weights=*/true, ctx, x.options());  // [p, k+1, cout]
      std::vector<torch::Tensor> outs;
      for (int64_t i = 0; i < p; ++i) outs.push_back(conv(x.narrow(0, i * b, b), w[i]));
      out = p == 1 ? outs.front() : torch::cat(outs, 0);
      if (ctx.capture) w_mean = w.detach().mean(0);
    }
    if (!ctx.capture) return out;
    const int64_t h = out.size(2), wd = out.size(3), l = h * wd;
    auto patches = F::unfold(x.detach(), F::UnfoldFuncOptions({ks, ks}).padding(ks / 2).stride(s_.stride));
    patches = patches.transpose(1, 2).reshape({n * l, k});
    const auto a_bar = torch::cat({patches, torch::ones({n * l, 1}, x.options())}, 1);
    // the output per (image, position) row, kept in the graph so the optimiser
    // can take the log-likelihood's gradient with respect to it
    auto s = out.permute({0, 2, 3, 1}).reshape({n * l, cout});
    if (s.requires_grad()) s.retain_grad();
    ctx.capture->entries.push_back({nng_.get(), a_bar, s, w_mean, l});
    return s.view({n, h, wd, cout}).permute({0, 3, 1, 2});
  }

  torch::Tensor kl() override { return nng_->kl(); }

 private:
  ConvShape s_;
  std::shared_ptr<NngLayer> nng_;
};

std::unique_ptr<ConvFilter> make_nng(const NngConvOptions& o, torch::nn::Module& m, const ConvShape& s,
                                     const at::Generator& gen) {
  return std::make_unique<NngFilter>(o, m, s, gen);
}

}  // namespace

FilterKind nng_filter() { return filter_kind("nng", make_nng).described("noisy K-FAC filters; only with model.kind nng"); }

}  // namespace whvi::models
