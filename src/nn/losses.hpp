// Loss math, value and gradient in one pass. Keras's definitions (include/onefit/losses.hpp).
// Per-element and per-row formulas are ONEFIT_HD (shared with the CUDA kernels); the batch
// function below dispatches once per call. Templated so tests run it in double precision.
//
// Labels y have y_width columns: the prediction width for elementwise losses and one-hot
// labels, or 1 for class indices (sparse) and for the broadcast case tf.keras 2 allows
// (labels (N,) expanded to (N,1) against (N,K) predictions).
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_LOSSES_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_LOSSES_HPP
#undef ONEFIT_NN_LOSSES_HPP
#else
#define ONEFIT_NN_LOSSES_HPP
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/hd.hpp"
#include "nn/fastmath.hpp"
#include "nn/vector_loops.hpp"
#include "onefit/losses.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

inline constexpr double kClipEpsilon = 1e-7;  // keras.backend.epsilon()

template <class T>
struct ValueAndGrad {
    T value, grad;
};

// Elementwise loss f(p, y) and df/dp. The kind is a template argument so the batch loop has no
// switch per element and vectorises.
template <LossKind kKind, class T>
ONEFIT_HD ValueAndGrad<T> element_loss(T p, T y, T delta) {
    const T x = p - y;
    if constexpr (kKind == LossKind::log_cosh) {  // |x| + log1p(e^-2|x|) - log 2, gradient tanh(x)
        const T ax = std::fabs(x);
        const T e = exp_fast(T(-2) * ax);
        const T t = (T(1) - e) / (T(1) + e);
        return {ax + log1p_unit_fast(e) - T(M_LN2), x < T(0) ? -t : t};
    } else if constexpr (kKind == LossKind::mean_squared_error) {
        return {x * x, T(2) * x};
    } else if constexpr (kKind == LossKind::mean_absolute_error) {
        return {std::fabs(x), x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0))};
    } else if constexpr (kKind == LossKind::huber) {
        const T ax = std::fabs(x);
        const bool quadratic = ax <= delta;
        return {quadratic ? T(0.5) * x * x : delta * ax - T(0.5) * delta * delta,
                quadratic ? x : (x < T(0) ? -delta : delta)};
    } else {  // binary_crossentropy on probabilities, clipped to [eps, 1 - eps] like Keras
        const T eps = T(kClipEpsilon);
        const bool clipped = p < eps || p > T(1) - eps;
        const T pc = p < eps ? eps : (p > T(1) - eps ? T(1) - eps : p);
        return {-(y * std::log(pc) + (T(1) - y) * std::log(T(1) - pc)),
                clipped ? T(0) : (pc - y) / (pc * (T(1) - pc))};
    }
}

// Binary crossentropy from a logit z: max(z,0) - z y + log1p(e^-|z|); gradient sigmoid(z) - y.
template <class T>
ONEFIT_HD ValueAndGrad<T> bce_logit_loss(T z, T y) {
    const T e = exp_fast(-std::fabs(z));
    const T sig = z >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
    return {(z > T(0) ? z : T(0)) - z * y + log1p_unit_fast(e), sig - y};
}

// One row of categorical (sparse: label index) crossentropy. Returns the row's loss; with g,
// writes dL/d(in) * scale.
//   logits: lse(z) sum(y) - y.z, gradient softmax(z) sum(y) - y.
//   probabilities: q = p / sum(p) clipped to [eps, 1 - eps], -sum(y log q), gradient through q.
// z and g are strided by kStride, labels by kYStride (members stacked in lanes,
// runtime/cpu/stacked_fit.hpp).
//   smoothing: categorical labels become y (1 - smoothing) + smoothing / width (Keras's label_smoothing).
template <class T, int64_t kStride = 1, int64_t kYStride = 1>
ONEFIT_HD T crossentropy_row(const T* z, const T* yr, int64_t width, bool sparse, bool logits, T* g, T scale,
                             T smoothing = T(0)) {
    const int64_t label = sparse ? static_cast<int64_t>(yr[0]) : -1;
    const T keep = T(1) - smoothing, spread = smoothing / T(width);
    auto target = [&](int64_t j) { return sparse ? T(j == label) : yr[j * kYStride] * keep + spread; };
    if (logits) {
        T m = z[0];
        for (int64_t j = 1; j < width; ++j) m = z[j * kStride] > m ? z[j * kStride] : m;
        T s = 0, ysum = 0, yz = 0;
        for (int64_t j = 0; j < width; ++j) {
            s += exp_fast(z[j * kStride] - m);
            ysum += target(j);
            yz += target(j) * z[j * kStride];
        }
        if (g) {
            const T inv = T(1) / s;
            for (int64_t j = 0; j < width; ++j) g[j * kStride] = (exp_fast(z[j * kStride] - m) * inv * ysum - target(j)) * scale;
        }
        return (m + std::log(s)) * ysum - yz;
    }
    const T eps = T(kClipEpsilon);
    T s = 0;
    for (int64_t j = 0; j < width; ++j) s += z[j * kStride];
    const T inv = T(1) / s;
    T value = 0, gq_dot_q = 0;
    for (int64_t j = 0; j < width; ++j) {
        const T q = z[j * kStride] * inv;
        const bool clipped = q < eps || q > T(1) - eps;
        const T qc = q < eps ? eps : (q > T(1) - eps ? T(1) - eps : q);
        value -= target(j) * std::log(qc);
        const T gq = clipped ? T(0) : -target(j) / q;  // dL/dq
        if (g) g[j * kStride] = gq;
        gq_dot_q += gq * q;
    }
    if (g)  // dq_k/dp_m = (delta_km - q_k) / s
        for (int64_t j = 0; j < width; ++j) g[j * kStride] = (g[j * kStride] - gq_dot_q) * inv * scale;
    return value;
}

