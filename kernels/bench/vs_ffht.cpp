// Torch-free side-by-side of our CPU FWHT (kernels/, the C API) and FFHT
// (FALCONN-LIB/FFHT, fht_float, in place), one thread, float32, built and run
// by scripts/bench/vs_ffht.sh. Two cases per D (the issue 11 table):
//   batch 1    one in-cache row, transformed in place by many calls timed as
//              one loop (the per-call cost), twice: the row 64-byte aligned (as
//              LibTorch's CPU allocator places every tensor) and 16 bytes past
//              that (the alignment malloc guarantees; a 64-float row then
//              straddles cache lines, which costs both implementations)
//   batch 512  512 rows: FFHT called once per row, ours once for all rows
//              (time per row)
// Rounds interleave the two implementations; each figure is the median of
// the rounds. Both outputs are checked against each other first.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "fht.h"
#include "fwht.h"

namespace {

using clk = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace whvi::kernels;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  std::mt19937 g(1);
  std::normal_distribution<float> n;
  std::printf("# simd level of ours: %s; rounds %d (median)\n", simd_level_name(active_simd_level()), rounds);
  std::printf("%8s | %12s %12s %8s | %14s %14s %8s | %12s %12s %8s\n", "D", "b1 ours ns", "b1 FFHT ns", "ratio",
              "b1+16B ours ns", "b1+16B FFHT ns", "ratio", "b512 ours ns/row", "FFHT ns/row", "ratio");
  for (int log = 6; log <= 16; ++log) {
    const int64_t d = int64_t{1} << log;
    // correctness: the same transform (both unnormalised, Sylvester order)
    {
      std::vector<float> a(d), b(d);
      for (auto& v : a) v = n(g);
      b = a;
      fwht_cpu<float>(a.data(), d, a.data(), d, 1, d, 1.0f, 1);
      fht_float(b.data(), log);
      double err = 0, ref = 0;
      for (int64_t i = 0; i < d; ++i) {
        err = std::max(err, std::fabs(double(a[i]) - double(b[i])));
        ref = std::max(ref, std::fabs(double(b[i])));
      }
      if (err > 1e-5 * ref) {
        std::fprintf(stderr, "D=%lld: outputs differ (max |diff| %g of %g)\n", (long long)d, err, ref);
        return 1;
      }
    }
    // batch 1: one row in cache, in place, many calls per timing (FFHT is
    // unnormalised, so its row overflows to inf over the loop: SIMD
    // arithmetic on inf/NaN runs at full speed, and no denormals arise)
    const int64_t calls = std::max<int64_t>(200, (int64_t{1} << 24) / (d * log));
    const float scale = 1.0f / std::sqrt(float(d));
    // offset_floats: where the row starts past a 64-byte boundary
    auto time_b1 = [&](int offset_floats, double& ours, double& ffht) {
      const size_t bytes = (static_cast<size_t>(d) + 16) * sizeof(float);
      float* xb = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
      float* xfb = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
      if (!xb || !xfb) { std::fprintf(stderr, "out of memory\n"); std::exit(1); }
      float* x = xb + offset_floats;
      float* xf = xfb + offset_floats;
      for (int64_t i = 0; i < d; ++i) x[i] = xf[i] = n(g);
      std::vector<double> o, f;
      for (int r = -1; r < rounds; ++r) {  // round -1: untimed warm-up
        if (r == 0) o.clear(), f.clear();
        auto t0 = clk::now();
        for (int64_t c = 0; c < calls; ++c) fwht_cpu<float>(x, d, x, d, 1, d, scale, 1);
        o.push_back(std::chrono::duration<double, std::nano>(clk::now() - t0).count() / calls);
        t0 = clk::now();
        for (int64_t c = 0; c < calls; ++c) fht_float(xf, log);
        f.push_back(std::chrono::duration<double, std::nano>(clk::now() - t0).count() / calls);
      }
      ours = median(o), ffht = median(f);
      std::free(xb), std::free(xfb);
    };
    double o1, f1, o16, f16;
    time_b1(0, o1, f1);
    time_b1(4, o16, f16);
    // batch 512: rows of a 512 x D array
    const int64_t rows = 512;
    std::vector<float> big(rows * d), bigf;
    for (auto& v : big) v = n(g);
    bigf = big;
    const int reps = static_cast<int>(std::max<int64_t>(1, (int64_t{1} << 24) / (rows * d * log)));
    std::vector<double> ours512, ffht512;
    for (int r = -1; r < rounds; ++r) {
      if (r == 0) ours512.clear(), ffht512.clear();
      auto t0 = clk::now();
      for (int k = 0; k < reps; ++k) fwht_cpu<float>(big.data(), d, big.data(), d, rows, d, scale, 1);
      ours512.push_back(std::chrono::duration<double, std::nano>(clk::now() - t0).count() / (reps * rows));
      t0 = clk::now();
      for (int k = 0; k < reps; ++k)
        for (int64_t i = 0; i < rows; ++i) fht_float(bigf.data() + i * d, log);
      ffht512.push_back(std::chrono::duration<double, std::nano>(clk::now() - t0).count() / (reps * rows));
    }
    const double o5 = median(ours512), f5 = median(ffht512);
    std::printf("%8lld | %12.1f %12.1f %8.2f | %14.1f %14.1f %8.2f | %12.2f %12.2f %8.2f\n", (long long)d, o1, f1,
                o1 / f1, o16, f16, o16 / f16, o5, f5, o5 / f5);
    std::fflush(stdout);
  }
  return 0;
}
