// LayerNormalization(axis=-1, epsilon=1e-3, center=True, scale=True), as Keras 3: each sample's
// last axis (a feature vector, or each position's channels) normalised by its own mean and
// (biased) variance, y = (x - mean) / sqrt(var + epsilon) * gamma + beta. Unlike
// BatchNormalization, training and inference compute the same thing and samples are independent.
// Weights in Keras's order: gamma, beta.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_LAYER_NORMALIZATION_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_LAYER_NORMALIZATION_HPP
#undef ONEFIT_NN_OPS_LAYER_NORMALIZATION_HPP
#else
#define ONEFIT_NN_OPS_LAYER_NORMALIZATION_HPP
#endif
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "nn/ops/op.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

struct LayerNormalizationOp {
    static constexpr const char* type = "layer_normalization";
    static constexpr const char* keras_class = "LayerNormalization";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        if (l.axis != -1 && l.axis != static_cast<int64_t>(in.size()))
            throw Error("axis " + std::to_string(l.axis) + " is not supported: onefit normalises the last axis (axis=-1)");
        const int64_t c = in.back();
        LayerSpec s;
        s.output = in;
        if (l.scale) s.params.push_back({"gamma", {c}, "ones", c, c});
        if (l.center) s.params.push_back({"beta", {c}, "zeros", c, c});
        s.macs_per_sample = 3 * shape_elements(in);
        s.scratch_per_sample = 2 * (shape_elements(in) / c);  // each group's mean and 1 / std, for backward
        return s;
    }
    static std::vector<LayerAttribute> attributes() {
        return {{"axis", &Layer::axis, -3}, {"epsilon", &Layer::epsilon}, {"center", &Layer::center},
                {"scale", &Layer::scale}};
    }
    static void check(const Layer& l) {
        char got[32];
        std::snprintf(got, sizeof got, "%g", l.epsilon);
        if (!(l.epsilon > 0.0f && std::isfinite(l.epsilon)))
            throw Error(std::string("epsilon must be positive (as a float32), got ") + got);
    }

    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        const T* gamma = a.layer.scale ? a.params : nullptr;
        const T* beta = a.layer.center ? a.params + (a.layer.scale ? c : 0) : nullptr;
        const T epsilon = T(a.layer.epsilon);
        for (int64_t g = 0; g < groups; ++g) {
            const T* __restrict x = a.in + g * c;
            T* __restrict y = a.out + g * c;
            T mean = 0, variance = 0;
            for (int64_t k = 0; k < c; ++k) mean += x[k];
            mean /= T(c);
            for (int64_t k = 0; k < c; ++k) variance += (x[k] - mean) * (x[k] - mean);  // two passes: no cancellation
            const T inv_std = T(1) / std::sqrt(variance / T(c) + epsilon);
            a.scratch[2 * g] = mean, a.scratch[2 * g + 1] = inv_std;
            for (int64_t k = 0; k < c; ++k)
                y[k] = (x[k] - mean) * inv_std * (gamma ? gamma[k] : T(1)) + (beta ? beta[k] : T(0));
        }
    }

    // Per group, with xhat = (x - mean) / std and g = dy * gamma:
    // dx = (g - mean(g) - xhat * mean(g * xhat)) / std; dgamma = sum dy * xhat, dbeta = sum dy.
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        const T* gamma = a.layer.scale ? a.params : nullptr;
        T* dgamma = a.layer.scale ? a.grads : nullptr;
        T* dbeta = a.layer.center ? a.grads + (a.layer.scale ? c : 0) : nullptr;
        for (int64_t k = 0; k < c; ++k) {
            if (dgamma) dgamma[k] = 0;
            if (dbeta) dbeta[k] = 0;
        }
        for (int64_t g = 0; g < groups; ++g) {
            const T* __restrict x = a.in + g * c;
            const T* __restrict dy = a.dout + g * c;
            const T mean = a.scratch[2 * g], inv_std = a.scratch[2 * g + 1];
            T sum_g = 0, sum_g_xhat = 0;
            for (int64_t k = 0; k < c; ++k) {
                const T xhat = (x[k] - mean) * inv_std, gk = dy[k] * (gamma ? gamma[k] : T(1));
                sum_g += gk, sum_g_xhat += gk * xhat;
                if (dgamma) dgamma[k] += dy[k] * xhat;
                if (dbeta) dbeta[k] += dy[k];
            }
            if (!a.din) continue;
            T* __restrict dx = a.din + g * c;
            for (int64_t k = 0; k < c; ++k) {
                const T xhat = (x[k] - mean) * inv_std, gk = dy[k] * (gamma ? gamma[k] : T(1));
                dx[k] = inv_std * (gk - sum_g / T(c) - xhat * sum_g_xhat / T(c));
            }
        }
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_LAYER_NORMALIZATION_HPP
