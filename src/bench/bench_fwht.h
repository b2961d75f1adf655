// `whvi bench fwht`: FWHT against the dense product with the explicit
// Hadamard matrix (LibTorch matmul: OpenBLAS on CPU, cuBLAS on CUDA), forward
// and forward+backward, over a grid of sizes, with a same-bytes copy as the
// bandwidth reference. Each kernel's output is checked against an independent
// reference before it is timed; a wrong kernel aborts the benchmark.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace whvi::bench {

struct FwhtBenchOptions {
  std::string device = "cpu";                      // cpu | cuda
  std::vector<int64_t> sizes = {64, 256, 1024, 4096, 16384};
  int64_t batch = 512;
  std::string dtype = "float32";                   // float32 | float64 | float16 | bfloat16 (CUDA)
  int repeats = 30;                                // timed repetitions (upper bound)
  int warmup = 3;
  double max_seconds = 3.0;                        // per measured quantity; caps repeats (>= 3 kept)
  int64_t max_dense_d = 16384;                     // the dense product is skipped above this D
  bool backward = true;                            // also time forward+backward
  uint64_t seed = 0;
  std::string command_line;                        // recorded in the JSON
};

// Runs the benchmark, prints a table to stdout and returns the JSON document
// described in docs/reference.md (`device`, `cpu_model`, `threads`, `dtype`, `rows`, ...).
// Throws whvi::Error before allocating anything for: sizes that are not
// powers of two in [1, 2^30], batch or repeats < 1, a max_seconds that is not
// positive and finite, and (CPU) a working set above half the physical memory
// (about batch x D x element size x 8, plus D x D for the dense product).
nlohmann::json run_fwht_bench(const FwhtBenchOptions& options);

// The fields every benchmark record starts with: `benchmark`, the machine
// (`cpu_model`, `threads`, `simd_level`, `blas`, `torch_version`), `whvi_commit`,
// `command` and `seed`.
nlohmann::json bench_record(const std::string& benchmark, const std::string& command, uint64_t seed);

}  // namespace whvi::bench
