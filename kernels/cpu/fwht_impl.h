// The FWHT and fused WHVI row kernels, written once over a small SIMD
// vocabulary `Vt` (load, store, add, sub, mul, the in-register stages) and
// compiled once per instruction set: fwht_scalar.cpp, fwht_avx2.cpp and
// fwht_avx512.cpp each define their vector types and include this file inside
// their own namespace, so the copies never meet at link time.
//
// Schedule for one row of d = 2^n elements (FFHT's structure, see
// ../shared/notes/fwht-anchors.md §4.1 and §6 lesson 8):
//   1. first pass over contiguous chunks of W*R elements: each of R vector
//      registers does the log2 W in-register stages, then log2 R stages run
//      across the registers. For out-of-place transforms this pass reads the
//      input and writes the output, so the copy is fused into it.
//   2. strided passes: R registers loaded at stride s do log2 R stages at once
//      (bits log2 s .. log2 s + log2 R - 1).
//   3. rows larger than kBlockBytes are first transformed block by block
//      (blocks stay in L1), then the high bits run over the whole row.
//   The scale is folded into the stores of the last pass.
// Requires: namespace-level `using T = ...` is NOT assumed; Vt provides
//   using T, using V, static constexpr int W (lanes), LOGW, LOGR_MAX,
//   load/store (unaligned), add/sub/mul/set1, inreg (all log2 W stages).

// Included inside a per-ISA namespace by the fwht_<isa>.cpp files, after
// isa.h (which brings in every standard header used here).

