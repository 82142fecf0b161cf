// Activation math, forward and backward, over a batch of rows (softmax is row-wise, the rest
// elementwise). Templated on the scalar so tests run the same code in double precision.
// The switch is per call, never per element.
#pragma once
#include <cmath>
#include <cstdint>

#include "nn/fastmath.hpp"
#include "onefit/layers.hpp"

namespace onefit::nn {

inline constexpr double kLeakyReluSlope = 0.2;  // keras.activations.leaky_relu default
inline constexpr double kEluAlpha = 1.0;

template <class T>
inline T sigmoid(T x) {
    return T(1) / (T(1) + exp_fast(-x));
}

// out[r, :] = act(z[r, :]) for rows x width. out may alias z except for gelu/swish backward needs.
template <class T>
void activation_forward(Activation act, const T* z, T* out, int64_t rows, int64_t width) {
    const int64_t n = rows * width;
    switch (act) {
        case Activation::linear:
            if (out != z) for (int64_t i = 0; i < n; ++i) out[i] = z[i];
            return;
        case Activation::relu:
            for (int64_t i = 0; i < n; ++i) out[i] = z[i] > T(0) ? z[i] : T(0);
            return;
        case Activation::leaky_relu:
            for (int64_t i = 0; i < n; ++i) out[i] = z[i] > T(0) ? z[i] : T(kLeakyReluSlope) * z[i];
            return;
        case Activation::elu:
            for (int64_t i = 0; i < n; ++i) out[i] = z[i] > T(0) ? z[i] : T(kEluAlpha) * (exp_fast(z[i]) - T(1));
            return;
        case Activation::sigmoid:
            for (int64_t i = 0; i < n; ++i) out[i] = sigmoid(z[i]);
            return;
        case Activation::tanh:
            for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(z[i]);
            return;
        case Activation::gelu:  // exact: x * Phi(x)
            for (int64_t i = 0; i < n; ++i) out[i] = T(0.5) * z[i] * (T(1) + std::erf(z[i] * T(M_SQRT1_2)));
            return;
        case Activation::swish:
            for (int64_t i = 0; i < n; ++i) out[i] = z[i] * sigmoid(z[i]);
            return;
        case Activation::softmax: {
            // Three flat passes (shift by the row max, exp over the whole batch, normalise) so the
            // exp vectorises even when rows are 3 wide.
            for (int64_t r = 0; r < rows; ++r) {
                const T* zr = z + r * width;
                T m = zr[0];
                for (int64_t j = 1; j < width; ++j) m = zr[j] > m ? zr[j] : m;
                for (int64_t j = 0; j < width; ++j) out[r * width + j] = zr[j] - m;
            }
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) out[i] = exp_fast(out[i]);
            for (int64_t r = 0; r < rows; ++r) {
                T* o = out + r * width;
                T s = 0;
                for (int64_t j = 0; j < width; ++j) s += o[j];
                const T inv = T(1) / s;
                for (int64_t j = 0; j < width; ++j) o[j] *= inv;
            }
            return;
        }
    }
}

// grad holds dL/d(out) on entry and dL/dz on return. z is the pre-activation, out = act(z).
template <class T>
void activation_backward(Activation act, const T* z, const T* out, T* grad, int64_t rows, int64_t width) {
    const int64_t n = rows * width;
    switch (act) {
        case Activation::linear:
            return;
        case Activation::relu:
            for (int64_t i = 0; i < n; ++i) grad[i] = z[i] > T(0) ? grad[i] : T(0);
            return;
        case Activation::leaky_relu:
            for (int64_t i = 0; i < n; ++i) grad[i] = z[i] > T(0) ? grad[i] : T(kLeakyReluSlope) * grad[i];
            return;
        case Activation::elu:  // d/dz alpha (e^z - 1) = out + alpha
            for (int64_t i = 0; i < n; ++i) grad[i] = z[i] > T(0) ? grad[i] : grad[i] * (out[i] + T(kEluAlpha));
            return;
        case Activation::sigmoid:
            for (int64_t i = 0; i < n; ++i) grad[i] *= out[i] * (T(1) - out[i]);
            return;
        case Activation::tanh:
            for (int64_t i = 0; i < n; ++i) grad[i] *= T(1) - out[i] * out[i];
            return;
        case Activation::gelu:  // Phi(x) + x phi(x)
            for (int64_t i = 0; i < n; ++i) {
                const T x = z[i];
                const T cdf = T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
                const T pdf = std::exp(T(-0.5) * x * x) * T(0.3989422804014327);
                grad[i] *= cdf + x * pdf;
            }
            return;
        case Activation::swish:  // s + x s (1 - s)
            for (int64_t i = 0; i < n; ++i) {
                const T s = sigmoid(z[i]);
                grad[i] *= s + z[i] * s * (T(1) - s);
            }
            return;
        case Activation::softmax:  // dz = p * (g - sum(g * p))
            for (int64_t r = 0; r < rows; ++r) {
                const T* p = out + r * width;
                T* g = grad + r * width;
                T dot = 0;
                for (int64_t j = 0; j < width; ++j) dot += g[j] * p[j];
                for (int64_t j = 0; j < width; ++j) g[j] = p[j] * (g[j] - dot);
            }
            return;
    }
}

}  // namespace onefit::nn
