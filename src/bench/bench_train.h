// `whvi bench train`: training speed of the registered layer kinds on
// synthetic data, one row per (kind, width): steps/s, ms per step and the
// process's peak resident memory, with the machine, threads, SIMD level and
// commit recorded (like `bench fwht`).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace whvi::bench {

struct TrainBenchOptions {
  std::vector<std::string> kinds = {"whvi", "mfg", "mcd"};
  std::vector<int64_t> widths = {64, 128, 256, 512};
  int64_t depth = 2;
  int64_t batch = 64;
  int64_t d_in = 8;
  int64_t rows = 1000;   // synthetic training rows
  int64_t steps = 2000;  // timed steps per configuration (after `warmup` untimed ones)
  int64_t warmup = 100;
  // 1: one split (the ordinary path); S > 1: S splits trained as one batched
  // model (training.batched_splits), timed together
  std::vector<int64_t> splits = {1};
  uint64_t seed = 0;
  std::vector<std::string> sets;  // --set KEY=VALUE, applied to every configuration
  std::string command_line;
};

// A kind may carry its own settings, "KIND:KEY=VALUE:KEY=VALUE" (e.g.
// nng:model.nng.inverse_every=1), so variants run side by side in one run.
// Throws whvi::Error for an unknown kind or a size out of range, before any
// training.
nlohmann::json run_train_bench(const TrainBenchOptions& options);
// The model kinds trained in steps (not in closed form), comma-separated: what --kinds can time.
std::string stepped_model_kinds();

// `whvi bench predict` (the paper's Figs. 8 and 16): the time to predict a
// test set of `rows` rows in mini-batches of `batch` rows with `mc` Monte
// Carlo samples each, for each (kind, width), `repeats` times after one
// untimed pass; the networks are freshly initialised (the time does not
// depend on the weights' values). `classes` > 0: a softmax classifier with
// that many classes (the CNNs: --set model.architecture=... --d-in 3072).
struct PredictBenchOptions {
  std::vector<std::string> kinds = {"mcd", "whvi"};
  std::vector<int64_t> widths = {128};
  int64_t depth = 2;
  int64_t batch = 128;
  int64_t mc = 64;
  int64_t d_in = 8;
  int64_t rows = 1024;
  int64_t repeats = 5;
  int64_t classes = 0;
  uint64_t seed = 0;
  std::vector<std::string> sets;
  std::string command_line;
};
nlohmann::json run_predict_bench(const PredictBenchOptions& options);

}  // namespace whvi::bench
