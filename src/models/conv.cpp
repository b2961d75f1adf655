// Convolutional trunks (issue 10, part 2): the feature extractor that runs
// before a network's fully connected layers, for image data. The trunk takes
// x [N, C*H*W] (CHW order, as the image loaders store it), returns
// [N, features] for the fully connected head (the MLP of registered layers in
// RegressionModel, whose depth and width the config sets), and adds its KL.
//
// Filter kinds (model.conv):
//   mcd  a deterministic convolution followed by dropout on its output
//        channels' activations (a per-row, per-element mask, inverted
//        scaling; rate model.conv_dropout), active at test time; KL = the
//        weight decay (1-p) l²/2 (|W|² + |b|²) of MCD (l: model.mcd.length_scale);
//   mfg  mean-field Gaussian filters with the local reparameterisation of
//        convolutions: mean = conv(x, μ) + μ_b, var = conv(x², σ²) + σ_b²,
//        sampled per output element; prior and init as model.mfg.*.
//   whvi WHVI filters (Fig. 7; the authors' conv layer, shared/notes/
//        whvi-reference.md §1.8): the filter matrix [C_out, C_in·9] is a
//        stacked WHVI matrix over im2col patches padded to D = 2^ceil(log2
//        C_in·9); one g draw per image, shared by all its patches (so each
//        image sees one sample of the filters; the fused kernel with the
//        noise repeated over patches); options model.whvi.*.
//   lowrank-mcd  MCD with a rank-r filter matrix A B (A [C_out, r], B [r,
//        C_in·9]; Fig. 7's "low-rank MCD"), r = model.conv_rank or, when 0,
//        the rank with as many parameters as WHVI filters of that shape;
//        dropout and weight decay as mcd.
//   nng  noisy K-FAC filters (shared/notes/baselines.md §4.3): the filter
//        matrix with its bias row, W̄ [C_in·k² + 1, C_out] (rows in im2col
//        order), is an NNG layer's matrix-variate Gaussian (nn/nng_layer.h);
//        one weight particle per draw (ForwardCtx::draws), shared by the
//        draw's images and positions, applied as a plain convolution. In a
//        training step with a capture it records the im2col patches with a 1
//        appended and the output per position for the optimiser (KFC: A sums
//        patch outer products over positions, S averages the output-gradient
//        ones; infer/nng.cpp). Options model.nng.*; only model.kind nng trains it.
// Architectures (model.architecture), as the supplement's Tables 7-8 give
// them for CIFAR-10 (3x3 convolutions, stride 1, padding 1; 2x2 max pooling):
//   simple-cnn  conv 32, pool, conv 64, pool                (Fig. 7's two convolutions)
//   alexnet     conv 64, pool, conv 192, pool, conv 384, conv 256, conv 256, pool
//   vgg16       conv 32 x2, pool, 64 x2, pool, 128 x3, pool, 256 x3, pool, 256 x3, pool
//   resnet18    a 3x3 stem of 64, four stages of two basic blocks (64, 128,
//               256, 512; stride 2 opening stages 2-4, 1x1 projection
//               shortcuts), global average pooling (Table 9; below)
// model.batch_norm: on puts batch normalisation after every convolution
// (before its ReLU); auto = on for resnet18 only.
// each convolution followed by ReLU. With 32x32 inputs AlexNet's trunk gives
// 256*4*4 = 4096 features (its head: 2 layers of 4096 and the output layer)
// and VGG16's 256 (head: the output layer only).
#include "common/draws.h"
#include "models/conv.h"
#include "nn/layer_options.h"

#include <cmath>

#include "common/errors.h"
#include "nn/nng_layer.h"
#include "nn/whvi_params.h"
#include "ops/fwht_op.h"

