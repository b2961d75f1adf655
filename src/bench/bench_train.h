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
  uint64_t seed = 0;
  std::vector<std::string> sets;  // --set KEY=VALUE, applied to every configuration
  std::string command_line;
};

// A kind may carry its own settings, "KIND:KEY=VALUE:KEY=VALUE" (e.g.
// nng:model.nng.inverse_every=1), so variants run side by side in one run.
// Throws whvi::Error for an unknown kind or a size out of range, before any
// training.
nlohmann::json run_train_bench(const TrainBenchOptions& options);

}  // namespace whvi::bench
