// The training loop, the same for every inference method (infer/inference.h):
// mini-batches drawn without replacement from a permutation that is redrawn
// when exhausted, one Inference::step per batch, progress lines, and the
// divergence checks.
//
// Divergence: every 100 steps the objective and the parameters must be finite
// and no parameter larger than 1e6 in magnitude; at the end the likelihood
// must report no problem (the Gaussian: noise variance below 100 times the
// target variance) and the mean network's training RMSE must stay below 10
// standardised units. A failed check throws whvi::Error naming the step, what
// exploded and the settings that most likely caused it; nothing is written
// as a result.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>
#include <string>

#include <torch/torch.h>

#include "common/options.h"
#include "infer/inference.h"

namespace whvi::train {

struct LoopOptions {
  int64_t steps_fixed_noise = 500, steps = 50000;
  int64_t batch_size = 64;
  int64_t log_every = 5000;
  std::string dtype_name = "float32", device_name = "cpu";
  bool augment = false;  // data.augment (image data only)
  // derived by finish()
  int64_t total_steps = 0;  // steps_fixed_noise + steps
  torch::ScalarType dtype = torch::kFloat32;
  torch::Device device = torch::kCPU;  // where the steps run
  void finish();
  template <class V>
  void visit(V& v) {
    v.num("training.steps_fixed_noise", steps_fixed_noise, 0, 1e9, "first phase: steps with the noise variance frozen");
    v.num("training.steps", steps, 0, 1e9, "second phase: steps with the noise variance optimised");
    v.num("training.batch_size", batch_size, 1, 1e9, "mini-batch size");
    v.num("training.log_every", log_every, 1, 1e9, "steps between log lines (when not on a terminal)");
    v.pick("training.dtype", dtype_name, {"float32", "float64"}, "parameter and activation precision");
    v.pick("training.device", device_name, {"cpu", "cuda"}, "where the training steps run: cpu, or cuda (the first visible GPU; pick one with CUDA_VISIBLE_DEVICES) for a build with CUDA. The data and the run's generator stay on the CPU: each mini-batch and each draw is copied over, so a run draws the same numbers on either device. The parameters come back to the CPU after the last step, where prediction, evaluation and checkpoints happen. Variational methods with the autograd engine, one split at a time, no learning curve");
    v.late();
    v.use("data.augment", augment);
  }
};

// What the loop is given besides the method: its options and the settings to
// name when training diverges (experiment/resolve.h writes them from the config).
struct LoopPlan {
  LoopOptions options;
  std::string suspects;  // "training.lr = 10 (default 0.001), ..."
};

struct TrainStats {
  int64_t steps = 0;  // steps run: the configured total, or fewer when on_every stopped training
  double seconds = 0;
  double steps_per_second = 0;
  double final_loss = 0;  // last step's objective (standardised scale, one mini-batch estimate)
  double final_lr = 0;    // the step size of the last step
  // The objective over training, at about 50 evenly spaced steps (and the
  // last) of the methods with a KL term: the step count, that step's
  // mini-batch objective, the KL term at the parameters after it, and its
  // weight in the objective (training.kl_warmup, training.kl_weight).
  std::vector<double> trace_step, trace_loss, trace_kl, trace_kl_weight;
};

// x: [N, D] standardised inputs; y: [N] standardised targets. `label`
// prefixes progress lines. Mini-batches and noise come from `gen` only, so the
// run is deterministic for a given generator state, thread count and machine.
// plan.suspects names the likely culprits when training diverges.
// `every` > 0: `on_every(steps done)` is called after every `every` steps (and
// after the last); it must not draw from `gen` (learning curves, stopping on
// validation rows); when it returns true, training stops after that step
// (TrainStats::steps says where). `on_end`, if given, runs after the method's
// end() and before the final health checks (e.g. to restore the parameters to
// be kept).
TrainStats train(infer::Inference& inference, const torch::Tensor& x, const torch::Tensor& y, const LoopPlan& plan,
                 const at::Generator& gen, const std::string& label,
                 int64_t every = 0, const std::function<bool(int64_t)>& on_every = {},
                 const std::function<void()>& on_end = {});

// What train() checks before its first step (the method's set-up for these
// rows, e.g. the fused step's layers, and the activations' memory), without
// training: a parallel run's parent says a problem every split shares once,
// before any worker starts. The inference is left begun: throw it away.
void check_before_steps(infer::Inference& inference, const torch::Tensor& x, const LoopPlan& plan,
                        const std::string& label);

// The divergence error's text for `label` at step t ("... nothing was written
// for this split"), naming the suspects (LoopPlan::suspects).
// "42 s", "3.5 min", "1.2 h": a time estimate for a progress line.
std::string duration_text(double seconds);

std::string divergence_message(const std::string& label, int64_t t, const std::string& what,
                               const std::string& suspects);

}  // namespace whvi::train