namespace whvi::models {

namespace F = torch::nn::functional;

int64_t matched_conv_rank(int64_t cin, int64_t cout, int64_t ksize) {
  const int64_t k = cin * ksize * ksize;
  const int64_t d = int64_t{1} << kernels::log2_exact(k), blocks = (cout + d - 1) / d;
  const double r = static_cast<double>(4 * blocks * d) / static_cast<double>(cout + k);
  return std::max<int64_t>(1, std::llround(r));
}

BatchNorm::BatchNorm(int64_t channels) {
  gamma_ = register_parameter("bn_gamma", torch::ones({channels}));
  beta_ = register_parameter("bn_beta", torch::zeros({channels}));
  mean_ = register_buffer("bn_running_mean", torch::zeros({channels}));
  var_ = register_buffer("bn_running_var", torch::ones({channels}));
}

torch::Tensor BatchNorm::forward(const torch::Tensor& x, const ForwardCtx& ctx) {
  return torch::batch_norm(x, gamma_, beta_, mean_, var_, ctx.training, 0.1, 1e-5, false);
}

ConvLayer::~ConvLayer() = default;

ConvLayer::ConvLayer(const ConvOptions& o, int64_t cin, int64_t cout, const at::Generator& gen, int64_t ksize,
                     int64_t stride)
    : kind_(o.kind), cin_(cin), cout_(cout), ksize_(ksize), stride_(stride) {
  const std::string& kind = o.kind;
  WHVI_ASSERT(ksize == 1 || ksize == 3);
  const int64_t kk = ksize * ksize;
  const double fan_in = static_cast<double>(cin * kk);
  const double a = 1.0 / std::sqrt(fan_in);
  torch::NoGradGuard ng;
  if (kind == "mcd") {
    p_ = o.dropout;
    const double l = o.length_scale;
    decay_ = (1.0 - p_) * l * l / 2.0;
    w_ = register_parameter("w", torch::empty({cout, cin, ksize, ksize}).uniform_(-a, a, gen));
    b_ = register_parameter("b", torch::empty({cout}).uniform_(-a, a, gen));
  } else if (kind == "mfg") {
    const double pv = o.mfg.prior_var;
    prior_var_ = pv > 0 ? pv : 1.0 / fan_in;
    bias_prior_var_ = o.mfg.bias_prior_var;
    const double lv = o.mfg.init_logvar;
    const double s = o.mfg.init_mean_scale * a;
    w_ = register_parameter("w_mu", torch::empty({cout, cin, ksize, ksize}).uniform_(-s, s, gen));
    w_logvar_ = register_parameter("w_logvar", torch::full({cout, cin, ksize, ksize}, lv));
    b_ = register_parameter("b_mu", torch::zeros({cout}));
    b_logvar_ = register_parameter("b_logvar", torch::full({cout}, lv));
  } else if (kind == "whvi") {
    whvi_ = std::make_unique<WhviParams>(*this, cin * kk, cout, o.whvi, gen);
    WHVI_CHECK(whvi_->opt.is_default_structure(), "model.conv: whvi supports only WHVI's own structure; remove "
               "model.whvi.structure and model.whvi.s_posterior");
    rank_ = whvi_->d;
  } else if (kind == "lowrank-mcd") {
    p_ = o.dropout;
    const double l = o.length_scale;
    decay_ = (1.0 - p_) * l * l / 2.0;
    const int64_t r = o.rank;
    rank_ = r > 0 ? r : matched_conv_rank(cin, cout, ksize);
    // A, B uniform with equal variance v, r v^2 = 1 / (3 fan_in): the filters
    // start with mcd's variance (U(±1/sqrt(fan_in)))
    const double v = 1.0 / std::sqrt(3.0 * fan_in * static_cast<double>(rank_)), u = std::sqrt(3.0 * v);
    a_ = register_parameter("a", torch::empty({cout, rank_}).uniform_(-u, u, gen));
    w_ = register_parameter("w", torch::empty({rank_, cin * kk}).uniform_(-u, u, gen));
    b_ = register_parameter("b", torch::empty({cout}).uniform_(-a, a, gen));
  } else if (kind == "nng") {
    nng_ = register_module("nng", std::make_shared<NngLayer>(cin * kk, cout, o.nng_prior_var, gen));
  } else {
    throw Error("model.conv '" + kind + "' is not a convolution kind; use mcd, mfg, whvi, lowrank-mcd or nng");
  }
}

torch::Tensor ConvLayer::whvi_forward(const torch::Tensor& x, ForwardCtx& ctx) {
  const auto& p = *whvi_;
  const int64_t n = x.size(0), k = cin_ * ksize_ * ksize_, d = p.d;
  const int64_t h = (x.size(2) + 2 * (ksize_ / 2) - ksize_) / stride_ + 1, w = (x.size(3) + 2 * (ksize_ / 2) - ksize_) / stride_ + 1;
  const int64_t l = h * w;
  // in chunks of images, so that the im2col buffers stay small at test time
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 22) / (l * d * p.blocks));
  std::vector<torch::Tensor> outs;
  for (int64_t i0 = 0; i0 < n; i0 += chunk) {
    const int64_t c = std::min(chunk, n - i0);
    auto patches = F::unfold(x.narrow(0, i0, c),
                             F::UnfoldFuncOptions({ksize_, ksize_}).padding(ksize_ / 2).stride(stride_));  // [c, k, l]
    patches = patches.transpose(1, 2).reshape({c * l, k});
    if (d != k) patches = torch::constant_pad_nd(patches, {0, d - k});
    torch::Tensor eps;
    if (ctx.mode == Mode::kSample)
      eps = whvi::randn({c, 1, p.groups, d}, ctx.gen, x.options()).expand({c, l, p.groups, d}).reshape({c * l, p.groups, d});
    auto y = ops::whvi_matvec(patches, eps, p.s1, p.s2, p.g_mu, (0.5 * p.g_logvar).exp(), p.opt.shared_g);
    y = p.finish(y.view({c * l, p.blocks * d}), cout_, ctx);  // [c*l, cout]
    outs.push_back(y.view({c, l, cout_}).transpose(1, 2).reshape({c, cout_, h, w}));
  }
  return outs.size() == 1 ? outs.front() : torch::cat(outs, 0);
}

