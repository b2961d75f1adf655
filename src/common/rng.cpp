#include "common/rng.h"

#include <ATen/CPUGeneratorImpl.h>

namespace whvi {
namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t derive_seed(uint64_t seed, uint64_t split, Stream stream) {
  return splitmix64(splitmix64(splitmix64(seed) ^ split) ^ static_cast<uint64_t>(stream));
}

uint64_t uniform_below(std::mt19937_64& g, uint64_t range) {
  const uint64_t threshold = (uint64_t(0) - range) % range;
  for (;;) {
    const uint64_t r = g();
    if (r >= threshold) return r % range;
  }
}

double uniform01(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

void shuffle(std::vector<int64_t>& v, std::mt19937_64& g) {
  for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i)
    std::swap(v[static_cast<size_t>(i)], v[uniform_below(g, static_cast<uint64_t>(i) + 1)]);
}

at::Generator make_generator(uint64_t seed) { return at::detail::createCPUGenerator(seed); }

Fnv1a64& Fnv1a64::add(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
  return *this;
}

}  // namespace whvi
