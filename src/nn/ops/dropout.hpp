// Dropout(rate): inverted dropout, its mask (nn/dropout.hpp, shared with the CUDA kernels) kept
// per sample from forward to backward. The mask hashes each element's index in the whole batch,
// so a batch split into parts draws the whole batch's mask.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_DROPOUT_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_DROPOUT_HPP
#undef ONEFIT_NN_OPS_DROPOUT_HPP
#else
#define ONEFIT_NN_OPS_DROPOUT_HPP
#endif
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "nn/dropout.hpp"
#include "nn/ops/op.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

struct DropoutOp {
    static constexpr const char* type = "dropout";
    static constexpr const char* keras_class = "Dropout";
    static LayerSpec spec(const Layer&, const Shape& in) {
        LayerSpec s;
        s.output = in;
        s.scratch_per_sample = shape_elements(in);  // the mask
        s.draws_random = true;
        return s;
    }
    static std::vector<LayerAttribute> attributes() { return {{"rate", &Layer::rate, 1, true}}; }
    static void check(const Layer& l) {
        char got[32];
        std::snprintf(got, sizeof got, "%g", l.rate);
        if (!(l.rate >= 0.0f && l.rate < 1.0f)) throw Error(std::string("rate must be in [0, 1), got ") + got);
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t width = shape_elements(a.spec.output), first = a.first_row * width, n = a.rows * width;
        const T keep = dropout_keep_scale<T>(a.layer.rate);
        T* m = a.scratch;
        for (int64_t j = 0; j < n; ++j)
            m[j] = dropout_mask(a.training, a.layer.rate, keep, a.random_key, static_cast<uint64_t>(first + j));
        for (int64_t j = 0; j < n; ++j) a.out[j] = a.in[j] * m[j];
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t n = a.rows * shape_elements(a.spec.output);
        for (int64_t j = 0; j < n; ++j) a.din[j] = a.dout[j] * a.scratch[j];
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_DROPOUT_HPP
