// CUDA batched FWHT and fused WHVI kernels; the API is kernels/fwht_cuda.h.
//
// Design (every size is a power of two; d = 2^L):
//  * A "tile" of 2^N fp32 values (N = max(L, 13); max(L, 10) for small batches) lives in shared memory,
//    padded by one word per 32 (index f is stored at f + f/32) so that the
//    access patterns below are free of bank conflicts. A tile holds 2^(N-L)
//    consecutive rows (d <= 2^13) or exactly one row (d = 2^14, 2^15).
//  * fwht one pass (d <= 2^15): phases of at most 5 index bits each; a phase
//    does the radix-2 stages of its bits in registers, each thread holding 32
//    values per round (32/2^E groups of 2^E), with a barrier between phases.
//    d <= 2^5: load the tile with coalesced 16-byte loads (scalar loads where
//    alignment or strides forbid), one phase, scale, convert and store with
//    16-byte stores. Larger d: the first phase (index bits >= 5) reads its
//    values straight from global memory (the lanes of a warp take 32
//    consecutive values) and the last one (d >= 2^11) writes them straight
//    back, so a tile passes through shared memory 2 or 3 times instead of 4
//    or 5. One read and one write of global memory. Threads per CTA: 256
//    (d <= 2^13) or 512 (d = 2^14, 2^15); rounds per phase: 1 (2 for d =
//    2^15). A batch with fewer tiles of 2^13 than the device has SMs takes
//    tiles of 2^10 (one warp) instead, to spread over more SMs.
//  * fwht d > 2^15: the one-pass kernel on the 2^15-long sub-rows (with the
//    scale), then in-place strided passes over the output for the remaining
//    high bits, at most 5 bits per pass; each thread holds 2^m values at stride
//    2^b, consecutive threads take consecutive low indices (coalesced).
//  * whvi_forward/backward (fp32, d <= 2^15): the same tiles; the row(s) stay
//    in shared memory for all transforms of one (row, block) item.
// Arithmetic is fp32 for every dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "common.cuh"
#include "fwht_cuda.h"

namespace whvi::kernels::cuda {
namespace {

using detail::dynamic_smem;

// ---- Tile geometry -----------------------------------------------------------

constexpr int kThreadValuesLog = 5;  // values per thread per round of a phase: 32
constexpr int kMinTileLog = 13;      // tiles hold at least 2^13 values
constexpr int kPhaseBits = 5;        // index bits per phase (at most kThreadValuesLog)
constexpr int kSmallTileLog = 10;    // tiles of one warp (Cfg's MinTile for small batches)

// Shared-memory slot of tile index f: one padding word per 32 values.
__host__ __device__ constexpr int padded(int f) { return f + (f >> 5); }
constexpr size_t padded_floats(int n) { return (size_t{1} << n) + ((size_t{1} << n) >> 5); }

// MinTile: the smallest tile, log2 (kSmallTileLog: one warp of 32 values a
// thread, for batches too small to give every SM a tile of 2^13).
template <int L, int MinTile = kMinTileLog>
struct Cfg {
  static constexpr int kTileLog = L > MinTile ? L : MinTile;
  static constexpr int kThreadsLog = L >= 14 ? 9 : (kTileLog - 5 < 8 ? kTileLog - 5 : 8);
  static constexpr int kThreads = 1 << kThreadsLog;
  static constexpr int kRowsLog = kTileLog - L;  // rows per tile, log2
  static constexpr int kRows = 1 << kRowsLog;
  static constexpr int kPadded = static_cast<int>(padded_floats(kTileLog));
  static_assert(kTileLog - kThreadsLog - kThreadValuesLog >= 0, "a round needs 32 values per thread");
};

// ---- dtype load/store (fp32 in registers) -------------------------------------

template <class T>
struct IO;

template <>
struct IO<float> {
  static constexpr int kVec = 4;  // values per 16-byte vector
  __device__ static float load(const float* p) { return *p; }
  __device__ static void store(float* p, float v) { *p = v; }
  __device__ static void load_vec(const float* p, float (&v)[kVec]) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    v[0] = t.x;
    v[1] = t.y;
    v[2] = t.z;
    v[3] = t.w;
  }
  __device__ static void store_vec(float* p, const float (&v)[kVec]) {
    float4 t;
    t.x = v[0];
    t.y = v[1];
    t.z = v[2];
    t.w = v[3];
    *reinterpret_cast<float4*>(p) = t;
  }
};

template <>
struct IO<__half> {
  static constexpr int kVec = 8;
  __device__ static float load(const __half* p) { return __half2float(*p); }
  __device__ static void store(__half* p, float v) { *p = __float2half_rn(v); }
  __device__ static void load_vec(const __half* p, float (&v)[kVec]) {
    const uint4 t = *reinterpret_cast<const uint4*>(p);
    const __half2* h = reinterpret_cast<const __half2*>(&t);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float2 f = __half22float2(h[q]);
      v[2 * q] = f.x;
      v[2 * q + 1] = f.y;
    }
  }
  __device__ static void store_vec(__half* p, const float (&v)[kVec]) {
    uint4 t;
    __half2* h = reinterpret_cast<__half2*>(&t);
#pragma unroll
    for (int q = 0; q < 4; ++q) h[q] = __floats2half2_rn(v[2 * q], v[2 * q + 1]);
    *reinterpret_cast<uint4*>(p) = t;
  }
};

template <>
struct IO<__nv_bfloat16> {
  static constexpr int kVec = 8;
  __device__ static float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
  __device__ static void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
  __device__ static void load_vec(const __nv_bfloat16* p, float (&v)[kVec]) {
    const uint4 t = *reinterpret_cast<const uint4*>(p);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&t);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float2 f = __bfloat1622float2(h[q]);
      v[2 * q] = f.x;
      v[2 * q + 1] = f.y;
    }
  }
  __device__ static void store_vec(__nv_bfloat16* p, const float (&v)[kVec]) {
    uint4 t;
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&t);
#pragma unroll
    for (int q = 0; q < 4; ++q) h[q] = __floats2bfloat162_rn(v[2 * q], v[2 * q + 1]);
    *reinterpret_cast<uint4*>(p) = t;
  }
};

// ---- In-register butterflies and shared-memory phases -------------------------

// v holds G groups of 2^E values; bit h of the in-group index is one index bit
// of the transform. Does the E radix-2 stages of every group.
template <int E, int G>
__device__ __forceinline__ void butterflies(float (&v)[G << E]) {
#pragma unroll
  for (int h = 0; h < E; ++h)
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int j = 0; j < (1 << E); ++j)
        if ((j & (1 << h)) == 0) {
          const int a = (g << E) + j, b = a + (1 << h);
          const float x = v[a], y = v[b];
          v[a] = x + y;
          v[b] = x - y;
        }
}

