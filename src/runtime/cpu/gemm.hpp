// Single-precision matrix product for the dense layers too large for onefit's own small kernels.
// Which library computes it is measured on each machine (gemm_choice.cpp), never assumed.
#pragma once
#include <cstdint>
#include <string>

namespace onefit::cpu {

// Row-major C[m, n] = op(A)[m, k] op(B)[k, n] + beta C, where op(A) = A^T when trans_a (A is then
// stored k x m) and op(B) = B^T when trans_b (B stored n x k). lda, ldb, ldc are row strides.
// C is cut into blocks of whole columns (or rows) that run as ThreadPool::instance() tasks, each
// a single-threaded call of the chosen library, so no library's own threads fight the pool and
// every element of C is computed by one call over the whole of k: results are bitwise
// reproducible for a given shape and library, whatever the thread count. Allocates nothing after the first
// call with a given shape.
void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Products below this many flops run on the calling thread: ~9 us of work on one core, where
// handing half to a worker (~0.4 us when it is spinning) clearly pays.
inline constexpr double kGemmParallelFlops = 1 << 21;

// The candidates. LIBXSMM (JIT kernels, x86-64 only) is linked in; OpenBLAS and BLIS are loaded
// with dlopen when first needed (a process that never runs a large layer never starts them) and
// are skipped where they are not installed.
enum class GemmLibrary { xsmm, openblas, blis };
inline constexpr int kGemmLibraries = 3;
const char* gemm_library_name(GemmLibrary library);
bool gemm_library_available(GemmLibrary library);
// "OpenBLAS 0.3.21 (Haswell)", "BLIS 0.9.0", "LIBXSMM 1.17": part of the choice's cache key.
std::string gemm_library_version(GemmLibrary library);

// gemm_f32 on a given library (the calibration and the tests; the library must be available).
void gemm_f32_with(GemmLibrary library, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// The products of a step fall in six classes: forward (NN), weight gradient (TN), input
// gradient (NT), each small (below kGemmParallelFlops: one thread) or large (on the pool, when
// there is one: the class is the product's, never the pool's, so the thread count changes no
// library and no result). The library for each class is measured once
// per machine and cached (gemm_choice.cpp). prepare_gemm_choice settles it before a fit's first
// step (it may take ~50 ms the first time on a machine); gemm_f32 only looks it up.
void prepare_gemm_choice();
GemmLibrary gemm_library_for(bool trans_a, bool trans_b, bool large);
// "NN small: xsmm, NN large: openblas, ... (measured on this machine)" (or "set by ONEFIT_GEMM").
std::string gemm_choice_summary();

}  // namespace onefit::cpu
