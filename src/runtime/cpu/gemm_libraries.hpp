// The BLAS libraries gemm_f32 may call besides LIBXSMM, each loaded with dlopen on first use
// (RTLD_LOCAL: OpenBLAS and BLIS both define cblas_sgemm, and neither may see the other's) and
// told to run single-threaded, since onefit's pool already splits the product.
#pragma once
#include "runtime/cpu/gemm.hpp"

namespace onefit::cpu {

// cblas_sgemm's signature (CBLAS enums as ints: RowMajor 101, NoTrans 111, Trans 112).
using CblasSgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                            int lda, const float* b, int ldb, float beta, float* c, int ldc);

// The library's cblas_sgemm; nullptr when it is not installed (or is LIBXSMM).
CblasSgemm cblas_sgemm_of(GemmLibrary library);

}  // namespace onefit::cpu