// A binary label moved towards 1/2 (Keras's label_smoothing for binary crossentropy).
template <class T>
ONEFIT_HD T smoothed_binary(T y, T smoothing) {
    return y * (T(1) - smoothing) + T(0.5) * smoothing;
}

// One row of binary crossentropy from logits: the mean over the row, and with g, dL/dz * scale.
// Labels are as wide as the row or one per row (y_width 1). z and g are strided by kStride,
// labels by kYStride.
template <class T, int64_t kStride = 1, int64_t kYStride = 1>
ONEFIT_HD T bce_logit_row(const T* z, const T* yr, int64_t width, int64_t y_width, T* g, T scale, T smoothing = T(0)) {
    const int64_t y_step = y_width == 1 ? 0 : 1;
    const T row_scale = scale / T(width);
    T row = 0;
    for (int64_t j = 0; j < width; ++j) {
        const ValueAndGrad<T> f = bce_logit_loss(z[j * kStride], smoothed_binary(yr[j * y_step * kYStride], smoothing));
        row += f.value;
        if (g) g[j * kStride] = f.grad * row_scale;
    }
    return row / T(width);
}

// Whether the loss compares a row's distribution with its label (crossentropy_row) rather than
// element by element.
ONEFIT_HD bool is_row_loss(LossKind kind) {
    return kind == LossKind::categorical_crossentropy || kind == LossKind::sparse_categorical_crossentropy;
}

// One element of an elementwise loss, its kind chosen at run time (the GPU kernels; the CPU's
// batch function below switches once per batch so its loops vectorise). Both call the same
// formulas. Every kind is listed and there is no default, so a new kind is a compiler warning
// here, never silently another loss; row losses are not elementwise and give NaN.
template <class T>
ONEFIT_HD ValueAndGrad<T> elementwise_loss(const Loss& loss, bool logits, T p, T y) {
    switch (loss.kind) {
        case LossKind::binary_crossentropy:
            return logits ? bce_logit_loss(p, y) : element_loss<LossKind::binary_crossentropy>(p, y, T(0));
        case LossKind::log_cosh: return element_loss<LossKind::log_cosh>(p, y, T(0));
        case LossKind::mean_squared_error: return element_loss<LossKind::mean_squared_error>(p, y, T(0));
        case LossKind::mean_absolute_error: return element_loss<LossKind::mean_absolute_error>(p, y, T(0));
        case LossKind::huber: return element_loss<LossKind::huber>(p, y, T(loss.delta));
        case LossKind::categorical_crossentropy:
        case LossKind::sparse_categorical_crossentropy: break;
    }
    return {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::quiet_NaN()};
}

// Calls f.template operator()<K>() for an elementwise loss applied to outputs (not fused with
// the last activation); returns false for the other losses.
template <class F>
bool with_elementwise_loss(LossKind kind, F&& f) {
    switch (kind) {
        case LossKind::binary_crossentropy: f.template operator()<LossKind::binary_crossentropy>(); return true;
        case LossKind::log_cosh: f.template operator()<LossKind::log_cosh>(); return true;
        case LossKind::mean_squared_error: f.template operator()<LossKind::mean_squared_error>(); return true;
        case LossKind::mean_absolute_error: f.template operator()<LossKind::mean_absolute_error>(); return true;
        case LossKind::huber: f.template operator()<LossKind::huber>(); return true;
        case LossKind::categorical_crossentropy:
        case LossKind::sparse_categorical_crossentropy: break;
    }
    return false;
}

