// Random streams. whvi never seeds or draws from LibTorch's global generator:
// every run (one split of an experiment) owns its generators, seeded from the
// config's seed and the split index only, so a split's numbers do not depend on
// what ran before it in the process (a resumed sweep, a split run alone, or a
// split run after others all give the same bits at the same thread count).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <ATen/core/Generator.h>

namespace whvi {

// What a stream is used for; different purposes of one split never share draws.
enum class Stream : uint64_t {
  kInit = 1,      // parameter initialisation
  kTrain = 2,     // mini-batches and training noise
  kEval = 3,      // test-time Monte Carlo samples (training and `whvi eval` alike)
  kData = 4,      // generated data sets
  kSelection = 5, // validation subsets carved from training splits
  kCurve = 6,     // learning-curve evaluations during training (evaluation.every)
  kOod = 7,       // Monte Carlo samples on an out-of-distribution set (evaluation.ood_dataset)
  kStopping = 8,  // rows held out to stop training, and their Monte Carlo samples (training.stopping)
  kCalibration = 9,  // rows held out to fit the calibration, and their Monte Carlo samples (calibration.kind)
  kCurveTrain = 10,  // learning-curve evaluations of training rows (evaluation.curve_train_rows)
  kInnerSelection = 11,  // validation rows carved inside validation rows' training rows (data.inner_validation_fraction)
};

// A 64-bit seed mixing (seed, split, stream) through SplitMix64, so nearby
// inputs give unrelated seeds: (seed 0, split 1) and (seed 1, split 0) differ.
uint64_t derive_seed(uint64_t seed, uint64_t split, Stream stream);

// A fresh CPU generator (LibTorch's mt19937) with that seed.
at::Generator make_generator(uint64_t seed);
inline at::Generator make_generator(uint64_t seed, uint64_t split, Stream stream) {
  return make_generator(derive_seed(seed, split, stream));
}

// Platform-independent draws from std::mt19937_64 (whose output the C++
// standard fixes, unlike its distributions): an unbiased integer in
// [0, range) by rejection (accepts draws in [2^64 mod range, 2^64)), a double
// in [0, 1) from the top 53 bits, and the Fisher-Yates shuffle made of the
// former (i from the last index down to 1, swapped with a draw below i + 1).
uint64_t uniform_below(std::mt19937_64& g, uint64_t range);
double uniform01(std::mt19937_64& g);
void shuffle(std::vector<int64_t>& v, std::mt19937_64& g);

// FNV-1a, 64 bit: a checksum of bytes (checkpoints, data fingerprints). Any
// change of a single byte changes it; it is not a cryptographic hash.
class Fnv1a64 {
 public:
  Fnv1a64& add(const void* data, size_t n);
  template <class T>
  Fnv1a64& add_value(const T& v) { return add(&v, sizeof v); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace whvi
