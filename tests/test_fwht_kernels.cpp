// Torch-free tests of the CPU kernels in kernels/: every SIMD level against
// an explicit Hadamard matrix, the transform's algebra, the fused WHVI kernel
// against the unfused composition and finite differences, and error paths.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "fwht.h"

namespace wk = whvi::kernels;

namespace {

// H[i][j] = (-1)^popcount(i & j): the Sylvester matrix, built independently
// of the butterfly.
double hadamard_entry(int64_t i, int64_t j) { return (__builtin_popcountll(i & j) & 1) ? -1.0 : 1.0; }

template <class T>
std::vector<T> randn(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N;
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(N(rng));
  return v;
}

template <class T>
double tol() { return std::is_same_v<T, float> ? 2e-6 : 1e-14; }

// max over checked outputs of |y - scale*H x| / (1 + |ref|)
template <class T>
double max_err_vs_dense(const std::vector<T>& x, int64_t xs, const std::vector<T>& y, int64_t ys,
                        int64_t rows, int64_t d, double scale) {
  double worst = 0;
  const int64_t step = d > 1024 ? 97 : 1;  // sample outputs of very large rows
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < d; i += step) {
      double ref = 0;
      for (int64_t j = 0; j < d; ++j) ref += hadamard_entry(i, j) * x[r * xs + j];
      ref *= scale;
      worst = std::max(worst, std::abs(ref - y[r * ys + i]) / (1 + std::abs(ref)) /
                                  std::max(1.0, std::log2(double(d))));
    }
  return worst;
}

class FwhtLevel : public ::testing::TestWithParam<wk::SimdLevel> {};

template <class T>
void check_all_sizes(wk::SimdLevel level, bool in_place) {
  for (int n = 0; n <= 12; ++n) {
    const int64_t d = int64_t{1} << n;
    const int64_t rows = 3;
    const auto x = randn<T>(rows * d, 1000 + n);
    std::vector<T> y = x;
    const T scale = static_cast<T>(n % 2 ? 1.0 : 0.5);
    if (in_place)
      wk::fwht_cpu_level<T>(level, y.data(), d, y.data(), d, rows, d, scale, 2);
    else
      wk::fwht_cpu_level<T>(level, x.data(), d, y.data(), d, rows, d, scale, 2);
    EXPECT_LE(max_err_vs_dense(x, d, y, d, rows, d, scale), tol<T>())
        << "d=" << d << " level=" << wk::simd_level_name(level) << " in_place=" << in_place;
  }
}

TEST_P(FwhtLevel, EverySizeTo4096FloatOutOfPlace) { check_all_sizes<float>(GetParam(), false); }
TEST_P(FwhtLevel, EverySizeTo4096FloatInPlace) { check_all_sizes<float>(GetParam(), true); }
TEST_P(FwhtLevel, EverySizeTo4096DoubleOutOfPlace) { check_all_sizes<double>(GetParam(), false); }
TEST_P(FwhtLevel, EverySizeTo4096DoubleInPlace) { check_all_sizes<double>(GetParam(), true); }

TEST_P(FwhtLevel, LargeSizesAgainstDenseRowsSampled) {
  for (int n : {13, 14, 16}) {
    const int64_t d = int64_t{1} << n;
    const auto x = randn<float>(d, n);
    std::vector<float> y(d);
    wk::fwht_cpu_level<float>(GetParam(), x.data(), d, y.data(), d, 1, d, 1.f, 1);
    EXPECT_LE(max_err_vs_dense(x, d, y, d, 1, d, 1.0), tol<float>()) << "d=" << d;
  }
}

// H(H x) = D x, for sizes up to 2^20 (too large to compare with a dense H).
TEST_P(FwhtLevel, InvolutionUpTo2To20) {
  for (int n : {15, 17, 18, 20}) {
    const int64_t d = int64_t{1} << n;
    const auto x = randn<double>(d, 7 + n);
    std::vector<double> y(d);
    wk::fwht_cpu_level<double>(GetParam(), x.data(), d, y.data(), d, 1, d, 1.0, 1);
    wk::fwht_cpu_level<double>(GetParam(), y.data(), d, y.data(), d, 1, d, 1.0 / d, 1);
    double worst = 0;
    for (int64_t i = 0; i < d; ++i) worst = std::max(worst, std::abs(y[i] - x[i]));
    EXPECT_LE(worst, 1e-11) << "d=" << d;
  }
}

