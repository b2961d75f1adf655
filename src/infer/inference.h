// The inference seam (issue 9): how a model's parameters move and how its
// predictive samples are made, behind one interface, as NumPyro keeps SVI and
// its MCMC kernels apart. `whvi train`, `whvi eval` and `whvi bench train`
// talk only to this; the training loop (train/loop.h) owns mini-batches,
// progress lines and divergence checks, and calls step().
//
// Registered methods (infer/registry.cpp), chosen by model.kind:
//   variational  whvi, mfg, mcd, nf-whvi: the negative ELBO, Adam with the
//                paper's decay (infer/variational.cpp)
//   sghmc        stochastic-gradient Hamiltonian Monte Carlo on a
//                deterministic network, a thinned bank of samples (infer/sghmc.cpp)
//   nng          noisy K-FAC, a natural-gradient optimiser of a matrix-variate
//                Gaussian posterior (infer/nng.cpp)
//   ensemble     a deep ensemble: ensemble.members networks trained side by
//                side, predicting with their uniform mixture (infer/ensemble.cpp)
//   blr          Bayesian linear regression, fitted in closed form with its
//                evidence-maximised prior and noise (infer/blr.cpp)
//   gp           exact Gaussian-process regression, its kernel's hyper-parameters
//                and noise by maximising the marginal likelihood (infer/gp.cpp)
//   laplace      a deterministic network trained to its MAP, then a Gaussian
//                posterior over its output layer by a last-layer Laplace
//                approximation fitted after the steps (infer/laplace.cpp)
//   swag         a deterministic network trained to its MAP, then a Gaussian over
//                all its weights from snapshots of a constant-learning-rate phase
//                after the steps (SWAG, infer/swag.cpp)
#pragma once

#include <cmath>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "common/errors.h"
#include "common/options.h"
#include "likelihoods/likelihood.h"
#include "models/regression_model.h"