// One sample's loss (an elementwise loss's mean over the row) with, when g is given,
// dL/d(in) * scale: the per-row form of loss_forward_backward, for kernels that give each
// thread a row. Labels of an elementwise loss are as wide as the row (packed so).
template <class T>
ONEFIT_HD T sample_loss(const Loss& loss, bool logits, const T* in, const T* yr, int64_t width, T* g, T scale) {
    if (is_row_loss(loss.kind))
        return crossentropy_row(in, yr, width, loss.kind == LossKind::sparse_categorical_crossentropy, logits, g,
                                scale);
    const T row_scale = scale / T(width);
    T sum = 0;
    for (int64_t j = 0; j < width; ++j) {
        const ValueAndGrad<T> f = elementwise_loss(loss, logits, in[j], yr[j]);
        sum += f.value;
        if (g) g[j] = f.grad * row_scale;
    }
    return sum / T(width);
}

// Sum over rows of the per-sample loss (the mean over the last axis), gradient * scale / width.
// Labels are as wide as the predictions, or one per row (y_width 1), broadcast across it as
// tf.keras 2 does.
template <bool kGrad, LossKind kKind, class T>
double elementwise_loss_rows(const T* in, const T* y, int64_t rows, int64_t width, int64_t y_width, T* grad, T scale,
                             T delta, T smoothing = T(0)) {
    if (smoothing != T(0)) {  // binary crossentropy's label_smoothing: a plain loop over the moved labels
        T sum = 0;
        const T row_scale = scale / T(width);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < width; ++j) {
                const T label = smoothed_binary(y[y_width == width ? r * width + j : r], smoothing);
                const ValueAndGrad<T> f = element_loss<kKind>(in[r * width + j], label, delta);
                sum += f.value;
                if constexpr (kGrad) grad[r * width + j] = f.grad * row_scale;
            }
        return static_cast<double>(sum) / static_cast<double>(width);
    }
    const T row_scale = scale / T(width);
    T sum = 0;
    if (y_width == width) {  // one flat loop
        in_whole_vectors(rows * width, [&](int64_t first, auto count, int64_t skip) {
            // Each chunk's values are added in lanes_tree_sum's order (stacked members repeat it).
            T values[kVectorLanes] = {};
#pragma omp simd
            for (int64_t i = 0; i < count; ++i) {
                const ValueAndGrad<T> f = element_loss<kKind>(in[first + i], y[first + i], delta);
                values[i] = i >= skip ? f.value : T(0);
                if constexpr (kGrad) grad[first + i] = f.grad * row_scale;
            }
            sum += lanes_tree_sum(values);
        });
    } else {  // one label per row: the step loop never gets here (packing repeats the labels)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < width; ++j) {
                const ValueAndGrad<T> f = element_loss<kKind>(in[r * width + j], y[r], delta);
                sum += f.value;
                if constexpr (kGrad) grad[r * width + j] = f.grad * row_scale;
            }
    }
    return static_cast<double>(sum) / static_cast<double>(width);
}

// Returns the sum over rows of the per-sample loss. With kGrad, writes dL/d(in) * scale to grad
// (scale = 1 / batch size gives Keras's "sum over batch size" reduction).
//   logits_input: `in` holds logits (from_logits, or a softmax/sigmoid output layer fused with its
//   crossentropy as Keras 2 does), and grad is with respect to the logits.
template <bool kGrad, class T>
double loss_forward_backward(const Loss& loss, bool logits_input, const T* in, const T* y, int64_t rows,
                             int64_t width, int64_t y_width, T* grad, T scale) {
    switch (loss.kind) {
        case LossKind::categorical_crossentropy:
        case LossKind::sparse_categorical_crossentropy: {
            const bool sparse = loss.kind == LossKind::sparse_categorical_crossentropy;
            double total = 0;
            for (int64_t r = 0; r < rows; ++r)
                total += static_cast<double>(crossentropy_row(in + r * width, y + r * y_width, width, sparse,
                                                              logits_input, kGrad ? grad + r * width : nullptr, scale,
                                                              T(loss.label_smoothing)));
            return total;
        }
        case LossKind::binary_crossentropy:
            if (logits_input) {
                double total = 0;
                for (int64_t r = 0; r < rows; ++r)
                    total += static_cast<double>(bce_logit_row(in + r * width, y + r * y_width, width, y_width,
                                                               kGrad ? grad + r * width : nullptr, scale,
                                                               T(loss.label_smoothing)));
                return total;
            }
            return elementwise_loss_rows<kGrad, LossKind::binary_crossentropy>(in, y, rows, width, y_width, grad,
                                                                              scale, T(0), T(loss.label_smoothing));
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
    return 0;
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_LOSSES_HPP