// Orthonormal scale preserves the norm; the first output is the row sum.
TEST_P(FwhtLevel, OrthonormalScalePreservesNormAndRowSum) {
  const int64_t d = 1024;
  const auto x = randn<double>(d, 3);
  std::vector<double> y(d);
  wk::fwht_cpu_level<double>(GetParam(), x.data(), d, y.data(), d, 1, d, 1.0 / std::sqrt(d), 1);
  double nx = 0, ny = 0, sum = 0;
  for (int64_t i = 0; i < d; ++i) nx += x[i] * x[i], ny += y[i] * y[i], sum += x[i];
  EXPECT_NEAR(nx, ny, 1e-10 * nx);
  EXPECT_NEAR(y[0], sum / std::sqrt(d), 1e-12);
}

// Rows with gaps between them (row stride > d) on both sides; gaps untouched.
TEST_P(FwhtLevel, RowStrides) {
  const int64_t d = 64, rows = 5, xs = 80, ys = 72;
  const auto x = randn<float>(rows * xs, 11);
  std::vector<float> y(rows * ys, 42.f);
  wk::fwht_cpu_level<float>(GetParam(), x.data(), xs, y.data(), ys, rows, d, 1.f, 2);
  EXPECT_LE(max_err_vs_dense(x, xs, y, ys, rows, d, 1.0), tol<float>());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = d; j < ys; ++j) ASSERT_EQ(y[r * ys + j], 42.f);
}

// Same result for 1 thread and many, and for a batch that is not a multiple
// of the thread count; zero rows is a no-op.
TEST_P(FwhtLevel, ThreadsAndOddBatches) {
  const int64_t d = 256, rows = 37;
  const auto x = randn<float>(rows * d, 5);
  std::vector<float> a(rows * d), b(rows * d);
  wk::fwht_cpu_level<float>(GetParam(), x.data(), d, a.data(), d, rows, d, 1.f, 1);
  wk::fwht_cpu_level<float>(GetParam(), x.data(), d, b.data(), d, rows, d, 1.f, 3);
  EXPECT_EQ(a, b);
  wk::fwht_cpu_level<float>(GetParam(), x.data(), d, b.data(), d, 0, d, 1.f, 3);
  EXPECT_EQ(a, b);
}

// Called from inside a parallel region, OpenMP gives the kernel's region a
// team of one however many threads are asked for: every row must still be done.
TEST_P(FwhtLevel, EveryRowIsDoneWhenOpenMpGivesFewerThreads) {
  const int64_t d = 64, rows = 37;
  const auto x = randn<float>(rows * d, 6);
  std::vector<float> a(rows * d), b(rows * d, 7.f);
  wk::fwht_cpu_level<float>(GetParam(), x.data(), d, a.data(), d, rows, d, 1.f, 1);
#pragma omp parallel num_threads(2)
  {
#ifdef _OPENMP
    if (omp_get_thread_num() == 0)
#endif
      wk::fwht_cpu_level<float>(GetParam(), x.data(), d, b.data(), d, rows, d, 1.f, 4);
  }
  EXPECT_EQ(a, b);
}

// Every level agrees with the scalar level to rounding.
TEST_P(FwhtLevel, MatchesScalarLevel) {
  for (int n = 0; n <= 16; ++n) {
    const int64_t d = int64_t{1} << n;
    const auto x = randn<double>(2 * d, n);
    std::vector<double> a(2 * d), b(2 * d);
    wk::fwht_cpu_level<double>(wk::SimdLevel::kScalar, x.data(), d, a.data(), d, 2, d, 1.0, 1);
    wk::fwht_cpu_level<double>(GetParam(), x.data(), d, b.data(), d, 2, d, 1.0, 1);
    for (int64_t i = 0; i < 2 * d; ++i) ASSERT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(a[i]))) << "d=" << d;
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, FwhtLevel, ::testing::ValuesIn(wk::supported_simd_levels()),
                         [](const auto& info) { return std::string(wk::simd_level_name(info.param)); });