// Index f of a tile with E zero bits inserted at bit B of the "free index" F.
template <int B, int E>
__host__ __device__ constexpr int insert_gap(int F) {
  return (F & ((1 << B) - 1)) | ((F >> B) << (B + E));
}

// One phase on a tile of 2^N values (2^T threads): the stages of index bits
// [B, B+E). The other N-E bits (the free index F) are split as
//   F = tid + (g << T) + (round << (T + 5 - E)),  g < 32/2^E groups,
// and value j of group g is tile index insert_gap(F) + (j << B).
// Addresses: padded(insert_gap(tid) + O) = padded(insert_gap(tid)) + padded(O)
// for O = insert_gap((g << T) + (round << ...)) + (j << B), because either
// O is a multiple of 32 (B >= 5), or (B = 0) insert_gap(tid) = tid << E and
// O = (multiple of 32) + j with j < 2^E <= 32 - (tid << E) % 32. So one base
// register per thread and compile-time offsets.
// Bank conflicts: for B >= 5 the lanes of a warp vary in index bits 0..4
// (32 consecutive values); for B = 0 they vary in bits E..E+4 with E <= 5,
// which the padding spreads over 32 banks.
template <int N, int T, int B, int E>
__device__ __forceinline__ void fwht_phase(float* sm) {
  static_assert(E >= 1 && E <= kThreadValuesLog, "phase width");
  static_assert(B == 0 || B >= 5, "phases after the first start at bit 5 or above");
  static_assert(T >= 5, "at least one warp");
  constexpr int kG = 1 << (kThreadValuesLog - E);  // groups per thread per round
  constexpr int kRounds = 1 << (N - T - kThreadValuesLog);
  float* base = sm + padded(insert_gap<B, E>(threadIdx.x));
#pragma unroll
  for (int round = 0; round < kRounds; ++round) {
    float v[kG << E];
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
      for (int j = 0; j < (1 << E); ++j)
        v[(g << E) + j] =
            base[padded(insert_gap<B, E>((g << T) + (round << (T + kThreadValuesLog - E))) + (j << B))];
    butterflies<E, kG>(v);
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
      for (int j = 0; j < (1 << E); ++j)
        base[padded(insert_gap<B, E>((g << T) + (round << (T + kThreadValuesLog - E))) + (j << B))] =
            v[(g << E) + j];
  }
}

// Unnormalised FWHT of every 2^L-long row of the tile (2^N values, 2^T
// threads), in place. Starts with a barrier (the tile was just written with a
// different thread mapping); the caller puts a barrier after it.
template <int L, int N, int T, int B = 0>
__device__ __forceinline__ void fwht_tile(float* sm) {
  if constexpr (B < L) {
    constexpr int E = (L - B) < kPhaseBits ? (L - B) : kPhaseBits;
    __syncthreads();
    fwht_phase<N, T, B, E>(sm);
    fwht_tile<L, N, T, B + E>(sm);
  }
}

// ---- fwht: one pass for d <= 2^15 ----------------------------------------------

// A tile's rows: row q = row0 + r is sub-row (q mod 2^sub_log) of matrix row
// (q >> sub_log) (for d > 2^15 each matrix row is processed as 2^sub_log
// contiguous sub-rows of 2^L; then a tile is one sub-row). So tile index f is
// at tile_origin + (f >> L) * stride + (f mod 2^L) in both cases.
template <int L>
__device__ __forceinline__ int64_t tile_origin(int64_t row0, int64_t stride, int sub_log) {
  const int64_t sub = row0 & ((int64_t{1} << sub_log) - 1);
  return (row0 >> sub_log) * stride + (sub << L);
}
template <int L>
__device__ __forceinline__ int64_t tile_offset(int f, int64_t stride) {
  return static_cast<int64_t>(f >> L) * stride + (f & ((1 << L) - 1));
}

constexpr int kUnroll = 4;  // vectors in flight per thread in the load/store loops

template <class T, int L, int N, int NT>
__device__ __forceinline__ void load_tile(const T* src, int64_t stride, int nvalid, bool vec, float* sm) {
  constexpr int kV = IO<T>::kVec;
  const int tid = threadIdx.x;
  const int nvec = vec ? nvalid / kV : 0;
  for (int v0 = 0; v0 < nvec; v0 += NT * kUnroll) {
    float r[kUnroll][kV];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int v = v0 + u * NT + tid;
      if (v < nvec) IO<T>::load_vec(src + tile_offset<L>(v * kV, stride), r[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int v = v0 + u * NT + tid;
      if (v < nvec) {
        float* s = sm + padded(v * kV);  // kV divides 32: a vector never straddles padding
#pragma unroll
        for (int j = 0; j < kV; ++j) s[j] = r[u][j];
      }
    }
  }
  for (int f = nvec * kV + tid; f < nvalid; f += NT) sm[padded(f)] = IO<T>::load(src + tile_offset<L>(f, stride));
  for (int f = nvalid + tid; f < (1 << N); f += NT) sm[padded(f)] = 0.f;
}

template <class T, int L, int NT>
__device__ __forceinline__ void store_tile(T* dst, int64_t stride, int nvalid, bool vec, float scale,
                                           const float* sm) {
  constexpr int kV = IO<T>::kVec;
  const int tid = threadIdx.x;
  const int nvec = vec ? nvalid / kV : 0;
  for (int v0 = 0; v0 < nvec; v0 += NT * kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int v = v0 + u * NT + tid;
      if (v < nvec) {
        const float* s = sm + padded(v * kV);
        float r[kV];
#pragma unroll
        for (int j = 0; j < kV; ++j) r[j] = s[j] * scale;
        IO<T>::store_vec(dst + tile_offset<L>(v * kV, stride), r);
      }
    }
  }
  for (int f = nvec * kV + tid; f < nvalid; f += NT)
    IO<T>::store(dst + tile_offset<L>(f, stride), sm[padded(f)] * scale);
}

