// Gaussian and Bernoulli draws with LibTorch's exact bits, faster.
//
// `t.normal_(mean, std, gen)` on a contiguous CPU tensor of at least 16 numbers
// runs LibTorch's normal_fill: one mt19937 word per float (two per double) turned
// into a uniform, then Box-Muller on blocks of 16 (with the last block redrawn
// when the size is not a multiple of 16). It spends most of its time calling the
// generator once per number (an out-of-line call, a scalar Mersenne twister).
// `whvi::normal_` computes the same thing: it copies the generator's mt19937
// state, produces the words in blocks (the twist and the tempering vectorise),
// applies the same Box-Muller (LibTorch's AVX2 code where LibTorch uses it) and
// writes the state back. Same numbers, same generator state afterwards.
//
// Which Box-Muller LibTorch runs depends on its build and the CPU (its AVX2
// kernel, its scalar kernel, something else in another version). The first call
// in a process finds out: it draws a probe from a fixed seed both ways and takes
// the fast path only for a dtype whose probe matches LibTorch bit for bit
// (numbers and the generator state after). Otherwise, and for tensors the fast
// path does not cover (not contiguous, fewer than 16 numbers, other dtypes or
// devices), it calls `t.normal_` itself. Results never depend on the path.
//
// `t.bernoulli_(p, gen)` (LibTorch built without MKL, as Debian's is) draws a
// double uniform from two words per element through a TensorIterator;
// `whvi::bernoulli_` does the same from blocks of words, after the same kind
// of probe.
#pragma once

#include <string>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace whvi {

// t ~ N(mean, std²) element-wise, in place, from gen: the bits and the
// generator state `t.normal_(mean, std, gen)` gives. Returns t (the same storage).
at::Tensor normal_(at::Tensor t, double mean, double std, const at::Generator& gen);
// A new tensor of N(0, 1) draws: the bits of `torch::randn(sizes, gen, o)`.
at::Tensor randn(at::IntArrayRef sizes, const at::Generator& gen, const at::TensorOptions& o = {});

// 0/1 draws with P(1) = p, in place: the bits and generator state of
// `t.bernoulli_(p, gen)`. Returns t (the same storage).
at::Tensor bernoulli_(at::Tensor t, double p, const at::Generator& gen);

// Which path normal_ takes for float32 / float64 contiguous CPU tensors:
// "avx2" (LibTorch's AVX2 Box-Muller), "scalar" / "scalar-fma" (its scalar one,
// without or with a fused multiply-add in the last step) or "libtorch"
// (the probe matched neither: every call goes to t.normal_).
std::string normal_path(at::ScalarType dtype);
// "words" (the block path) or "libtorch" for bernoulli_.
std::string bernoulli_path(at::ScalarType dtype);

namespace detail {
// The uniform words of `n` calls of LibTorch's CPU generator (each `random()`),
// advancing its state exactly as those calls do. For tests.
void mt_words(const at::Generator& gen, uint32_t* out, int64_t n);
// For a uniform u = x·2^-53 (x an integer below 2^53), `u < p` holds exactly
// when x < bernoulli_threshold(p). For tests.
uint64_t bernoulli_threshold(double p);
}  // namespace detail

}  // namespace whvi
