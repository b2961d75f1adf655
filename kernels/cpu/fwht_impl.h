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
//   load/store (unaligned), add/sub/mul/set1, inreg (all log2 W stages) and
//   inreg_n (the first n of them, for rows shorter than a vector).

// Included inside a per-ISA namespace by the fwht_<isa>.cpp files, after
// isa.h (which brings in every standard header used here).

namespace detail {

// Rows are transformed in blocks of this many bytes first (L1-resident);
// radix-16 passes pay inside a block, but across the whole row 16 streams at a
// power-of-two stride thrash the cache, so the high bits use at most radix 8.
// Measured on a Zen 4 EPYC (AVX-512): 2^16 floats 22 us -> 11 us, 2^20 0.60 -> 0.26 ms.
// A level may set its own block size (WHVI_FWHT_BLOCK_BYTES before including this
// file): the AVX2 level uses 16 KB, half the L1 of the AVX2-only EPYC it was
// measured on (rows of 2^14 floats at batch 512: 11.3 -> 9.8 us a row; 2^15:
// 22.4 -> 20.6 us), so that a block and the lines it evicts fit together.
#ifdef WHVI_FWHT_BLOCK_BYTES
constexpr int64_t kBlockBytes = WHVI_FWHT_BLOCK_BYTES;
#else
constexpr int64_t kBlockBytes = 32 * 1024;
#endif
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

// Rows that one register-resident first pass transforms whole (W <= d <= W R_max):
// the pass is inlined into the row loop, so a row costs its loads, stages and
// stores, without fwht_row's planning, a call, or reloading the constants per
// row (the same operations in the same order: the same numbers, bit for bit).
template <class Vt, int LOGR, bool SCALE>
inline void rows_one_pass(const typename Vt::T* in, int64_t in_stride, typename Vt::T* out, int64_t out_stride,
                          int64_t rows, typename Vt::T scale) {
  constexpr int64_t d = int64_t{Vt::W} << LOGR;
  for (int64_t r = 0; r < rows; ++r) first_pass<Vt, LOGR, SCALE>(in + r * in_stride, out + r * out_stride, d, scale);
}

template <class Vt, bool SCALE>
inline void rows_one_pass_dispatch(int logr, const typename Vt::T* in, int64_t in_stride, typename Vt::T* out,
                                   int64_t out_stride, int64_t rows, typename Vt::T scale) {
  switch (logr) {
    case 0: rows_one_pass<Vt, 0, SCALE>(in, in_stride, out, out_stride, rows, scale); break;
    case 1: rows_one_pass<Vt, 1, SCALE>(in, in_stride, out, out_stride, rows, scale); break;
    case 2: rows_one_pass<Vt, 2, SCALE>(in, in_stride, out, out_stride, rows, scale); break;
    case 3: rows_one_pass<Vt, 3, SCALE>(in, in_stride, out, out_stride, rows, scale); break;
    default:
      if constexpr (Vt::LOGR_MAX >= 4) rows_one_pass<Vt, 4, SCALE>(in, in_stride, out, out_stride, rows, scale);
      break;
  }
}

// Rows of d = W R_max 2^LOGR2 (LOGR2 <= LOGR_MAX): fwht_row's two passes (the
// register-resident first pass over each W R_max chunk, then one strided pass,
// which scales), inlined into the row loop.
template <class Vt, int LOGR2, bool SCALE>
inline void rows_two_pass(const typename Vt::T* in, int64_t in_stride, typename Vt::T* out, int64_t out_stride,
                          int64_t rows, typename Vt::T scale) {
  using T = typename Vt::T;
  constexpr int64_t d1 = int64_t{Vt::W} << Vt::LOGR_MAX;
  constexpr int64_t d = d1 << LOGR2;
  for (int64_t r = 0; r < rows; ++r) {
    T* o = out + r * out_stride;
    first_pass<Vt, Vt::LOGR_MAX, false>(in + r * in_stride, o, d, T(1));
    stride_pass<Vt, LOGR2, SCALE>(o, d, d1, scale);
  }
}

template <class Vt, bool SCALE>
inline void rows_two_pass_dispatch(int logr2, const typename Vt::T* in, int64_t in_stride, typename Vt::T* out,
                                   int64_t out_stride, int64_t rows, typename Vt::T scale) {
  switch (logr2) {
    case 1: rows_two_pass<Vt, 1, SCALE>(in, in_stride, out, out_stride, rows, scale); break;
    case 2: rows_two_pass<Vt, 2, SCALE>(in, in_stride, out, out_stride, rows, scale); break;
    default: rows_two_pass<Vt, 3, SCALE>(in, in_stride, out, out_stride, rows, scale); break;
  }
}

// Rows [0, rows) of d = 2^n elements, one thread: the one- and two-pass sizes
// through the inlined row loops, larger rows through fwht_row.
template <class Vt>
inline void transform_rows(const typename Vt::T* in, int64_t in_stride, typename Vt::T* out, int64_t out_stride,
                           int64_t rows, int n, typename Vt::T scale) {
  using T = typename Vt::T;
  const bool do_scale = scale != T(1);
  if (n >= Vt::LOGW && n <= Vt::LOGW + Vt::LOGR_MAX) {
    if (do_scale) rows_one_pass_dispatch<Vt, true>(n - Vt::LOGW, in, in_stride, out, out_stride, rows, scale);
    else rows_one_pass_dispatch<Vt, false>(n - Vt::LOGW, in, in_stride, out, out_stride, rows, T(1));
    return;
  }
  // two passes inside one L1 block: fwht_row's plan for these sizes (kLogBlock >= n)
  if (n > Vt::LOGW + Vt::LOGR_MAX && n <= Vt::LOGW + Vt::LOGR_MAX + std::min(Vt::LOGR_MAX, 3) &&
      (int64_t{sizeof(T)} << n) <= kBlockBytes) {
    const int logr2 = n - Vt::LOGW - Vt::LOGR_MAX;
    if (do_scale) rows_two_pass_dispatch<Vt, true>(logr2, in, in_stride, out, out_stride, rows, scale);
    else rows_two_pass_dispatch<Vt, false>(logr2, in, in_stride, out, out_stride, rows, T(1));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) fwht_row<Vt>(in + r * in_stride, out + r * out_stride, n, scale);
}

template <class Vt>
void fwht_rows(const typename Vt::T* in, int64_t in_stride, typename Vt::T* out,
               int64_t out_stride, int64_t rows, int n, typename Vt::T scale, int threads) {
  const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
  for_chunks(rows, nt, [&](int, int64_t lo, int64_t hi) {
    transform_rows<Vt>(in + lo * in_stride, in_stride, out + lo * out_stride, out_stride, hi - lo, n, scale);
  });
}

// ---- fused WHVI --------------------------------------------------------------
//
// Work is done per row i over a span of c consecutive blocks: c = 1 when a
// block fills at least one vector (d >= W), all K blocks when d < W, so that
// the short blocks (the first layer of a UCI network: d = 8 or 16, K = 128 / d)
// are transformed several per vector by the first n in-register stages
// instead of one scalar radix-2 loop each. Either way every element sees the
// same operations in the same order (an in-register stage rounds exactly as
// a + b), so the span changes the speed, not the numbers.

// `segs` consecutive rows of d = 2^n elements each: out = H in, row by row.
template <class Vt>
inline void fwht_segments(const typename Vt::T* in, typename Vt::T* out, int64_t segs, int n) {
  using T = typename Vt::T;
  const int64_t d = int64_t{1} << n;
  if (n >= Vt::LOGW) {
    transform_rows<Vt>(in, d, out, d, segs, n, T(1));
    return;
  }
  const int64_t len = segs * d;
  int64_t t = 0;
  for (; t + Vt::W <= len; t += Vt::W) Vt::store(out + t, Vt::inreg_n(Vt::load(in + t), n));
  for (; t < len; t += d) small_row<T>(in + t, out + t, n, T(1));
}

// The blocks of one span: [k0, k0 + c).
struct WhviSpan {
  int64_t k0, c;
};

template <class T>
inline int64_t whvi_span_blocks(const whvi::kernels::WhviShape& sh, int logw) {
  return sh.d < (int64_t{1} << logw) ? sh.blocks : 1;
}

// g of the span's blocks for row i: g[k, j] = mu[q] + sg[q] * eps[i, q] (q = shared_g ? 0 : k).
template <class T>
inline void whvi_g(const whvi::kernels::WhviShape& sh, const T* eps, const T* mu, const T* sg,
                   int64_t i, WhviSpan sp, T* g) {
  const int64_t d = sh.d;
  for (int64_t k = sp.k0; k < sp.k0 + sp.c; ++k) {
    const int64_t q = sh.shared_g ? 0 : k;
    const T* m = mu + q * d;
    const T* s = sg + q * d;
    T* gk = g + (k - sp.k0) * d;
    if (eps) {
      const T* e = eps + (i * sh.groups() + q) * d;
      for (int64_t j = 0; j < d; ++j) gk[j] = m[j] + s[j] * e[j];
    } else {
      for (int64_t j = 0; j < d; ++j) gk[j] = m[j];
    }
  }
}

// u = H (s2 .* x_i) for the span's blocks.
template <class Vt>
inline void whvi_u(const whvi::kernels::WhviShape& sh, const typename Vt::T* xi,
                   const typename Vt::T* s2, WhviSpan sp, typename Vt::T* u, int n) {
  const int64_t d = sh.d;
  for (int64_t k = 0; k < sp.c; ++k) {
    const auto* s = s2 + (sp.k0 + k) * d;
    auto* uk = u + k * d;
    for (int64_t j = 0; j < d; ++j) uk[j] = s[j] * xi[j];
  }
  fwht_segments<Vt>(u, u, sp.c, n);
}

// Forward; hu and hw, when given, receive u = H(s2 x) and w = H(g u) of every
// row and block ([batch, blocks, d] each) for the backward to reuse.
template <class Vt>
void whvi_forward_rows(const whvi::kernels::WhviShape& sh, const typename Vt::T* x,
                       const typename Vt::T* eps, const typename Vt::T* s1,
                       const typename Vt::T* s2, const typename Vt::T* mu,
                       const typename Vt::T* sg, typename Vt::T* y, int threads,
                       typename Vt::T* hu, typename Vt::T* hw) {
  using T = typename Vt::T;
  const int64_t d = sh.d, K = sh.blocks;
  const int n = whvi::kernels::log2_exact(d);
  const int64_t C = whvi_span_blocks<T>(sh, Vt::LOGW);
  const int nt = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, sh.batch)));
  for_chunks(sh.batch, nt, [&](int, int64_t lo, int64_t hi) {
    std::vector<T> gbuf(C * d);
    T* g = gbuf.data();
    for (int64_t i = lo; i < hi; ++i) {
      const T* xi = x + i * d;
      for (int64_t k0 = 0; k0 < K; k0 += C) {
        const WhviSpan sp{k0, C};
        const int64_t off = (i * K + k0) * d, len = C * d;
        T* yi = y + off;
        whvi_u<Vt>(sh, xi, s2, sp, yi, n);
        if (hu) std::copy(yi, yi + len, hu + off);
        whvi_g<T>(sh, eps, mu, sg, i, sp, g);
        for (int64_t t = 0; t < len; ++t) yi[t] *= g[t];
        fwht_segments<Vt>(yi, yi, C, n);
        if (hw) std::copy(yi, yi + len, hw + off);
        const T* s = s1 + k0 * d;
        for (int64_t t = 0; t < len; ++t) yi[t] *= s[t];
      }
    }
  });
}

