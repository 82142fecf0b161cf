// MaxPooling2D, AveragePooling2D and GlobalAveragePooling2D: Keras's pooling layers over
// (height, width, channels) images, each image's values computed on their own (so a batch may be
// split by images). Templated so the gradient tests run this very code in double precision.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_POOLING_2D_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_POOLING_2D_HPP
#undef ONEFIT_NN_OPS_POOLING_2D_HPP
#else
#define ONEFIT_NN_OPS_POOLING_2D_HPP
#endif
#include <cstdint>
#include <cstring>
#include <vector>

#include "nn/ops/op.hpp"
#include "nn/ops/window_2d.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

// What MaxPooling2D and AveragePooling2D share: Keras's pool_size, strides (= pool_size when
// None) and padding.
struct Pooling2D {
    static LayerSpec spec(const Layer& l, const Shape& in) {
        require_image(in);
        const Window2D w = window_2d(in, l.pool_size, l.strides, l.padding);
        LayerSpec s;
        s.output = {w.out_h, w.out_w, w.channels};
        s.macs_per_sample = w.out_h * w.out_w * w.channels * w.k_h * w.k_w;
        s.window = w;
        return s;
    }
    static std::vector<LayerAttribute> attributes() {
        return {{"pool_size", &Layer::pool_size}, {"strides", &Layer::strides, 1, false, "pool_size"},
                {"padding", &Layer::padding}};
    }
    static void check(const Layer& l) {
        check_positive_pair(l.pool_size, "pool_size");
        check_positive_pair(l.strides, "strides");
    }
};

// Max pooling: out = the window's largest value (padding never wins, as in Keras), and where it
// came from (the index within the image, kept per sample) for the backward pass; ties go to the first.
struct MaxPooling2DOp : Pooling2D {
    static constexpr const char* type = "max_pooling2d";
    static constexpr const char* keras_class = "MaxPooling2D";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        LayerSpec s = Pooling2D::spec(l, in);
        s.indices_per_sample = shape_elements(s.output);
        return s;
    }
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const Window2D& w = a.spec.window;
        const int64_t c = w.channels, image = w.in_h * w.in_w * c;
        for_each_output_pixel(a.rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
            T* __restrict o = a.out + pixel * c;
            int32_t* __restrict at_max = a.indices + pixel * c;
            bool first = true;  // the window's first pixel inside the image starts the maximum
            for_window_rows(w, oy, ox, [&](int64_t, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
                for (int64_t kx = kx0; kx < kx1; ++kx) {
                    const int32_t at = static_cast<int32_t>((iy * w.in_w + x0 + kx) * c);
                    const T* __restrict v = a.in + r * image + at;
                    if (first) {
                        for (int64_t k = 0; k < c; ++k) o[k] = v[k], at_max[k] = at + static_cast<int32_t>(k);
                        first = false;
                        continue;
                    }
                    for (int64_t k = 0; k < c; ++k) {  // branch-free, so it vectorises over channels
                        const bool larger = v[k] > o[k];
                        o[k] = larger ? v[k] : o[k];
                        at_max[k] = larger ? at + static_cast<int32_t>(k) : at_max[k];
                    }
                }
            });
        });
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const Window2D& w = a.spec.window;
        const int64_t image = w.in_h * w.in_w * w.channels, out_image = w.out_h * w.out_w * w.channels;
        std::memset(a.din, 0, sizeof(T) * a.rows * image);
        for (int64_t r = 0; r < a.rows; ++r)
            for (int64_t j = 0; j < out_image; ++j)
                a.din[r * image + a.indices[r * out_image + j]] += a.dout[r * out_image + j];
    }
};

// Average pooling over the window's pixels inside the image (Keras's "same" padding does not
// count the padding).
struct AveragePooling2DOp : Pooling2D {
    static constexpr const char* type = "average_pooling2d";
    static constexpr const char* keras_class = "AveragePooling2D";
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const Window2D& w = a.spec.window;
        const int64_t c = w.channels, image = w.in_h * w.in_w * c;
        for_each_output_pixel(a.rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
            T* o = a.out + pixel * c;
            for (int64_t k = 0; k < c; ++k) o[k] = 0;
            int64_t count = 0;
            for_window_rows(w, oy, ox, [&](int64_t, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
                for (int64_t kx = kx0; kx < kx1; ++kx, ++count) {
                    const T* v = a.in + r * image + (iy * w.in_w + x0 + kx) * c;
                    for (int64_t k = 0; k < c; ++k) o[k] += v[k];
                }
            });
            const T scale = T(1) / T(count);
            for (int64_t k = 0; k < c; ++k) o[k] *= scale;
        });
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const Window2D& w = a.spec.window;
        const int64_t c = w.channels, image = w.in_h * w.in_w * c;
        std::memset(a.din, 0, sizeof(T) * a.rows * image);
        for_each_output_pixel(a.rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
            int64_t count = 0;
            for_window_rows(w, oy, ox, [&](int64_t, int64_t, int64_t, int64_t kx0, int64_t kx1) { count += kx1 - kx0; });
            const T* g = a.dout + pixel * c;
            const T scale = T(1) / T(count);
            for_window_rows(w, oy, ox, [&](int64_t, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
                for (int64_t kx = kx0; kx < kx1; ++kx) {
                    T* d = a.din + r * image + (iy * w.in_w + x0 + kx) * c;
                    for (int64_t k = 0; k < c; ++k) d[k] += g[k] * scale;
                }
            });
        });
    }
};

// The mean over every pixel, per channel: (h, w, c) -> (c) (GlobalAveragePooling1D's over every step).
struct GlobalAveragePooling2DOp {
    static constexpr const char* type = "global_average_pooling2d";
    static constexpr const char* keras_class = "GlobalAveragePooling2D";
    static LayerSpec spec(const Layer&, const Shape& in) {
        require_image(in);
        LayerSpec s;
        s.output = {in[2]};
        s.macs_per_sample = shape_elements(in);
        return s;
    }
    static std::vector<LayerAttribute> attributes() { return {}; }
    static void check(const Layer&) {}
    template <class T>
    static void forward(const OpArgs<T>& a) {
        const int64_t channels = a.spec.input.back(), pixels = shape_elements(a.spec.input) / channels;
        const T scale = T(1) / T(pixels);
        for (int64_t r = 0; r < a.rows; ++r) {
            T* o = a.out + r * channels;
            for (int64_t k = 0; k < channels; ++k) o[k] = 0;
            for (int64_t p = 0; p < pixels; ++p)
                for (int64_t k = 0; k < channels; ++k) o[k] += a.in[(r * pixels + p) * channels + k];
            for (int64_t k = 0; k < channels; ++k) o[k] *= scale;
        }
    }
    template <class T>
    static void backward(const OpArgs<T>& a) {
        const int64_t channels = a.spec.input.back(), pixels = shape_elements(a.spec.input) / channels;
        const T scale = T(1) / T(pixels);
        for (int64_t r = 0; r < a.rows; ++r)
            for (int64_t p = 0; p < pixels; ++p)
                for (int64_t k = 0; k < channels; ++k)
                    a.din[(r * pixels + p) * channels + k] = a.dout[r * channels + k] * scale;
    }
};

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_POOLING_2D_HPP
