// MaxPooling1D and AveragePooling1D over (steps, channels) sequences: the 2-D pooling ops on a
// window of height 1 (window_1d). The global poolings (GlobalAveragePooling1D, GlobalMaxPooling1D,
// GlobalMaxPooling2D): each channel's mean or largest value over every position, (..., C) -> (C).
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_POOLING_1D_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_POOLING_1D_HPP
#undef ONEFIT_NN_OPS_POOLING_1D_HPP
#else
#define ONEFIT_NN_OPS_POOLING_1D_HPP
#endif
#include <cstdint>
#include <cstring>
#include <vector>

#include "nn/ops/op.hpp"
#include "nn/ops/pooling_2d.hpp"
#include "nn/ops/window_2d.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

// Keras's pool_size (2), strides (None: the pool size) and padding of a 1-D pooling layer.
struct Pooling1D {
    static LayerSpec spec(const Layer& l, const Shape& in) {
        const Window2D w = window_1d(in, l.pool_size_1d, l.strides_1d, l.padding);
        LayerSpec s;
        s.output = {w.out_w, w.channels};
        s.macs_per_sample = w.out_w * w.channels * w.k_w;
        s.window = w;
        return s;
    }
    static std::vector<LayerAttribute> attributes() {
        return {{"pool_size", &Layer::pool_size_1d}, {"strides", &Layer::strides_1d, 1, false, "pool_size"},
                {"padding", &Layer::padding}};
    }
    static void check(const Layer& l) {
        check_positive_size(l.pool_size_1d, "pool_size");
        check_positive_size(l.strides_1d, "strides");
    }
};

struct MaxPooling1DOp : Pooling1D {
    static constexpr const char* type = "max_pooling1d";
    static constexpr const char* keras_class = "MaxPooling1D";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        LayerSpec s = Pooling1D::spec(l, in);
        s.indices_per_sample = shape_elements(s.output);
        return s;
    }
    template <class T>
    static void forward(const OpArgs<T>& a) { MaxPooling2DOp::forward(a); }
    template <class T>
    static void backward(const OpArgs<T>& a) { MaxPooling2DOp::backward(a); }
};

struct AveragePooling1DOp : Pooling1D {
    static constexpr const char* type = "average_pooling1d";
    static constexpr const char* keras_class = "AveragePooling1D";
    template <class T>
    static void forward(const OpArgs<T>& a) { AveragePooling2DOp::forward(a); }
    template <class T>
    static void backward(const OpArgs<T>& a) { AveragePooling2DOp::backward(a); }
};

// What the global poolings share: (positions..., channels) -> (channels).
template <size_t kRank>
struct GlobalPooling {
    static LayerSpec spec(const Layer&, const Shape& in) {
        if (in.size() != kRank)
            throw Error(kRank == 2 ? "needs a sequence input (steps, channels), got " + shape_to_string(in)
                                   : "needs an image input (height, width, channels), got " + shape_to_string(in));
        LayerSpec s;
        s.output = {in.back()};
        s.macs_per_sample = shape_elements(in);
        return s;
    }
    static std::vector<LayerAttribute> attributes() { return {}; }
    static void check(const Layer&) {}
};

struct GlobalAveragePooling1DOp : GlobalPooling<2> {
    static constexpr const char* type = "global_average_pooling1d";
    static constexpr const char* keras_class = "GlobalAveragePooling1D";
    template <class T>
    static void forward(const OpArgs<T>& a) { GlobalAveragePooling2DOp::forward(a); }
    template <class T>
    static void backward(const OpArgs<T>& a) { GlobalAveragePooling2DOp::backward(a); }
};

// The largest value of each channel; its gradient goes to where it was (the first, on ties).
template <size_t kRank>
struct GlobalMaxPooling : GlobalPooling<kRank> {
    static LayerSpec spec(const Layer& l, const Shape& in) {
        LayerSpec s = GlobalPooling<kRank>::spec(l, in);
        s.indices_per_sample = in.back();
        return s;
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), positions = shape_elements(a.spec.input) / c;
        for (int64_t r = 0; r < a.rows; ++r) {
            const T* x = a.in + r * positions * c;
            T* o = a.out + r * c;
            int32_t* at = a.indices + r * c;
            for (int64_t k = 0; k < c; ++k) o[k] = x[k], at[k] = static_cast<int32_t>(k);
            for (int64_t p = 1; p < positions; ++p)
                for (int64_t k = 0; k < c; ++k) {  // branch-free, so it vectorises over channels
                    const bool larger = x[p * c + k] > o[k];
                    o[k] = larger ? x[p * c + k] : o[k];
                    at[k] = larger ? static_cast<int32_t>(p * c + k) : at[k];
                }
        }
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t c = a.spec.input.back(), sample = shape_elements(a.spec.input);
        std::memset(a.din, 0, sizeof(T) * a.rows * sample);
        for (int64_t r = 0; r < a.rows; ++r)
            for (int64_t k = 0; k < c; ++k) a.din[r * sample + a.indices[r * c + k]] = a.dout[r * c + k];
    }
};

struct GlobalMaxPooling1DOp : GlobalMaxPooling<2> {
    static constexpr const char* type = "global_max_pooling1d";
    static constexpr const char* keras_class = "GlobalMaxPooling1D";
};

struct GlobalMaxPooling2DOp : GlobalMaxPooling<3> {
    static constexpr const char* type = "global_max_pooling2d";
    static constexpr const char* keras_class = "GlobalMaxPooling2D";
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_POOLING_1D_HPP
