// Bayesian layers behind one small interface, created by kind from the
// registry (registry.cpp). A network is a stack of these (models/regression_model.h).
//
// Shapes: forward takes x [N, in_features] and returns [N, out_features].
// In Mode::kSample every row gets its own independent draw of the layer's
// randomness (local reparameterisation for the Gaussian layers, a per-row
// mask for dropout), so N = (MC samples) x (batch) rows give independent
// samples. Mode::kMean uses the posterior mean weights (no randomness).
//
// Randomness: a layer draws its initial values from the generator in its
// LayerContext and its samples from the generator passed to forward; it never
// touches LibTorch's global generator (common/rng.h).
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/rng.h"
#include "common/options.h"

namespace whvi::onnx {
class Graph;  // onnx/graph.h
}

namespace whvi::models {

enum class Mode { kSample, kMean };

struct KfacCapture;  // nn/nng_layer.h

// Weight particles a prediction drew, kept so that the next prediction from
// the same generator state uses them instead of drawing them again (NNG's
// particles: infer/nng.cpp, for `whvi predict`'s one row at a time). Keyed by
// the layer and the prediction's chunk of samples (ForwardCtx::particle_chunk).
// While `frozen` it is only read, by any number of threads at once.
struct ParticleCache {
  std::map<std::pair<const void*, int64_t>, torch::Tensor> drawn;
  bool frozen = false;
};

// What a forward pass carries besides its input (the forward-context seam):
// the mode, the generator of its randomness, how the rows are grouped into
// draws (rows = draws x batch, draw s in rows [s*batch, (s+1)*batch): layers
// that sample per draw rather than per row, such as NNG's weight particles,
// need it), and what layers hand back: Monte Carlo KL terms (planar flows add
// mean over draws of log q(g_K) - log p(g_K), as a tensor with its gradient)
// and, when `capture` is set, the tensors the natural-gradient optimiser needs.
struct ForwardCtx {
  Mode mode = Mode::kMean;
  at::Generator gen;
  int64_t draws = 1;
  torch::Tensor mc_kl;            // sum of the layers' per-draw KL estimates (undefined: none)
  KfacCapture* capture = nullptr;  // set by NNG's step
  bool training = false;           // a training step (batch normalisation uses and updates batch statistics)
  ParticleCache* particles = nullptr;  // a prediction's kept weight particles (above); null: draw
  int64_t particle_chunk = 0;          // the prediction's chunk of samples (the cache's key)
  void add_kl(const torch::Tensor& t) { mc_kl = mc_kl.defined() ? mc_kl + t : t; }
};

// Buffers a layer's fused step keeps between its forward and backward pass
// and reuses from step to step (slot i: a tensor of fixed shape).
struct FusedCache {
  // A fixed number of slots, so references to them stay valid while others
  // are filled.
  static constexpr size_t kSlots = 24;
  std::array<torch::Tensor, kSlots> slots;
  // Slot i as an uninitialised tensor of `sizes` and `opts`, reallocated only
  // when the shape or dtype changes.
  torch::Tensor& buffer(size_t i, at::IntArrayRef sizes, const torch::TensorOptions& opts) {
    auto& b = slots.at(i);
    if (!b.defined() || b.sizes() != sizes || b.scalar_type() != c10::typeMetaToScalarType(opts.dtype()))
      b = torch::empty(sizes, opts);
    return b;
  }
  torch::Tensor& operator[](size_t i) { return slots.at(i); }
};

class FusedLayer;  // below
class GroupLayer;

class BayesianLayer : public torch::nn::Module {
 public:
  BayesianLayer(std::string kind, int64_t in_features, int64_t out_features);

  // Checks the input's shape, then calls forward_impl. kSample draws from
  // `gen` (required); kMean needs none.
  torch::Tensor forward(const torch::Tensor& x, Mode mode, const at::Generator& gen = {});
  // The same with a forward context (Monte Carlo KL terms and captures go
  // into ctx).
  torch::Tensor forward(const torch::Tensor& x, ForwardCtx& ctx);
  // KL(q || p) of this layer's variational parameters in closed form (for
  // MCD: the weight-decay term of its variational interpretation; for layers
  // whose KL has no closed form, the part that has one, the rest goes into
  // ForwardCtx::mc_kl). A scalar.
  torch::Tensor kl() { return kl_impl(); }
  // Number of trainable scalars.
  int64_t num_params() const;