torch::Tensor ConvLayer::nng_forward(const torch::Tensor& x, ForwardCtx& ctx) {
  const int64_t n = x.size(0), k = cin_ * ksize_ * ksize_;
  // W̄ [k+1, cout] -> filters [cout, cin, ks, ks] (im2col's row order is
  // channel, then kernel row, then column: the filters' own layout) and bias
  auto conv = [&](const torch::Tensor& xi, const torch::Tensor& w) {
    return F::conv2d(xi, w.narrow(0, 0, k).t().reshape({cout_, cin_, ksize_, ksize_}),
                     F::Conv2dFuncOptions().padding(ksize_ / 2).stride(stride_).bias(w.select(0, k)));
  };
  torch::Tensor out, w_mean;
  if (ctx.mode == Mode::kMean) {
    out = conv(x, nng_->mean());
    w_mean = nng_->mean().detach();
  } else {
    const int64_t p = ctx.draws, b = n / p;
    WHVI_ASSERT(b * p == n);
    const auto w = nng_->sample_weights(p, ctx.gen, x.options());  // [p, k+1, cout]
    std::vector<torch::Tensor> outs;
    for (int64_t i = 0; i < p; ++i) outs.push_back(conv(x.narrow(0, i * b, b), w[i]));
    out = p == 1 ? outs.front() : torch::cat(outs, 0);
    if (ctx.capture) w_mean = w.detach().mean(0);
  }
  if (!ctx.capture) return out;
  const int64_t h = out.size(2), wd = out.size(3), l = h * wd;
  auto patches = F::unfold(x.detach(), F::UnfoldFuncOptions({ksize_, ksize_}).padding(ksize_ / 2).stride(stride_));
  patches = patches.transpose(1, 2).reshape({n * l, k});
  const auto a_bar = torch::cat({patches, torch::ones({n * l, 1}, x.options())}, 1);
  // the output per (image, position) row, kept in the graph so the optimiser
  // can take the log-likelihood's gradient with respect to it
  auto s = out.permute({0, 2, 3, 1}).reshape({n * l, cout_});
  if (s.requires_grad()) s.retain_grad();
  ctx.capture->entries.push_back({nng_.get(), a_bar, s, w_mean, l});
  return s.view({n, h, wd, cout_}).permute({0, 3, 1, 2});
}

torch::Tensor ConvLayer::forward(const torch::Tensor& x, ForwardCtx& ctx) {
  if (kind_ == "whvi") return whvi_forward(x, ctx);
  if (kind_ == "nng") return nng_forward(x, ctx);
  const auto filters = kind_ == "lowrank-mcd" ? a_.mm(w_).view({cout_, cin_, ksize_, ksize_}) : w_;
  auto mean = F::conv2d(x, filters, F::Conv2dFuncOptions().padding(ksize_ / 2).stride(stride_).bias(b_));
  if (ctx.mode == Mode::kMean) return mean;
  if (kind_ == "mcd" || kind_ == "lowrank-mcd") {
    if (p_ == 0) return mean;
    auto keep = whvi::bernoulli_(torch::empty_like(mean), 1.0 - p_, ctx.gen);
    return mean * keep * (1.0 / (1.0 - p_));
  }
  auto var = F::conv2d(x.square(), w_logvar_.exp(), F::Conv2dFuncOptions().padding(ksize_ / 2).stride(stride_).bias(b_logvar_.exp()));
  return mean + var.sqrt() * whvi::randn(mean.sizes(), ctx.gen, mean.options());
}