TEST(FwhtErrors, NonPowerOfTwoNamesTheSize) {
  std::vector<float> x(96);
  try {
    wk::fwht_cpu<float>(x.data(), 96, x.data(), 96, 1, 96, 1.f, 1);
    FAIL() << "no exception";
  } catch (const wk::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("d=96"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
  }
  EXPECT_THROW(wk::fwht_cpu<float>(x.data(), 0, x.data(), 0, 1, 0, 1.f, 1), wk::KernelError);
  EXPECT_THROW(wk::fwht_cpu<float>(x.data(), 32, x.data(), 64, 1, 64, 1.f, 1), wk::KernelError);
  EXPECT_THROW(wk::fwht_cpu<float>(x.data(), 64, x.data(), 32, 1, 64, 1.f, 1), wk::KernelError);
  EXPECT_THROW(wk::fwht_cpu<float>(nullptr, 64, x.data(), 64, 1, 64, 1.f, 1), wk::KernelError);
  EXPECT_THROW(wk::fwht_cpu<float>(x.data(), 64, x.data(), 64, -1, 64, 1.f, 1), wk::KernelError);
}

TEST(FwhtErrors, UnknownSimdLevel) {
  EXPECT_THROW(wk::parse_simd_level("sse9"), wk::KernelError);
  EXPECT_EQ(wk::parse_simd_level("scalar"), wk::SimdLevel::kScalar);
}

// The level reported is the level whose kernels run: active_simd_level() reads
// the level compiled into the active kernel table, so a set_simd_level that
// did not switch the table (the per-call path reads only the table) fails here.
TEST(FwhtLevels, SetLevelSwitchesTheKernelTable) {
  const auto levels = wk::supported_simd_levels();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), wk::SimdLevel::kScalar);
  for (auto level : levels) {
    wk::set_simd_level(level);
    EXPECT_EQ(wk::active_simd_level(), level) << wk::simd_level_name(level);
    std::vector<float> x{1, 2, 3, 4}, y(4);  // still transforms after the switch
    wk::fwht_cpu<float>(x.data(), 4, y.data(), 4, 1, 4, 1.0f, 1);
    EXPECT_EQ(y, (std::vector<float>{10, -2, -4, 0}));
  }
  wk::set_simd_level(levels.back());
  EXPECT_EQ(wk::active_simd_level(), levels.back());
}

// ---- fused WHVI ---------------------------------------------------------------

struct WhviCase {
  int64_t batch, blocks, d;
  bool shared_g, with_eps;
};

template <class T>
struct WhviData {
  wk::WhviShape sh;
  std::vector<T> x, eps, s1, s2, mu, sg;
  explicit WhviData(const WhviCase& c, uint64_t seed = 1) {
    sh.batch = c.batch, sh.blocks = c.blocks, sh.d = c.d, sh.shared_g = c.shared_g;
    const int64_t G = sh.groups();
    x = randn<T>(c.batch * c.d, seed);
    if (c.with_eps) eps = randn<T>(c.batch * G * c.d, seed + 1);
    s1 = randn<T>(c.blocks * c.d, seed + 2);
    s2 = randn<T>(c.blocks * c.d, seed + 3);
    mu = randn<T>(G * c.d, seed + 4);
    sg = randn<T>(G * c.d, seed + 5);
  }
  const T* e() const { return eps.empty() ? nullptr : eps.data(); }
};

class WhviFused : public ::testing::TestWithParam<WhviCase> {};

TEST_P(WhviFused, ForwardMatchesUnfusedReference) {
  const auto c = GetParam();
  WhviData<double> w(c);
  const int64_t n = c.batch * c.blocks * c.d;
  std::vector<double> y(n), ref(n);
  for (auto level : wk::supported_simd_levels()) {
    wk::set_simd_level(level);
    wk::whvi_forward_cpu<double>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                                 w.sg.data(), y.data(), 2);
    wk::whvi_forward_reference<double>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(),
                                       w.mu.data(), w.sg.data(), ref.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(y[i], ref[i], 1e-10 * (1 + std::abs(ref[i]))) << wk::simd_level_name(level);
  }
  wk::set_simd_level(wk::supported_simd_levels().back());
}

