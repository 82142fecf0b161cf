// Dense layer kernels on the CPU: plain functions over plain buffers, shapes in the names.
// Small products lower to the two primitives of small_kernels.hpp; large ones call gemm_f32
// (LIBXSMM on the thread pool, gemm.cpp), chosen per layer at lowering (DenseOp::use_blas;
// the measurement behind it: bench/gemm_choice).
// Templated so the gradient tests run the very same code in double precision.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_RUNTIME_CPU_DENSE_KERNELS_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_RUNTIME_CPU_DENSE_KERNELS_HPP
#undef ONEFIT_RUNTIME_CPU_DENSE_KERNELS_HPP
#else
#define ONEFIT_RUNTIME_CPU_DENSE_KERNELS_HPP
#endif
#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/cpu/gemm.hpp"
#include "runtime/cpu/small_kernels.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(cpu)

// Row-major C = op(A) op(B) + beta C. float: LIBXSMM on the thread pool (gemm.cpp); double (the
// gradient tests): OpenBLAS.
template <class T>
inline void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                 int64_t ldb, T beta, T* c, int64_t ldc) {
    if constexpr (std::is_same_v<T, float>) {
        gemm_f32(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
    } else {
        const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
        cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), beta, c, int(ldc));
    }
}

// z[rows, out] = x[rows, in] W + b.   W is (in, out), or (out, in) when out_major.
// Given relu_out, the kernel may also write relu(z) there in the same pass; returns whether it did.
template <class T>
bool dense_forward(T* __restrict z, const T* __restrict x, const T* __restrict w, const T* __restrict b,
                   int64_t rows, int64_t in, int64_t out, bool out_major, bool use_blas,
                   T* relu_out = nullptr) {
    if (use_blas) {
        if (b)
            for (int64_t r = 0; r < rows; ++r) std::memcpy(z + r * out, b, sizeof(T) * out);
        gemm<T>(false, out_major, rows, out, in, x, in, w, out_major ? in : out, b ? T(1) : T(0), z, out);
        return false;
    }
    if constexpr (std::is_same_v<T, float>) {
        if (out_major) {
            if (try_register_row_dots(z, out, b, x, in, w, in, rows, out, in)) return false;
        } else if (try_register_matrix_rows(z, out, b, x, in, w, out, rows, in, out, relu_out)) {
            return relu_out != nullptr;
        }
    }
    for (int64_t r = 0; r < rows; ++r) {
        if (out_major)  // z[r, j] = b[j] + x[r, :] . W[j, :]
            row_dots(z + r * out, 1, b, x + r * in, w, in, out, in);
        else  // z[r, :] = b + sum_k x[r, k] W[k, :]
            weighted_row_sum(z + r * out, b, x + r * in, 1, w, out, in, out);
    }
    return false;
}


// Given dz = dL/dz: dw = x^T dz, db = sum over rows of dz, dx = dz W^T (skipped when dx is null,
// as for the first layer). All three are overwritten.
template <class T>
void dense_backward(T* __restrict dw, T* __restrict db, T* __restrict dx, const T* __restrict dz,
                    const T* __restrict x, const T* __restrict w, int64_t rows, int64_t in, int64_t out,
                    bool out_major, bool use_blas) {
    const auto bias_gradient = [&] {  // db = sum_r dz[r, :]
        if (!db) return;
        for (int64_t j = 0; j < out; ++j) db[j] = 0;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < out; ++j) db[j] += dz[r * out + j];
    };
    if (use_blas) {
        bias_gradient();
        if (out_major)
            gemm<T>(true, false, out, in, rows, dz, out, x, in, T(0), dw, in);  // dw(out,in) = dz^T x
        else
            gemm<T>(true, false, in, out, rows, x, in, dz, out, T(0), dw, out);  // dw(in,out) = x^T dz
        if (dx) gemm<T>(false, !out_major, rows, in, out, dz, out, w, out_major ? in : out, T(0), dx, in);
        return;
    }
    bool dw_done = false;
    if constexpr (std::is_same_v<T, float>)
        dw_done = out_major ? try_register_outer_sums(dw, in, dz, out, x, in, rows, out, in, nullptr, db)
                            : try_register_outer_sums(dw, out, x, in, dz, out, rows, in, out, db, nullptr);
    if (!dw_done) bias_gradient();  // the register path summed it in the same pass
    if (out_major) {
        if (!dw_done)
            for (int64_t j = 0; j < out; ++j)  // dW[j, :] = sum_r dz[r, j] x[r, :]
                weighted_row_sum(dw + j * in, static_cast<const T*>(nullptr), dz + j, out, x, in, rows, in);
        bool dx_done = !dx;
        if constexpr (std::is_same_v<T, float>)
            if (!dx_done) dx_done = try_register_matrix_rows(dx, in, nullptr, dz, out, w, in, rows, out, in);
        if (!dx_done)
            for (int64_t r = 0; r < rows; ++r)  // dx[r, :] = sum_j dz[r, j] W[j, :]
                weighted_row_sum(dx + r * in, static_cast<const T*>(nullptr), dz + r * out, 1, w, in, out, in);
    } else {
        if (!dw_done)
            for (int64_t k = 0; k < in; ++k)  // dW[k, :] = sum_r x[r, k] dz[r, :]
                weighted_row_sum(dw + k * out, static_cast<const T*>(nullptr), x + k, in, dz, out, rows, out);
        if (dx)
            for (int64_t r = 0; r < rows; ++r)  // dx[r, k] = dz[r, :] . W[k, :]
                row_dots(dx + r * in, 1, static_cast<const T*>(nullptr), dz + r * out, w, out, in, out);
    }
}

ONEFIT_SIMD_END(cpu)
#endif  // ONEFIT_RUNTIME_CPU_DENSE_KERNELS_HPP
