// BatchNormalization(momentum=0.99, epsilon=1e-3, center=True, scale=True), as Keras 3: over the
// last axis (a feature, or an image's channel), y = (x - mean) / sqrt(var + epsilon) * gamma + beta.
// Training uses the batch's mean and (biased) variance over every other axis and moves the moving
// statistics towards them (moving = moving * momentum + batch * (1 - momentum)); evaluate and
// predict use the moving statistics. Weights in Keras's order: gamma, beta (trainable), then
// moving_mean and moving_variance (state, saved with the model).
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_BATCH_NORMALIZATION_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_BATCH_NORMALIZATION_HPP
#undef ONEFIT_NN_OPS_BATCH_NORMALIZATION_HPP
#else
#define ONEFIT_NN_OPS_BATCH_NORMALIZATION_HPP
#endif
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/ops/op.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

struct BatchNormalizationOp {
    static constexpr const char* type = "batch_normalization";
    static constexpr const char* keras_class = "BatchNormalization";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        const int64_t c = in.back();
        LayerSpec s;
        s.output = in;
        if (l.scale) s.params.push_back({"gamma", {c}, "ones", c, c});
        if (l.center) s.params.push_back({"beta", {c}, "zeros", c, c});
        s.params.push_back({"moving_mean", {c}, "zeros", c, c, false});
        s.params.push_back({"moving_variance", {c}, "ones", c, c, false});
        s.macs_per_sample = 2 * shape_elements(in);
        s.op_scratch = 4 * c;  // the batch's mean and 1 / std, then backward's per-channel sums
        s.rows_independent = false;
        return s;
    }
    static std::vector<LayerAttribute> attributes() {
        return {{"momentum", &Layer::momentum}, {"epsilon", &Layer::epsilon}, {"center", &Layer::center},
                {"scale", &Layer::scale}};
    }
    static void check(const Layer& l) {
        if (!(l.momentum >= 0.0f && l.momentum <= 1.0f))
            throw Error("momentum must be in [0, 1], got " + std::to_string(l.momentum));
        if (!(l.epsilon > 0.0f && std::isfinite(l.epsilon)))
            throw Error("epsilon must be positive, got " + std::to_string(l.epsilon));
    }

    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        T* mean = a.op_scratch;
        T* inv_std = a.op_scratch + c;
        T* moving_mean = a.state;
        T* moving_variance = a.state + c;
        if (a.training) {
            // Two passes, summed in double: a channel of a convnet's batch is ~10^4 values.
            for (int64_t k = 0; k < c; ++k) {
                double sum = 0;
                for (int64_t g = 0; g < groups; ++g) sum += double(a.in[g * c + k]);
                const double m = sum / double(groups);
                double squares = 0;
                for (int64_t g = 0; g < groups; ++g) {
                    const double d = double(a.in[g * c + k]) - m;
                    squares += d * d;
                }
                const T variance = T(squares / double(groups));
                mean[k] = T(m);
                inv_std[k] = T(1) / std::sqrt(variance + T(a.layer.epsilon));
                const T momentum = T(a.layer.momentum);
                moving_mean[k] = moving_mean[k] * momentum + mean[k] * (T(1) - momentum);
                moving_variance[k] = moving_variance[k] * momentum + variance * (T(1) - momentum);
            }
        } else {
            for (int64_t k = 0; k < c; ++k)
                mean[k] = moving_mean[k], inv_std[k] = T(1) / std::sqrt(moving_variance[k] + T(a.layer.epsilon));
        }
        const T* gamma = a.layer.scale ? a.params : nullptr;
        const T* beta = a.layer.center ? a.params + (a.layer.scale ? c : 0) : nullptr;
        for (int64_t g = 0; g < groups; ++g)
            for (int64_t k = 0; k < c; ++k) {
                const T xhat = (a.in[g * c + k] - mean[k]) * inv_std[k];
                a.out[g * c + k] = xhat * (gamma ? gamma[k] : T(1)) + (beta ? beta[k] : T(0));
            }
    }

    // Through the batch's statistics: dx = gamma / std * (dy - mean(dy) - xhat * mean(dy * xhat)).
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        const T* mean = a.op_scratch;
        const T* inv_std = a.op_scratch + c;
        T* sum_dy = a.op_scratch + 2 * c;
        T* sum_dy_xhat = a.op_scratch + 3 * c;
        for (int64_t k = 0; k < c; ++k) sum_dy[k] = 0, sum_dy_xhat[k] = 0;
        for (int64_t g = 0; g < groups; ++g)
            for (int64_t k = 0; k < c; ++k) {
                const T dy = a.dout[g * c + k];
                sum_dy[k] += dy;
                sum_dy_xhat[k] += dy * (a.in[g * c + k] - mean[k]) * inv_std[k];
            }
        const T* gamma = a.layer.scale ? a.params : nullptr;
        T* dbeta = a.layer.center ? a.grads + (a.layer.scale ? c : 0) : nullptr;
        for (int64_t k = 0; k < c; ++k) {
            if (gamma) a.grads[k] = sum_dy_xhat[k];
            if (dbeta) dbeta[k] = sum_dy[k];
        }
        if (!a.din) return;
        const T n = T(groups);
        for (int64_t g = 0; g < groups; ++g)
            for (int64_t k = 0; k < c; ++k) {
                const T xhat = (a.in[g * c + k] - mean[k]) * inv_std[k];
                const T scale = (gamma ? gamma[k] : T(1)) * inv_std[k];
                a.din[g * c + k] = scale * (a.dout[g * c + k] - sum_dy[k] / n - xhat * sum_dy_xhat[k] / n);
            }
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_BATCH_NORMALIZATION_HPP
