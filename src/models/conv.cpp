// Convolutional trunks (issue 10, part 2): the feature extractor that runs
// before a network's fully connected layers, for image data. The trunk takes
// x [N, C*H*W] (CHW order, as the image loaders store it), returns
// [N, features] for the fully connected head (the MLP of registered layers in
// RegressionModel, whose depth and width the config sets), and adds its KL.
//
// The filters (model.conv: mcd, mfg, whvi, lowrank-mcd, nng) are their own
// components (nn/conv_filter.h, nn/conv_*.cpp); ConvLayer holds one.
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
#include "models/conv.h"

#include <cmath>

#include "common/errors.h"
#include "nn/layer_options.h"

namespace whvi::models {

namespace F = torch::nn::functional;

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
                     int64_t stride) {
  WHVI_ASSERT(ksize == 1 || ksize == 3);
  WHVI_CHECK(o.filter, "model.conv '", o.kind, "': the convolution's options were not read from a config");
  filter_ = o.filter(*this, {cin, cout, ksize, stride}, gen);
}

torch::Tensor ConvLayer::forward(const torch::Tensor& x, ForwardCtx& ctx) { return filter_->forward(x, ctx); }

torch::Tensor ConvLayer::kl() { return filter_->kl(); }

int64_t ConvLayer::rank() const { return filter_->rank(); }

namespace {

// A plan: channel counts of the convolutions, 0 = a 2x2 max pooling.
std::vector<int64_t> plan_of(const std::string& arch) {
  if (arch == "simple-cnn") return {32, 0, 64, 0};
  if (arch == "alexnet") return {64, 0, 192, 0, 384, 256, 256, 0};
  if (arch == "vgg16") return {32, 32, 0, 64, 64, 0, 128, 128, 128, 0, 256, 256, 256, 0, 256, 256, 256, 0};
  throw Error("internal: model.architecture '" + arch + "' has no convolution plan");
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
  return {trunk_kind("simple-cnn", make_conv_trunk).described("convolutional, for image data, Fig. 7; src/models/conv.cpp"),
          trunk_kind("alexnet", make_conv_trunk).described("convolutional, the supplement's Table 7"),
          trunk_kind("vgg16", make_conv_trunk).described("convolutional, the supplement's Table 8"),
          trunk_kind("resnet18", make_resnet18_trunk).described("convolutional with skip connections, the supplement's Table 9")};
}

}  // namespace whvi::models