// Phases that read their values from global memory or write them there: the
// same mapping as fwht_phase with B >= 5, so the 32 lanes of a warp take 32
// consecutive values of one row (coalesced) and 32 consecutive shared slots
// (conflict-free). Reading the first phase's values straight from global
// memory and writing the last phase's straight back saves a round trip
// through shared memory each; since the stages of different index bits
// commute, any phase may come first. Tile indices at or past `nvalid` read as
// zero and are not written. Every index is base (thread) | offset (constant):
// disjoint bits, so tile_offset and padded add.
template <int N, int T, int B, int E>
struct GlobalPhase {
  static_assert(B >= 5 && E >= 1 && E <= kThreadValuesLog && T >= 5, "global phases need B >= 5");
  static constexpr int kG = 1 << (kThreadValuesLog - E);
  static constexpr int kRounds = 1 << (N - T - kThreadValuesLog);
  __device__ static int base() { return insert_gap<B, E>(threadIdx.x); }
  __host__ __device__ static constexpr int offset(int round, int g, int j) {
    return insert_gap<B, E>((g << T) + (round << (T + kThreadValuesLog - E))) + (j << B);
  }
};

template <class T, int L, int N, int TT, int B, int E>
__device__ __forceinline__ void fwht_phase_from_global(const T* src, int64_t stride, int nvalid, float* sm) {
  using P = GlobalPhase<N, TT, B, E>;
  const int b = P::base();
  const T* g0 = src + tile_offset<L>(b, stride);
  float* s0 = sm + padded(b);
#pragma unroll
  for (int round = 0; round < P::kRounds; ++round) {
    float v[P::kG << E];
#pragma unroll
    for (int g = 0; g < P::kG; ++g)
#pragma unroll
      for (int j = 0; j < (1 << E); ++j) {
        const int o = P::offset(round, g, j);
        v[(g << E) + j] = b + o < nvalid ? IO<T>::load(g0 + tile_offset<L>(o, stride)) : 0.f;
      }
    butterflies<E, P::kG>(v);
#pragma unroll
    for (int g = 0; g < P::kG; ++g)
#pragma unroll
      for (int j = 0; j < (1 << E); ++j) s0[padded(P::offset(round, g, j))] = v[(g << E) + j];
  }
}

template <class T, int L, int N, int TT, int B, int E>
__device__ __forceinline__ void fwht_phase_to_global(const float* sm, T* dst, int64_t stride, int nvalid,
                                                     float scale) {
  using P = GlobalPhase<N, TT, B, E>;
  const int b = P::base();
  T* g0 = dst + tile_offset<L>(b, stride);
  const float* s0 = sm + padded(b);
#pragma unroll
  for (int round = 0; round < P::kRounds; ++round) {
    float v[P::kG << E];
#pragma unroll
    for (int g = 0; g < P::kG; ++g)
#pragma unroll
      for (int j = 0; j < (1 << E); ++j) v[(g << E) + j] = s0[padded(P::offset(round, g, j))];
    butterflies<E, P::kG>(v);
#pragma unroll
    for (int g = 0; g < P::kG; ++g)
#pragma unroll
      for (int j = 0; j < (1 << E); ++j) {
        const int o = P::offset(round, g, j);
        if (b + o < nvalid) IO<T>::store(g0 + tile_offset<L>(o, stride), v[(g << E) + j] * scale);
      }
  }
}

// rows: number of (sub-)rows of 2^L. vec_in/vec_out: 16-byte vectors allowed
// (checked on the host: alignment, and either a contiguous matrix or
// stride and d multiples of the vector width).
// Phase plan: d <= 2^5: load, one phase, store. 2^6 <= d <= 2^10: the phase of
// bits [5, L) from global memory, bits [0, 5) in shared memory, store. d >= 2^11:
// the upper half of bits [5, L) from global memory, bits [0, 5) in shared
// memory, the lower half of [5, L) to global memory.
template <class T, int L, int MinTile>
__global__ void __launch_bounds__(Cfg<L, MinTile>::kThreads)
    fwht_onepass_kernel(const T* in, int64_t in_stride, T* out, int64_t out_stride, int64_t rows,
                        int sub_log, float scale, bool vec_in, bool vec_out) {
  using C = Cfg<L, MinTile>;
  constexpr int N = C::kTileLog, TT = C::kThreadsLog;
  float* sm = dynamic_smem<float>();
  const int64_t ntiles = (rows + C::kRows - 1) >> C::kRowsLog;
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const int64_t row0 = tile << C::kRowsLog;
    const int64_t left = rows - row0;
    const int nrows = left < C::kRows ? static_cast<int>(left) : C::kRows;
    const int nvalid = nrows << L;
    const T* src = in + tile_origin<L>(row0, in_stride, sub_log);
    T* dst = out + tile_origin<L>(row0, out_stride, sub_log);
    if constexpr (L <= kPhaseBits) {
      load_tile<T, L, N, C::kThreads>(src, in_stride, nvalid, vec_in, sm);
      fwht_tile<L, N, TT>(sm);
      __syncthreads();
      store_tile<T, L, C::kThreads>(dst, out_stride, nvalid, vec_out, scale, sm);
    } else if constexpr (L <= 2 * kPhaseBits) {
      fwht_phase_from_global<T, L, N, TT, kPhaseBits, L - kPhaseBits>(src, in_stride, nvalid, sm);
      __syncthreads();
      fwht_phase<N, TT, 0, kPhaseBits>(sm);
      __syncthreads();
      store_tile<T, L, C::kThreads>(dst, out_stride, nvalid, vec_out, scale, sm);
    } else {
      constexpr int kLo = (L - kPhaseBits) / 2, kHi = L - kPhaseBits - kLo;
      fwht_phase_from_global<T, L, N, TT, kPhaseBits + kLo, kHi>(src, in_stride, nvalid, sm);
      __syncthreads();
      fwht_phase<N, TT, 0, kPhaseBits>(sm);
      __syncthreads();
      fwht_phase_to_global<T, L, N, TT, kPhaseBits, kLo>(sm, dst, out_stride, nvalid, scale);
    }
    __syncthreads();  // the next tile overwrites the shared memory
  }
}

// ---- fwht: strided passes for the bits above 2^15 ------------------------------

constexpr int kStridedThreads = 256;

