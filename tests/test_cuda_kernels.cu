// Tests of the CUDA kernels (kernels/fwht_cuda.h) against double-precision
// host references written here, independent of the CPU kernels: the batched
// FWHT for every size 2^0..2^15 and several larger ones, in place and out of
// place, with row strides, misaligned bases, scales and all three dtypes; the
// fused WHVI forward and backward; and the error paths. Every test skips
// without a CUDA device.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fwht_cuda.h"

namespace wk = whvi::kernels;
namespace wc = whvi::kernels::cuda;

namespace {

void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + ": " +
                             cudaGetErrorString(err));
}

// Waits for the kernels and surfaces asynchronous faults (illegal address...).
void sync_ok() { cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after kernel"); }

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wc::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    if (n_) cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p_), n_ * sizeof(T)), "cudaMalloc");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  T* get() const { return p_; }
  void upload(const std::vector<T>& h) {
    if (h.size() != n_) throw std::logic_error("upload size mismatch");
    if (n_) cuda_ok(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    if (n_) cuda_ok(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return h;
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// ---- dtypes -------------------------------------------------------------------

template <class T>
struct Dt;
template <>
struct Dt<float> {
  static constexpr wc::DType kType = wc::DType::kFloat32;
  static constexpr double kUnit = 0;  // output rounding already in the fp32 budget
  static constexpr double kTiny = 0;  // spacing of the subnormals (absolute rounding floor)
  static const char* name() { return "float32"; }
  static float from(float v) { return v; }
  static float to(float v) { return v; }
};
template <>
struct Dt<__half> {
  static constexpr wc::DType kType = wc::DType::kFloat16;
  static constexpr double kUnit = 1.0 / 2048;  // 2^-11
  static constexpr double kTiny = 5.9604644775390625e-08;  // 2^-24
  static const char* name() { return "float16"; }
  static __half from(float v) { return __float2half(v); }
  static float to(__half v) { return __half2float(v); }
};
template <>
struct Dt<__nv_bfloat16> {
  static constexpr wc::DType kType = wc::DType::kBFloat16;
  static constexpr double kUnit = 1.0 / 256;  // 2^-8
  static constexpr double kTiny = 9.183549615799121e-41;  // 2^-133
  static const char* name() { return "bfloat16"; }
  static __nv_bfloat16 from(float v) { return __float2bfloat16(v); }
  static float to(__nv_bfloat16 v) { return __bfloat162float(v); }
};

// ---- host reference -----------------------------------------------------------

// Unnormalised Sylvester-order FWHT of v[0..d), in double: stage h pairs
// (j, j + h) inside blocks of 2h.
void ref_fwht(double* v, int64_t d) {
  for (int64_t h = 1; h < d; h *= 2)
    for (int64_t i = 0; i < d; i += 2 * h)
      for (int64_t j = i; j < i + h; ++j) {
        const double a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
}

int log2_of(int64_t d) {
  int l = 0;
  while ((int64_t{1} << l) < d) ++l;
  return l;
}

std::vector<float> randn(size_t n, uint64_t seed, double sigma = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N(0.0, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(N(rng));
  return v;
}

// ---- FWHT cases ------------------------------------------------------------------

struct FwhtCase {
  int64_t rows = 1;
  int64_t d = 1;
  int64_t in_stride = 1;
  int64_t out_stride = 1;
  int64_t in_offset = 0;  // elements before the first row (misaligns the base)
  bool in_place = false;  // out = in (same pointer and stride)
  float scale = 1.f;
  std::string describe() const {
    std::ostringstream s;
    s << "rows=" << rows << " d=" << d << " in_stride=" << in_stride << " out_stride=" << out_stride
      << " in_offset=" << in_offset << " in_place=" << in_place << " scale=" << scale;
    return s.str();
  }
};

constexpr float kSentinel = -7.75f;  // exact in every dtype

// Runs one case and checks every output and every element the kernel must not
// touch (row padding, a guard row after the last one, the misaligned prefix).
template <class T>
void check_fwht_case(const FwhtCase& c, uint64_t seed) {
  SCOPED_TRACE(std::string(Dt<T>::name()) + " " + c.describe());
  const int L = log2_of(c.d);
  const int64_t out_stride = c.in_place ? c.in_stride : c.out_stride;
  const int64_t in_elems = c.in_offset + (c.rows + 1) * c.in_stride;
  const int64_t out_elems = c.in_offset + (c.rows + 1) * out_stride;

  const std::vector<float> xf = randn(size_t(in_elems), seed);
  std::vector<T> hin(static_cast<size_t>(in_elems));
  for (size_t i = 0; i < hin.size(); ++i) hin[i] = Dt<T>::from(xf[i]);
  DeviceBuffer<T> din(static_cast<size_t>(in_elems));
  din.upload(hin);
  std::vector<T> hout_init;
  DeviceBuffer<T> dout(c.in_place ? 0 : size_t(out_elems));
  if (!c.in_place) {
    hout_init.assign(size_t(out_elems), Dt<T>::from(kSentinel));
    dout.upload(hout_init);
  } else {
    hout_init = hin;
  }
  T* in_ptr = din.get() + c.in_offset;
  T* out_ptr = c.in_place ? in_ptr : dout.get() + c.in_offset;

  wc::fwht(Dt<T>::kType, in_ptr, c.in_stride, out_ptr, out_stride, c.rows, c.d, c.scale, nullptr);
  sync_ok();
  const std::vector<T> hout = c.in_place ? din.download() : dout.download();

  // Error budget per row: fp32 butterflies (relative to scale*||x||), the
  // output rounding of float16/bfloat16 (relative to |y|, plus the subnormal
  // spacing) and, for d > 2^15,
  // the rounding of the stored intermediate between passes.
  const int extra_passes = L > 15 ? (L - 15 + 4) / 5 : 0;
  int64_t bad = 0;
  std::vector<double> v(static_cast<size_t>(c.d));
  for (int64_t r = 0; r < c.rows; ++r) {
    double norm2 = 0;
    for (int64_t j = 0; j < c.d; ++j) {
      v[j] = Dt<T>::to(hin[size_t(c.in_offset + r * c.in_stride + j)]);
      norm2 += v[j] * v[j];
    }
    ref_fwht(v.data(), c.d);
    const double base = std::abs(double(c.scale)) * std::sqrt(norm2) *
                        (2e-6 * std::max(L, 1) + 8.0 * extra_passes * Dt<T>::kUnit);
    for (int64_t j = 0; j < c.d; ++j) {
      const double ref = double(c.scale) * v[j];
      const double got = Dt<T>::to(hout[size_t(c.in_offset + r * out_stride + j)]);
      const double tol = base + 2.0 * Dt<T>::kUnit * std::abs(ref) + Dt<T>::kTiny;
      if (!(std::abs(got - ref) <= tol)) {
        if (++bad <= 5)
          ADD_FAILURE() << "row " << r << " col " << j << ": got " << got << ", want " << ref
                        << " (tol " << tol << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0) << "wrong outputs";

  // Untouched elements: the prefix, the padding of every row, the guard row.
  int64_t clobbered = 0;
  for (int64_t i = 0; i < out_elems; ++i) {
    const int64_t rel = i - c.in_offset;
    const bool is_output = rel >= 0 && rel / out_stride < c.rows && rel % out_stride < c.d;
    if (is_output) continue;
    if (Dt<T>::to(hout[size_t(i)]) != Dt<T>::to(hout_init[size_t(i)])) {
      if (++clobbered <= 5) ADD_FAILURE() << "element " << i << " outside the output was written";
    }
  }
  EXPECT_EQ(clobbered, 0);
}

// Layouts exercised at every size: contiguous out-of-place and in-place,
// strided (vector loads, scalar stores), misaligned base (scalar path), and
// strided in place.
template <class T>
std::vector<FwhtCase> layouts(int64_t rows, int64_t d, float scale) {
  std::vector<FwhtCase> cs;
  FwhtCase c;
  c.rows = rows;
  c.d = d;
  c.scale = scale;
  c.in_stride = c.out_stride = d;
  cs.push_back(c);  // contiguous, out of place
  c.in_place = true;
  cs.push_back(c);  // contiguous, in place
  c.in_place = false;
  c.in_stride = d + 8;
  c.out_stride = d + 3;
  cs.push_back(c);  // strided
  c.in_stride = c.out_stride = d;
  c.in_offset = 1;
  cs.push_back(c);  // misaligned base
  c.in_offset = 0;
  c.in_stride = d + 16;
  c.in_place = true;
  cs.push_back(c);  // strided, in place
  return cs;
}

// Rows per CTA tile of the one-pass kernel is 2^(13 - L) for L <= 13 (2^(10 - L)
// when the batch gives fewer such tiles than the device has SMs); the batches
// below cover 1 row, several tiles with a ragged last one, and a random odd
// count: all of them take the small tiles.
template <class T>
void check_all_small_sizes() {
  std::mt19937_64 rng(12345);
  for (int L = 0; L <= 15; ++L) {
    const int64_t d = int64_t{1} << L;
    const int64_t per_tile = L <= 13 ? (int64_t{1} << (13 - L)) : 1;
    const int64_t ragged = 2 * per_tile + 3;
    const int64_t random_rows = 1 + 2 * int64_t(rng() % uint64_t(2 * per_tile + 2));  // odd
    const float scales[3] = {1.f, float(1.0 / std::sqrt(double(d))), 0.5f};
    int which = 0;
    for (int64_t rows : {int64_t{1}, ragged, random_rows})
      for (const FwhtCase& c : layouts<T>(rows, d, scales[which++ % 3]))
        check_fwht_case<T>(c, 1000 * uint64_t(L) + uint64_t(which));
  }
}

TEST_F(CudaKernels, FwhtFloat32EverySizeUpTo2e15) { check_all_small_sizes<float>(); }
TEST_F(CudaKernels, FwhtFloat16EverySizeUpTo2e15) { check_all_small_sizes<__half>(); }
TEST_F(CudaKernels, FwhtBFloat16EverySizeUpTo2e15) { check_all_small_sizes<__nv_bfloat16>(); }

// Batches of 300 tiles of 2^13 and a ragged one (more than any device's SMs): the
// large tiles, for every d below 2^13 (each phase plan: d <= 2^5, d <= 2^10, above).
template <class T>
void check_many_tiles() {
  for (int L = 0; L < 13; ++L) {
    const int64_t d = int64_t{1} << L;
    const int64_t rows = 300 * (int64_t{1} << (13 - L)) + 3;
    const auto cs = layouts<T>(rows, d, float(1.0 / std::sqrt(double(d))));
    for (size_t i : {size_t{0}, size_t{2}, size_t{4}}) check_fwht_case<T>(cs[i], 31 * uint64_t(L) + i);
  }
}

TEST_F(CudaKernels, FwhtFloat32ManyTiles) { check_many_tiles<float>(); }
TEST_F(CudaKernels, FwhtBFloat16ManyTiles) { check_many_tiles<__nv_bfloat16>(); }

// d > 2^15: one pass on 2^15 sub-rows, then strided passes of the high bits
// (2^16: 1 bit, 2^18: 3, 2^20: 5, 2^21: 3+3, 2^22: 4+3).
template <class T>
void check_large_sizes(std::initializer_list<int> logs) {
  for (int L : logs) {
    const int64_t d = int64_t{1} << L;
    for (int64_t rows : {int64_t{1}, int64_t{3}}) {
      auto cs = layouts<T>(rows, d, rows == 1 ? 1.f : float(1.0 / std::sqrt(double(d))));
      for (size_t i = 0; i < cs.size(); ++i) check_fwht_case<T>(cs[i], 77 * uint64_t(L) + i + rows);
    }
  }
}

TEST_F(CudaKernels, FwhtFloat32LargeSizes) { check_large_sizes<float>({16, 18, 20, 21, 22}); }
TEST_F(CudaKernels, FwhtFloat16LargeSizes) { check_large_sizes<__half>({16, 18, 20}); }
TEST_F(CudaKernels, FwhtBFloat16LargeSizes) { check_large_sizes<__nv_bfloat16>({16, 18, 20}); }

TEST_F(CudaKernels, FwhtFloat32LargestSize) {
  FwhtCase c;
  c.d = int64_t{1} << wc::kMaxLog2D;
  c.in_stride = c.out_stride = c.d;
  c.in_place = true;
  c.scale = float(1.0 / std::sqrt(double(c.d)));
  check_fwht_case<float>(c, 99);
}

TEST_F(CudaKernels, FwhtZeroRowsIsANoOp) {
  DeviceBuffer<float> buf(4);
  buf.upload({1.f, 2.f, 3.f, 4.f});
  wc::fwht(wc::DType::kFloat32, buf.get(), 4, buf.get(), 4, 0, 4, 1.f, nullptr);
  sync_ok();
  EXPECT_EQ(buf.download(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
}

// H H = d I: applying the orthonormal transform twice gives back the input.
TEST_F(CudaKernels, FwhtOrthonormalIsAnInvolution) {
  for (int L : {0, 5, 10, 15, 17}) {
    const int64_t d = int64_t{1} << L, rows = 4;
    const auto x = randn(size_t(rows * d), 5 + L);
    DeviceBuffer<float> a(x.size()), b(x.size());
    a.upload(x);
    const float s = float(1.0 / std::sqrt(double(d)));
    wc::fwht(wc::DType::kFloat32, a.get(), d, b.get(), d, rows, d, s, nullptr);
    wc::fwht(wc::DType::kFloat32, b.get(), d, b.get(), d, rows, d, s, nullptr);
    sync_ok();
    const auto y = b.download();
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, double(std::abs(y[i] - x[i])));
    EXPECT_LE(worst, 1e-5 * std::max(L, 1)) << "d=" << d;
  }
}

// ---- fused WHVI -------------------------------------------------------------------

struct WhviProblem {
  wk::WhviShape s;
  bool use_eps = true;
  std::vector<float> x, eps, s1, s2, mu, sg, dy;
};

WhviProblem make_problem(int64_t batch, int64_t blocks, int64_t d, bool shared_g, bool use_eps,
                         uint64_t seed) {
  WhviProblem p;
  p.s.batch = batch;
  p.s.blocks = blocks;
  p.s.d = d;
  p.s.shared_g = shared_g;
  p.use_eps = use_eps;
  const int64_t groups = p.s.groups();
  p.x = randn(size_t(batch * d), seed + 1);
  p.eps = randn(size_t(batch * groups * d), seed + 2);
  p.s1 = randn(size_t(blocks * d), seed + 3);
  p.s2 = randn(size_t(blocks * d), seed + 4);
  p.mu = randn(size_t(groups * d), seed + 5);
  p.sg = randn(size_t(groups * d), seed + 6, 0.5);
  p.dy = randn(size_t(batch * blocks * d), seed + 7);
  return p;
}

struct WhviRef {
  std::vector<double> y, dx, ds1, ds2, dmu, dsg;
};

// y = s1 H(g H(s2 x)) and every gradient of sum(dy * y), in double.
WhviRef whvi_reference(const WhviProblem& p) {
  const int64_t B = p.s.batch, K = p.s.blocks, d = p.s.d, G = p.s.groups();
  WhviRef r;
  r.y.assign(size_t(B * K * d), 0.0);
  r.dx.assign(size_t(B * d), 0.0);
  r.ds1.assign(size_t(K * d), 0.0);
  r.ds2.assign(size_t(K * d), 0.0);
  r.dmu.assign(size_t(G * d), 0.0);
  r.dsg.assign(size_t(G * d), 0.0);
  const size_t n = static_cast<size_t>(d);
  std::vector<double> u(n), w(n), g(n), e(n), dv(n), da(n);
  for (int64_t i = 0; i < B; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t q = p.s.shared_g ? 0 : k;
      for (int64_t c = 0; c < d; ++c) {
        e[c] = p.use_eps ? p.eps[size_t((i * G + q) * d + c)] : 0.0;
        g[c] = double(p.mu[size_t(q * d + c)]) + double(p.sg[size_t(q * d + c)]) * e[c];
        u[c] = double(p.s2[size_t(k * d + c)]) * p.x[size_t(i * d + c)];
      }
      ref_fwht(u.data(), d);
      for (int64_t c = 0; c < d; ++c) w[c] = g[c] * u[c];
      ref_fwht(w.data(), d);
      for (int64_t c = 0; c < d; ++c) {
        const double dyv = p.dy[size_t((i * K + k) * d + c)];
        r.y[size_t((i * K + k) * d + c)] = double(p.s1[size_t(k * d + c)]) * w[c];
        r.ds1[size_t(k * d + c)] += dyv * w[c];
        dv[c] = double(p.s1[size_t(k * d + c)]) * dyv;
      }
      ref_fwht(dv.data(), d);
      for (int64_t c = 0; c < d; ++c) {
        r.dmu[size_t(q * d + c)] += dv[c] * u[c];
        r.dsg[size_t(q * d + c)] += dv[c] * u[c] * e[c];
        da[c] = g[c] * dv[c];
      }
      ref_fwht(da.data(), d);
      for (int64_t c = 0; c < d; ++c) {
        r.ds2[size_t(k * d + c)] += da[c] * p.x[size_t(i * d + c)];
        r.dx[size_t(i * d + c)] += double(p.s2[size_t(k * d + c)]) * da[c];
      }
    }
  return r;
}

// |got - ref| <= rel * rms(ref) elementwise (exact when the reference is all zero).
void expect_close(const std::vector<float>& got, const std::vector<double>& ref, double rel,
                  const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double ss = 0;
  for (double r : ref) ss += r * r;
  const double tol = ref.empty() ? 0.0 : rel * std::sqrt(ss / double(ref.size()));
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(double(got[i]) - ref[i]) <= tol)) {
      if (++bad <= 5)
        ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << ref[i] << " (tol " << tol
                      << ")";
    }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.size() << " wrong";
}

enum Grad : unsigned { kDx = 1, kDs1 = 2, kDs2 = 4, kDmu = 8, kDsg = 16, kAllGrads = 31 };

constexpr float kGarbage = 7.0f;  // outputs are pre-filled with this: all must be overwritten

std::string describe(const WhviProblem& p, unsigned grads) {
  std::ostringstream s;
  s << "batch=" << p.s.batch << " blocks=" << p.s.blocks << " d=" << p.s.d
    << " shared_g=" << p.s.shared_g << " eps=" << (p.use_eps ? "yes" : "nullptr") << " grads=" << grads;
  return s.str();
}

// Forward (if asked) and backward with the gradients in `grads`, against the
// reference.
void check_whvi(const WhviProblem& p, bool forward, unsigned grads) {
  SCOPED_TRACE(describe(p, grads));
  const int64_t B = p.s.batch, K = p.s.blocks, d = p.s.d, G = p.s.groups();
  const WhviRef ref = whvi_reference(p);
  // fp32 through three transforms, and fp32 sums over up to ~5e4 items for
  // the parameter gradients (the largest share of the budget at small d).
  const double rel = 2e-5 * (log2_of(d) + 2);
  auto up = [](const std::vector<float>& h) {
    auto b = std::make_unique<DeviceBuffer<float>>(h.size());
    b->upload(h);
    return b;
  };
  auto x = up(p.x), eps = up(p.eps), s1 = up(p.s1), s2 = up(p.s2), mu = up(p.mu), sg = up(p.sg),
       dy = up(p.dy);
  const float* eps_ptr = p.use_eps ? eps->get() : nullptr;
  if (forward) {
    auto y = up(std::vector<float>(size_t(B * K * d), kGarbage));
    wc::whvi_forward(p.s, x->get(), eps_ptr, s1->get(), s2->get(), mu->get(), sg->get(), y->get(), nullptr);
    sync_ok();
    expect_close(y->download(), ref.y, rel, "y");
  }
  if (grads == 0) return;
  auto dx = up(std::vector<float>(size_t(B * d), kGarbage));
  auto ds1 = up(std::vector<float>(size_t(K * d), kGarbage));
  auto ds2 = up(std::vector<float>(size_t(K * d), kGarbage));
  auto dmu = up(std::vector<float>(size_t(G * d), kGarbage));
  auto dsg = up(std::vector<float>(size_t(G * d), kGarbage));
  auto pick = [&](Grad g, DeviceBuffer<float>& b) { return (grads & g) ? b.get() : nullptr; };
  wc::whvi_backward(p.s, x->get(), eps_ptr, s1->get(), s2->get(), mu->get(), sg->get(), dy->get(),
                    pick(kDx, *dx), pick(kDs1, *ds1), pick(kDs2, *ds2), pick(kDmu, *dmu), pick(kDsg, *dsg),
                    nullptr);
  sync_ok();
  auto check = [&](Grad g, DeviceBuffer<float>& b, const std::vector<double>& r, const char* name) {
    const auto h = b.download();
    if (grads & g) {
      expect_close(h, r, rel, name);
    } else {
      for (float v : h) ASSERT_EQ(v, kGarbage) << name << " was not requested but was written";
    }
  };
  check(kDx, *dx, ref.dx, "dx");
  check(kDs1, *ds1, ref.ds1, "ds1");
  check(kDs2, *ds2, ref.ds2, "ds2");
  check(kDmu, *dmu, ref.dmu, "dmu");
  check(kDsg, *dsg, ref.dsg, "dsg");
}

// Every size, blocks 1 and 3, per-block and shared g, with and without eps,
// a single row and a ragged multi-tile batch (tiles hold 2^(13-L) items).
TEST_F(CudaKernels, WhviForwardBackwardEverySize) {
  for (int L = 0; L <= wc::kMaxLog2DWhvi; ++L) {
    const int64_t d = int64_t{1} << L;
    const int64_t per_tile = L <= 13 ? (int64_t{1} << (13 - L)) : 1;
    for (int64_t batch : {int64_t{1}, 2 * per_tile + 3})
      for (int64_t blocks : {1, 3})
        for (bool shared_g : {false, true})
          for (bool use_eps : {true, false}) {
            const auto p = make_problem(batch, blocks, d, shared_g, use_eps,
                                        uint64_t(L) * 100 + uint64_t(batch + blocks * 10 + shared_g * 2 + use_eps));
            check_whvi(p, true, kAllGrads);
          }
  }
}

// Many tiles per CTA, with block boundaries inside a CTA's range: the
// shared-memory accumulators are flushed when the block changes.
TEST_F(CudaKernels, WhviBackwardLargeBatches) {
  check_whvi(make_problem(20000, 3, 64, false, true, 1), false, kAllGrads);
  check_whvi(make_problem(2000, 3, 2048, false, true, 2), false, kAllGrads);
  check_whvi(make_problem(2000, 3, 2048, true, true, 3), false, kAllGrads);
  check_whvi(make_problem(300, 2, 8192, false, true, 4), true, kAllGrads);
  check_whvi(make_problem(1000, 1, 1, true, false, 5), true, kAllGrads);
}

// Any subset of the gradients (nullptr skips one).
TEST_F(CudaKernels, WhviBackwardGradientSubsets) {
  for (int L : {0, 3, 6, 11, 12, 14, 15})
    for (unsigned grads : {unsigned(kDx), unsigned(kDs1), unsigned(kDs2), unsigned(kDmu), unsigned(kDsg),
                           unsigned(kDs2 | kDmu), unsigned(kDx | kDsg), 0u})
      check_whvi(make_problem(37, 2, int64_t{1} << L, L % 2 == 0, true, 10 + L), false, grads);
}

TEST_F(CudaKernels, WhviEmptyBatchZeroesGradients) {
  check_whvi(make_problem(0, 3, 16, false, true, 3), true, kAllGrads);
}

// ---- misc and error paths -----------------------------------------------------------

TEST_F(CudaKernels, DeviceNameIsNotEmpty) { EXPECT_STRNE(wc::device_name(), ""); }

TEST_F(CudaKernels, CopyCopiesBytes) {
  const auto x = randn(1000, 4);
  DeviceBuffer<float> a(x.size()), b(x.size());
  a.upload(x);
  wc::copy(a.get(), b.get(), int64_t(x.size() * sizeof(float)), nullptr);
  sync_ok();
  EXPECT_EQ(b.download(), x);
}

// The KernelError message must name the offending size.
template <class F>
void expect_size_error(F&& f, int64_t d) {
  try {
    f();
    ADD_FAILURE() << "no KernelError for d = " << d;
  } catch (const wk::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(d)), std::string::npos)
        << "message does not name d = " << d << ": " << e.what();
  }
}

TEST_F(CudaKernels, FwhtRejectsBadSizes) {
  DeviceBuffer<float> buf(64);
  for (int64_t d : {int64_t{0}, int64_t{3}, int64_t{1000}, int64_t{12345}, int64_t{-8},
                    int64_t{1} << (wc::kMaxLog2D + 1)})
    for (wc::DType t : {wc::DType::kFloat32, wc::DType::kFloat16, wc::DType::kBFloat16})
      expect_size_error([&] { wc::fwht(t, buf.get(), d, buf.get(), d, 1, d, 1.f, nullptr); }, d);
}

TEST_F(CudaKernels, FwhtRejectsBadArguments) {
  DeviceBuffer<float> buf(64);
  EXPECT_THROW(wc::fwht(static_cast<wc::DType>(42), buf.get(), 8, buf.get(), 8, 1, 8, 1.f, nullptr),
               wk::KernelError);
  EXPECT_THROW(wc::fwht(wc::DType::kFloat32, buf.get(), 4, buf.get() + 32, 8, 1, 8, 1.f, nullptr),
               wk::KernelError);  // stride < d
  EXPECT_THROW(wc::fwht(wc::DType::kFloat32, buf.get(), 8, buf.get(), 16, 2, 8, 1.f, nullptr),
               wk::KernelError);  // in == out with different strides
  EXPECT_THROW(wc::fwht(wc::DType::kFloat32, buf.get(), 8, buf.get(), 8, -1, 8, 1.f, nullptr),
               wk::KernelError);
}

TEST_F(CudaKernels, WhviRejectsBadSizes) {
  DeviceBuffer<float> buf(64);
  float* p = buf.get();
  for (int64_t d : {int64_t{3}, int64_t{100}, int64_t{1} << (wc::kMaxLog2DWhvi + 1)}) {
    wk::WhviShape s;
    s.batch = 1;
    s.blocks = 1;
    s.d = d;
    expect_size_error([&] { wc::whvi_forward(s, p, p, p, p, p, p, p, nullptr); }, d);
    expect_size_error(
        [&] { wc::whvi_backward(s, p, p, p, p, p, p, p, p, p, p, p, p, nullptr); }, d);
  }
  wk::WhviShape s;
  s.batch = 1;
  s.blocks = 0;
  s.d = 8;
  EXPECT_THROW(wc::whvi_forward(s, p, p, p, p, p, p, p, nullptr), wk::KernelError);
}

}  // namespace
