// The merge layers of Functional models: Add, Subtract, Multiply, Average, Maximum, Minimum and
// Concatenate(axis=-1), as Keras 3's. Each takes two or more inputs (OpArgs::ins; Subtract exactly two) and declares its
// output from all their shapes (merge_spec). Backward writes one input's gradient per call
// (OpArgs::input_slot), so the executor can point it at that input's own gradient buffer or at a
// buffer it then adds (an output several layers read).
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_MERGE_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_MERGE_HPP
#undef ONEFIT_NN_OPS_MERGE_HPP
#else
#define ONEFIT_NN_OPS_MERGE_HPP
#endif
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/ops/op.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

struct MergeLayer {
    static std::vector<LayerAttribute> attributes() { return {}; }
    static void check(const Layer&) {}
    // Its spec on one input: a merge in a chain (Sequential) has nothing to merge.
    static LayerSpec spec(const Layer&, const Shape&) {
        throw Error("merges two or more inputs: call it on a list of tensors in a Functional model, e.g. "
                    "Add()([a, b])");
    }
};

// Add, Subtract, Multiply, Average: elementwise over inputs of one shape.
struct ElementwiseMerge : MergeLayer {
    static LayerSpec merge_spec(const Layer&, const std::vector<Shape>& in) {
        for (const Shape& s : in)
            if (s != in[0])
                throw Error("its inputs must have the same shape, got " + shape_to_string(in[0]) + " and " +
                            shape_to_string(s));
        LayerSpec spec;
        spec.output = in[0];
        return spec;
    }
    template <class T>
    static int64_t values(const OpArgs<T>& a) {
        return a.rows * shape_elements(a.spec.output);
    }
};

struct AddOp : ElementwiseMerge {
    static constexpr const char* type = "add";
    static constexpr const char* keras_class = "Add";
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        std::copy(a.ins[0], a.ins[0] + n, a.out);
        for (int k = 1; k < a.n_inputs; ++k)
            for (int64_t e = 0; e < n; ++e) a.out[e] += a.ins[k][e];
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        std::copy(a.dout, a.dout + values(a), a.din);
    }
};

struct SubtractOp : ElementwiseMerge {
    static constexpr const char* type = "subtract";
    static constexpr const char* keras_class = "Subtract";
    static LayerSpec merge_spec(const Layer& l, const std::vector<Shape>& in) {
        if (in.size() != 2)
            throw Error("takes exactly 2 inputs, as Keras's, got " + std::to_string(in.size()));
        return ElementwiseMerge::merge_spec(l, in);
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        for (int64_t e = 0; e < n; ++e) a.out[e] = a.ins[0][e] - a.ins[1][e];
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        if (a.input_slot == 0) return static_cast<void>(std::copy(a.dout, a.dout + n, a.din));
        for (int64_t e = 0; e < n; ++e) a.din[e] = -a.dout[e];
    }
};

struct MultiplyOp : ElementwiseMerge {
    static constexpr const char* type = "multiply";
    static constexpr const char* keras_class = "Multiply";
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        std::copy(a.ins[0], a.ins[0] + n, a.out);
        for (int k = 1; k < a.n_inputs; ++k)
            for (int64_t e = 0; e < n; ++e) a.out[e] *= a.ins[k][e];
    }
    // The product of the other inputs (not out / in: an input may be 0).
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        std::copy(a.dout, a.dout + n, a.din);
        for (int k = 0; k < a.n_inputs; ++k)
            if (k != a.input_slot)
                for (int64_t e = 0; e < n; ++e) a.din[e] *= a.ins[k][e];
    }
};

struct AverageOp : ElementwiseMerge {
    static constexpr const char* type = "average";
    static constexpr const char* keras_class = "Average";
    template <class T>
    static void forward(const OpArgs<T>& a) {
        AddOp::forward(a);
        const int64_t n = values(a);
        const T inv = T(1) / T(a.n_inputs);
        for (int64_t e = 0; e < n; ++e) a.out[e] *= inv;
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        const T inv = T(1) / T(a.n_inputs);
        for (int64_t e = 0; e < n; ++e) a.din[e] = a.dout[e] * inv;
    }
};