// Stages of index bits [b, b+M) of every row of 2^L, in place. Thread item G
// covers row G >> (L-M) and the 2^M values f0 + (j << b), where f0 is the
// within-row free index with M zero bits inserted at b. b >= 15, so
// consecutive threads touch consecutive addresses.
template <class T, int M>
__global__ void __launch_bounds__(kStridedThreads)
    fwht_strided_kernel(T* data, int64_t stride, int64_t rows, int L, int b, float scale) {
  const int64_t per_row = int64_t{1} << (L - M);
  const int64_t total = rows * per_row;
  const int64_t low_mask = (int64_t{1} << b) - 1;
  for (int64_t G = static_cast<int64_t>(blockIdx.x) * kStridedThreads + threadIdx.x; G < total;
       G += static_cast<int64_t>(gridDim.x) * kStridedThreads) {
    const int64_t r = G >> (L - M);
    const int64_t F = G & (per_row - 1);
    const int64_t f0 = (F & low_mask) | ((F >> b) << (b + M));
    T* p = data + r * stride + f0;
    float v[1 << M];
#pragma unroll
    for (int j = 0; j < (1 << M); ++j) v[j] = IO<T>::load(p + (int64_t{j} << b));
    butterflies<M, 1>(v);
#pragma unroll
    for (int j = 0; j < (1 << M); ++j) IO<T>::store(p + (int64_t{j} << b), v[j] * scale);
  }
}

// ---- Fused WHVI ------------------------------------------------------------------

struct WhviParams {
  const float* x;
  const float* eps;
  const float* s1;
  const float* s2;
  const float* mu;
  const float* sg;
  const float* dy;
  float* y;
  float* dx;
  float* ds1;
  float* ds2;
  float* dmu;
  float* dsg;       // nullptr when not wanted or when eps == nullptr (then it is zero)
  float* uscratch;  // backward: per-CTA u tiles (kPadded floats each) when not in shared memory
  int64_t batch;
  int64_t blocks;
  int64_t groups;
  int64_t tiles_per_k;  // backward: ceil(batch / rows per tile)
  int shared_g;
  int ubuf_in_smem;
  int acc_in_smem;
};

// Elementwise passes over a tile: thread (r0, c0) visits rows r0 + m*kRStep,
// columns c0 + m*kCStep. Consecutive threads take consecutive tile indices,
// so global accesses are coalesced and shared accesses conflict-free.
template <int L, int TLOG>
struct ElemMap {
  static constexpr int kCLog = L < TLOG ? L : TLOG;
  static constexpr int kCStep = 1 << kCLog;
  static constexpr int kRStep = 1 << (TLOG - kCLog);
  int c0, r0;
  __device__ ElemMap() : c0(threadIdx.x & (kCStep - 1)), r0(threadIdx.x >> kCLog) {}
};

// y[i,k] = s1[k] * H(g * H(s2[k] * x[i])), items q = i*blocks + k, a tile
// holds 2^kRowsLog consecutive items.
template <int L>
__global__ void __launch_bounds__(Cfg<L>::kThreads) whvi_forward_kernel(WhviParams p) {
  using C = Cfg<L>;
  using M = ElemMap<L, C::kThreadsLog>;
  constexpr int64_t d = int64_t{1} << L;
  float* buf = dynamic_smem<float>();
  const M m;
  const int64_t items = p.batch * p.blocks;
  const int64_t ntiles = (items + C::kRows - 1) >> C::kRowsLog;
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const int64_t q0 = tile << C::kRowsLog;
    const int64_t left = items - q0;
    const int nrows = left < C::kRows ? static_cast<int>(left) : C::kRows;
    // a = s2 * x (rows past the end are zero)
    for (int r = m.r0; r < C::kRows; r += M::kRStep) {
      const int64_t q = q0 + r;
      const int64_t i = q / p.blocks, k = q - i * p.blocks;
      const float* xr = p.x + i * d;
      const float* s2r = p.s2 + k * d;
#pragma unroll
      for (int c = m.c0; c < d; c += M::kCStep)
        buf[padded((r << L) + c)] = r < nrows ? xr[c] * s2r[c] : 0.f;
    }
    fwht_tile<L, C::kTileLog, C::kThreadsLog>(buf);
    __syncthreads();
    // v = g * u
    for (int r = m.r0; r < nrows; r += M::kRStep) {
      const int64_t q = q0 + r;
      const int64_t i = q / p.blocks, k = q - i * p.blocks;
      const int64_t gq = p.shared_g ? 0 : k;
      const float* mur = p.mu + gq * d;
      const float* sgr = p.sg + gq * d;
      const float* er = p.eps ? p.eps + (i * p.groups + gq) * d : nullptr;
#pragma unroll
      for (int c = m.c0; c < d; c += M::kCStep) {
        const float g = er ? mur[c] + sgr[c] * er[c] : mur[c];
        buf[padded((r << L) + c)] *= g;
      }
    }
    fwht_tile<L, C::kTileLog, C::kThreadsLog>(buf);
    __syncthreads();
    // y = s1 * w
    for (int r = m.r0; r < nrows; r += M::kRStep) {
      const int64_t q = q0 + r;
      const int64_t k = q % p.blocks;
      const float* s1r = p.s1 + k * d;
      float* yr = p.y + q * d;
#pragma unroll
      for (int c = m.c0; c < d; c += M::kCStep) yr[c] = s1r[c] * buf[padded((r << L) + c)];
    }
    __syncthreads();
  }
}

