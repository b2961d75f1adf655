// WHVI filters (model.conv: whvi; Fig. 7, the authors' conv layer,
// shared/notes/whvi-reference.md §1.8): the filter matrix [C_out, C_in·k²] is
// a stacked WHVI matrix over im2col patches padded to D = 2^ceil(log2 C_in·k²);
// one g draw per image, shared by all its patches (so each image sees one
// sample of the filters; the fused kernel with the noise repeated over
// patches); options model.whvi.*.
#include <algorithm>

#include "common/draws.h"
#include "common/errors.h"
#include "nn/conv_filter.h"
#include "nn/whvi_params.h"
#include "ops/fwht_op.h"

namespace whvi::models {

namespace F = torch::nn::functional;

namespace {

struct WhviConvOptions {
  WhviOptions whvi;
  template <class V>
  void visit(V& v) {
    v.part(whvi);
  }
};

class WhviFilter final : public ConvFilter {
 public:
  WhviFilter(const WhviOptions& o, torch::nn::Module& m, const ConvShape& s, const at::Generator& gen)
      : s_(s), p_(m, s.cin * s.ksize * s.ksize, s.cout, o, gen) {
    WHVI_CHECK(p_.opt.is_default_structure(), "model.conv: whvi supports only WHVI's own structure; remove "
               "model.whvi.structure and model.whvi.s_posterior");
  }

  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) override {
    const int64_t ks = s_.ksize, st = s_.stride, cout = s_.cout;
    const int64_t n = x.size(0), k = s_.cin * ks * ks, d = p_.d;
    const int64_t h = (x.size(2) + 2 * (ks / 2) - ks) / st + 1, w = (x.size(3) + 2 * (ks / 2) - ks) / st + 1;
    const int64_t l = h * w;
    // in chunks of images, so that the im2col buffers stay small at test time
    const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 22) / (l * d * p_.blocks));
    std::vector<torch::Tensor> outs;
    for (int64_t i0 = 0; i0 < n; i0 += chunk) {
      const int64_t c = std::min(chunk, n - i0);
      auto patches = F::unfold(x.narrow(0, i0, c), F::UnfoldFuncOptions({ks, ks}).padding(ks / 2).stride(st));  // [c, k, l]
      patches = patches.transpose(1, 2).reshape({c * l, k});
      if (d != k) patches = torch::constant_pad_nd(patches, {0, d - k});
      torch::Tensor eps;
      if (ctx.mode == Mode::kSample)
        eps = whvi::randn({c, 1, p_.groups, d}, ctx.gen, x.options()).expand({c, l, p_.groups, d}).reshape({c * l, p_.groups, d});
      auto y = ops::whvi_matvec(patches, eps, p_.s1, p_.s2, p_.g_mu, (0.5 * p_.g_logvar).exp(), p_.opt.shared_g);
      y = p_.finish(y.view({c * l, p_.blocks * d}), cout, ctx);  // [c*l, cout]
      outs.push_back(y.view({c, l, cout}).transpose(1, 2).reshape({c, cout, h, w}));
    }
    return outs.size() == 1 ? outs.front() : torch::cat(outs, 0);
  }

  torch::Tensor kl() override { return p_.closed_form_kl(); }
  int64_t rank() const override { return p_.d; }

 private:
  ConvShape s_;
  WhviParams p_;
};

std::unique_ptr<ConvFilter> make_whvi(const WhviConvOptions& o, torch::nn::Module& m, const ConvShape& s,
                                      const at::Generator& gen) {
  return std::make_unique<WhviFilter>(o.whvi, m, s, gen);
}

}  // namespace

FilterKind whvi_filter() { return filter_kind("whvi", make_whvi).described("WHVI filter matrices over im2col patches, one g draw per image; options model.whvi.*"); }

}  // namespace whvi::models