  // The opt-in steps below: this layer's, where its kind (with these
  // options) has one, else nullptr.
  virtual FusedLayer* fused() { return nullptr; }
  virtual GroupLayer* group() { return nullptr; }
  // Opt-in, `whvi export` (onnx/graph.h): appends to `g` this layer's
  // sampling forward pass on the value named `x` ([R, in], every row its own
  // draw, as Mode::kSample) and returns its output's name ([R, out]); "" where
  // this kind, with these options, does not export (LayerKind::exported_when).
  virtual std::string export_onnx(onnx::Graph& /*g*/, const std::string& /*x*/) const { return ""; }

  const std::string& kind() const { return kind_; }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

 protected:
  virtual torch::Tensor forward_impl(const torch::Tensor& x, ForwardCtx& ctx) = 0;
  virtual torch::Tensor kl_impl() = 0;

 private:
  std::string kind_;
  int64_t in_, out_;
};

// Opt-in: the fused training step (training.engine: fused;
// infer/fused_step.h): the sampling forward pass on x [n, in] without
// autograd, keeping in `cache` what the backward pass needs (buffers reused
// from step to step), and the backward pass from dL/dout [n, out], which ADDS
// the data term's gradients into the parameters' .grad() and returns dL/dx
// (when need_dx). The draws are the ones forward() makes from the same
// generator, in the same order, so the two paths agree to float rounding
// (tests/test_fused_step.cpp). A network with a layer whose fused() is
// nullptr takes the autograd step.
class FusedLayer {
 public:
  virtual ~FusedLayer() = default;
  virtual torch::Tensor fused_forward(const torch::Tensor& x, const at::Generator& gen, FusedCache& cache) = 0;
  virtual torch::Tensor fused_backward(const torch::Tensor& dout, FusedCache& cache, bool need_dx) = 0;
  // The closed-form KL (a double) with its gradient added into .grad().
  virtual double fused_kl_backward() = 0;
};

// Opt-in: batched splits (training.batched_splits; train/batched.h): the
// forward pass of S layers of this kind and shape, one per split (group[0] is
// this layer), on x [S, R, in] -> [S, R, out]. Split s draws from gens[s]
// only, the same draws in the same order as forward() with that generator,
// so a split's numbers do not depend on the others in its group. With `kl`
// set, also their KL terms as [S]. A network with a layer whose group() is
// nullptr is refused by name.
class GroupLayer {
 public:
  virtual ~GroupLayer() = default;
  virtual torch::Tensor forward_group(const std::vector<BayesianLayer*>& group, const torch::Tensor& x, Mode mode,
                                      const std::vector<at::Generator>& gens, torch::Tensor* kl) = 0;
};

using LayerPtr = std::shared_ptr<BayesianLayer>;

// Where a layer sits in the network (some kinds behave differently at the
// output, e.g. MCD applies no dropout there).
// `gen` draws the initial values (required).
struct LayerContext {
  bool is_output = false;
  at::Generator gen;
};

// A registered layer kind: its name, its options' declarations (the schema
// gathers them), a factory that builds a layer from its options, and its
// capabilities: whether it takes the fused step (FusedLayer) and batched
// splits (GroupLayer), and with which options (nullptr: never; "": always;
// else the condition, e.g. "with its default structure"). Help and error text
// list the kinds from these (layer_kinds_with); tests check them against the
// layer its default options build.
struct LayerKind {
  std::string name;
  std::vector<options::Spec> (*declare)();
  std::vector<std::string> (*reads)();  // every key its options read
  options::Resolve resolve;             // reads its options struct (the experiment calls it)
  std::function<LayerPtr(int64_t in, int64_t out, const options::Resolved&, const LayerContext&)> make;
  const char* fused_when = nullptr;
  const char* batched_when = nullptr;
  const char* exported_when = nullptr;  // whvi export --format onnx (BayesianLayer::export_onnx)
  // How many trainable scalars a layer of this kind holds (for the memory check
  // before it is built); empty: two per weight and bias, as a mean-field layer.
  std::function<double(int64_t in, int64_t out, const options::Resolved&)> params = nullptr;
  LayerKind counting(std::function<double(int64_t, int64_t, const options::Resolved&)> f) const {
    LayerKind k = *this;
    k.params = std::move(f);
    return k;
  }
  double param_count(int64_t in, int64_t out, const options::Resolved& o) const {
    return params ? params(in, out, o) : 2.0 * (static_cast<double>(in) + 1.0) * static_cast<double>(out);
  }
  LayerKind fused(const char* when) const {
    LayerKind k = *this;
    k.fused_when = when;
    return k;
  }
  LayerKind batched(const char* when) const {
    LayerKind k = *this;
    k.batched_when = when;
    return k;
  }
  LayerKind exports(const char* when) const {
    LayerKind k = *this;
    k.exported_when = when;
    return k;
  }
};

// The registration of a kind whose factory takes its options struct O.
template <class O>
LayerKind layer_kind(std::string name, LayerPtr (*make)(int64_t, int64_t, const O&, const LayerContext&)) {
  return {std::move(name), &options::declare<O>, &options::keys_read<O>, &options::resolve<O>,
          [make](int64_t in, int64_t out, const options::Resolved& o, const LayerContext& ctx) {
            return make(in, out, o.template as<O>(), ctx);
          }};
}

// The registered layer kind `kind` (an unknown one is an error listing the others).
const LayerKind& find_layer_kind(const std::string& kind);
// Creates a layer of a registered kind from its options (resolved by its
// registration's `resolve`).
LayerPtr make_layer(const std::string& kind, int64_t in, int64_t out, const options::Resolved& o,
                    const LayerContext& ctx);
// The registered kinds, in registration order.
const std::vector<LayerKind>& layer_kinds();
std::vector<std::string> registered_layer_kinds();
// The kinds with a capability (&LayerKind::fused_when or batched_when), each
// with its condition: "mcd, mfg, whvi (with its default structure)".
std::string layer_kinds_with(const char* LayerKind::*capability);

// Number of trainable scalars of a module (parameters with requires_grad).
int64_t count_trainable(const torch::nn::Module& m);

// Adds the gradient of kl_diag_gaussian(mu, logvar, prior_var) into
// mu.grad() and logvar.grad() and returns its value (the fused step).
double kl_diag_gaussian_backward(const torch::Tensor& mu, const torch::Tensor& logvar, double prior_var);
// The same with exp_logvar = e^logvar given (same dtype, contiguous; MFG's
// fused forward has it): no exp of its own, the sum in 8 double lanes. Its
// value and gradient differ from the function above by float rounding only
// (e^logvar rounded to the dtype first; the sum reordered).
double kl_diag_gaussian_backward_exp(const torch::Tensor& mu, const torch::Tensor& logvar, const torch::Tensor& exp_logvar,
                                     double prior_var);
// KL( N(mu, exp(logvar)) || N(0, prior_var) ), summed over elements.
torch::Tensor kl_diag_gaussian(const torch::Tensor& mu, const torch::Tensor& logvar,
                               double prior_var);
// The same per leading index (split): [S, ...] -> [S].
torch::Tensor kl_diag_gaussian_per_split(const torch::Tensor& mu, const torch::Tensor& logvar, double prior_var);
// torch::stack of one tensor member of each layer in a group (batched splits).
template <class L, class Get>
torch::Tensor stack_group(const std::vector<BayesianLayer*>& group, Get get) {
  std::vector<torch::Tensor> ts;
  ts.reserve(group.size());
  for (auto* l : group) ts.push_back(get(*static_cast<L*>(l)));
  return torch::stack(ts);
}
// One draw per split: [S, shape...], split s's from gens[s] by make(gen).
template <class Make>
torch::Tensor draw_per_split(const std::vector<at::Generator>& gens, Make make) {
  std::vector<torch::Tensor> ts;
  ts.reserve(gens.size());
  for (const auto& g : gens) ts.push_back(make(g));
  return torch::stack(ts);
}

// The TT layer's mode sizes of a dimension 2^e over `cores` cores (tt.cpp).
std::vector<int64_t> tt_modes(int64_t e, int64_t cores);

// VSD's pieces (nn/vsd.cpp), for tests: U = H_T ⋯ H_1 from Householder
// vectors [T, K] (rows), and the paper's eq. 5 KL for Q outputs.
torch::Tensor householder_product(const torch::Tensor& vs);
torch::Tensor vsd_kl(const torch::Tensor& log_alpha, const torch::Tensor& u, int64_t q);

}  // namespace whvi::models