// Backward. Items are visited block-major (t = k * tiles_per_k + tile of rows
// of block k); each CTA takes a contiguous range of tiles so that its
// parameter gradients (ds1, ds2: row k; dmu, dsg: row q) can be summed in
// shared memory over many rows and flushed with one atomicAdd per column when
// k changes. Without room for the accumulators they are added atomically per
// item. Per item:
//   a = s2 x; u = H a; v = g u; w = H v;     ds1 += dy w
//   dv = H(s1 dy);                            dmu += dv u; dsg += dv u eps
//   da = H(g dv);                             ds2 += da x; dx += s2 da
template <int L>
__global__ void __launch_bounds__(Cfg<L>::kThreads) whvi_backward_kernel(WhviParams p) {
  using C = Cfg<L>;
  using M = ElemMap<L, C::kThreadsLog>;
  constexpr int64_t d = int64_t{1} << L;
  constexpr int kAcc = (1 << L) > C::kThreads ? (1 << L) : C::kThreads;  // floats per accumulator
  float* smem = dynamic_smem<float>();
  float* buf = smem;
  float* ubuf = p.ubuf_in_smem ? smem + C::kPadded
                               : (p.uscratch ? p.uscratch + int64_t{blockIdx.x} * C::kPadded : nullptr);
  const bool need_w = p.ds1 != nullptr;
  const bool need_u = p.dmu != nullptr || p.dsg != nullptr;
  const bool need_da = p.dx != nullptr || p.ds2 != nullptr;
  const bool need_dv = need_u || need_da;

  float* acc_s1 = nullptr;
  float* acc_s2 = nullptr;
  float* acc_mu = nullptr;
  float* acc_sg = nullptr;
  if (p.acc_in_smem) {
    // Same slot order as the host's size computation.
    float* acc = smem + C::kPadded + (p.ubuf_in_smem ? C::kPadded : 0);
    int slots = 0;
    if (p.ds1) acc_s1 = acc + kAcc * slots++;
    if (p.ds2) acc_s2 = acc + kAcc * slots++;
    if (p.dmu) acc_mu = acc + kAcc * slots++;
    if (p.dsg) acc_sg = acc + kAcc * slots++;
    for (int j = threadIdx.x; j < kAcc * slots; j += C::kThreads) acc[j] = 0.f;
    // Each slot below is then only touched by its owner thread until a flush
    // (which starts with a barrier).
  }
  const M m;
  // This thread's accumulator slot for column c is (r0 << L) + c: unique per
  // thread, since rows visited by a thread are all congruent to r0.
  const int acc_base = m.r0 << L;
  auto add = [&](float* acc, float* grad, int64_t row, int c, float v) {
    if (acc)
      acc[acc_base + c] += v;
    else
      atomicAdd(grad + row * d + c, v);
  };
  auto flush_one = [&](float* acc, float* grad, int64_t row, int c) {
    if (!acc) return;
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < M::kRStep; ++j) {
      s += acc[(j << L) + c];
      acc[(j << L) + c] = 0.f;
    }
    atomicAdd(grad + row * d + c, s);
  };
  auto flush = [&](int64_t k) {
    __syncthreads();
    const int64_t gq = p.shared_g ? 0 : k;
    for (int c = threadIdx.x; c < d; c += C::kThreads) {
      flush_one(acc_s1, p.ds1, k, c);
      flush_one(acc_s2, p.ds2, k, c);
      flush_one(acc_mu, p.dmu, gq, c);
      flush_one(acc_sg, p.dsg, gq, c);
    }
    __syncthreads();
  };

  const int64_t total = p.blocks * p.tiles_per_k;
  const int64_t chunk = (total + gridDim.x - 1) / gridDim.x;
  const int64_t t_begin = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t t_end = t_begin + chunk < total ? t_begin + chunk : total;
  int64_t cur_k = -1;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t k = t / p.tiles_per_k;
    const int64_t i0 = (t - k * p.tiles_per_k) << C::kRowsLog;
    const int64_t left = p.batch - i0;
    const int nrows = left < C::kRows ? static_cast<int>(left) : C::kRows;
    if (p.acc_in_smem && k != cur_k) {
      if (cur_k >= 0) flush(cur_k);
      cur_k = k;
    }
    const int64_t gq = p.shared_g ? 0 : k;
    const float* s1r = p.s1 + k * d;
    const float* s2r = p.s2 + k * d;
    const float* mur = p.mu + gq * d;
    const float* sgr = p.sg + gq * d;

    // a = s2 x (rows past the end are zero, and stay zero through every step)
    for (int r = m.r0; r < C::kRows; r += M::kRStep) {
      const float* xr = p.x + (i0 + r) * d;
#pragma unroll
      for (int c = m.c0; c < d; c += M::kCStep)
        buf[padded((r << L) + c)] = r < nrows ? xr[c] * s2r[c] : 0.f;
    }
    fwht_tile<L, C::kTileLog, C::kThreadsLog>(buf);  // u
    __syncthreads();
    if (need_w || need_u) {
      for (int r = m.r0; r < nrows; r += M::kRStep) {
        const int64_t i = i0 + r;
        const float* er = p.eps ? p.eps + (i * p.groups + gq) * d : nullptr;
#pragma unroll
        for (int c = m.c0; c < d; c += M::kCStep) {
          const int f = padded((r << L) + c);
          const float u = buf[f];
          if (need_u) ubuf[f] = u;
          if (need_w) buf[f] = (er ? mur[c] + sgr[c] * er[c] : mur[c]) * u;
        }
      }
    }
    if (need_w) {
      fwht_tile<L, C::kTileLog, C::kThreadsLog>(buf);  // w
      __syncthreads();
    }
    // ds1 += dy w; buf = s1 dy
    for (int r = m.r0; r < nrows; r += M::kRStep) {
      const float* dyr = p.dy + ((i0 + r) * p.blocks + k) * d;
#pragma unroll
      for (int c = m.c0; c < d; c += M::kCStep) {
        const int f = padded((r << L) + c);
        const float dyv = dyr[c];
        if (need_w) add(acc_s1, p.ds1, k, c, dyv * buf[f]);
        if (need_dv) buf[f] = s1r[c] * dyv;
      }
    }
    if (need_dv) {
      fwht_tile<L, C::kTileLog, C::kThreadsLog>(buf);  // dv
      __syncthreads();
      // dmu += dv u; dsg += dv u eps; buf = g dv
      for (int r = m.r0; r < nrows; r += M::kRStep) {
        const int64_t i = i0 + r;
        const float* er = p.eps ? p.eps + (i * p.groups + gq) * d : nullptr;
#pragma unroll
        for (int c = m.c0; c < d; c += M::kCStep) {
          const int f = padded((r << L) + c);
          const float dv = buf[f];
          const float e = er ? er[c] : 0.f;
          if (need_u) {
            const float dg = dv * ubuf[f];
            if (p.dmu) add(acc_mu, p.dmu, gq, c, dg);
            if (p.dsg) add(acc_sg, p.dsg, gq, c, dg * e);
          }
          if (need_da) buf[f] = (mur[c] + sgr[c] * e) * dv;
        }
      }
      if (need_da) {
        fwht_tile<L, C::kTileLog, C::kThreadsLog>(buf);  // da
        __syncthreads();
        // ds2 += da x; dx += s2 da
        for (int r = m.r0; r < nrows; r += M::kRStep) {
          const int64_t i = i0 + r;
          const float* xr = p.x + i * d;
          float* dxr = p.dx ? p.dx + i * d : nullptr;
#pragma unroll
          for (int c = m.c0; c < d; c += M::kCStep) {
            const float da = buf[padded((r << L) + c)];
            if (p.ds2) add(acc_s2, p.ds2, k, c, da * xr[c]);
            if (dxr) {
              if (p.blocks == 1)
                dxr[c] = s2r[c] * da;  // the only writer of this element
              else
                atomicAdd(dxr + c, s2r[c] * da);
            }
          }
        }
      }
    }
    __syncthreads();
  }
  if (p.acc_in_smem && cur_k >= 0) flush(cur_k);
}

// ---- Host helpers ------------------------------------------------------------------

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