torch::Tensor ConvLayer::kl() {
  if (kind_ == "mcd") return decay_ * (w_.square().sum() + b_.square().sum());
  if (kind_ == "lowrank-mcd") return decay_ * (a_.square().sum() + w_.square().sum() + b_.square().sum());
  if (kind_ == "whvi") return whvi_->closed_form_kl();
  if (kind_ == "nng") return nng_->kl();
  return kl_diag_gaussian(w_, w_logvar_, prior_var_) + kl_diag_gaussian(b_, b_logvar_, bias_prior_var_);
}

namespace {

// A plan: channel counts of the convolutions, 0 = a 2x2 max pooling.
std::vector<int64_t> plan_of(const std::string& arch) {
  if (arch == "simple-cnn") return {32, 0, 64, 0};
  if (arch == "alexnet") return {64, 0, 192, 0, 384, 256, 256, 0};
  if (arch == "vgg16") return {32, 32, 0, 64, 64, 0, 128, 128, 128, 0, 256, 256, 256, 0, 256, 256, 256, 0};
  throw Error("model.architecture '" + arch + "' is not known; use mlp, simple-cnn, alexnet, vgg16, resnet18 or rff");
}

}  // namespace

struct ConvTrunk::Impl {
  std::vector<std::shared_ptr<ConvLayer>> convs;
  std::vector<std::shared_ptr<BatchNorm>> bns;  // empty without model.batch_norm
  std::vector<int64_t> plan;
};

std::vector<int64_t> image_shape_for(int64_t d_in) {
  if (d_in == 3 * 32 * 32) return {3, 32, 32};
  if (d_in == 28 * 28) return {1, 28, 28};
  throw Error(detail::concat("a convolutional model.architecture needs image inputs (CIFAR-10: 3x32x32 = 3072 "
                             "values, MNIST: 1x28x28 = 784), but the data have ", d_in,
                             " input columns; use model.architecture: mlp"));
}

ConvTrunk::ConvTrunk(const std::string& arch, int64_t d_in, const ConvOptions& co, const at::Generator& gen)
    : impl_(std::make_unique<Impl>()) {
  shape_ = image_shape_for(d_in);
  impl_->plan = plan_of(arch);
  const bool bn = co.batch_norm == "on";
  int64_t c = shape_[0], h = shape_[1], w = shape_[2];
  for (int64_t step : impl_->plan) {
    if (step == 0) {
      WHVI_CHECK(h >= 2 && w >= 2, "model.architecture ", arch, " pools a ", h, "x", w,
                 " feature map: the input images are too small for it");
      h /= 2, w /= 2;
      continue;
    }
    impl_->convs.push_back(std::make_shared<ConvLayer>(co, c, step, gen));
    register_module("conv" + std::to_string(impl_->convs.size() - 1), impl_->convs.back());
    if (bn) {
      impl_->bns.push_back(std::make_shared<BatchNorm>(step));
      register_module("bn" + std::to_string(impl_->bns.size() - 1), impl_->bns.back());
    }
    c = step;
  }
  features_ = c * h * w;
}

ConvTrunk::~ConvTrunk() = default;

torch::Tensor ConvTrunk::forward(const torch::Tensor& x, ForwardCtx& ctx) {
  auto h = x.view({x.size(0), shape_[0], shape_[1], shape_[2]});
  size_t k = 0;
  for (int64_t step : impl_->plan) {
    if (step == 0) {
      h = F::max_pool2d(h, F::MaxPool2dFuncOptions(2));
      continue;
    }
    h = impl_->convs[k]->forward(h, ctx);
    if (!impl_->bns.empty()) h = impl_->bns[k]->forward(h, ctx);
    h = torch::relu(h);
    ++k;
  }
  return h.reshape({h.size(0), -1});
}

torch::Tensor ConvTrunk::kl() {
  torch::Tensor total = impl_->convs.front()->kl();
  for (size_t i = 1; i < impl_->convs.size(); ++i) total = total + impl_->convs[i]->kl();
  return total;
}

// ---- ResNet18 (the supplement's Table 9, CIFAR variant) -------------------------------

