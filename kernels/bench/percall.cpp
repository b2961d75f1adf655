#include <chrono>
#include <cstdio>
#include <vector>
#include <random>
#include <algorithm>
#include "fwht.h"
// Torch-free: the cost of one fwht_cpu call on one in-cache row, many calls
// timed as one loop, 1 thread. Build it at two commits to compare kernels:
//   cmake --build build --target fwht_percall && build/kernels/fwht_percall
int main() {
  using namespace whvi::kernels;
  std::mt19937 g(1); std::normal_distribution<float> n;
  for (int64_t d : {64, 128, 256, 512, 1024, 2048, 4096}) {
    std::vector<float> x(d), y(d);
    for (auto& v : x) v = n(g);
    const int64_t calls = std::max<int64_t>(1000, (int64_t{1} << 22) / d);
    std::vector<double> ns;
    for (int r = 0; r < 15; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (int64_t c = 0; c < calls; ++c) fwht_cpu<float>(x.data(), d, y.data(), d, 1, d, 1.0f, 1);
      ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / calls);
    }
    std::sort(ns.begin(), ns.end());
    std::printf("%6lld %8.1f ns/call (median of 15 loops of %lld calls)\n", (long long)d, ns[7], (long long)calls);
  }
}