int current_device() {
  int dev = 0;
  WHVI_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

int device_attribute(cudaDeviceAttr attr) {
  int v = 0;
  WHVI_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, current_device()));
  return v;
}

size_t max_smem_per_block() {
  return static_cast<size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
}

std::string pow2_text(int log2) {
  return "2^" + std::to_string(log2) + " = " + std::to_string(int64_t{1} << log2);
}

// Allows `smem` bytes of dynamic shared memory for `kernel`; a clear error if
// the device cannot give that much to one block.
template <class K>
void allow_smem(K* kernel, size_t smem, const char* what, int64_t d) {
  const size_t limit = max_smem_per_block();
  if (smem > limit)
    throw KernelError(std::string(what) + ": d = " + std::to_string(d) + " needs " +
                      std::to_string(smem) + " bytes of shared memory per block, but this device (" +
                      device_name() + ") allows " + std::to_string(limit));
  if (smem > 48 * 1024)
    WHVI_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
}

// Enough CTAs to fill the device once (kernels loop over their work), at most `work`.
template <class K>
int grid_for(K* kernel, int threads, size_t smem, int64_t work) {
  int per_sm = 0;
  WHVI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  if (per_sm < 1)
    throw std::runtime_error("whvi CUDA kernel with " + std::to_string(threads) + " threads and " +
                             std::to_string(smem) + " bytes of shared memory cannot run on this device");
  const int64_t fill = int64_t{per_sm} * device_attribute(cudaDevAttrMultiProcessorCount);
  const int64_t g = work < fill ? work : fill;
  return static_cast<int>(g < 1 ? 1 : g);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// 16-byte vectors are usable for a (sub-)row matrix when the base is aligned and
// either each vector stays inside one row (stride, d multiples of the width) or
// the rows are contiguous (then the tile is one contiguous aligned run).
bool vectors_ok(const void* p, int64_t stride, int64_t d_sub, int sub_log, int width) {
  if (!aligned16(p)) return false;
  if (stride % width == 0 && d_sub % width == 0) return true;
  return sub_log == 0 && stride == d_sub;
}

template <class T, int L, int MinTile>
void onepass_tiles(const T* in, int64_t in_stride, T* out, int64_t out_stride, int64_t rows, int sub_log,
                   float scale, int64_t d_full, cudaStream_t st) {
  using C = Cfg<L, MinTile>;
  auto* kernel = fwht_onepass_kernel<T, L, MinTile>;
  const size_t smem = size_t{C::kPadded} * sizeof(float);
  allow_smem(kernel, smem, "whvi::kernels::cuda::fwht", d_full);
  const int64_t ntiles = (rows + C::kRows - 1) >> C::kRowsLog;
  const int grid = grid_for(kernel, C::kThreads, smem, ntiles);
  const int w = IO<T>::kVec;
  const bool vin = vectors_ok(in, in_stride, int64_t{1} << L, sub_log, w);
  const bool vout = vectors_ok(out, out_stride, int64_t{1} << L, sub_log, w);
  WHVI_LAUNCH(kernel, grid, C::kThreads, smem, st)
  (in, in_stride, out, out_stride, rows, sub_log, scale, vin, vout);
  WHVI_CHECK_LAUNCH();
}

// Tiles of 2^13 values, or of one warp (2^10) when the batch gives fewer tiles of
// 2^13 than the device has SMs.
template <class T, int L>
void onepass(const T* in, int64_t in_stride, T* out, int64_t out_stride, int64_t rows, int sub_log,
             float scale, int64_t d_full, cudaStream_t st) {
  if constexpr (L < kMinTileLog) {
    const int64_t big_tiles = (rows + (int64_t{1} << (kMinTileLog - L)) - 1) >> (kMinTileLog - L);
    if (big_tiles < device_attribute(cudaDevAttrMultiProcessorCount)) {
      onepass_tiles<T, L, kSmallTileLog>(in, in_stride, out, out_stride, rows, sub_log, scale, d_full, st);
      return;
    }
  }
  onepass_tiles<T, L, kMinTileLog>(in, in_stride, out, out_stride, rows, sub_log, scale, d_full, st);
}

template <class T>
void onepass_dispatch(int L, const T* in, int64_t in_stride, T* out, int64_t out_stride,
                      int64_t rows, int sub_log, float scale, int64_t d_full, cudaStream_t st) {
  switch (L) {
#define WHVI_ONEPASS_CASE(n)                                                                  \
  case n:                                                                                     \
    onepass<T, n>(in, in_stride, out, out_stride, rows, sub_log, scale, d_full, st); \
    break;
    WHVI_ONEPASS_CASE(0)
    WHVI_ONEPASS_CASE(1)
    WHVI_ONEPASS_CASE(2)
    WHVI_ONEPASS_CASE(3)
    WHVI_ONEPASS_CASE(4)
    WHVI_ONEPASS_CASE(5)
    WHVI_ONEPASS_CASE(6)
    WHVI_ONEPASS_CASE(7)
    WHVI_ONEPASS_CASE(8)
    WHVI_ONEPASS_CASE(9)
    WHVI_ONEPASS_CASE(10)
    WHVI_ONEPASS_CASE(11)
    WHVI_ONEPASS_CASE(12)
    WHVI_ONEPASS_CASE(13)
    WHVI_ONEPASS_CASE(14)
    WHVI_ONEPASS_CASE(15)
#undef WHVI_ONEPASS_CASE
    default:
      throw KernelError("whvi::kernels::cuda::fwht: internal error, no one-pass kernel for 2^" +
                        std::to_string(L));
  }
}

template <class T, int M>
void strided_pass(T* data, int64_t stride, int64_t rows, int L, int b, float scale, cudaStream_t st) {
  auto* kernel = fwht_strided_kernel<T, M>;
  const int64_t items = rows << (L - M);
  const int grid = grid_for(kernel, kStridedThreads, 0, (items + kStridedThreads - 1) / kStridedThreads);
  WHVI_LAUNCH(kernel, grid, kStridedThreads, 0, st)(data, stride, rows, L, b, scale);
  WHVI_CHECK_LAUNCH();
}

template <class T>
void fwht_typed(const T* in, int64_t in_stride, T* out, int64_t out_stride, int64_t rows, int L,
                float scale, cudaStream_t st) {
  const int64_t d = int64_t{1} << L;
  if (L <= kMaxLog2DOnePass) {
    onepass_dispatch<T>(L, in, in_stride, out, out_stride, rows, 0, scale, d, st);
    return;
  }
  // Low 15 bits (and the scale) in one pass over 2^15-long sub-rows, then the
  // high bits in place on `out`, as evenly split as possible, <= 5 per pass.
  const int sub_log = L - kMaxLog2DOnePass;
  onepass_dispatch<T>(kMaxLog2DOnePass, in, in_stride, out, out_stride, rows << sub_log, sub_log, scale,
                      d, st);
  const int high = L - kMaxLog2DOnePass;
  const int passes = (high + kPhaseBits - 1) / kPhaseBits;
  int b = kMaxLog2DOnePass;
  for (int pass = 0; pass < passes; ++pass) {
    const int m = high / passes + (pass < high % passes ? 1 : 0);
    switch (m) {
      case 1: strided_pass<T, 1>(out, out_stride, rows, L, b, 1.f, st); break;
      case 2: strided_pass<T, 2>(out, out_stride, rows, L, b, 1.f, st); break;
      case 3: strided_pass<T, 3>(out, out_stride, rows, L, b, 1.f, st); break;
      case 4: strided_pass<T, 4>(out, out_stride, rows, L, b, 1.f, st); break;
      case 5: strided_pass<T, 5>(out, out_stride, rows, L, b, 1.f, st); break;
      default: throw KernelError("whvi::kernels::cuda::fwht: internal error in the pass plan");
    }
    b += m;
  }
}

void check_d(const char* what, int64_t d, int max_log2) {
  if (!is_power_of_two(d) || d > (int64_t{1} << max_log2))
    throw KernelError(std::string(what) + ": d = " + std::to_string(d) +
                      " is not supported; d must be a power of two in [1, " + pow2_text(max_log2) + "]");
}

void check_whvi_shape(const char* what, const WhviShape& s) {
  check_d(what, s.d, kMaxLog2DWhvi);
  if (s.batch < 0 || s.blocks < 1)
    throw KernelError(std::string(what) + ": batch = " + std::to_string(s.batch) +
                      " and blocks = " + std::to_string(s.blocks) + " (need batch >= 0, blocks >= 1)");
}

void require(bool ok, const char* what, const char* name) {
  if (!ok) throw KernelError(std::string(what) + ": " + name + " is a null pointer");
}

// Per-CTA accumulators go to shared memory only while a CTA stays at most
// half the per-block limit (two CTAs per SM); otherwise they are atomics.
constexpr double kAccSmemShare = 0.5;

template <int L>
void whvi_forward_L(WhviParams p, cudaStream_t st) {
  using C = Cfg<L>;
  auto* kernel = whvi_forward_kernel<L>;
  const size_t smem = padded_floats(C::kTileLog) * sizeof(float);
  allow_smem(kernel, smem, "whvi::kernels::cuda::whvi_forward", int64_t{1} << L);
  const int64_t ntiles = (p.batch * p.blocks + C::kRows - 1) >> C::kRowsLog;
  const int grid = grid_for(kernel, C::kThreads, smem, ntiles);
  WHVI_LAUNCH(kernel, grid, C::kThreads, smem, st)(p);
  WHVI_CHECK_LAUNCH();
}

// Frees a stream-ordered scratch allocation when the launch is done (or failed).
struct ScratchGuard {
  void* ptr = nullptr;
  cudaStream_t st = nullptr;
  ~ScratchGuard() {
    if (ptr) cudaFreeAsync(ptr, st);
  }
};

template <int L>
void whvi_backward_L(WhviParams p, cudaStream_t st) {
  using C = Cfg<L>;
  constexpr int64_t d = int64_t{1} << L;
  auto* kernel = whvi_backward_kernel<L>;
  const size_t limit = max_smem_per_block();
  const size_t tile_bytes = padded_floats(C::kTileLog) * sizeof(float);
  const bool need_u = p.dmu != nullptr || p.dsg != nullptr;
  const int nacc = (p.ds1 != nullptr) + (p.ds2 != nullptr) + (p.dmu != nullptr) + (p.dsg != nullptr);
  size_t smem = tile_bytes;
  p.ubuf_in_smem = need_u && 2 * tile_bytes <= limit;
  if (p.ubuf_in_smem) smem += tile_bytes;
  const size_t acc_bytes = size_t(nacc) * size_t(d > C::kThreads ? d : C::kThreads) * sizeof(float);
  p.acc_in_smem = nacc > 0 && smem + acc_bytes <= static_cast<size_t>(kAccSmemShare * double(limit));
  if (p.acc_in_smem) smem += acc_bytes;
  allow_smem(kernel, smem, "whvi::kernels::cuda::whvi_backward", d);
  p.tiles_per_k = (p.batch + C::kRows - 1) >> C::kRowsLog;
  const int grid = grid_for(kernel, C::kThreads, smem, p.blocks * p.tiles_per_k);
  ScratchGuard scratch;
  p.uscratch = nullptr;
  if (need_u && !p.ubuf_in_smem) {
    scratch.st = st;
    WHVI_CUDA_CHECK(cudaMallocAsync(&scratch.ptr, size_t(grid) * tile_bytes, st));
    p.uscratch = static_cast<float*>(scratch.ptr);
  }
  WHVI_LAUNCH(kernel, grid, C::kThreads, smem, st)(p);
  WHVI_CHECK_LAUNCH();
}

#define WHVI_L_SWITCH(L, FN, ...)                                                   \
  switch (L) {                                                                      \
    case 0: FN<0>(__VA_ARGS__); break;                                              \
    case 1: FN<1>(__VA_ARGS__); break;                                              \
    case 2: FN<2>(__VA_ARGS__); break;                                              \
    case 3: FN<3>(__VA_ARGS__); break;                                              \
    case 4: FN<4>(__VA_ARGS__); break;                                              \
    case 5: FN<5>(__VA_ARGS__); break;                                              \
    case 6: FN<6>(__VA_ARGS__); break;                                              \
    case 7: FN<7>(__VA_ARGS__); break;                                              \
    case 8: FN<8>(__VA_ARGS__); break;                                              \
    case 9: FN<9>(__VA_ARGS__); break;                                              \
    case 10: FN<10>(__VA_ARGS__); break;                                            \
    case 11: FN<11>(__VA_ARGS__); break;                                            \
    case 12: FN<12>(__VA_ARGS__); break;                                            \
    case 13: FN<13>(__VA_ARGS__); break;                                            \
    case 14: FN<14>(__VA_ARGS__); break;                                            \
    case 15: FN<15>(__VA_ARGS__); break;                                            \
    default: throw KernelError("whvi CUDA kernels: internal error, log2 d out of range"); \
  }

}  // namespace

