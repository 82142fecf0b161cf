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
#include <algorithm>
#include <cmath>
#include <cstdio>
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
        s.op_scratch = 5 * c;  // the batch's mean, 1 / std, variance (backward: sums), a block's sums
        s.rows_independent = false;
        return s;
    }
    static std::vector<LayerAttribute> attributes() {
        return {{"momentum", &Layer::momentum}, {"epsilon", &Layer::epsilon}, {"center", &Layer::center},
                {"scale", &Layer::scale}};
    }
    static void check(const Layer& l) {
        char got[32];
        std::snprintf(got, sizeof got, "%g", l.momentum);
        if (!(l.momentum >= 0.0f && l.momentum <= 1.0f)) throw Error(std::string("momentum must be in [0, 1], got ") + got);
        std::snprintf(got, sizeof got, "%g", l.epsilon);
        if (!(l.epsilon > 0.0f && std::isfinite(l.epsilon)))
            throw Error(std::string("epsilon must be positive (as a float32), got ") + got);
    }

    // Per-channel sums of value(g, k) over the groups (every position but the channel), walking
    // memory in order so the loop vectorises over channels; summed in blocks of kBlock groups
    // added into the total, so a float sum over ~10^5 values (a convnet's channel) stays accurate.
    static constexpr int64_t kBlock = 256;
    template <class T, class Value>
    static void channel_sums(int64_t groups, int64_t c, T* __restrict total, T* __restrict block, Value value) {
        for (int64_t k = 0; k < c; ++k) total[k] = 0;
        for (int64_t g0 = 0; g0 < groups; g0 += kBlock) {
            for (int64_t k = 0; k < c; ++k) block[k] = 0;
            for (int64_t g = g0, end = std::min(groups, g0 + kBlock); g < end; ++g)
                for (int64_t k = 0; k < c; ++k) block[k] += value(g, k);
            for (int64_t k = 0; k < c; ++k) total[k] += block[k];
        }
    }

    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        const T* __restrict x = a.in;
        T* mean = a.op_scratch;
        T* inv_std = a.op_scratch + c;
        T* variance = a.op_scratch + 2 * c;  // (backward's sums later)
        T* block = a.op_scratch + 4 * c;
        T* moving_mean = a.state;
        T* moving_variance = a.state + c;
        const T epsilon = T(a.layer.epsilon);
        if (a.training) {  // the batch's mean, then its biased variance (two passes: no cancellation)
            channel_sums(groups, c, mean, block, [&](int64_t g, int64_t k) { return x[g * c + k]; });
            for (int64_t k = 0; k < c; ++k) mean[k] /= T(groups);
            channel_sums(groups, c, variance, block, [&](int64_t g, int64_t k) {
                const T d = x[g * c + k] - mean[k];
                return d * d;
            });
            const T momentum = T(a.layer.momentum);
            for (int64_t k = 0; k < c; ++k) {
                variance[k] /= T(groups);
                inv_std[k] = T(1) / std::sqrt(variance[k] + epsilon);
                moving_mean[k] = moving_mean[k] * momentum + mean[k] * (T(1) - momentum);
                moving_variance[k] = moving_variance[k] * momentum + variance[k] * (T(1) - momentum);
            }
        } else {
            for (int64_t k = 0; k < c; ++k)
                mean[k] = moving_mean[k], inv_std[k] = T(1) / std::sqrt(moving_variance[k] + epsilon);
        }
        const T* gamma = a.layer.scale ? a.params : nullptr;
        const T* beta = a.layer.center ? a.params + (a.layer.scale ? c : 0) : nullptr;
        T* __restrict y = a.out;
        for (int64_t g = 0; g < groups; ++g)
            for (int64_t k = 0; k < c; ++k)
                y[g * c + k] = (x[g * c + k] - mean[k]) * inv_std[k] * (gamma ? gamma[k] : T(1)) + (beta ? beta[k] : T(0));
    }

    // Through the batch's statistics: dx = gamma / std * (dy - mean(dy) - xhat * mean(dy * xhat)).
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        const T* __restrict x = a.in;
        const T* __restrict dy = a.dout;
        const T* mean = a.op_scratch;
        const T* inv_std = a.op_scratch + c;
        T* sum_dy = a.op_scratch + 2 * c;
        T* sum_dy_xhat = a.op_scratch + 3 * c;
        T* block = a.op_scratch + 4 * c;
        channel_sums(groups, c, sum_dy, block, [&](int64_t g, int64_t k) { return dy[g * c + k]; });
        channel_sums(groups, c, sum_dy_xhat, block,
                     [&](int64_t g, int64_t k) { return dy[g * c + k] * (x[g * c + k] - mean[k]) * inv_std[k]; });
        const T* gamma = a.layer.scale ? a.params : nullptr;
        T* dbeta = a.layer.center ? a.grads + (a.layer.scale ? c : 0) : nullptr;
        for (int64_t k = 0; k < c; ++k) {
            if (gamma) a.grads[k] = sum_dy_xhat[k];
            if (dbeta) dbeta[k] = sum_dy[k];
        }
        if (!a.din) return;
        const T n = T(groups);
        T* __restrict dx = a.din;
        for (int64_t g = 0; g < groups; ++g)
            for (int64_t k = 0; k < c; ++k) {
                const T xhat = (x[g * c + k] - mean[k]) * inv_std[k];
                dx[g * c + k] = (gamma ? gamma[k] : T(1)) * inv_std[k] *
                                (dy[g * c + k] - sum_dy[k] / n - xhat * sum_dy_xhat[k] / n);
            }
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_BATCH_NORMALIZATION_HPP