namespace whvi::infer {

// The tensors that define a trained split, by checkpoint key.
using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// A method whose step can be split in two around a loss computed and
// back-propagated elsewhere: batched splits (train/batched.h) train several
// such methods' networks in one pass. Opt-in: Inference::split_step().
class SplitStep {
 public:
  virtual ~SplitStep() = default;
  // zero the gradients (and freeze the likelihood while it says so) at step t
  virtual void zero_grad(int64_t t) = 0;
  // the optimiser's update at step t
  virtual void apply(int64_t t) = 0;
  // Monte Carlo draws per row of the objective
  virtual int64_t mc_samples() const = 0;
};

// A method fitted in closed form from the whole training set: the training
// loop calls fit() once, between begin() and end(), and runs no steps. Opt-in:
// Inference::closed_form().
class ClosedForm {
 public:
  virtual ~ClosedForm() = default;
  // x [N, D], y [N]: every training row (standardised).
  virtual void fit(const torch::Tensor& x, const torch::Tensor& y) = 0;
};

class Inference {
 public:
  virtual ~Inference() = default;
  // Parameter and activation precision (before begin()).
  virtual void to(torch::ScalarType dtype) = 0;
  // Where the steps run (training.device; after to(dtype), before begin()):
  // the parameters move there, the run's generator stays on the CPU (its
  // draws are copied over: common/draws.h), and end() brings the parameters
  // back to the CPU, where prediction, evaluation and checkpoints happen.
  // Methods that run on the CPU only say so (the default).
  virtual void to_device(const torch::Device& device) {
    if (!device.is_cpu())
      throw Error(std::string(method()) + " runs on the CPU only (training.device " + device.str() +
                  "); set training.device: cpu");
  }
  // Before the first step: the number of training rows and the total number of steps.
  virtual void begin(int64_t n_train, int64_t total_steps, const at::Generator& gen) = 0;
  // One update from the mini-batch xb [B, D], yb [B] (standardised) at step t
  // (from 0); randomness from gen. Returns the step's objective (a scalar
  // tensor; reading it is the caller's choice).
  virtual torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t,
                             const at::Generator& gen) = 0;
  // The step size used at step t (the learning rate for the optimisers), for logs and records.
  virtual double step_size(int64_t t) const = 0;
  // Largest |parameter| (NaN if any is NaN), for the divergence check.
  virtual double max_abs_param() const = 0;
  // After the last step.
  virtual void end() = 0;
  // S predictive samples of the mean function in ORIGINAL units, [S', N]
  // float64 (classification: log class probabilities, [S', N, C]; regression
  // with a variance per sample, hetero-gaussian's, or gp's and blr's exact predictive:
  // Gaussian components [S', N, 2], mean and log variance); S' = S for
  // the variational methods, the size of the sample bank for SGHMC (it
  // predicts with every stored sample).
  virtual torch::Tensor predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) = 0;
  // Whether predict() may run on several threads at once, i.e. it changes no
  // state of the method or its network, or only state it guards (`whvi
  // predict` then shares rows among the threads; SGHMC loads each stored
  // sample into its network: not it). Off unless a method declares it.
  virtual bool predicts_concurrently() const { return false; }
  // Whether predict()'s S draws are of the weights only, the same for every row
  // of a call (no draw per row, as MC dropout's masks or a local
  // reparameterisation's noise are): `whvi predict` then predicts rows in
  // blocks of a fixed size, each block from the same generator state, so a row
  // meets the draws it would alone. Off unless a method declares it.
  virtual bool draws_weights_only() const { return false; }
  // The mean network's output on the standardised scale (the final fit check).
  virtual torch::Tensor mean_standardized(const torch::Tensor& x) = 0;
  virtual likelihoods::Likelihood& likelihood() = 0;
  // Every likelihood whose to_original() predict() applies (a deep ensemble:
  // one per member): what a predictive setting such as the softmax's
  // temperature is set on.
  virtual std::vector<likelihoods::Likelihood*> predicting_likelihoods() { return {&likelihood()}; }
  virtual int64_t num_params() const = 0;
  // What a checkpoint stores and restores (tensors allocated at construction,
  // so restoring copies into them; a tensor whose size depends on the training
  // set is allocated with no elements and restoring gives it the stored shape).
  virtual NamedTensors state() = 0;
  virtual const char* method() const = 0;
  // How the last begin() computes the steps' gradients: "fused" (the variational
  // methods' fused step, infer/fused_step.h) or "autograd".
  virtual std::string engine() const { return "autograd"; }
  // The closed-form KL term of the objective at the current parameters
  // (standardised scale; without Monte Carlo KL terms), for the record of the
  // objective over training; NaN where the method has none. Draws nothing.
  virtual double kl_value() { return std::nan(""); }
  // The weight of that KL term in step t's objective (1: the ELBO).
  virtual double kl_factor(int64_t) const { return 1.0; }
  // The network (for tests and diagnostics).
  virtual models::RegressionModel& model() = 0;
  // After a divergence: what the method saw go wrong first (which quantity,
  // where, at which step), for the error message; empty when it has nothing
  // to add.
  virtual std::string diagnose() const { return {}; }
  // The split step, for a method that has one (else nullptr).
  virtual SplitStep* split_step() { return nullptr; }
  // The closed-form fit, for a method that has one (else nullptr).
  virtual ClosedForm* closed_form() { return nullptr; }
  // A fit from every training row after the steps, for a method that has one
  // (else nullptr): the training loop calls its fit() once after end() and
  // after stopping restored its best parameters (a post-hoc posterior).
  virtual ClosedForm* after_steps() { return nullptr; }
  // Scalars the method chose while fitting (a closed-form method's
  // hyper-parameters and evidence), by name, for the split record's
  // `hyperparameters`; empty for most methods.
  virtual std::vector<std::pair<std::string, double>> learned() const { return {}; }
  // Opt-in, `whvi export` (onnx/graph.h): appends to `g` the nodes that make
  // what predict() returns for the standardised rows named `x` ([N, D]) with
  // S samples, each call of the graph drawing afresh, and returns its name;
  // "" where the method (or its network) does not export. `why` gets the
  // reason then, in a phrase.
  virtual std::string export_onnx(onnx::Graph& /*g*/, const std::string& /*x*/, int64_t /*S*/, std::string& why) {
    why = std::string("the ") + method() + " method does not export yet";
    return "";
  }
};

// Builds one network of the run's config, its initial values drawn next from
// the run's initialisation stream: a method calls it once per network it trains
// (a deep ensemble: once per member).
using NetworkMaker = std::function<std::shared_ptr<models::RegressionModel>()>;

// model.kind -> its own method (sghmc, nng, ensemble, else variational).
std::string method_of(const std::string& model_kind);
// The model kinds (models::model_kinds) whose own method is `method`, comma-separated:
// lists for help and error text, from the registries, never written by hand.
std::string kinds_trained_by(const std::string& method);
std::vector<std::string> registered_methods();
// Whether the registered method `method` is fitted in closed form (false when not registered).
bool fits_in_closed_form(const std::string& method);
struct Capabilities;
// What the registered method `method` can do (its registration's Capabilities).
const Capabilities& capabilities_of(const std::string& method);

