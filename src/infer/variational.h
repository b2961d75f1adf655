// Variational inference on the inference seam (see variational.cpp).
#pragma once

#include <memory>

#include "infer/inference.h"
#include "optim/rule.h"

namespace whvi::infer {

struct VariationalOptions {
  double lr = 0.001, lr_gamma = 0.0005, lr_power = 0.3;
  int64_t mc_samples = 1;
  optim::OptimiserOptions optimiser;  // training.optimizer and the rule's own options
  std::string engine = "auto";
  bool fused = false;        // engine fused (infer/fused_step.h)
  bool auto_engine = true;   // engine auto (fused where it applies)
  int64_t kl_warmup = 0;     // KL annealing over this many steps
  double kl_weight = 1.0;    // the KL term's weight after the warm-up
  // The KL term's weight at step t (from 0): kl_weight min(1, (t + 1) / kl_warmup).
  double kl_factor(int64_t t) const;
  // true when every step's objective is the ELBO itself (no warm-up, weight 1)
  bool plain_elbo() const { return kl_warmup == 0 && kl_weight == 1.0; }
  void finish() {
    fused = engine == "fused";
    auto_engine = engine == "auto";
  }
  static const std::string& engine_help();
  template <class V>
  void visit(V& v) {
    v.num("training.lr", lr, 0, 10, "lr_0 of the optimiser");
    v.part(optimiser);
    v.num("training.lr_gamma", lr_gamma, 0, options::kInf, "lr_t = lr_0 (1 + gamma t)^-p");
    v.num("training.lr_power", lr_power, 0, options::kInf, "p of the learning-rate decay");
    v.num("training.mc_samples", mc_samples, 1, 4096, "Monte Carlo samples per data point in training");
    v.num("training.kl_warmup", kl_warmup, 0, 1e9, "variational methods: KL annealing, the KL term's weight grows linearly from 1/W to training.kl_weight over the first W steps (0: off, the full weight from the first step)");
    v.late();
    v.num("training.kl_weight", kl_weight, 1e-6, 1e6, "variational methods: the weight of the KL term in the objective after any warm-up (1: the ELBO; below 1 tempers the posterior towards the data)");
    v.late();
    v.pick("training.engine", engine, {"auto", "autograd", "fused"}, engine_help().c_str());
    // the fused step agrees with autograd to float rounding, not to the bit: the engine that
    // runs counts (auto resolved), so auto and an explicit choice of the same engine share splits
    v.acts_only_when("plan.engine", {"fused"});
    v.enters_as("fused");
  }
};

// lr_t = lr0 (1 + gamma t)^-power: the paper's decay, t counted from 0 over both phases.
double learning_rate(double lr0, double gamma, double power, int64_t t);

// The negative ELBO of a mini-batch on the standardised scale:
//   (N / B) Σ_{i<B} mean_{s<S} -log p(y_i | f_s(x_i)) + w KL (closed form + Monte Carlo),
// one independent draw of the network per (sample, row), from `gen`;
// w = kl_factor (1: the ELBO; training.kl_warmup and training.kl_weight).
// xb [B, D], yb [B]; N = n_train.
torch::Tensor negative_elbo(models::RegressionModel& model, const torch::Tensor& xb, const torch::Tensor& yb,
                            int64_t n_train, int64_t mc_samples, const at::Generator& gen, double kl_factor = 1.0);

// S predictive samples of a network's mean function in original units, [S, N] float64;
// `particles`: the weight particles to keep or reuse (models::ParticleCache).
torch::Tensor predict_with(models::RegressionModel& model, const torch::Tensor& x, int64_t S,
                           const at::Generator& gen, models::ParticleCache* particles = nullptr);

class VariationalInference : public Inference, public SplitStep {
 public:
  VariationalInference(std::shared_ptr<models::RegressionModel> model, const VariationalOptions& o);
  ~VariationalInference() override;
  void to(torch::ScalarType dtype) override;
  void to_device(const torch::Device& device) override;
  void begin(int64_t n_train, int64_t total_steps, const at::Generator& gen) override;
  torch::Tensor step(const torch::Tensor& xb, const torch::Tensor& yb, int64_t t, const at::Generator& gen) override;
  double step_size(int64_t t) const override;
  double max_abs_param() const override;
  void end() override;
  torch::Tensor predict(const torch::Tensor& x, int64_t S, const at::Generator& gen) override;
  bool predicts_concurrently() const override { return true; }  // no state changes
  std::string export_onnx(onnx::Graph& g, const std::string& x, int64_t S, std::string& why) override;
  torch::Tensor mean_standardized(const torch::Tensor& x) override;
  likelihoods::Likelihood& likelihood() override { return model_->likelihood(); }
  int64_t num_params() const override;
  NamedTensors state() override;
  const char* method() const override { return "variational"; }
  std::string engine() const override { return engine_; }
  double kl_value() override;
  double kl_factor(int64_t t) const override { return opt_.kl_factor(t); }
  models::RegressionModel& model() override { return *model_; }
  // Batched splits (train/batched.h): step() in two halves around a loss
  // computed and back-propagated outside.
  SplitStep* split_step() override { return this; }
  void zero_grad(int64_t t) override;
  void apply(int64_t t) override;
  int64_t mc_samples() const override { return opt_.mc_samples; }
  int64_t n_train() const { return n_train_; }

 private:
  struct Optimiser;
  std::shared_ptr<models::RegressionModel> model_;
  VariationalOptions opt_;
  torch::ScalarType dtype_ = torch::kFloat32;
  torch::Device device_ = torch::kCPU;
  int64_t n_train_ = 0;
  std::vector<torch::Tensor> params_;
  size_t first_lik_ = 0;
  std::unique_ptr<Optimiser> optimiser_;
  std::unique_ptr<class FusedStep> fused_;  // training.engine: fused
  std::string engine_ = "autograd";         // what begin() chose
};

}  // namespace whvi::infer
