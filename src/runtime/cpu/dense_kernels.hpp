// Dense layer kernels on the CPU: plain functions over plain buffers, shapes in the names.
// Small products run in our loops (the innermost loop over the longer, contiguous side);
// large ones call BLAS (OpenBLAS), chosen per layer at lowering (DenseOp::use_blas).
// Templated so the gradient tests run the very same code in double precision.
#pragma once
#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace onefit::cpu {

// Lanes of one 512-bit register: partial sums in this many independent lanes let the
// compiler vectorise a dot product without -ffast-math, in a fixed (deterministic) order.
template <class T>
inline constexpr int kLanes = 64 / sizeof(T);

// sum_i a[i] b[i]
template <class T>
inline T dot(const T* __restrict a, const T* __restrict b, int64_t n) {
    T acc[kLanes<T>] = {};
    int64_t i = 0;
    for (; i + kLanes<T> <= n; i += kLanes<T>)
        for (int l = 0; l < kLanes<T>; ++l) acc[l] += a[i + l] * b[i + l];
    for (int w = kLanes<T> / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
    T s = acc[0];
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

// y[i] += alpha x[i]
template <class T>
inline void axpy(T* __restrict y, T alpha, const T* __restrict x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

template <class T>
inline void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                 int64_t ldb, T beta, T* c, int64_t ldc) {
    const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
    if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, a, int(lda), b, int(ldb), beta, c, int(ldc));
    else
        cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// z[rows, out] = x[rows, in] W + b.   W is (in, out), or (out, in) when out_major.
template <class T>
void dense_forward(T* __restrict z, const T* __restrict x, const T* __restrict w, const T* __restrict b,
                   int64_t rows, int64_t in, int64_t out, bool out_major, bool use_blas) {
    if (use_blas) {
        for (int64_t r = 0; r < rows; ++r)
            if (b) std::memcpy(z + r * out, b, sizeof(T) * out);
        gemm<T>(false, out_major, rows, out, in, x, in, w, out_major ? in : out, b ? T(1) : T(0), z, out);
        return;
    }
    for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * in;
        T* zr = z + r * out;
        if (out_major) {
            for (int64_t j = 0; j < out; ++j) zr[j] = (b ? b[j] : T(0)) + dot(xr, w + j * in, in);
        } else {
            for (int64_t j = 0; j < out; ++j) zr[j] = b ? b[j] : T(0);
            for (int64_t k = 0; k < in; ++k) axpy(zr, xr[k], w + k * out, out);
        }
    }
}

// Given dz = dL/dz: dw = x^T dz, db = sum over rows of dz, dx = dz W^T (skipped when dx is null,
// as for the first layer). All three are overwritten.
template <class T>
void dense_backward(T* __restrict dw, T* __restrict db, T* __restrict dx, const T* __restrict dz,
                    const T* __restrict x, const T* __restrict w, int64_t rows, int64_t in, int64_t out,
                    bool out_major, bool use_blas) {
    if (db) {
        std::memset(db, 0, sizeof(T) * out);
        for (int64_t r = 0; r < rows; ++r) axpy(db, T(1), dz + r * out, out);
    }
    if (use_blas) {
        if (out_major)
            gemm<T>(true, false, out, in, rows, dz, out, x, in, T(0), dw, in);  // dw(out,in) = dz^T x
        else
            gemm<T>(true, false, in, out, rows, x, in, dz, out, T(0), dw, out);  // dw(in,out) = x^T dz
        if (dx) gemm<T>(false, !out_major, rows, in, out, dz, out, w, out_major ? in : out, T(0), dx, in);
        return;
    }
    std::memset(dw, 0, sizeof(T) * in * out);
    for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * in;
        const T* dzr = dz + r * out;
        T* dxr = dx ? dx + r * in : nullptr;
        if (out_major) {
            if (dxr) std::memset(dxr, 0, sizeof(T) * in);
            for (int64_t j = 0; j < out; ++j) {
                axpy(dw + j * in, dzr[j], xr, in);
                if (dxr) axpy(dxr, dzr[j], w + j * in, in);
            }
        } else {
            for (int64_t k = 0; k < in; ++k) {
                axpy(dw + k * out, xr[k], dzr, out);
                if (dxr) dxr[k] = dot(w + k * out, dzr, out);
            }
        }
    }
}

}  // namespace onefit::cpu
