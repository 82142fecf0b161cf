// The image layers' kernels on the CPU: im2col / col2im around the Dense product for Conv2D,
// and the pooling layers' windows. Plain functions over a batch of rows, each row one image
// (height, width, channels), channels last. Templated so the gradient tests run this very code
// in double precision.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_RUNTIME_CPU_LAYER_KERNELS_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_RUNTIME_CPU_LAYER_KERNELS_HPP
#undef ONEFIT_RUNTIME_CPU_LAYER_KERNELS_HPP
#else
#define ONEFIT_RUNTIME_CPU_LAYER_KERNELS_HPP
#endif
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "nn/layer_kinds.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(cpu)

// Calls f(iy, ix, first, kx_begin, kx_end) for each kernel row of output pixel (oy, ox) that
// lies inside the image: the input row iy, the input column of kernel column 0 (ix, may be
// negative) and the kernel columns [kx_begin, kx_end) that fall inside.
template <class F>
inline void for_window_rows(const nn::Window2D& w, int64_t oy, int64_t ox, F&& f) {
    const int64_t y0 = oy * w.stride_h - w.pad_top, x0 = ox * w.stride_w - w.pad_left;
    const int64_t kx_begin = x0 < 0 ? -x0 : 0, kx_end = std::min(w.k_w, w.in_w - x0);
    for (int64_t ky = 0; ky < w.k_h; ++ky) {
        const int64_t iy = y0 + ky;
        if (iy >= 0 && iy < w.in_h) f(ky, iy, x0, kx_begin, kx_end);
    }
}

// Calls f(r, oy, ox, pixel) for every output pixel of `rows` images, pixel = (r, oy, ox) counted in order.
template <class F>
inline void for_each_output_pixel(int64_t rows, const nn::Window2D& w, F&& f) {
    for (int64_t r = 0, pixel = 0; r < rows; ++r)
        for (int64_t oy = 0; oy < w.out_h; ++oy)
            for (int64_t ox = 0; ox < w.out_w; ++ox, ++pixel) f(r, oy, ox, pixel);
}

// cols[(r, oy, ox), (ky, kx, c)] = x[r, oy * sh - pad_top + ky, ox * sw - pad_left + kx, c], zero
// outside the image: each output pixel's receptive field as one row, in the kernel's (kh, kw, in)
// order, so that the convolution is cols (rows * oh * ow, kh * kw * in) times the kernel.
template <class T>
void im2col(T* __restrict cols, const T* __restrict x, int64_t rows, const nn::Window2D& w) {
    const int64_t c = w.channels, patch = w.k_h * w.k_w * c, image = w.in_h * w.in_w * c;
    for_each_output_pixel(rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
        T* dst = cols + pixel * patch;
        std::memset(dst, 0, sizeof(T) * patch);
        for_window_rows(w, oy, ox, [&](int64_t ky, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
            if (kx1 > kx0)
                std::memcpy(dst + (ky * w.k_w + kx0) * c, x + r * image + (iy * w.in_w + x0 + kx0) * c,
                            sizeof(T) * (kx1 - kx0) * c);
        });
    });
}

// dx = the sum of every cols row's entries back where im2col took them from (dx is overwritten).
template <class T>
void col2im(T* __restrict dx, const T* __restrict dcols, int64_t rows, const nn::Window2D& w) {
    const int64_t c = w.channels, patch = w.k_h * w.k_w * c, image = w.in_h * w.in_w * c;
    std::memset(dx, 0, sizeof(T) * rows * image);
    for_each_output_pixel(rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
        const T* src = dcols + pixel * patch;
        for_window_rows(w, oy, ox, [&](int64_t ky, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
            T* d = dx + r * image + (iy * w.in_w + x0 + kx0) * c;
            const T* s = src + (ky * w.k_w + kx0) * c;
            for (int64_t j = 0, n = (kx1 - kx0) * c; j < n; ++j) d[j] += s[j];
        });
    });
}

