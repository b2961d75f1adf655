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

at::Generator make_generator(uint64_t seed) { return at::detail::createCPUGenerator(seed); }

Fnv1a64& Fnv1a64::add(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
  return *this;
}

}  // namespace whvi