// The reference itself against an explicit dense W = S1 H diag(g) H S2.
TEST(WhviReference, EqualsDenseMatrixProduct) {
  const WhviCase c{4, 2, 8, false, true};
  WhviData<double> w(c);
  std::vector<double> y(c.batch * c.blocks * c.d);
  wk::whvi_forward_reference<double>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(),
                                     w.mu.data(), w.sg.data(), y.data());
  for (int64_t i = 0; i < c.batch; ++i)
    for (int64_t k = 0; k < c.blocks; ++k)
      for (int64_t r = 0; r < c.d; ++r) {
        double acc = 0;
        for (int64_t m = 0; m < c.d; ++m) {
          const double g = w.mu[k * c.d + m] + w.sg[k * c.d + m] * w.eps[(i * c.blocks + k) * c.d + m];
          for (int64_t j = 0; j < c.d; ++j)
            acc += w.s1[k * c.d + r] * hadamard_entry(r, m) * g * hadamard_entry(m, j) *
                   w.s2[k * c.d + j] * w.x[i * c.d + j];
        }
        EXPECT_NEAR(y[(i * c.blocks + k) * c.d + r], acc, 1e-10 * (1 + std::abs(acc)));
      }
}

// Backward: every gradient of L = sum(dy * y) against central differences.
TEST_P(WhviFused, BackwardMatchesFiniteDifferences) {
  const auto c = GetParam();
  WhviData<double> w(c, 17);
  const auto dy = randn<double>(c.batch * c.blocks * c.d, 99);
  auto loss = [&](WhviData<double>& v) {
    std::vector<double> y(c.batch * c.blocks * c.d);
    wk::whvi_forward_reference<double>(v.sh, v.x.data(), v.e(), v.s1.data(), v.s2.data(),
                                       v.mu.data(), v.sg.data(), y.data());
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += y[i] * dy[i];
    return s;
  };
  std::vector<double> dx(w.x.size()), ds1(w.s1.size()), ds2(w.s2.size()), dmu(w.mu.size()),
      dsg(w.sg.size());
  const double h = 1e-6;
  for (auto level : wk::supported_simd_levels()) {
  SCOPED_TRACE(wk::simd_level_name(level));
  wk::set_simd_level(level);
  wk::whvi_backward_cpu<double>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                                w.sg.data(), dy.data(), dx.data(), ds1.data(), ds2.data(),
                                dmu.data(), dsg.data(), 2);
  auto check = [&](std::vector<double> WhviData<double>::*field, const std::vector<double>& grad,
                   const char* name) {
    for (size_t i = 0; i < grad.size(); ++i) {
      WhviData<double> p = w, m = w;
      (p.*field)[i] += h;
      (m.*field)[i] -= h;
      const double fd = (loss(p) - loss(m)) / (2 * h);
      ASSERT_NEAR(grad[i], fd, 1e-6 * (1 + std::abs(fd))) << name << "[" << i << "]";
    }
  };
  check(&WhviData<double>::x, dx, "dx");
  check(&WhviData<double>::s1, ds1, "ds1");
  check(&WhviData<double>::s2, ds2, "ds2");
  check(&WhviData<double>::mu, dmu, "dmu");
  if (c.with_eps)
    check(&WhviData<double>::sg, dsg, "dsigma");
  else
    for (double v : dsg) ASSERT_EQ(v, 0.0);
  }
  wk::set_simd_level(wk::supported_simd_levels().back());
}

