// Single-precision matrix product for the dense layers too large for onefit's own small kernels.
#pragma once
#include <cstdint>

namespace onefit::cpu {

// Row-major C[m, n] = op(A)[m, k] op(B)[k, n] + beta C, where op(A) = A^T when trans_a (A is then
// stored k x m) and op(B) = B^T when trans_b (B stored n x k). lda, ldb, ldc are row strides.
// LIBXSMM JIT kernels, split over ThreadPool::instance() when the product is large enough.
// Allocates nothing after the first call with a given shape; results are bitwise reproducible
// for a given shape and thread count.
// Products below this many flops run on the calling thread: ~9 us of work on one core, where
// handing half to a worker (~0.4 us when it is spinning) clearly pays.
inline constexpr double kGemmParallelFlops = 1 << 21;

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace onefit::cpu
