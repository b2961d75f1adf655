// Process-wide settings and facts about the build and the machine.
#pragma once

#include <string>

namespace whvi {

const char* git_commit();  // generated at build time (cmake/GitVersion.cmake)
std::string version_string();  // multi-line, for `whvi --version`

// Sets LibTorch's intra-op threads and the thread count the whvi kernels
// use, and OpenBLAS's threads (which ignore LibTorch's setting) to 1: two
// busy-waiting pools on the same cores are far slower than one.
// n <= 0 means all hardware threads. Returns the count applied. n above
// max_threads() throws whvi::Error before any thread is created.
// It also flushes subnormal floats to zero (the x86 FTZ and DAZ bits) on the
// calling thread and on LibTorch's pool threads; threads created afterwards
// inherit the setting. Arithmetic on subnormals is many times slower on some
// CPUs, and training can drive weights there (docs/reference.md, "Subnormal
// numbers").
int set_threads(int n);
int threads();
bool denormals_flushed();  // whether set_threads could switch the flushing on
int hardware_threads();  // std::thread::hardware_concurrency(), at least 1
int max_threads();       // 4 x hardware_threads(), at most 1024

// The memory this process can take, in bytes: physical memory, the cgroup
// limit or the address space left under ulimit -v (RLIMIT_AS), whichever is
// lowest; 0 if unknown.
unsigned long long usable_memory_bytes();

// The process's peak resident memory so far, in MiB (getrusage).
double peak_rss_mib();

// The BLAS gemm LibTorch links (Fortran interface: column-major, arguments by
// pointer), looked up at run time; null where the symbol is absent.
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                         const int*, const float*, const int*, const float*, float*, const int*);
using DgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                         const int*, const double*, const int*, const double*, double*, const int*);
SgemmFn blas_sgemm();
DgemmFn blas_dgemm();

std::string cpu_model();
std::string blas_info();  // "OpenBLAS <config>" or a warning about reference BLAS
bool cuda_available();    // LibTorch sees a CUDA device
std::string cuda_device_name();
std::string torch_version();

}  // namespace whvi