// ---- Public API ----------------------------------------------------------------------

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver/device" error
    return 0;
  }
  return n;
}

const char* device_name() {
  static std::mutex mu;
  static std::map<int, std::string> names;  // node-based: c_str() stays valid
  int dev = 0;
  if (device_count() == 0 || cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = names.find(dev);
  if (it == names.end()) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
      cudaGetLastError();
      return "";
    }
    it = names.emplace(dev, std::string(prop.name)).first;
  }
  return it->second.c_str();
}

void fwht(DType dtype, const void* in, int64_t in_row_stride, void* out, int64_t out_row_stride,
          int64_t rows, int64_t d, float scale, void* stream) {
  constexpr const char* what = "whvi::kernels::cuda::fwht";
  check_d(what, d, kMaxLog2D);
  if (rows < 0) throw KernelError(std::string(what) + ": rows = " + std::to_string(rows) + " < 0");
  if (in_row_stride < d || out_row_stride < d)
    throw KernelError(std::string(what) + ": row strides " + std::to_string(in_row_stride) + ", " +
                      std::to_string(out_row_stride) + " must be >= d = " + std::to_string(d));
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16 && dtype != DType::kBFloat16)
    throw KernelError(std::string(what) + ": unsupported dtype " + std::to_string(static_cast<int>(dtype)) +
                      " (float32, float16 and bfloat16 are supported)");
  if (rows == 0) return;
  require(in != nullptr, what, "in");
  require(out != nullptr, what, "out");
  if (in == out && in_row_stride != out_row_stride)
    throw KernelError(std::string(what) + ": in == out needs equal row strides (got " +
                      std::to_string(in_row_stride) + " and " + std::to_string(out_row_stride) + ")");
  const int L = log2_exact(d);
  const cudaStream_t st = as_stream(stream);
  switch (dtype) {
    case DType::kFloat32:
      fwht_typed<float>(static_cast<const float*>(in), in_row_stride, static_cast<float*>(out),
                        out_row_stride, rows, L, scale, st);
      break;
    case DType::kFloat16:
      fwht_typed<__half>(static_cast<const __half*>(in), in_row_stride, static_cast<__half*>(out),
                         out_row_stride, rows, L, scale, st);
      break;
    case DType::kBFloat16:
      fwht_typed<__nv_bfloat16>(static_cast<const __nv_bfloat16*>(in), in_row_stride,
                                static_cast<__nv_bfloat16*>(out), out_row_stride, rows, L, scale, st);
      break;
  }
}