// The forward's intermediates: hu = H(s2 x) and hw = H(g u), computed here
// independently with the scalar transform; y = s1 hw exactly. The backward
// given them returns exactly the gradients it computes without them (it must
// not matter whether the two transforms were kept or redone), at every level.
TEST_P(WhviFused, KeptIntermediatesAreUAndWAndGiveTheSameGradients) {
  const auto c = GetParam();
  WhviData<float> w(c, 5);
  const int64_t n = c.batch * c.blocks * c.d, G = w.sh.groups();
  const auto dy = randn<float>(n, 7);
  for (auto level : wk::supported_simd_levels()) {
    SCOPED_TRACE(wk::simd_level_name(level));
    wk::set_simd_level(level);
    std::vector<float> y(n), hu(n), hw(n);
    wk::whvi_forward_cpu<float>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                                w.sg.data(), y.data(), 2, hu.data(), hw.data());
    std::vector<float> u(c.d), v(c.d);
    for (int64_t i = 0; i < c.batch; ++i)
      for (int64_t k = 0; k < c.blocks; ++k) {
        const int64_t q = c.shared_g ? 0 : k, off = (i * c.blocks + k) * c.d;
        for (int64_t j = 0; j < c.d; ++j) u[j] = w.s2[k * c.d + j] * w.x[i * c.d + j];
        wk::fwht_cpu_level<float>(wk::SimdLevel::kScalar, u.data(), c.d, u.data(), c.d, 1, c.d, 1.f, 1);
        for (int64_t j = 0; j < c.d; ++j) {
          ASSERT_NEAR(hu[off + j], u[j], 1e-5f * (1 + std::abs(u[j])));
          const float g = w.mu[q * c.d + j] + (c.with_eps ? w.sg[q * c.d + j] * w.eps[(i * G + q) * c.d + j] : 0.f);
          v[j] = g * hu[off + j];
        }
        wk::fwht_cpu_level<float>(wk::SimdLevel::kScalar, v.data(), c.d, v.data(), c.d, 1, c.d, 1.f, 1);
        for (int64_t j = 0; j < c.d; ++j) {
          ASSERT_NEAR(hw[off + j], v[j], 1e-5f * (1 + std::abs(v[j])));
          ASSERT_EQ(y[off + j], w.s1[k * c.d + j] * hw[off + j]);
        }
      }
    using Grads = std::array<std::vector<float>, 5>;
    auto grads = [&](const float* ku, const float* kw) {
      Grads g{std::vector<float>(w.x.size()), std::vector<float>(w.s1.size()),
              std::vector<float>(w.s2.size()), std::vector<float>(w.mu.size()),
              std::vector<float>(w.sg.size())};
      wk::whvi_backward_cpu<float>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                                   w.sg.data(), dy.data(), g[0].data(), g[1].data(), g[2].data(),
                                   g[3].data(), g[4].data(), 2, ku, kw);
      return g;
    };
    const auto redone = grads(nullptr, nullptr);
    EXPECT_EQ(grads(hu.data(), hw.data()), redone);
    EXPECT_EQ(grads(hu.data(), nullptr), redone);
    EXPECT_EQ(grads(nullptr, hw.data()), redone);
  }
  wk::set_simd_level(wk::supported_simd_levels().back());
}

// Blocks shorter than a vector are transformed several per vector; each block
// must come out exactly as when it is the layer's only block (then it takes
// the one-block path: the scalar radix-2 loop), forward and backward.
TEST(WhviFusedShortBlocks, ManyBlocksAtOnceEqualEachBlockAlone) {
  for (const WhviCase c : {WhviCase{3, 16, 8, false, true}, WhviCase{3, 8, 16, false, true},
                           WhviCase{2, 5, 4, false, true}, WhviCase{2, 7, 2, false, false}}) {
    WhviData<float> w(c, 11);
    const int64_t n = c.batch * c.blocks * c.d, d = c.d;
    const auto dy = randn<float>(n, 13);
    for (auto level : wk::supported_simd_levels()) {
      SCOPED_TRACE(std::string(wk::simd_level_name(level)) + " d=" + std::to_string(d) +
                   " blocks=" + std::to_string(c.blocks));
      wk::set_simd_level(level);
      std::vector<float> y(n), dx(w.x.size()), ds1(w.s1.size()), ds2(w.s2.size()), dmu(w.mu.size()),
          dsg(w.sg.size());
      wk::whvi_forward_cpu<float>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                                  w.sg.data(), y.data(), 1);
      wk::whvi_backward_cpu<float>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                                   w.sg.data(), dy.data(), nullptr, ds1.data(), ds2.data(), dmu.data(),
                                   dsg.data(), 1);
      for (int64_t k = 0; k < c.blocks; ++k) {
        wk::WhviShape one = w.sh;
        one.blocks = 1;
        std::vector<float> eps1, dy1(c.batch * d), y1(c.batch * d);
        for (int64_t i = 0; i < c.batch; ++i) {
          if (c.with_eps) eps1.insert(eps1.end(), w.eps.begin() + (i * c.blocks + k) * d, w.eps.begin() + (i * c.blocks + k + 1) * d);
          std::copy(dy.begin() + (i * c.blocks + k) * d, dy.begin() + (i * c.blocks + k + 1) * d, dy1.begin() + i * d);
        }
        const float* e1 = c.with_eps ? eps1.data() : nullptr;
        const float *s1k = w.s1.data() + k * d, *s2k = w.s2.data() + k * d, *muk = w.mu.data() + k * d,
                    *sgk = w.sg.data() + k * d;
        wk::whvi_forward_cpu<float>(one, w.x.data(), e1, s1k, s2k, muk, sgk, y1.data(), 1);
        std::vector<float> a1(d), a2(d), am(d), as(d);
        wk::whvi_backward_cpu<float>(one, w.x.data(), e1, s1k, s2k, muk, sgk, dy1.data(), nullptr,
                                     a1.data(), a2.data(), am.data(), as.data(), 1);
        for (int64_t i = 0; i < c.batch; ++i)
          for (int64_t j = 0; j < d; ++j) ASSERT_EQ(y[(i * c.blocks + k) * d + j], y1[i * d + j]);
        for (int64_t j = 0; j < d; ++j) {
          ASSERT_EQ(ds1[k * d + j], a1[j]);
          ASSERT_EQ(ds2[k * d + j], a2[j]);
          ASSERT_EQ(dmu[k * d + j], am[j]);
          ASSERT_EQ(dsg[k * d + j], as[j]);
        }
      }
    }
  }
  wk::set_simd_level(wk::supported_simd_levels().back());
}

