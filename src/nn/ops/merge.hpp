// The merge layers of Functional models: Add, Subtract, Multiply, Average, Maximum, Minimum,
// Concatenate(axis=-1) and Dot, as Keras 3's. Each takes two or more inputs (OpArgs::ins; Subtract exactly two) and declares its
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
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/dot_axes.hpp"
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
    // out = the first input combined with each further one in turn, value by value.
    template <class T, class F>
    static void fold(const OpArgs<T>& a, F combine) {
        const int64_t n = values(a);
        std::copy(a.ins[0], a.ins[0] + n, a.out);
        for (int k = 1; k < a.n_inputs; ++k)
            for (int64_t e = 0; e < n; ++e) a.out[e] = combine(a.out[e], a.ins[k][e]);
    }
};

struct AddOp : ElementwiseMerge {
    static constexpr const char* type = "add";
    static constexpr const char* keras_class = "Add";
    template <class T>
    static void forward(const OpArgs<T>& a) {
        fold(a, [](T sum, T v) { return sum + v; });
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
        fold(a, [](T product, T v) { return product * v; });
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
        ElementwiseMerge::fold(a, [](T best, T v) { return better(v, best) ? v : best; });
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

// Dot(axes, normalize): the dot product of two inputs along one axis of each, per sample, as
// Keras's batch_dot: vectors (d,) give (1,); matrices (a0, a1) and (b0, b1) give the other axes'
// (r1, r2). axes counts the batch as axis 0, as Keras's (-1: the last). normalize first scales
// each contracted vector to unit length as keras.ops.normalize does: x * min(rsqrt(sum x^2), 1e7).
struct DotOp : MergeLayer {
    static constexpr const char* type = "dot";
    static constexpr const char* keras_class = "Dot";
    static constexpr double kEpsilon = 1e-7;  // Keras's backend.epsilon()
    static std::vector<LayerAttribute> attributes() {
        return {{"axes", &Layer::axes, -3, true}, {"normalize", &Layer::normalize}};
    }
    static void check(const Layer& l) {
        for (int64_t axis : l.axes)
            if (axis == 0) throw Error("axes must not be 0, the batch axis");
    }
    // One input as rows x k: the values not contracted are its rows, k the contracted axis.
    struct Side {
        int64_t rows, k, row_stride, k_stride;
    };
    static Side side(const Shape& s, int64_t axis) {
        if (s.size() == 1) return {1, s[0], 0, 1};
        if (axis == 2) return {s[0], s[1], s[1], 1};
        return {s[1], s[0], 1, s[1]};
    }
    static int64_t resolved_axis(const Layer& l, const Shape& s, int which) { return dot_axis(l, s.size(), which); }
    static LayerSpec merge_spec(const Layer& l, const std::vector<Shape>& in) {
        if (in.size() != 2) throw Error("takes exactly 2 inputs, as Keras's, got " + std::to_string(in.size()));
        if (in[0].size() != in[1].size() || in[0].size() > 2)
            throw Error("takes two vectors or two matrices per sample (batch_dot of equal ranks), got " +
                        shape_to_string(in[0]) + " and " + shape_to_string(in[1]));
        const int64_t p = resolved_axis(l, in[0], 0), q = resolved_axis(l, in[1], 1);
        for (int64_t axis : {p, q})
            if (axis < 1 || axis > static_cast<int64_t>(in[0].size()))
                throw Error("axes (" + std::to_string(l.axes[0]) + ", " + std::to_string(l.axes[1]) +
                            ") are outside inputs of shape " + shape_to_string(in[0]));
        if (in[0][static_cast<size_t>(p - 1)] != in[1][static_cast<size_t>(q - 1)])
            throw Error("the contracted axes differ: " + std::to_string(in[0][static_cast<size_t>(p - 1)]) + " (axis " +
                        std::to_string(p) + " of " + shape_to_string(in[0]) + ") and " +
                        std::to_string(in[1][static_cast<size_t>(q - 1)]) + " (axis " + std::to_string(q) + " of " +
                        shape_to_string(in[1]) + ")");
        const Side a = side(in[0], p), b = side(in[1], q);
        LayerSpec spec;
        spec.output = in[0].size() == 1 ? Shape{1} : Shape{a.rows, b.rows};
        spec.macs_per_sample = a.rows * b.rows * a.k;
        if (l.normalize) spec.scratch_per_sample = a.rows + b.rows;  // each row's inverse norm, for backward
        return spec;
    }
    template <class T>
    static T value(const T* x, const Side& s, int64_t row, int64_t k) {
        return x[row * s.row_stride + k * s.k_stride];
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const Side s0 = side(a.spec.inputs[0], resolved_axis(a.layer, a.spec.inputs[0], 0));
        const Side s1 = side(a.spec.inputs[1], resolved_axis(a.layer, a.spec.inputs[1], 1));
        const int64_t n0 = shape_elements(a.spec.inputs[0]), n1 = shape_elements(a.spec.inputs[1]);
        for (int64_t r = 0; r < a.rows; ++r) {
            const T* x0 = a.ins[0] + r * n0;
            const T* x1 = a.ins[1] + r * n1;
            T* inv = a.layer.normalize ? a.scratch + r * (s0.rows + s1.rows) : nullptr;
            if (inv) {
                for (int64_t i = 0; i < s0.rows; ++i) inv[i] = inverse_norm(x0, s0, i);
                for (int64_t j = 0; j < s1.rows; ++j) inv[s0.rows + j] = inverse_norm(x1, s1, j);
            }
            T* o = a.out + r * s0.rows * s1.rows;
            for (int64_t i = 0; i < s0.rows; ++i)
                for (int64_t j = 0; j < s1.rows; ++j) {
                    T sum = 0;
                    for (int64_t k = 0; k < s0.k; ++k) sum += value(x0, s0, i, k) * value(x1, s1, j, k);
                    o[i * s1.rows + j] = inv ? sum * inv[i] * inv[s0.rows + j] : sum;
                }
        }
    }
    template <class T>
    static T inverse_norm(const T* x, const Side& s, int64_t row) {
        T squares = 0;
        for (int64_t k = 0; k < s.k; ++k) squares += value(x, s, row, k) * value(x, s, row, k);
        return std::min(T(1) / std::sqrt(squares), T(1 / kEpsilon));
    }
    // Input `slot`'s row i, with y its (normalised) rows, o = forward's output and g_k = sum_j
    // dout[i, j] y_other(j, k): dx = g, or with normalize inv * (g - y * sum_m g_m y_m) where
    // sum_m g_m y_m = sum_j dout[i, j] o[i, j] (just inv * g where the norm was clamped).
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int me = a.input_slot, other = 1 - me;
        const Side s0 = side(a.spec.inputs[0], resolved_axis(a.layer, a.spec.inputs[0], 0));
        const Side s1 = side(a.spec.inputs[1], resolved_axis(a.layer, a.spec.inputs[1], 1));
        const Side& sm = me == 0 ? s0 : s1;
        const Side& so = me == 0 ? s1 : s0;
        const int64_t nm = shape_elements(a.spec.inputs[static_cast<size_t>(me)]);
        const int64_t no = shape_elements(a.spec.inputs[static_cast<size_t>(other)]);
        // dout and o are s0.rows x s1.rows: element (mine i, other's j).
        const int64_t along_i = me == 0 ? s1.rows : 1, along_j = me == 0 ? 1 : s1.rows;
        for (int64_t r = 0; r < a.rows; ++r) {
            const T* xm = a.ins[me] + r * nm;
            const T* xo = a.ins[other] + r * no;
            const T* dout = a.dout + r * s0.rows * s1.rows;
            const T* o = a.out + r * s0.rows * s1.rows;
            const T* inv = a.layer.normalize ? a.scratch + r * (s0.rows + s1.rows) : nullptr;
            const T* inv_m = inv ? inv + (me == 0 ? 0 : s0.rows) : nullptr;
            const T* inv_o = inv ? inv + (me == 0 ? s0.rows : 0) : nullptr;
            T* dx = a.din + r * nm;
            for (int64_t i = 0; i < sm.rows; ++i) {
                T projected = 0;  // sum_m g_m y_m
                if (inv)
                    for (int64_t j = 0; j < so.rows; ++j) projected += dout[i * along_i + j * along_j] * o[i * along_i + j * along_j];
                const bool clamped = inv && inv_m[i] >= T(1 / kEpsilon);
                for (int64_t k = 0; k < sm.k; ++k) {
                    T g = 0;
                    for (int64_t j = 0; j < so.rows; ++j)
                        g += dout[i * along_i + j * along_j] * value(xo, so, j, k) * (inv ? inv_o[j] : T(1));
                    T d = g;
                    if (inv) d = clamped ? g * inv_m[i] : inv_m[i] * (g - value(xm, sm, i, k) * inv_m[i] * projected);
                    dx[i * sm.row_stride + k * sm.k_stride] = d;
                }
            }
        }
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_MERGE_HPP
