// A Conv2D on the CPU: im2col / col2im around the Dense product. Plain functions over a batch of
// rows, each row one image (height, width, channels), channels last. Templated so the gradient
// tests run this very code in double precision.
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

#include "nn/layer_kinds.hpp"
#include "nn/ops/window_2d.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(cpu)

// cols[(r, oy, ox), (ky, kx, c)] = x[r, oy * sh - pad_top + ky, ox * sw - pad_left + kx, c], zero
// outside the image: each output pixel's receptive field as one row, in the kernel's (kh, kw, in)
// order, so that the convolution is cols (rows * oh * ow, kh * kw * in) times the kernel.
// Only windows that overhang the image are zeroed first (the rest is all overwritten), and short
// spans (a 3-wide window of one channel: 3 floats) are copied in line: a memset and memcpy call
// per pixel cost more than the copy (the MNIST convnet's im2col was ~1/10 of its step).
template <class T>
void im2col(T* __restrict cols, const T* __restrict x, int64_t rows, const nn::Window2D& w) {
    const int64_t c = w.channels, patch = w.k_h * w.k_w * c, image = w.in_h * w.in_w * c;
    nn::for_each_output_pixel(rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
        T* dst = cols + pixel * patch;
        const int64_t y0 = oy * w.stride_h - w.pad_top, x0 = ox * w.stride_w - w.pad_left;
        if (y0 < 0 || x0 < 0 || y0 + w.k_h > w.in_h || x0 + w.k_w > w.in_w) std::memset(dst, 0, sizeof(T) * patch);
        nn::for_window_rows(w, oy, ox, [&](int64_t ky, int64_t iy, int64_t x_left, int64_t kx0, int64_t kx1) {
            T* d = dst + (ky * w.k_w + kx0) * c;
            const T* s = x + r * image + (iy * w.in_w + x_left + kx0) * c;
            const int64_t n = (kx1 - kx0) * c;
            if (n >= 16) return static_cast<void>(std::memcpy(d, s, sizeof(T) * n));
            for (int64_t j = 0; j < n; ++j) d[j] = s[j];
        });
    });
}

// dx = the sum of every cols row's entries back where im2col took them from (dx is overwritten).
template <class T>
void col2im(T* __restrict dx, const T* __restrict dcols, int64_t rows, const nn::Window2D& w) {
    const int64_t c = w.channels, patch = w.k_h * w.k_w * c, image = w.in_h * w.in_w * c;
    std::memset(dx, 0, sizeof(T) * rows * image);
    nn::for_each_output_pixel(rows, w, [&](int64_t r, int64_t oy, int64_t ox, int64_t pixel) {
        const T* src = dcols + pixel * patch;
        nn::for_window_rows(w, oy, ox, [&](int64_t ky, int64_t iy, int64_t x0, int64_t kx0, int64_t kx1) {
            T* d = dx + r * image + (iy * w.in_w + x0 + kx0) * c;
            const T* s = src + (ky * w.k_w + kx0) * c;
            for (int64_t j = 0, n = (kx1 - kx0) * c; j < n; ++j) d[j] += s[j];
        });
    });
}

ONEFIT_SIMD_END(cpu)
#endif  // ONEFIT_RUNTIME_CPU_LAYER_KERNELS_HPP