// What a method can do, declared on its registration (data, not code in the
// experiment): the likelihoods it is written for and whether it is fitted in
// closed form. Refusals and model.kind auto's choice of candidates are read
// from it (cannot_train).
struct Capabilities {
  bool closed_form = false;              // fitted by ClosedForm::fit, not in steps (no stopping on validation rows)
  std::vector<std::string> likelihoods;  // the likelihood.kinds it is written for; empty: every one
  std::string why;                       // why the likelihoods are limited, for the refusal
  std::string cpu_only;                  // why it runs on the CPU only; "": any training.device
  // it predicts with the samples it keeps after a burn-in (samples_key of
  // them), not with one step's parameters: no stopping, no curve before the burn-in
  bool keeps_samples = false;
  std::string samples_key;
  bool fused_step = false;               // training.engine fused can take its steps (infer/fused_step.h)
  std::string step_key = "training.lr";  // the step size that moves the weights (divergence's first suspect)
  std::string steady_key, steady_why;    // a setting that steadies its step, and how: named on divergence
  std::string objective = "-ELBO";       // what its steps minimise, as the training log names it
  // training.kl_warmup and training.kl_weight weight its KL term (else the
  // plain ELBO only; own_kl_key: the key of its own weighting, for the refusal)
  bool weighs_kl = false;
  std::string own_kl_key;
  // the architectures before the fully connected layers it trains: none (MLPs only),
  // every trunk, convolutional trunks only, or those of its members' own method
  enum class Trunks { kNone, kAll, kConvolutional, kAsMembers };
  Trunks trunks = Trunks::kNone;
  std::string own_filter;  // the one model.conv kind it trains, which no other method trains ("": any but those)
  bool can_be_member = false;  // its networks can be an ensemble's members (inference.kind ensemble)
  bool trains_members = false; // it trains the networks of another kind's method (inference.kind <it>)
  Capabilities& fitted_in_closed_form() {
    closed_form = true;
    return *this;
  }
  Capabilities& runs_on_cpu_only(std::string reason) {
    cpu_only = std::move(reason);
    return *this;
  }
  Capabilities& keeps_samples_after_burn_in(std::string key) {
    keeps_samples = true;
    samples_key = std::move(key);
    return *this;
  }
  Capabilities& with_fused_step() {
    fused_step = true;
    return *this;
  }
  Capabilities& steps_by(std::string key, std::string steadied_by = "", std::string how = "") {
    step_key = std::move(key);
    steady_key = std::move(steadied_by);
    steady_why = std::move(how);
    return *this;
  }
  Capabilities& minimises(std::string name) {
    objective = std::move(name);
    return *this;
  }
  Capabilities& with_weighted_kl() {
    weighs_kl = true;
    return *this;
  }
  Capabilities& kl_weighted_by(std::string key) {
    own_kl_key = std::move(key);
    return *this;
  }
  Capabilities& trains(Trunks t) {
    trunks = t;
    return *this;
  }
  Capabilities& trains_only_filters(std::string kind) {
    own_filter = std::move(kind);
    return *this;
  }
  Capabilities& as_member() {
    can_be_member = true;
    return *this;
  }
  Capabilities& of_members() {
    trains_members = true;
    return *this;
  }
  Capabilities& only_for(std::vector<std::string> kinds, std::string reason) {
    likelihoods = std::move(kinds);
    why = std::move(reason);
    return *this;
  }
};

// A registered method: its name, its options' declarations, what it can do
// and a factory that reads its options and builds the method over networks
// from a NetworkMaker.
struct MethodKind {
  std::string name;
  std::vector<options::Spec> (*declare)();
  std::vector<std::string> (*reads)();  // every key its options read
  options::Resolve resolve;             // reads its options struct (the experiment calls it)
  std::function<std::unique_ptr<Inference>(const NetworkMaker&, const options::Resolved&)> make;
  Capabilities can;
};

// The registration of a method whose factory takes its options O.
template <class O>
MethodKind method_kind(std::string name, std::unique_ptr<Inference> (*make)(const NetworkMaker&, const O&),
                       Capabilities can = {}) {
  return {std::move(name), &options::declare<O>, &options::keys_read<O>, &options::resolve<O>,
          [make](const NetworkMaker& net, const options::Resolved& o) { return make(net, o.template as<O>()); },
          std::move(can)};
}

// Why model.kind `model_kind` (trained by its own method) cannot be trained
// with likelihood.kind `likelihood_kind`, in one line naming the fix; "" when
// it can. From the registered capabilities alone.
std::string cannot_train(const std::string& model_kind, const std::string& likelihood_kind);

// The registered methods, in registration order.
const std::vector<MethodKind>& method_kinds();
// inference.kind and every registered method's options, declared.
std::vector<options::Spec> method_option_specs();

}  // namespace whvi::infer