// Skipped outputs (nullptr) leave the others unchanged.
TEST(WhviFusedBackward, NullOutputsSkipOnlyThemselves) {
  const WhviCase c{5, 2, 16, false, true};
  WhviData<float> w(c);
  const auto dy = randn<float>(c.batch * c.blocks * c.d, 3);
  std::vector<float> dx(w.x.size()), dx2(w.x.size()), dmu(w.mu.size());
  wk::whvi_backward_cpu<float>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                               w.sg.data(), dy.data(), dx.data(), nullptr, nullptr, dmu.data(),
                               nullptr, 1);
  std::vector<float> ds1(w.s1.size()), ds2(w.s2.size()), dmu2(w.mu.size()), dsg(w.sg.size());
  wk::whvi_backward_cpu<float>(w.sh, w.x.data(), w.e(), w.s1.data(), w.s2.data(), w.mu.data(),
                               w.sg.data(), dy.data(), dx2.data(), ds1.data(), ds2.data(),
                               dmu2.data(), dsg.data(), 3);
  for (size_t i = 0; i < dx.size(); ++i) EXPECT_NEAR(dx[i], dx2[i], 1e-4 * (1 + std::abs(dx[i])));
  for (size_t i = 0; i < dmu.size(); ++i) EXPECT_NEAR(dmu[i], dmu2[i], 1e-3 * (1 + std::abs(dmu[i])));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WhviFused,
    ::testing::Values(WhviCase{3, 1, 1, false, true}, WhviCase{3, 1, 2, false, true},
                      WhviCase{4, 1, 8, false, true}, WhviCase{5, 3, 16, false, true},
                      WhviCase{5, 3, 16, true, true}, WhviCase{2, 2, 32, false, false},
                      WhviCase{7, 1, 64, true, true}, WhviCase{3, 16, 8, false, true},
                      WhviCase{3, 16, 8, true, true}, WhviCase{2, 5, 4, false, true},
                      WhviCase{2, 3, 2, true, false}),
    [](const auto& info) {
      const auto& c = info.param;
      return "b" + std::to_string(c.batch) + "_k" + std::to_string(c.blocks) + "_d" +
             std::to_string(c.d) + (c.shared_g ? "_shared" : "_perblock") +
             (c.with_eps ? "_eps" : "_mean");
    });

TEST(WhviFusedErrors, BadBlockSize) {
  std::vector<float> v(64);
  wk::WhviShape sh;
  sh.batch = 1, sh.blocks = 1, sh.d = 48;
  try {
    wk::whvi_forward_cpu<float>(sh, v.data(), nullptr, v.data(), v.data(), v.data(), v.data(),
                                v.data(), 1);
    FAIL();
  } catch (const wk::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("d=48"), std::string::npos) << e.what();
  }
}

}  // namespace