// Max pooling: out = the window's largest value (padding never wins, as in Keras), and where
// it came from (the index within the image) for the backward pass; ties go to the first.
template <class T>
void max_pool_forward(T* __restrict out, int32_t* __restrict argmax, const T* __restrict x, int64_t rows,
                      const nn::Window2D& w) {
    const int64_t c = w.channels, image = w.in_h * w.in_w * c;
    for_each_output_pixel(rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
        T* o = out + pixel * c;
        int32_t* a = argmax + pixel * c;
        for (int64_t k = 0; k < c; ++k) o[k] = -std::numeric_limits<T>::infinity(), a[k] = -1;
        for_window_rows(w, oy, ox, [&](int64_t, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
            for (int64_t kx = kx0; kx < kx1; ++kx) {
                const int64_t at = (iy * w.in_w + x0 + kx) * c;
                const T* v = x + r * image + at;
                for (int64_t k = 0; k < c; ++k)
                    if (v[k] > o[k] || a[k] < 0) o[k] = v[k], a[k] = static_cast<int32_t>(at + k);
            }
        });
    });
}

template <class T>
void max_pool_backward(T* __restrict dx, const T* __restrict dout, const int32_t* __restrict argmax, int64_t rows,
                       const nn::Window2D& w) {
    const int64_t image = w.in_h * w.in_w * w.channels, out_image = w.out_h * w.out_w * w.channels;
    std::memset(dx, 0, sizeof(T) * rows * image);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < out_image; ++j) dx[r * image + argmax[r * out_image + j]] += dout[r * out_image + j];
}

// Average pooling over the window's pixels inside the image (Keras's "same" padding does not
// count the padding).
template <class T>
void average_pool_forward(T* __restrict out, const T* __restrict x, int64_t rows, const nn::Window2D& w) {
    const int64_t c = w.channels, image = w.in_h * w.in_w * c;
    for_each_output_pixel(rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
        T* o = out + pixel * c;
        for (int64_t k = 0; k < c; ++k) o[k] = 0;
        int64_t count = 0;
        for_window_rows(w, oy, ox, [&](int64_t, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
            for (int64_t kx = kx0; kx < kx1; ++kx, ++count) {
                const T* v = x + r * image + (iy * w.in_w + x0 + kx) * c;
                for (int64_t k = 0; k < c; ++k) o[k] += v[k];
            }
        });
        const T scale = T(1) / T(count);
        for (int64_t k = 0; k < c; ++k) o[k] *= scale;
    });
}

template <class T>
void average_pool_backward(T* __restrict dx, const T* __restrict dout, int64_t rows, const nn::Window2D& w) {
    const int64_t c = w.channels, image = w.in_h * w.in_w * c;
    std::memset(dx, 0, sizeof(T) * rows * image);
    for_each_output_pixel(rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
        int64_t count = 0;
        for_window_rows(w, oy, ox, [&](int64_t, int64_t, int64_t, int64_t kx0, int64_t kx1) { count += kx1 - kx0; });
        const T* g = dout + pixel * c;
        const T scale = T(1) / T(count);
        for_window_rows(w, oy, ox, [&](int64_t, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
            for (int64_t kx = kx0; kx < kx1; ++kx) {
                T* d = dx + r * image + (iy * w.in_w + x0 + kx) * c;
                for (int64_t k = 0; k < c; ++k) d[k] += g[k] * scale;
            }
        });
    });
}

// Mean over every pixel, per channel: (rows, h, w, c) -> (rows, c).
template <class T>
void global_average_pool_forward(T* __restrict out, const T* __restrict x, int64_t rows, int64_t pixels,
                                 int64_t channels) {
    const T scale = T(1) / T(pixels);
    for (int64_t r = 0; r < rows; ++r) {
        T* o = out + r * channels;
        for (int64_t k = 0; k < channels; ++k) o[k] = 0;
        for (int64_t p = 0; p < pixels; ++p)
            for (int64_t k = 0; k < channels; ++k) o[k] += x[(r * pixels + p) * channels + k];
        for (int64_t k = 0; k < channels; ++k) o[k] *= scale;
    }
}

template <class T>
void global_average_pool_backward(T* __restrict dx, const T* __restrict dout, int64_t rows, int64_t pixels,
                                  int64_t channels) {
    const T scale = T(1) / T(pixels);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t p = 0; p < pixels; ++p)
            for (int64_t k = 0; k < channels; ++k) dx[(r * pixels + p) * channels + k] = dout[r * channels + k] * scale;
}

ONEFIT_SIMD_END(cpu)
#endif  // ONEFIT_RUNTIME_CPU_LAYER_KERNELS_HPP
