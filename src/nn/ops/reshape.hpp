// Flatten and Reshape: the same values in another per-sample shape.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_RESHAPE_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_RESHAPE_HPP
#undef ONEFIT_NN_OPS_RESHAPE_HPP
#else
#define ONEFIT_NN_OPS_RESHAPE_HPP
#endif
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/ops/op.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

struct CopyValues {
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t n = a.rows * shape_elements(a.spec.output);
        std::copy(a.in, a.in + n, a.out);
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t n = a.rows * shape_elements(a.spec.output);
        std::copy(a.dout, a.dout + n, a.din);
    }
};

struct FlattenOp : CopyValues {
    static constexpr const char* type = "flatten";
    static constexpr const char* keras_class = "Flatten";
    static LayerSpec spec(const Layer&, const Shape& in) {
        LayerSpec s;
        s.output = {shape_elements(in)};
        return s;
    }
    static std::vector<LayerAttribute> attributes() { return {}; }
    static void check(const Layer&) {}
};

// Reshape(target_shape): one entry may be -1, inferred from the others.
struct ReshapeOp : CopyValues {
    static constexpr const char* type = "reshape";
    static constexpr const char* keras_class = "Reshape";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        Shape out = l.target_shape;
        const int64_t elements = shape_elements(in);
        int64_t known = 1;
        for (int64_t d : out)
            if (d != -1) known *= d;
        for (int64_t& d : out)
            if (d == -1) d = known > 0 && elements % known == 0 ? elements / known : 0;
        if (shape_elements(out) != elements || known == 0)
            throw Error("cannot reshape " + shape_to_string(in) + " (" + std::to_string(elements) + " values) to " +
                        shape_to_string(l.target_shape));
        LayerSpec s;
        s.output = out;
        return s;
    }
    static std::vector<LayerAttribute> attributes() { return {{"target_shape", &Layer::target_shape, -1, true}}; }
    static void check(const Layer& l) {
        if (l.target_shape.empty()) throw Error("target_shape is empty");
        int inferred = 0;
        for (int64_t d : l.target_shape) {
            if (d == -1) ++inferred;
            else if (d < 1) throw Error("target_shape entries must be positive or -1, got " + std::to_string(d));
        }
        if (inferred > 1) throw Error("at most one target_shape entry may be -1");
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_RESHAPE_HPP