namespace {

// Two 3x3 convolutions with batch normalisation and a shortcut (a 1x1
// convolution with normalisation where the shape changes), ReLU after the sum.
struct BasicBlock : torch::nn::Module {
  std::shared_ptr<ConvLayer> c1, c2, sc;
  std::shared_ptr<BatchNorm> b1, b2, bsc;
  BasicBlock(const ConvOptions& co, int64_t cin, int64_t cout, int64_t stride, bool bn, const at::Generator& gen) {
    c1 = register_module("conv1", std::make_shared<ConvLayer>(co, cin, cout, gen, 3, stride));
    if (bn) b1 = register_module("bn1", std::make_shared<BatchNorm>(cout));
    c2 = register_module("conv2", std::make_shared<ConvLayer>(co, cout, cout, gen, 3, 1));
    if (bn) b2 = register_module("bn2", std::make_shared<BatchNorm>(cout));
    if (stride != 1 || cin != cout) {
      sc = register_module("shortcut", std::make_shared<ConvLayer>(co, cin, cout, gen, 1, stride));
      if (bn) bsc = register_module("bn_shortcut", std::make_shared<BatchNorm>(cout));
    }
  }
  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) {
    auto h = c1->forward(x, ctx);
    if (b1) h = b1->forward(h, ctx);
    h = c2->forward(torch::relu(h), ctx);
    if (b2) h = b2->forward(h, ctx);
    auto s = x;
    if (sc) {
      s = sc->forward(x, ctx);
      if (bsc) s = bsc->forward(s, ctx);
    }
    return torch::relu(h + s);
  }
  torch::Tensor kl() {
    auto k = c1->kl() + c2->kl();
    return sc ? k + sc->kl() : k;
  }
};

// A 3x3 stem of 64 channels (with normalisation), four stages of two basic
// blocks (64, 128, 256, 512 channels; stride 2 at the start of the last
// three), global average pooling: 512 features for the head (Table 9's
// LINEAR 10 x 512 is the output layer: model.depth 0).
class ResNetTrunk : public Trunk {
 public:
  ResNetTrunk(int64_t d_in, const ConvOptions& co, const at::Generator& gen) {
    shape_ = image_shape_for(d_in);
    const bool bn = co.batch_norm != "off";
    stem_ = register_module("stem", std::make_shared<ConvLayer>(co, shape_[0], 64, gen, 3, 1));
    if (bn) stem_bn_ = register_module("stem_bn", std::make_shared<BatchNorm>(64));
    int64_t c = 64;
    for (int64_t stage = 0; stage < 4; ++stage) {
      const int64_t cout = 64 << stage;
      for (int64_t b = 0; b < 2; ++b) {
        const int64_t stride = stage > 0 && b == 0 ? 2 : 1;
        blocks_.push_back(std::make_shared<BasicBlock>(co, c, cout, stride, bn, gen));
        register_module("block" + std::to_string(blocks_.size() - 1), blocks_.back());
        c = cout;
      }
    }
  }
  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) override {
    auto h = stem_->forward(x.view({x.size(0), shape_[0], shape_[1], shape_[2]}), ctx);
    if (stem_bn_) h = stem_bn_->forward(h, ctx);
    h = torch::relu(h);
    for (auto& b : blocks_) h = b->forward(h, ctx);
    return h.mean({2, 3});
  }
  torch::Tensor kl() override {
    auto k = stem_->kl();
    for (auto& b : blocks_) k = k + b->kl();
    return k;
  }
  int64_t features() const override { return 512; }

 private:
  std::vector<int64_t> shape_;
  std::shared_ptr<ConvLayer> stem_;
  std::shared_ptr<BatchNorm> stem_bn_;
  std::vector<std::shared_ptr<BasicBlock>> blocks_;
};

}  // namespace

namespace {
std::shared_ptr<Trunk> make_conv_trunk(const std::string& arch, int64_t d_in, const ConvOptions& co,
                                       const at::Generator& gen) {
  return std::make_shared<ConvTrunk>(arch, d_in, co, gen);
}
std::shared_ptr<Trunk> make_resnet18_trunk(const std::string&, int64_t d_in, const ConvOptions& co,
                                           const at::Generator& gen) {
  return std::make_shared<ResNetTrunk>(d_in, co, gen);
}
}  // namespace

std::vector<TrunkKind> conv_trunk_kinds() {
  return {trunk_kind("simple-cnn", make_conv_trunk), trunk_kind("alexnet", make_conv_trunk),
          trunk_kind("vgg16", make_conv_trunk), trunk_kind("resnet18", make_resnet18_trunk)};
}

}  // namespace whvi::models