namespace detail {

// Rows are transformed in blocks of this many bytes first (L1-resident);
// radix-16 passes pay inside a block, but across the whole row 16 streams at a
// power-of-two stride thrash the cache, so the high bits use at most radix 8.
// Measured on a Zen 4 EPYC (AVX-512): 2^16 floats 22 us -> 11 us, 2^20 0.60 -> 0.26 ms.
constexpr int64_t kBlockBytes = 32 * 1024;
constexpr int kLogRMaxOutOfBlock = 3;

template <int R, class Vt>
inline void butterfly_regs(typename Vt::V* r) {
#pragma GCC unroll 16
  for (int h = 1; h < R; h <<= 1) {
#pragma GCC unroll 16
    for (int i = 0; i < R; i += 2 * h) {
#pragma GCC unroll 16
      for (int j = i; j < i + h; ++j) {
        const auto a = r[j];
        const auto b = r[j + h];
        r[j] = Vt::add(a, b);
        r[j + h] = Vt::sub(a, b);
      }
    }
  }
}

// Bits [0, LOGW + LOGR) of each contiguous chunk of W*R elements.
template <class Vt, int LOGR, bool SCALE>
inline void first_pass(const typename Vt::T* in, typename Vt::T* out, int64_t len,
                       typename Vt::T scale) {
  using V = typename Vt::V;
  constexpr int R = 1 << LOGR;
  constexpr int W = Vt::W;
  const V s = Vt::set1(scale);
  for (int64_t base = 0; base < len; base += int64_t{W} * R) {
    V r[R];
#pragma GCC unroll 16
    for (int k = 0; k < R; ++k) r[k] = Vt::inreg(Vt::load(in + base + k * W));
    butterfly_regs<R, Vt>(r);
#pragma GCC unroll 16
    for (int k = 0; k < R; ++k) Vt::store(out + base + k * W, SCALE ? Vt::mul(r[k], s) : r[k]);
  }
}

// Bits [log2 s, log2 s + LOGR) of x[0, len), in place; s >= W.
template <class Vt, int LOGR, bool SCALE>
inline void stride_pass(typename Vt::T* x, int64_t len, int64_t s, typename Vt::T scale) {
  using V = typename Vt::V;
  constexpr int R = 1 << LOGR;
  constexpr int W = Vt::W;
  const V sc = Vt::set1(scale);
  for (int64_t base = 0; base < len; base += s * R) {
    for (int64_t j = base; j < base + s; j += W) {
      V r[R];
#pragma GCC unroll 16
      for (int k = 0; k < R; ++k) r[k] = Vt::load(x + j + k * s);
      butterfly_regs<R, Vt>(r);
#pragma GCC unroll 16
      for (int k = 0; k < R; ++k) Vt::store(x + j + k * s, SCALE ? Vt::mul(r[k], sc) : r[k]);
    }
  }
}

template <class Vt, bool SCALE>
inline void first_pass_dispatch(int logr, const typename Vt::T* in, typename Vt::T* out,
                                int64_t len, typename Vt::T scale) {
  switch (logr) {
    case 0: first_pass<Vt, 0, SCALE>(in, out, len, scale); break;
    case 1: first_pass<Vt, 1, SCALE>(in, out, len, scale); break;
    case 2: first_pass<Vt, 2, SCALE>(in, out, len, scale); break;
    case 3: first_pass<Vt, 3, SCALE>(in, out, len, scale); break;
    default:
      if constexpr (Vt::LOGR_MAX >= 4) first_pass<Vt, 4, SCALE>(in, out, len, scale);
      break;
  }
}

template <class Vt, bool SCALE>
inline void stride_pass_dispatch(int logr, typename Vt::T* x, int64_t len, int64_t s,
                                 typename Vt::T scale) {
  switch (logr) {
    case 1: stride_pass<Vt, 1, SCALE>(x, len, s, scale); break;
    case 2: stride_pass<Vt, 2, SCALE>(x, len, s, scale); break;
    case 3: stride_pass<Vt, 3, SCALE>(x, len, s, scale); break;
    default:
      if constexpr (Vt::LOGR_MAX >= 4) stride_pass<Vt, 4, SCALE>(x, len, s, scale);
      break;
  }
}

// Rows shorter than one vector: plain radix-2 loops.
template <class T>
inline void small_row(const T* in, T* out, int n, T scale) {
  const int64_t d = int64_t{1} << n;
  if (in != out) std::memcpy(out, in, sizeof(T) * d);
  for (int64_t h = 1; h < d; h <<= 1)
    for (int64_t i = 0; i < d; i += 2 * h)
      for (int64_t j = i; j < i + h; ++j) {
        const T a = out[j], b = out[j + h];
        out[j] = a + b;
        out[j + h] = a - b;
      }
  if (scale != T(1))
    for (int64_t i = 0; i < d; ++i) out[i] *= scale;
}

// Bits [lo, hi) of x[0, len) by strided passes; the last pass scales.
template <class Vt>
inline void stride_passes(typename Vt::T* x, int64_t len, int lo, int hi, typename Vt::T scale,
                          bool scale_last, int max_logr) {
  while (lo < hi) {
    const int logr = std::min(max_logr, hi - lo);
    const bool last = lo + logr == hi;
    if (last && scale_last)
      stride_pass_dispatch<Vt, true>(logr, x, len, int64_t{1} << lo, scale);
    else
      stride_pass_dispatch<Vt, false>(logr, x, len, int64_t{1} << lo, typename Vt::T(1));
    lo += logr;
  }
}

// One row: out = scale * H in (in == out allowed).
template <class Vt>
inline void fwht_row(const typename Vt::T* in, typename Vt::T* out, int n, typename Vt::T scale) {
  using T = typename Vt::T;
  if (n < Vt::LOGW) {
    small_row<T>(in, out, n, scale);
    return;
  }
  const bool do_scale = scale != T(1);
  const int64_t len = int64_t{1} << n;
  constexpr int kLogBlock = [] {
    int l = 0;
    while ((int64_t{sizeof(T)} << (l + 1)) <= kBlockBytes) ++l;
    return l;
  }();
  const int nb = std::min(n, std::max(kLogBlock, Vt::LOGW + Vt::LOGR_MAX));
  const int first_bits = std::min(Vt::LOGR_MAX, nb - Vt::LOGW);
  const int64_t blen = int64_t{1} << nb;
  const bool single_pass = Vt::LOGW + first_bits == n;
  for (int64_t b = 0; b < len; b += blen) {
    if (single_pass && do_scale)
      first_pass_dispatch<Vt, true>(first_bits, in + b, out + b, blen, scale);
    else
      first_pass_dispatch<Vt, false>(first_bits, in + b, out + b, blen, T(1));
    stride_passes<Vt>(out + b, blen, Vt::LOGW + first_bits, nb, scale, do_scale && nb == n,
                      Vt::LOGR_MAX);
  }
  stride_passes<Vt>(out, len, nb, n, scale, do_scale, std::min(Vt::LOGR_MAX, kLogRMaxOutOfBlock));
}

// ---- threading ---------------------------------------------------------------
// Runs body(tid, lo, hi) over [0, n) split into nt contiguous chunks, exactly
// OpenMP's schedule(static) partition (the first n % nt chunks one longer), so
// results do not depend on which path ran. With one thread it is a plain call:
// no parallel region is entered, since even `if(false)` regions cost ~0.3 us.
template <class F>
inline void for_chunks(int64_t n, int nt, F&& body) {
  if (nt <= 1) {
    body(0, int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    // Partition over the team OpenMP actually gave (it may be smaller than
    // nt, e.g. under a thread limit), so no chunk is left undone.
    int tid = 0, team = 1;
#ifdef _OPENMP
    tid = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t q = n / team, r = n % team;
    const int64_t lo = tid < r ? tid * (q + 1) : r * (q + 1) + (tid - r) * q;
    const int64_t hi = lo + (tid < r ? q + 1 : q);
    body(tid, lo, hi);
  }
}

template <class Vt>
void fwht_rows(const typename Vt::T* in, int64_t in_stride, typename Vt::T* out,
               int64_t out_stride, int64_t rows, int n, typename Vt::T scale, int threads) {
  const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
  for_chunks(rows, nt, [&](int, int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) fwht_row<Vt>(in + r * in_stride, out + r * out_stride, n, scale);
  });
}

// ---- fused WHVI --------------------------------------------------------------

template <class T>
struct WhviRowPtrs {
  const T *s1, *s2, *mu, *sg, *eps;
};

template <class T>
inline WhviRowPtrs<T> whvi_ptrs(const whvi::kernels::WhviShape& sh, const T* eps, const T* s1,
                                const T* s2, const T* mu, const T* sg, int64_t i, int64_t k) {
  const int64_t d = sh.d;
  const int64_t q = sh.shared_g ? 0 : k;
  return {s1 + k * d, s2 + k * d, mu + q * d, sg + q * d,
          eps ? eps + (i * sh.groups() + q) * d : nullptr};
}

template <class Vt>
void whvi_forward_rows(const whvi::kernels::WhviShape& sh, const typename Vt::T* x,
                       const typename Vt::T* eps, const typename Vt::T* s1,
                       const typename Vt::T* s2, const typename Vt::T* mu,
                       const typename Vt::T* sg, typename Vt::T* y, int threads) {
  using T = typename Vt::T;
  const int64_t d = sh.d;
  const int n = whvi::kernels::log2_exact(d);
  const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, sh.batch)));
  for_chunks(sh.batch, nt, [&](int, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    const T* xi = x + i * d;
    for (int64_t k = 0; k < sh.blocks; ++k) {
      const auto p = whvi_ptrs<T>(sh, eps, s1, s2, mu, sg, i, k);
      T* yi = y + (i * sh.blocks + k) * d;
      for (int64_t j = 0; j < d; ++j) yi[j] = p.s2[j] * xi[j];
      fwht_row<Vt>(yi, yi, n, T(1));
      if (p.eps)
        for (int64_t j = 0; j < d; ++j) yi[j] *= p.mu[j] + p.sg[j] * p.eps[j];
      else
        for (int64_t j = 0; j < d; ++j) yi[j] *= p.mu[j];
      fwht_row<Vt>(yi, yi, n, T(1));
      for (int64_t j = 0; j < d; ++j) yi[j] *= p.s1[j];
    }
  }
  });
}