// Backward; hu and hw, when given, are the forward's (same inputs), so the
// two transforms that made them are not redone.
template <class Vt>
void whvi_backward_rows(const whvi::kernels::WhviShape& sh, const typename Vt::T* x,
                        const typename Vt::T* eps, const typename Vt::T* s1,
                        const typename Vt::T* s2, const typename Vt::T* mu,
                        const typename Vt::T* sg, const typename Vt::T* dy, typename Vt::T* dx,
                        typename Vt::T* ds1, typename Vt::T* ds2, typename Vt::T* dmu,
                        typename Vt::T* dsg, int threads, const typename Vt::T* hu,
                        const typename Vt::T* hw) {
  using T = typename Vt::T;
  const int64_t d = sh.d, K = sh.blocks, G = sh.groups();
  const int n = whvi::kernels::log2_exact(d);
  const int64_t C = whvi_span_blocks<T>(sh, Vt::LOGW);
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
    std::vector<T> ubuf(C * d), bbuf(C * d), gbuf(C * d);
    T* b = bbuf.data();
    T* g = gbuf.data();
    for (int64_t i = lo; i < hi; ++i) {
      const T* xi = x + i * d;
      T* dxi = dx ? dx + i * d : nullptr;
      if (dxi) std::fill(dxi, dxi + d, T(0));
      for (int64_t k0 = 0; k0 < K; k0 += C) {
        const WhviSpan sp{k0, C};
        const int64_t off = (i * K + k0) * d, len = C * d;
        const T* dyi = dy + off;
        const T* u = hu ? hu + off : ubuf.data();
        if (!hu) whvi_u<Vt>(sh, xi, s2, sp, ubuf.data(), n);  // u = H a
        whvi_g<T>(sh, eps, mu, sg, i, sp, g);
        if (ds1) {
          const T* w = hw ? hw + off : b;
          if (!hw) {
            for (int64_t t = 0; t < len; ++t) b[t] = g[t] * u[t];
            fwht_segments<Vt>(b, b, C, n);  // w = H v
          }
          T* o = a_ds1 + k0 * d;
          for (int64_t t = 0; t < len; ++t) o[t] += dyi[t] * w[t];
        }
        const T* s = s1 + k0 * d;
        for (int64_t t = 0; t < len; ++t) b[t] = s[t] * dyi[t];
        fwht_segments<Vt>(b, b, C, n);  // dv = H (s1 dy)
        if (dmu || dsg) {
          for (int64_t k = k0; k < k0 + C; ++k) {  // blocks in order: shared g sums them in k order
            const int64_t q = sh.shared_g ? 0 : k;
            T* om = a_dmu + q * d;
            T* os = a_dsg + q * d;
            const T* bk = b + (k - k0) * d;
            const T* uk = u + (k - k0) * d;
            if (eps) {
              const T* e = eps + (i * G + q) * d;
              for (int64_t j = 0; j < d; ++j) {
                const T dg = bk[j] * uk[j];
                om[j] += dg;
                os[j] += dg * e[j];
              }
            } else {
              for (int64_t j = 0; j < d; ++j) om[j] += bk[j] * uk[j];
            }
          }
        }
        if (ds2 || dxi) {
          for (int64_t t = 0; t < len; ++t) b[t] *= g[t];
          fwht_segments<Vt>(b, b, C, n);  // da = H (g dv)
          for (int64_t k = 0; k < C; ++k) {
            const T* bk = b + k * d;
            if (ds2) {
              T* o = a_ds2 + (k0 + k) * d;
              for (int64_t j = 0; j < d; ++j) o[j] += bk[j] * xi[j];
            }
            if (dxi) {
              const T* sk = s2 + (k0 + k) * d;
              for (int64_t j = 0; j < d; ++j) dxi[j] += sk[j] * bk[j];
            }
          }
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
