// The activation layers: Activation(activation), ReLU(max_value, negative_slope, threshold),
// LeakyReLU(negative_slope=0.3) and Softmax(axis=-1), as Keras 3's. Each maps every value (Softmax:
// each row of the last axis) to the same shape; backward reads the forward's output (OpArgs::out).
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_ACTIVATION_LAYERS_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_ACTIVATION_LAYERS_HPP
#undef ONEFIT_NN_OPS_ACTIVATION_LAYERS_HPP
#else
#define ONEFIT_NN_OPS_ACTIVATION_LAYERS_HPP
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "nn/activation.hpp"
#include "nn/ops/op.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

// What the activation layers share: the output is the input's shape, activated along its last axis.
struct SameShape {
    static LayerSpec spec(const Layer&, const Shape& in) {
        LayerSpec s;
        s.output = in;
        return s;
    }
};

inline std::string number_text(float v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

// Activation(activation): one of Keras's activations as a layer (softmax over the last axis).
struct ActivationOp : SameShape {
    static constexpr const char* type = "activation";
    static constexpr const char* keras_class = "Activation";
    static std::vector<LayerAttribute> attributes() { return {{"activation", &Layer::activation, 1, true}}; }
    static void check(const Layer&) {}
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        activation_forward(a.layer.activation, a.in, a.out, groups, c);
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        std::copy(a.dout, a.dout + groups * c, a.din);
        activation_backward(a.layer.activation, a.in, a.out, a.din, groups, c);
    }
};

// Keras's relu(x, negative_slope, max_value, threshold): x above the threshold (at most max_value),
// 0 at or below it, less negative_slope * (threshold - x) below it.
struct ReLUOp : SameShape {
    static constexpr const char* type = "relu";
    static constexpr const char* keras_class = "ReLU";
    static std::vector<LayerAttribute> attributes() {
        return {{"max_value", &Layer::max_value}, {"negative_slope", &Layer::negative_slope},
                {"threshold", &Layer::threshold}};
    }
    static void check(const Layer& l) {
        if (!(l.max_value >= 0.0f)) throw Error("max_value cannot be negative, got " + number_text(l.max_value));
        if (!(l.negative_slope >= 0.0f && std::isfinite(l.negative_slope)))
            throw Error("negative_slope cannot be negative, got " + number_text(l.negative_slope));
        if (!(l.threshold >= 0.0f && std::isfinite(l.threshold)))
            throw Error("threshold cannot be negative, got " + number_text(l.threshold));
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const T slope = T(a.layer.negative_slope), top = T(a.layer.max_value), at = T(a.layer.threshold);
        const int64_t n = a.rows * shape_elements(a.spec.input);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
            const T x = a.in[j];
            a.out[j] = x > at ? std::min(x, top) : -slope * (at - x);
        }
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const T slope = T(a.layer.negative_slope), top = T(a.layer.max_value), at = T(a.layer.threshold);
        const int64_t n = a.rows * shape_elements(a.spec.input);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
            const T x = a.in[j];
            a.din[j] = a.dout[j] * (x > at ? (x < top ? T(1) : T(0)) : x < at ? slope : T(0));
        }
    }
};

// LeakyReLU(negative_slope=0.3): x where x >= 0, negative_slope * x below.
struct LeakyReLUOp : ReLUOp {
    static constexpr const char* type = "leaky_relu";
    static constexpr const char* keras_class = "LeakyReLU";
    static void defaults(Layer& l) { l.negative_slope = 0.3f; }
    static std::vector<LayerAttribute> attributes() { return {{"negative_slope", &Layer::negative_slope}}; }
};

// Softmax(axis=-1): over the last axis, the only one onefit's layouts keep contiguous.
struct SoftmaxOp : SameShape {
    static constexpr const char* type = "softmax";
    static constexpr const char* keras_class = "Softmax";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        if (l.axis != -1 && l.axis != static_cast<int64_t>(in.size()))
            throw Error("axis " + std::to_string(l.axis) + " is not supported: onefit takes the softmax over the last axis "
                        "(axis=-1)");
        return SameShape::spec(l, in);
    }
    static std::vector<LayerAttribute> attributes() { return {{"axis", &Layer::axis, -3}}; }
    static void check(const Layer&) {}
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        activation_forward(Activation::softmax, a.in, a.out, groups, c);
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), groups = a.rows * (shape_elements(a.spec.input) / c);
        std::copy(a.dout, a.dout + groups * c, a.din);
        activation_backward(Activation::softmax, a.in, a.out, a.din, groups, c);
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_ACTIVATION_LAYERS_HPP
