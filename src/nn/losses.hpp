// Loss math, value and gradient in one pass over a batch. Keras's definitions (see
// include/onefit/losses.hpp); templated so tests run it in double precision.
//
// Labels y have y_width columns: the prediction width for elementwise losses and one-hot
// labels, or 1 for class indices (sparse) and for the broadcast case tf.keras 2 allows
// (labels (N,) expanded to (N,1) against (N,K) predictions).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "nn/fastmath.hpp"
#include "onefit/losses.hpp"

namespace onefit::nn {

inline constexpr double kClipEpsilon = 1e-7;  // keras.backend.epsilon()

// Elementwise loss f(x = p - y) and df/dp; the kind is a template argument so the batch loop
// has no switch per element and vectorises.
template <class T>
struct ValueAndGrad {
    T value, grad;
};

template <LossKind kKind, class T>
inline ValueAndGrad<T> element_loss(T p, T y, T delta) {
    T value, grad;
    const T x = p - y;
    if constexpr (kKind == LossKind::log_cosh) {  // |x| + log1p(e^-2|x|) - log 2, gradient tanh(x)
        const T ax = std::fabs(x);
        const T e = exp_fast(T(-2) * ax);
        value = ax + log1p_unit_fast(e) - T(M_LN2);
        const T t = (T(1) - e) / (T(1) + e);
        grad = x < T(0) ? -t : t;
    } else if constexpr (kKind == LossKind::mean_squared_error) {
        value = x * x;
        grad = T(2) * x;
    } else if constexpr (kKind == LossKind::mean_absolute_error) {
        value = std::fabs(x);
        grad = x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    } else if constexpr (kKind == LossKind::huber) {
        const T ax = std::fabs(x);
        const bool quadratic = ax <= delta;
        value = quadratic ? T(0.5) * x * x : delta * ax - T(0.5) * delta * delta;
        grad = quadratic ? x : (x < T(0) ? -delta : delta);
    } else {  // binary_crossentropy on probabilities, clipped like Keras
        (void)delta;
        const T eps = T(kClipEpsilon);
        const bool clipped = p < eps || p > T(1) - eps;
        const T pc = std::clamp(p, eps, T(1) - eps);
        value = -(y * std::log(pc) + (T(1) - y) * std::log(T(1) - pc));
        grad = clipped ? T(0) : (pc - y) / (pc * (T(1) - pc));
    }
    return {value, grad};
}

// Sum over rows of the per-sample loss (the mean over the last axis), gradient * scale / width.
template <bool kGrad, LossKind kKind, class T>
double elementwise_loss_rows(const T* in, const T* y, int64_t rows, int64_t width, int64_t y_width, T* grad, T scale,
                             T delta) {
    const T row_scale = scale / T(width);
    if (y_width == width) {  // labels as wide as the predictions: one flat, vectorised loop
        T sum = 0;
        const int64_t n = rows * width;
#pragma omp simd reduction(+ : sum)
        for (int64_t i = 0; i < n; ++i) {
            const ValueAndGrad<T> f = element_loss<kKind>(in[i], y[i], delta);
            sum += f.value;
            if constexpr (kGrad) grad[i] = f.grad * row_scale;
        }
        return static_cast<double>(sum) / static_cast<double>(width);
    }
    const int64_t y_step = y_width == 1 ? 0 : 1;  // broadcast one label across the row
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
        T row = 0;
        for (int64_t j = 0; j < width; ++j) {
            const ValueAndGrad<T> f = element_loss<kKind>(in[r * width + j], y[r * y_width + j * y_step], delta);
            row += f.value;
            if constexpr (kGrad) grad[r * width + j] = f.grad * row_scale;
        }
        total += static_cast<double>(row / T(width));
    }
    return total;
}

