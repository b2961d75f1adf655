// Checkpoints of trained splits (output.dir/NAME/split-KK.ckpt): LibTorch
// archives of the model's state and the metadata that evaluation and
// prediction need, with a checksum over both.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "calibration/calibration.h"
#include "common/rng.h"
#include "config/config.h"
#include "experiment/run_plan.h"
#include "infer/inference.h"

namespace whvi::experiment {

// Feeds a tensor's dtype, shape and bytes into the hash.
void hash_tensor(Fnv1a64& h, const torch::Tensor& t);
// 16 lower-case hex digits.
std::string hex(uint64_t v);

struct CheckpointMeta {
  std::string config_yaml, source, data_fp;
  int64_t split = 0, d_in = 0;
  double y_mean = 0, y_std = 1;
  int64_t num_classes = 0;  // written (and hashed) only for classifiers, so older checkpoints stay valid
  // for whvi predict (written and hashed when set; older checkpoints lack them):
  // the input columns and how they become x (input_encoding), and the split's
  // standardisation of x
  std::string inputs_json;
  torch::Tensor x_mean, x_std;
  // the raw values missing cells are filled with (data.missing: impute), where
  // the training data had missing cells; undefined otherwise
  torch::Tensor x_fill;
  // calibration.kind's fit (calibration::Fitted as JSON), written and hashed
  // only when set
  std::string calibration_json;
  // the likelihood's scalars fitted after training (Likelihood::fitted: the
  // softmax predictive's temperature), each written as meta/<name> and hashed
  // only when present; load_checkpoint gives them back to the likelihood
  std::vector<std::pair<std::string, double>> likelihood_fitted;
};

// The largest checkpoint whvi reads: half this machine's memory (a checkpoint
// is read whole, then parsed), so a huge or sparse file is refused at once
// instead of being read until memory runs out.
size_t max_checkpoint_bytes();

// The checksum stored with a checkpoint: the model's state and every metadata field.
std::string checkpoint_checksum(infer::Inference& inf, const CheckpointMeta& m);

// Writes the archive atomically (common/io.h).
void save_checkpoint(const std::string& path, infer::Inference& inf, const CheckpointMeta& m);

// A checkpoint read back: its metadata, configuration and model, checked
// against the checksum stored with it. Throws whvi::Error (naming the file and
// the fix) for anything missing, damaged or not a whvi checkpoint.
struct LoadedCheckpoint {
  CheckpointMeta meta;
  config::Config cfg;
  CheckpointPlan plan;  // what predict, eval and export read of cfg
  std::unique_ptr<infer::Inference> inf;
};

LoadedCheckpoint load_checkpoint(const std::string& path);

// The checkpoint's calibration (calibration.kind; kind "none" where it has
// none), checked: a damaged one is an error naming the file.
calibration::Fitted stored_calibration(const CheckpointMeta& meta, const std::string& path);

}  // namespace whvi::experiment