// Maximum, Minimum: each value the largest (smallest) of the inputs'. Its gradient goes to the
// first input holding that value, as TensorFlow's maximum does at ties (JAX's splits a tie).
template <bool Largest>
struct ExtremumMerge : ElementwiseMerge {
    template <class T>
    static bool better(T candidate, T best) {
        return Largest ? candidate > best : candidate < best;
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        std::copy(a.ins[0], a.ins[0] + n, a.out);
        for (int k = 1; k < a.n_inputs; ++k)
            for (int64_t e = 0; e < n; ++e)
                if (better(a.ins[k][e], a.out[e])) a.out[e] = a.ins[k][e];
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t n = values(a);
        for (int64_t e = 0; e < n; ++e) {
            int chosen = 0;
            for (int k = 1; k < a.n_inputs; ++k)
                if (better(a.ins[k][e], a.ins[chosen][e])) chosen = k;
            a.din[e] = chosen == a.input_slot ? a.dout[e] : T(0);
        }
    }
};

struct MaximumOp : ExtremumMerge<true> {
    static constexpr const char* type = "maximum";
    static constexpr const char* keras_class = "Maximum";
};

struct MinimumOp : ExtremumMerge<false> {
    static constexpr const char* type = "minimum";
    static constexpr const char* keras_class = "Minimum";
};

// Concatenate(axis=-1): along the last axis (features, or an image's channels), the only one
// whose values onefit's layouts keep contiguous; every other axis must match.
struct ConcatenateOp : MergeLayer {
    static constexpr const char* type = "concatenate";
    static constexpr const char* keras_class = "Concatenate";
    static std::vector<LayerAttribute> attributes() { return {{"axis", &Layer::axis, -4}}; }
    static LayerSpec merge_spec(const Layer& l, const std::vector<Shape>& in) {
        if (l.axis != -1 && l.axis != static_cast<int64_t>(in[0].size()))
            throw Error("axis " + std::to_string(l.axis) + " is not supported: onefit concatenates along the last "
                        "axis (axis=-1)");
        LayerSpec spec;
        spec.output = in[0];
        spec.output.back() = 0;
        for (const Shape& s : in) {
            if (s.size() != in[0].size() || !std::equal(s.begin(), s.end() - 1, in[0].begin()))
                throw Error("its inputs must match on every axis but the last, got " + shape_to_string(in[0]) +
                            " and " + shape_to_string(s));
            spec.output.back() += s.back();
        }
        return spec;
    }
    // Input k's values of group g (a sample's, or an image pixel's) sit at [offset_k, offset_k + c_k)
    // of the output's group g.
    template <class T, class F>
    static void over_groups(const OpArgs<T>& a, F&& f) {
        const int64_t out_c = a.spec.output.back(), groups = a.rows * (shape_elements(a.spec.output) / out_c);
        int64_t offset = 0;
        for (int k = 0; k < a.n_inputs; ++k) {
            const int64_t c = a.spec.inputs[static_cast<size_t>(k)].back();
            f(k, groups, out_c, offset, c);
            offset += c;
        }
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        over_groups(a, [&](int k, int64_t groups, int64_t out_c, int64_t offset, int64_t c) {
            for (int64_t g = 0; g < groups; ++g) std::copy(a.ins[k] + g * c, a.ins[k] + (g + 1) * c, a.out + g * out_c + offset);
        });
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        over_groups(a, [&](int k, int64_t groups, int64_t out_c, int64_t offset, int64_t c) {
            if (k != a.input_slot) return;
            for (int64_t g = 0; g < groups; ++g)
                std::copy(a.dout + g * out_c + offset, a.dout + g * out_c + offset + c, a.din + g * c);
        });
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_MERGE_HPP
