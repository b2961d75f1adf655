// MC dropout filters (model.conv: mcd, lowrank-mcd).
//   mcd  a deterministic convolution followed by dropout on its output
//        channels' activations (a per-row, per-element mask, inverted
//        scaling; rate model.conv_dropout), active at test time; KL = the
//        weight decay (1-p) l²/2 (|W|² + |b|²) of MCD (l: model.mcd.length_scale);
//   lowrank-mcd  MCD with a rank-r filter matrix A B (A [C_out, r], B [r,
//        C_in·k²]; Fig. 7's "low-rank MCD"), r = model.conv_rank or, when 0,
//        the rank with as many parameters as WHVI filters of that shape;
//        dropout and weight decay as mcd.
#include <algorithm>
#include <cmath>

#include "common/draws.h"
#include "fwht.h"
#include "nn/conv_filter.h"

namespace whvi::models {

namespace F = torch::nn::functional;

int64_t matched_conv_rank(int64_t cin, int64_t cout, int64_t ksize) {
  const int64_t k = cin * ksize * ksize;
  const int64_t d = int64_t{1} << kernels::log2_exact(k), blocks = (cout + d - 1) / d;
  const double r = static_cast<double>(4 * blocks * d) / static_cast<double>(cout + k);
  return std::max<int64_t>(1, std::llround(r));
}

namespace {

struct McdConvOptions {
  double dropout = 0.005;
  double length_scale = 1;  // model.mcd.length_scale
  template <class V>
  void visit(V& v) {
    v.num("model.conv_dropout", dropout, 0, 0.99, "dropout rate of mcd convolutions (the paper's MCD rate, supplement D.1)");
    v.idle_when("model.architecture", {"mlp"});
    v.use("model.mcd.length_scale", length_scale);
  }
};

struct LowrankConvOptions {
  McdConvOptions mcd;
  int64_t rank = 0;
  template <class V>
  void visit(V& v) {
    v.part(mcd);
    v.num("model.conv_rank", rank, 0, 1 << 20, "rank of lowrank-mcd filter matrices; 0 = as many parameters as WHVI filters of the same shape");
    v.idle_when("model.architecture", {"mlp"});
    v.acts_only_when("model.conv", {"lowrank-mcd"});
  }
};

// Full (a_ undefined) or rank-r (filters = a_ w_) MC dropout filters.
class McdFilter final : public ConvFilter {
 public:
  McdFilter(const McdConvOptions& o, int64_t rank, torch::nn::Module& m, const ConvShape& s, const at::Generator& gen)
      : s_(s), p_(o.dropout), decay_((1.0 - o.dropout) * o.length_scale * o.length_scale / 2.0) {
    const int64_t kk = s.ksize * s.ksize;
    const double fan_in = static_cast<double>(s.cin * kk), a = 1.0 / std::sqrt(fan_in);
    torch::NoGradGuard ng;
    if (rank < 0) {
      w_ = m.register_parameter("w", torch::empty({s.cout, s.cin, s.ksize, s.ksize}).uniform_(-a, a, gen));
      b_ = m.register_parameter("b", torch::empty({s.cout}).uniform_(-a, a, gen));
      return;
    }
    rank_ = rank > 0 ? rank : matched_conv_rank(s.cin, s.cout, s.ksize);
    // A, B uniform with equal variance v, r v^2 = 1 / (3 fan_in): the filters
    // start with mcd's variance (U(±1/sqrt(fan_in)))
    const double v = 1.0 / std::sqrt(3.0 * fan_in * static_cast<double>(rank_)), u = std::sqrt(3.0 * v);
    a_ = m.register_parameter("a", torch::empty({s.cout, rank_}).uniform_(-u, u, gen));
    w_ = m.register_parameter("w", torch::empty({rank_, s.cin * kk}).uniform_(-u, u, gen));
    b_ = m.register_parameter("b", torch::empty({s.cout}).uniform_(-a, a, gen));
  }

  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx) override {
    const auto filters = a_.defined() ? a_.mm(w_).view({s_.cout, s_.cin, s_.ksize, s_.ksize}) : w_;
    auto mean = F::conv2d(x, filters, F::Conv2dFuncOptions().padding(s_.ksize / 2).stride(s_.stride).bias(b_));
    if (ctx.mode == Mode::kMean || p_ == 0) return mean;
    auto keep = whvi::bernoulli_(torch::empty_like(mean), 1.0 - p_, ctx.gen);
    return mean * keep * (1.0 / (1.0 - p_));
  }

  torch::Tensor kl() override {
    if (a_.defined()) return decay_ * (a_.square().sum() + w_.square().sum() + b_.square().sum());
    return decay_ * (w_.square().sum() + b_.square().sum());
  }

  int64_t rank() const override { return rank_; }

 private:
  ConvShape s_;
  double p_, decay_;
  int64_t rank_ = 0;
  torch::Tensor w_, b_, a_;
};

std::unique_ptr<ConvFilter> make_mcd(const McdConvOptions& o, torch::nn::Module& m, const ConvShape& s,
                                     const at::Generator& gen) {
  return std::make_unique<McdFilter>(o, -1, m, s, gen);
}

std::unique_ptr<ConvFilter> make_lowrank_mcd(const LowrankConvOptions& o, torch::nn::Module& m, const ConvShape& s,
                                             const at::Generator& gen) {
  return std::make_unique<McdFilter>(o.mcd, o.rank, m, s, gen);
}

}  // namespace

FilterKind mcd_filter() { return filter_kind("mcd", make_mcd); }
FilterKind lowrank_mcd_filter() {
  return filter_kind("lowrank-mcd", make_lowrank_mcd).described("MCD with a rank-r filter matrix, Fig. 7");
}

}  // namespace whvi::models