// Returns the sum over rows of the per-sample loss. With kGrad, writes dL/d(in) * scale to grad
// (scale = 1 / batch size gives Keras's "sum over batch size" reduction).
//   logits_input: `in` holds logits (from_logits, or a softmax/sigmoid output layer fused with its
//   crossentropy as Keras 2 does), and grad is with respect to the logits.
template <bool kGrad, class T>
double loss_forward_backward(const Loss& loss, bool logits_input, const T* in, const T* y, int64_t rows,
                             int64_t width, int64_t y_width, T* grad, T scale) {
    double total = 0;
    const int64_t y_step = y_width == 1 ? 0 : 1;
    switch (loss.kind) {
        case LossKind::categorical_crossentropy:
        case LossKind::sparse_categorical_crossentropy: {
            const bool sparse = loss.kind == LossKind::sparse_categorical_crossentropy;
            for (int64_t r = 0; r < rows; ++r) {
                const T* z = in + r * width;
                const T* yr = y + r * y_width;
                T* g = kGrad ? grad + r * width : nullptr;
                const int64_t label = sparse ? static_cast<int64_t>(yr[0]) : -1;
                if (logits_input) {  // lse(z) * sum(y) - y.z ; grad softmax(z) * sum(y) - y
                    T m = z[0];
                    for (int64_t j = 1; j < width; ++j) m = std::max(m, z[j]);
                    T s = 0;
                    for (int64_t j = 0; j < width; ++j) s += exp_fast(z[j] - m);
                    const T lse = m + std::log(s);
                    T ysum = 0, yz = 0;
                    if (sparse) {
                        ysum = 1;
                        yz = z[label];
                    } else {
                        for (int64_t j = 0; j < width; ++j) ysum += yr[j], yz += yr[j] * z[j];
                    }
                    total += static_cast<double>(lse * ysum - yz);
                    if constexpr (kGrad) {
                        const T inv = T(1) / s;
                        for (int64_t j = 0; j < width; ++j) {
                            const T yj = sparse ? T(j == label) : yr[j];
                            g[j] = (exp_fast(z[j] - m) * inv * ysum - yj) * scale;
                        }
                    }
                } else {  // q = p / sum(p), clipped to [eps, 1-eps]; -sum(y log q)
                    const T eps = T(kClipEpsilon);
                    T s = 0;
                    for (int64_t j = 0; j < width; ++j) s += z[j];
                    const T inv = T(1) / s;
                    T value = 0, gq_dot_q = 0;
                    for (int64_t j = 0; j < width; ++j) {
                        const T yj = sparse ? T(j == label) : yr[j];
                        const T q = z[j] * inv;
                        const T qc = std::clamp(q, eps, T(1) - eps);
                        value -= yj * std::log(qc);
                        const T gq = (q < eps || q > T(1) - eps) ? T(0) : -yj / q;
                        if constexpr (kGrad) g[j] = gq;
                        gq_dot_q += gq * q;
                    }
                    total += static_cast<double>(value);
                    if constexpr (kGrad)  // dq_k/dp_m = (delta_km - q_k) / s
                        for (int64_t j = 0; j < width; ++j) g[j] = (g[j] - gq_dot_q) * inv * scale;
                }
            }
            return total;
        }
        case LossKind::binary_crossentropy:
            if (logits_input) {  // max(z,0) - z y + log1p(e^-|z|); grad sigmoid(z) - y
                const T row_scale = scale / T(width);
                for (int64_t r = 0; r < rows; ++r) {
                    T row = 0;
                    for (int64_t j = 0; j < width; ++j) {
                        const T z = in[r * width + j], yv = y[r * y_width + j * y_step];
                        const T e = exp_fast(-std::fabs(z));
                        row += std::max(z, T(0)) - z * yv + log1p_unit_fast(e);
                        if constexpr (kGrad) {
                            const T sig = z >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
                            grad[r * width + j] = (sig - yv) * row_scale;
                        }
                    }
                    total += static_cast<double>(row / T(width));
                }
                return total;
            }
            return elementwise_loss_rows<kGrad, LossKind::binary_crossentropy>(in, y, rows, width, y_width, grad,
                                                                              scale, T(0));
        case LossKind::log_cosh:
            return elementwise_loss_rows<kGrad, LossKind::log_cosh>(in, y, rows, width, y_width, grad, scale, T(0));
        case LossKind::mean_squared_error:
            return elementwise_loss_rows<kGrad, LossKind::mean_squared_error>(in, y, rows, width, y_width, grad, scale,
                                                                             T(0));
        case LossKind::mean_absolute_error:
            return elementwise_loss_rows<kGrad, LossKind::mean_absolute_error>(in, y, rows, width, y_width, grad,
                                                                              scale, T(0));
        case LossKind::huber:
            return elementwise_loss_rows<kGrad, LossKind::huber>(in, y, rows, width, y_width, grad, scale,
                                                                T(loss.delta));
    }
    return total;
}

}  // namespace onefit::nn