void whvi_forward(const WhviShape& shape, const float* x, const float* eps, const float* s1,
                  const float* s2, const float* mu, const float* sg, float* y, void* stream) {
  constexpr const char* what = "whvi::kernels::cuda::whvi_forward";
  check_whvi_shape(what, shape);
  if (shape.batch == 0) return;
  require(x != nullptr, what, "x");
  require(s1 != nullptr, what, "s1");
  require(s2 != nullptr, what, "s2");
  require(mu != nullptr, what, "mu");
  require(eps == nullptr || sg != nullptr, what, "sg (with eps given)");
  require(y != nullptr, what, "y");
  WhviParams p{};
  p.x = x;
  p.eps = eps;
  p.s1 = s1;
  p.s2 = s2;
  p.mu = mu;
  p.sg = sg;
  p.y = y;
  p.batch = shape.batch;
  p.blocks = shape.blocks;
  p.groups = shape.groups();
  p.shared_g = shape.shared_g ? 1 : 0;
  const cudaStream_t st = as_stream(stream);
  WHVI_L_SWITCH(log2_exact(shape.d), whvi_forward_L, p, st)
}

void whvi_backward(const WhviShape& shape, const float* x, const float* eps, const float* s1,
                   const float* s2, const float* mu, const float* sg, const float* dy, float* dx,
                   float* ds1, float* ds2, float* dmu, float* dsg, void* stream) {
  constexpr const char* what = "whvi::kernels::cuda::whvi_backward";
  check_whvi_shape(what, shape);
  const cudaStream_t st = as_stream(stream);
  const int64_t d = shape.d;
  const int64_t groups = shape.groups();
  // Outputs are overwritten: zero what is accumulated. dx with one block is
  // written exactly once per element by the kernel.
  auto zero = [&](float* ptr, int64_t n) {
    if (ptr && n > 0) WHVI_CUDA_CHECK(cudaMemsetAsync(ptr, 0, size_t(n) * sizeof(float), st));
  };
  zero(ds1, shape.blocks * d);
  zero(ds2, shape.blocks * d);
  zero(dmu, groups * d);
  zero(dsg, groups * d);
  if (shape.blocks > 1) zero(dx, shape.batch * d);
  if (shape.batch == 0) return;
  if (!dx && !ds1 && !ds2 && !dmu && !dsg) return;
  require(x != nullptr, what, "x");
  require(s1 != nullptr, what, "s1");
  require(s2 != nullptr, what, "s2");
  require(mu != nullptr, what, "mu");
  require(eps == nullptr || sg != nullptr, what, "sg (with eps given)");
  require(dy != nullptr, what, "dy");
  WhviParams p{};
  p.x = x;
  p.eps = eps;
  p.s1 = s1;
  p.s2 = s2;
  p.mu = mu;
  p.sg = sg;
  p.dy = dy;
  p.dx = dx;
  p.ds1 = ds1;
  p.ds2 = ds2;
  p.dmu = dmu;
  p.dsg = eps ? dsg : nullptr;  // eps == 0 => dsg == 0, already zeroed
  p.batch = shape.batch;
  p.blocks = shape.blocks;
  p.groups = groups;
  p.shared_g = shape.shared_g ? 1 : 0;
  if (!p.dx && !p.ds1 && !p.ds2 && !p.dmu && !p.dsg) return;
  WHVI_L_SWITCH(log2_exact(d), whvi_backward_L, p, st)
}

void copy(const void* in, void* out, int64_t bytes, void* stream) {
  if (bytes < 0)
    throw KernelError("whvi::kernels::cuda::copy: bytes = " + std::to_string(bytes) + " < 0");
  if (bytes == 0) return;
  require(in != nullptr, "whvi::kernels::cuda::copy", "in");
  require(out != nullptr, "whvi::kernels::cuda::copy", "out");
  WHVI_CUDA_CHECK(cudaMemcpyAsync(out, in, size_t(bytes), cudaMemcpyDeviceToDevice, as_stream(stream)));
}

}  // namespace whvi::kernels::cuda