template <class Vt>
void whvi_backward_rows(const whvi::kernels::WhviShape& sh, const typename Vt::T* x,
                        const typename Vt::T* eps, const typename Vt::T* s1,
                        const typename Vt::T* s2, const typename Vt::T* mu,
                        const typename Vt::T* sg, const typename Vt::T* dy, typename Vt::T* dx,
                        typename Vt::T* ds1, typename Vt::T* ds2, typename Vt::T* dmu,
                        typename Vt::T* dsg, int threads) {
  using T = typename Vt::T;
  const int64_t d = sh.d, K = sh.blocks, G = sh.groups();
  const int n = whvi::kernels::log2_exact(d);
  const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, sh.batch)));
  // Per-thread partial sums of the parameter gradients: [nt][2K + 2G][d].
  const int64_t per = (2 * K + 2 * G) * d;
  std::vector<T> acc(static_cast<size_t>(nt) * per, T(0));
  const bool want_params = ds1 || ds2 || dmu || dsg;
  for_chunks(sh.batch, nt, [&](int tid, int64_t lo, int64_t hi) {
    T* a_ds1 = acc.data() + tid * per;
    T* a_ds2 = a_ds1 + K * d;
    T* a_dmu = a_ds2 + K * d;
    T* a_dsg = a_dmu + G * d;
    std::vector<T> ubuf(d), bbuf(d), gbuf(d);
    T* u = ubuf.data();
    T* b = bbuf.data();
    T* g = gbuf.data();
    for (int64_t i = lo; i < hi; ++i) {
      const T* xi = x + i * d;
      const T* dyi_base = dy + i * K * d;
      T* dxi = dx ? dx + i * d : nullptr;
      if (dxi) std::fill(dxi, dxi + d, T(0));
      for (int64_t k = 0; k < K; ++k) {
        const auto p = whvi_ptrs<T>(sh, eps, s1, s2, mu, sg, i, k);
        const int64_t q = sh.shared_g ? 0 : k;
        const T* dyi = dyi_base + k * d;
        for (int64_t j = 0; j < d; ++j) u[j] = p.s2[j] * xi[j];
        fwht_row<Vt>(u, u, n, T(1));  // u = H a
        if (p.eps)
          for (int64_t j = 0; j < d; ++j) g[j] = p.mu[j] + p.sg[j] * p.eps[j];
        else
          for (int64_t j = 0; j < d; ++j) g[j] = p.mu[j];
        if (ds1) {
          for (int64_t j = 0; j < d; ++j) b[j] = g[j] * u[j];
          fwht_row<Vt>(b, b, n, T(1));  // w = H v
          T* o = a_ds1 + k * d;
          for (int64_t j = 0; j < d; ++j) o[j] += dyi[j] * b[j];
        }
        for (int64_t j = 0; j < d; ++j) b[j] = p.s1[j] * dyi[j];
        fwht_row<Vt>(b, b, n, T(1));  // dv = H (s1 dy)
        if (dmu || dsg) {
          T* om = a_dmu + q * d;
          T* os = a_dsg + q * d;
          if (p.eps)
            for (int64_t j = 0; j < d; ++j) {
              const T dg = b[j] * u[j];
              om[j] += dg;
              os[j] += dg * p.eps[j];
            }
          else
            for (int64_t j = 0; j < d; ++j) om[j] += b[j] * u[j];
        }
        if (ds2 || dxi) {
          for (int64_t j = 0; j < d; ++j) b[j] *= g[j];
          fwht_row<Vt>(b, b, n, T(1));  // da = H (g dv)
          if (ds2) {
            T* o = a_ds2 + k * d;
            for (int64_t j = 0; j < d; ++j) o[j] += b[j] * xi[j];
          }
          if (dxi)
            for (int64_t j = 0; j < d; ++j) dxi[j] += p.s2[j] * b[j];
        }
      }
    }
  });
  if (!want_params) return;
  auto reduce = [&](T* dst, int64_t offset, int64_t count) {
    if (!dst) return;
    for (int64_t j = 0; j < count; ++j) {
      T s = 0;
      for (int t = 0; t < nt; ++t) s += acc[t * per + offset + j];
      dst[j] = s;
    }
  };
  reduce(ds1, 0, K * d);
  reduce(ds2, K * d, K * d);
  reduce(dmu, 2 * K * d, G * d);
  reduce(dsg, 2 * K * d + G * d, G * d);
}

}  // namespace detail

// Defines `const IsaKernels* NAME()` for the vector traits VF (float) and VD
// (double), compiled for SIMD level LEVEL.
#define WHVI_DEFINE_ISA_TABLE(NAME, VF, VD, LEVEL)                              \
  const ::whvi::kernels::IsaKernels* NAME() {                                   \
    static const ::whvi::kernels::IsaKernels table{                             \
        &detail::fwht_rows<VF>,          &detail::fwht_rows<VD>,                \
        &detail::whvi_forward_rows<VF>,  &detail::whvi_forward_rows<VD>,        \
        &detail::whvi_backward_rows<VF>, &detail::whvi_backward_rows<VD>,       \
        LEVEL};                                                                 \
    return &table;                                                              \
  }
