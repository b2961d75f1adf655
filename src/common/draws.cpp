#include "common/draws.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/MathConstants.h>
#include <torch/torch.h>

namespace whvi {

// LibTorch's AVX2 Box-Muller (draws_avx2.cpp, built with -mavx2 -mfma when the
// compiler and LibTorch's headers allow; `normal_avx2_built` says so).
bool normal_avx2_built();
void normal_avx2_blocks(float* data, int64_t blocks, float mean, float std);

namespace {

constexpr int kN = at::MERSENNE_STATE_N;  // 624
constexpr int kM = at::MERSENNE_STATE_M;  // 397

// at::mt19937's next_state: the standard MT19937 twist, written as index loops
// so they vectorise. The last word uses the new state[0], as there.
inline uint32_t twist(uint32_t u, uint32_t v) {
  return (((u & 0x80000000u) | (v & 0x7fffffffu)) >> 1) ^ ((0u - (v & 1u)) & 0x9908b0dfu);
}
void next_state(uint32_t* s) {
  for (int i = 0; i < kN - kM; ++i) s[i] = s[i + kM] ^ twist(s[i], s[i + 1]);
  for (int i = kN - kM; i < kN - 1; ++i) s[i] = s[i + kM - kN] ^ twist(s[i], s[i + 1]);
  s[kN - 1] = s[kM - 1] ^ twist(s[kN - 1], s[0]);
}
inline uint32_t temper(uint32_t y) {
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

// n calls of at::mt19937::operator() on the state `p`, in blocks: each call
// decrements left_, twists when it reaches 0 (left_ = N, next_ = 0) and returns
// the tempered state[next_++]. So with left_ = L, the next L - 1 calls read
// state[next_ ...] without a twist.
void words(at::mt19937_data_pod& p, uint32_t* out, int64_t n) {
  uint32_t* s = p.state_.data();
  while (n > 0) {
    if (p.left_ <= 1) {  // this call twists
      next_state(s);
      p.left_ = kN;
      p.next_ = 0;
      *out++ = temper(s[p.next_++]);
      --n;
      continue;
    }
    const int64_t m = std::min<int64_t>(n, p.left_ - 1);
    const uint32_t* src = s + p.next_;
    for (int64_t i = 0; i < m; ++i) out[i] = temper(src[i]);
    out += m;
    n -= m;
    p.next_ += static_cast<uint32_t>(m);
    p.left_ -= static_cast<int>(m);
  }
}

// Runs f on a copy of the generator's mt19937 state, under its lock, and writes
// the advanced state back.
template <class F>
void with_state(at::CPUGeneratorImpl* g, F f) {
  std::lock_guard<std::mutex> lock(g->mutex_);
  at::mt19937 engine = g->engine();
  at::mt19937_data_pod p = engine.data();
  f(p);
  engine.set_data(p);
  g->set_engine(engine);
}

// at::uniform_real_distribution<T>(0, 1) of the generator's words: float takes
// the low 24 bits of one word, double the low 53 bits of (first << 32 | second)
// (CPUGeneratorImpl::random64). In chunks, so the words stay in cache.
constexpr int64_t kChunk = 2048;
// The 53-bit integer x behind a double uniform u = x·2⁻⁵³ (two words).
inline uint64_t bits53(uint32_t first, uint32_t second) {
  return ((static_cast<uint64_t>(first) << 32) | second) & ((uint64_t(1) << 53) - 1);
}
inline double uniform53(uint32_t first, uint32_t second) { return static_cast<double>(bits53(first, second)) * 0x1.0p-53; }
void uniforms(at::mt19937_data_pod& p, float* out, int64_t n) {
  uint32_t w[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = std::min(kChunk, n - i0);
    words(p, w, m);
    for (int64_t i = 0; i < m; ++i) out[i0 + i] = static_cast<float>(w[i] & 0xffffffu) * 0x1.0p-24f;
  }
}
void uniforms(at::mt19937_data_pod& p, double* out, int64_t n) {
  uint32_t w[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk / 2) {
    const int64_t m = std::min(kChunk / 2, n - i0);
    words(p, w, 2 * m);
    for (int64_t i = 0; i < m; ++i) out[i0 + i] = uniform53(w[2 * i], w[2 * i + 1]);
  }
}

// LibTorch's scalar normal_fill_16 (ATen/native/cpu/DistributionTemplates.h),
// operation for operation. LibTorch compiles it once per CPU capability; in its
// AVX2 build (-mfma) the compiler contracts `radius * cos * std + mean` into a
// fused multiply-add, which is the `fma` variant.
template <class T, bool fma>
void scalar_blocks(T* data, int64_t blocks, T mean, T std) {
  for (int64_t b = 0; b < blocks; ++b, data += 16) {
    for (int j = 0; j < 8; ++j) {
      const T u1 = 1 - data[j];
      const T u2 = data[j + 8];
      const T radius = std::sqrt(-2 * std::log(u1));
      const T theta = 2.0f * c10::pi<double> * u2;
      if constexpr (fma) {
        data[j] = std::fma(radius * std::cos(theta), std, mean);
        data[j + 8] = std::fma(radius * std::sin(theta), std, mean);
      } else {
        data[j] = radius * std::cos(theta) * std + mean;
        data[j + 8] = radius * std::sin(theta) * std + mean;
      }
    }
  }
}

enum class Path { kLibTorch, kScalar, kScalarFma, kAvx2 };

template <class T>
void run_blocks(Path path, T* data, int64_t blocks, T mean, T std) {
  if constexpr (std::is_same<T, float>::value) {
    if (path == Path::kAvx2) return normal_avx2_blocks(data, blocks, mean, std);
  }
  if (path == Path::kScalarFma) return scalar_blocks<T, true>(data, blocks, mean, std);
  scalar_blocks<T, false>(data, blocks, mean, std);
}

// normal_fill: uniforms for every element, Box-Muller on each whole block of
// 16, and when the size is not a multiple of 16, 16 fresh uniforms over the
// last 16 elements and Box-Muller on them.
template <class T>
void fill(Path path, T* data, int64_t n, T mean, T std, at::CPUGeneratorImpl* g) {
  with_state(g, [&](at::mt19937_data_pod& p) {
    uniforms(p, data, n);
    run_blocks(path, data, n / 16, mean, std);
    if (n % 16 != 0) {
      uniforms(p, data + n - 16, 16);
      run_blocks(path, data + n - 16, 1, mean, std);
    }
  });
}

// The probe: 1,000 numbers (a ragged tail for normal_'s blocks of 16) from a
// generator that is not at the start of its cycle, drawn by LibTorch
// (`libtorch(tensor, gen)`) and by us (`ours(data, n, generator)`); the numbers
// and the next word afterwards must be equal.
template <class T, class LibTorch, class Ours>
bool probe_matches(LibTorch libtorch, Ours ours) {
  constexpr int64_t n = 1000;
  const auto dtype = std::is_same<T, float>::value ? at::kFloat : at::kDouble;
  auto ga = at::detail::createCPUGenerator(20261125);
  auto gb = at::detail::createCPUGenerator(20261125);
  auto warm = at::empty({37}, dtype);
  warm.uniform_(0, 1, ga);
  warm.uniform_(0, 1, gb);
  auto a = at::empty({n}, dtype);
  libtorch(a, ga);
  std::vector<T> b(static_cast<size_t>(n));
  ours(b.data(), n, at::check_generator<at::CPUGeneratorImpl>(gb));
  if (std::memcmp(a.data_ptr(), b.data(), sizeof(T) * n) != 0) return false;
  return at::check_generator<at::CPUGeneratorImpl>(ga)->random() == at::check_generator<at::CPUGeneratorImpl>(gb)->random();
}

// normal_ with a mean and std that are not 0 and 1, so a fused multiply-add shows.
template <class T>
bool probe_matches(Path path) {
  return probe_matches<T>([](at::Tensor& t, at::Generator& g) { t.normal_(0.25, 1.5, g); },
                          [path](T* d, int64_t n, at::CPUGeneratorImpl* g) { fill<T>(path, d, n, T(0.25), T(1.5), g); });
}

template <class T>
Path choose() {
  if (std::is_same<T, float>::value && normal_avx2_built() && probe_matches<T>(Path::kAvx2)) return Path::kAvx2;
  if (probe_matches<T>(Path::kScalar)) return Path::kScalar;
  if (probe_matches<T>(Path::kScalarFma)) return Path::kScalarFma;
  return Path::kLibTorch;
}
template <class T>
Path path_for() {
  static const Path p = choose<T>();
  return p;
}

// LibTorch's bernoulli_(p) without MKL (templates::cpu::bernoulli_kernel): for
// each element in order, a double uniform of two words, then `u < p` as 1 or 0.
// The comparison is made on the integer: the uniform is u = x·2⁻⁵³ with x < 2⁵³
// an integer, exactly, and p·2⁵³ is exact too (a power-of-two scaling), so
// u < p ⟺ x < p·2⁵³ ⟺ x < ⌈p·2⁵³⌉, the threshold below (one integer compare per
// element instead of a conversion to double and a multiply).
template <class T>
void bernoulli_fill(T* data, int64_t n, double prob, at::CPUGeneratorImpl* g) {
  const uint64_t thr = detail::bernoulli_threshold(prob);
  with_state(g, [&](at::mt19937_data_pod& p) {
    uint32_t w[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk / 2) {
      const int64_t m = std::min(kChunk / 2, n - i0);
      words(p, w, 2 * m);
      for (int64_t i = 0; i < m; ++i) data[i0 + i] = static_cast<T>(bits53(w[2 * i], w[2 * i + 1]) < thr);
    }
  });
}

template <class T>
bool bernoulli_probe_matches() {
  return probe_matches<T>([](at::Tensor& t, at::Generator& g) { t.bernoulli_(0.375, g); },
                          [](T* d, int64_t n, at::CPUGeneratorImpl* g) { bernoulli_fill<T>(d, n, 0.375, g); });
}
template <class T>
bool bernoulli_fast() {
  static const bool ok = bernoulli_probe_matches<T>();
  return ok;
}

const char* name(Path p) {
  switch (p) {
    case Path::kAvx2: return "avx2";
    case Path::kScalar: return "scalar";
    case Path::kScalarFma: return "scalar-fma";
    default: return "libtorch";
  }
}

}  // namespace

// A tensor on another device (training.device: cuda) drawn from a run's CPU
// generator: the draws are made on the CPU, from the same stream a CPU run
// uses, and copied over. The numbers a run draws then do not depend on its
// device; only the arithmetic on them does.
static bool drawn_on_cpu_for(const at::Tensor& t, const at::Generator& gen) {
  return !t.device().is_cpu() && gen.defined() && gen.device().is_cpu();
}

at::Tensor normal_(at::Tensor t, double mean, double std, const at::Generator& gen) {
  if (drawn_on_cpu_for(t, gen)) {
    auto host = at::empty(t.sizes(), t.options().device(at::kCPU).requires_grad(false));
    t.copy_(normal_(host, mean, std, gen));
    return t;
  }
  const auto dtype = t.scalar_type();
  if (t.device().is_cpu() && gen.defined() && t.numel() >= 16 && t.is_contiguous() &&
      (dtype == at::kFloat || dtype == at::kDouble) && std >= 0.0 && std::isfinite(mean) && std::isfinite(std) &&
      !t.requires_grad()) {
    auto* g = at::check_generator<at::CPUGeneratorImpl>(gen);
    if (dtype == at::kFloat && path_for<float>() != Path::kLibTorch) {
      fill<float>(path_for<float>(), t.data_ptr<float>(), t.numel(), static_cast<float>(mean), static_cast<float>(std), g);
      return t;
    }
    if (dtype == at::kDouble && path_for<double>() != Path::kLibTorch) {
      fill<double>(path_for<double>(), t.data_ptr<double>(), t.numel(), mean, std, g);
      return t;
    }
  }
  return t.normal_(mean, std, gen);
}

at::Tensor randn(at::IntArrayRef sizes, const at::Generator& gen, const at::TensorOptions& o) {
  auto t = at::empty(sizes, o.requires_grad(false));
  normal_(t, 0.0, 1.0, gen);
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

at::Tensor bernoulli_(at::Tensor t, double p, const at::Generator& gen) {
  if (drawn_on_cpu_for(t, gen)) {
    auto host = at::empty(t.sizes(), t.options().device(at::kCPU).requires_grad(false));
    t.copy_(bernoulli_(host, p, gen));
    return t;
  }
  const auto dtype = t.scalar_type();
  if (t.device().is_cpu() && gen.defined() && t.is_contiguous() && p >= 0.0 && p <= 1.0 && !t.requires_grad()) {
    auto* g = at::check_generator<at::CPUGeneratorImpl>(gen);
    if (dtype == at::kFloat && bernoulli_fast<float>()) {
      bernoulli_fill<float>(t.data_ptr<float>(), t.numel(), p, g);
      return t;
    }
    if (dtype == at::kDouble && bernoulli_fast<double>()) {
      bernoulli_fill<double>(t.data_ptr<double>(), t.numel(), p, g);
      return t;
    }
  }
  return t.bernoulli_(p, gen);
}

std::string bernoulli_path(at::ScalarType dtype) {
  if (dtype == at::kFloat) return bernoulli_fast<float>() ? "words" : "libtorch";
  if (dtype == at::kDouble) return bernoulli_fast<double>() ? "words" : "libtorch";
  return "libtorch";
}

std::string normal_path(at::ScalarType dtype) {
  if (dtype == at::kFloat) return name(path_for<float>());
  if (dtype == at::kDouble) return name(path_for<double>());
  return "libtorch";
}

namespace detail {
uint64_t bernoulli_threshold(double p) {
  if (!(p > 0.0)) return 0;  // p <= 0 or NaN: u < p never holds
  const double t = std::ceil(p * 0x1.0p53);
  if (t >= 0x1.0p53) return uint64_t(1) << 53;  // every x (< 2^53) passes: u < 1 <= p
  return static_cast<uint64_t>(t);
}
void mt_words(const at::Generator& gen, uint32_t* out, int64_t n) {
  with_state(at::check_generator<at::CPUGeneratorImpl>(gen), [&](at::mt19937_data_pod& p) { words(p, out, n); });
}
}  // namespace detail

}  // namespace whvi
