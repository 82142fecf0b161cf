// Embedding(input_dim, output_dim, embeddings_initializer="uniform"), as Keras 3: each of a
// sample's integer indices (the model's input: (steps,) of values in [0, input_dim)) becomes its
// row of the (input_dim, output_dim) table, (steps,) -> (steps, output_dim). The fit's checks
// (check_input) refuse an index that is not an integer in range before anything runs; the op
// clamps all the same, so a value it was never shown cannot read outside the table.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_EMBEDDING_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_EMBEDDING_HPP
#undef ONEFIT_NN_OPS_EMBEDDING_HPP
#else
#define ONEFIT_NN_OPS_EMBEDDING_HPP
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "nn/initializers.hpp"
#include "nn/ops/op.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

struct EmbeddingOp {
    static constexpr const char* type = "embedding";
    static constexpr const char* keras_class = "Embedding";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        if (in.size() != 1)
            throw Error("needs a flat input of integer indices (steps), got " + shape_to_string(in));
        LayerSpec s;
        s.output = {in[0], l.output_dim};
        s.params.push_back({"embeddings", {l.input_dim, l.output_dim}, l.embeddings_initializer, l.input_dim, l.output_dim});
        s.params[0].regularizer = l.kernel_regularizer;
        s.macs_per_sample = in[0] * l.output_dim;
        return s;
    }
    static std::vector<LayerAttribute> attributes() {
        return {{"input_dim", &Layer::input_dim, 1, true},
                {"output_dim", &Layer::output_dim, 1, true},
                {"embeddings_initializer", &Layer::embeddings_initializer},
                {"embeddings_regularizer", &Layer::kernel_regularizer},
                {"mask_zero", &Layer::mask_zero}};
    }
    static void check(const Layer& l) {
        if (l.input_dim < 1) throw Error("input_dim must be at least 1, got " + std::to_string(l.input_dim));
        if (l.output_dim < 1) throw Error("output_dim must be at least 1, got " + std::to_string(l.output_dim));
        check_initializer(l.embeddings_initializer, "embeddings_initializer");
        if (l.mask_zero)
            throw Error("mask_zero=True is not supported: onefit has no masks, so index 0 would not be skipped "
                        "downstream; leave it False (index 0 is then an ordinary row)");
    }
    static void check_input(const Layer& l, const float* x, int64_t rows, int64_t width, int64_t stride) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < width; ++c) {
                const float v = x[r * stride + c];
                if (v >= 0.0f && v < static_cast<float>(l.input_dim) && v == std::floor(v)) continue;
                char got[32];
                std::snprintf(got, sizeof got, "%g", v);
                throw Error("row " + std::to_string(r) + ", column " + std::to_string(c) + " holds " + got +
                            "; an Embedding takes integer indices in [0, " + std::to_string(l.input_dim) + ")");
            }
    }

    static int64_t index(float v, int64_t input_dim) {
        return std::clamp<int64_t>(static_cast<int64_t>(v), 0, input_dim - 1);
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t steps = a.spec.input[0], d = a.layer.output_dim;
        for (int64_t j = 0; j < a.rows * steps; ++j) {
            const T* row = a.params + index(static_cast<float>(a.in[j]), a.layer.input_dim) * d;
            std::copy(row, row + d, a.out + j * d);
        }
    }
    // The table's gradient: each index's row gathers the gradients of the positions that read it.
    // Indices have none (din, if an earlier layer fed this one, is zero).
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t steps = a.spec.input[0], d = a.layer.output_dim;
        std::fill(a.grads, a.grads + a.layer.input_dim * d, T(0));
        for (int64_t j = 0; j < a.rows * steps; ++j) {
            T* row = a.grads + index(static_cast<float>(a.in[j]), a.layer.input_dim) * d;
            const T* g = a.dout + j * d;
            for (int64_t k = 0; k < d; ++k) row[k] += g[k];
        }
        if (a.din) std::fill(a.din, a.din + a.rows * steps, T(0));
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_EMBEDDING_HPP
