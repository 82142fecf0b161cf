// Activation math, forward and backward. The per-element formulas (ONEFIT_HD, shared with the
// CUDA kernels) take the activation as a template argument; the batch functions below switch
// once per call, never per element, so each loop vectorises. Softmax is row-wise.
// Templated on the scalar so tests run the same code in double precision.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_ACTIVATION_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_ACTIVATION_HPP
#undef ONEFIT_NN_ACTIVATION_HPP
#else
#define ONEFIT_NN_ACTIVATION_HPP
#endif
#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "nn/fastmath.hpp"
#include "nn/vector_loops.hpp"
#include "onefit/layers.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

inline constexpr double kLeakyReluSlope = 0.2;  // keras.activations.leaky_relu default
inline constexpr double kEluAlpha = 1.0;

template <class T>
ONEFIT_HD T sigmoid(T x) {
    return T(1) / (T(1) + exp_fast(-x));
}

// act(z) for every elementwise activation (softmax is handled per row).
template <Activation A, class T>
ONEFIT_HD T activate(T z) {
    if constexpr (A == Activation::relu) return z > T(0) ? z : T(0);
    else if constexpr (A == Activation::leaky_relu) return z > T(0) ? z : T(kLeakyReluSlope) * z;
    else if constexpr (A == Activation::elu) return z > T(0) ? z : T(kEluAlpha) * (exp_fast(z) - T(1));
    else if constexpr (A == Activation::sigmoid) return sigmoid(z);
    else if constexpr (A == Activation::tanh) return std::tanh(z);
    else if constexpr (A == Activation::gelu) return T(0.5) * z * (T(1) + std::erf(z * T(M_SQRT1_2)));  // exact
    else if constexpr (A == Activation::swish) return z * sigmoid(z);
    else return z;  // linear
}

// d act / dz at z, given out = act(z).
template <Activation A, class T>
ONEFIT_HD T activation_slope(T z, T out) {
    if constexpr (A == Activation::relu) return z > T(0) ? T(1) : T(0);
    else if constexpr (A == Activation::leaky_relu) return z > T(0) ? T(1) : T(kLeakyReluSlope);
    else if constexpr (A == Activation::elu) return z > T(0) ? T(1) : out + T(kEluAlpha);  // alpha e^z
    else if constexpr (A == Activation::sigmoid) return out * (T(1) - out);
    else if constexpr (A == Activation::tanh) return T(1) - out * out;
    else if constexpr (A == Activation::gelu)  // Phi(z) + z phi(z)
        return T(0.5) * (T(1) + std::erf(z * T(M_SQRT1_2))) + z * std::exp(T(-0.5) * z * z) * T(0.3989422804014327);
    else if constexpr (A == Activation::swish) {
        const T s = sigmoid(z);
        return s + z * s * (T(1) - s);
    } else return T(1);  // linear
}

// Calls f.template operator()<A>() with the activation as a compile-time constant.
// Host and device code both call this with their own lambdas.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class F>
ONEFIT_HD void with_activation(Activation a, F&& f) {
    switch (a) {
        case Activation::linear: f.template operator()<Activation::linear>(); return;
        case Activation::relu: f.template operator()<Activation::relu>(); return;
        case Activation::leaky_relu: f.template operator()<Activation::leaky_relu>(); return;
        case Activation::elu: f.template operator()<Activation::elu>(); return;
        case Activation::sigmoid: f.template operator()<Activation::sigmoid>(); return;
        case Activation::tanh: f.template operator()<Activation::tanh>(); return;
        case Activation::softmax: f.template operator()<Activation::softmax>(); return;
        case Activation::gelu: f.template operator()<Activation::gelu>(); return;
        case Activation::swish: f.template operator()<Activation::swish>(); return;
    }
}

// One softmax row: out = e^(z - max z) / sum, shifted by the row's max so exp cannot overflow.
// The row's elements are kStride apart (stacked members: one row per lane, runtime/cpu/stacked_fit.hpp).
template <class T, int64_t kStride = 1>
ONEFIT_HD void softmax_row(const T* z, T* out, int64_t width) {
    T m = z[0];
    for (int64_t j = 1; j < width; ++j) m = z[j * kStride] > m ? z[j * kStride] : m;
    T s = 0;
    for (int64_t j = 0; j < width; ++j) s += (out[j * kStride] = exp_fast(z[j * kStride] - m));
    const T inv = T(1) / s;
    for (int64_t j = 0; j < width; ++j) out[j * kStride] *= inv;
}

// One softmax row's gradient, in place: g holds dL/dp on entry and dL/dz = p (g - sum(g p)) on
// return. write false leaves g unchanged (a vector loop's recomputed rows) with the same
// branch-free body.
template <class T, int64_t kStride = 1>
ONEFIT_HD void softmax_backward_row(const T* p, T* g, int64_t width, bool write = true) {
    T dot = 0;
    for (int64_t j = 0; j < width; ++j) dot += g[j * kStride] * p[j * kStride];
    for (int64_t j = 0; j < width; ++j) g[j * kStride] = write ? p[j * kStride] * (g[j * kStride] - dot) : g[j * kStride];
}

// out[r, :] = act(z[r, :]) for rows x width. For linear, out == z is allowed (nothing to do);
// otherwise out and z must not overlap (in_whole_vectors recomputes a few elements).
template <class T>
void activation_forward(Activation act, const T* z, T* out, int64_t rows, int64_t width) {
    if (act == Activation::softmax) {
        with_small_width(width, [&]<int W>() {
            const int64_t w = W ? W : width;
            in_whole_vectors(rows, [&](int64_t first, auto count, int64_t) {
                const T* zb = z + first * w;
                T* ob = out + first * w;
#pragma omp simd
                for (int64_t r = 0; r < count; ++r) softmax_row(zb + r * w, ob + r * w, w);
            });
        });
        return;
    }
    if (act == Activation::linear && out == z) return;
    with_activation(act, [&]<Activation A>() {
        in_whole_vectors(rows * width, [&](int64_t first, auto count, int64_t) {
            const T* zb = z + first;
            T* ob = out + first;
#pragma omp simd
            for (int64_t i = 0; i < count; ++i) ob[i] = activate<A>(zb[i]);
        });
    });
}

// grad holds dL/d(out) on entry and dL/dz on return. z is the pre-activation, out = act(z).
template <class T>
void activation_backward(Activation act, const T* z, const T* out, T* grad, int64_t rows, int64_t width) {
    if (act == Activation::linear) return;
    if (act == Activation::softmax) {  // dz = p * (g - sum(g * p)) per row
        with_small_width(width, [&]<int W>() {
            const int64_t w = W ? W : width;
            in_whole_vectors(rows, [&](int64_t first, auto count, int64_t skip) {
                const T* pb = out + first * w;
                T* gb = grad + first * w;
#pragma omp simd
                for (int64_t r = 0; r < count; ++r) softmax_backward_row(pb + r * w, gb + r * w, w, r >= skip);
            });
        });
        return;
    }
    with_activation(act, [&]<Activation A>() {
        in_whole_vectors(rows * width, [&](int64_t first, auto count, int64_t skip) {
            const T* zb = z + first;
            const T* ob = out + first;
            T* gb = grad + first;
#pragma omp simd
            for (int64_t i = 0; i < count; ++i) gb[i] = i >= skip ? gb[i] * activation_slope<A>(zb[i], ob[i]) : gb[i];
        });
    });
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_ACTIVATION_HPP
