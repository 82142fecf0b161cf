// Walking a 2-D window (a convolution's or a pooling layer's) over (height, width, channels)
// images, channels last: the loops im2col, col2im and the pooling ops share.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_WINDOW_2D_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_WINDOW_2D_HPP
#undef ONEFIT_NN_OPS_WINDOW_2D_HPP
#else
#define ONEFIT_NN_OPS_WINDOW_2D_HPP
#endif
#include <algorithm>
#include <cstdint>
#include <string>

#include "nn/layer_kinds.hpp"
#include "onefit/error.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

// Calls f(ky, iy, x0, kx_begin, kx_end) for each kernel row of output pixel (oy, ox) that lies
// inside the image: the input row iy, the input column of kernel column 0 (x0, may be negative)
// and the kernel columns [kx_begin, kx_end) that fall inside.
template <class F>
inline void for_window_rows(const Window2D& w, int64_t oy, int64_t ox, F&& f) {
    const int64_t y0 = oy * w.stride_h - w.pad_top, x0 = ox * w.stride_w - w.pad_left;
    const int64_t kx_begin = x0 < 0 ? -x0 : 0, kx_end = std::min(w.k_w, w.in_w - x0);
    const int64_t ky_begin = y0 < 0 ? -y0 : 0, ky_end = std::min(w.k_h, w.in_h - y0);  // rows inside the image only
    for (int64_t ky = ky_begin; ky < ky_end; ++ky) f(ky, y0 + ky, x0, kx_begin, kx_end);
}

// Calls f(r, oy, ox, pixel) for every output pixel of `rows` images, pixel = (r, oy, ox) counted in order.
template <class F>
inline void for_each_output_pixel(int64_t rows, const Window2D& w, F&& f) {
    for (int64_t r = 0, pixel = 0; r < rows; ++r)
        for (int64_t oy = 0; oy < w.out_h; ++oy)
            for (int64_t ox = 0; ox < w.out_w; ++ox, ++pixel) f(r, oy, ox, pixel);
}

inline void require_image(const Shape& input) {
    if (input.size() != 3 || input[0] < 1 || input[1] < 1 || input[2] < 1)
        throw Error("needs an image input (height, width, channels), got " + shape_to_string(input) +
                    "; grayscale images are (height, width, 1)");
}

// Windows and strides: positive, and at most kMaxWindow (so a window's sizes multiply without
// overflow; larger ones fit no image anyway).
inline constexpr int64_t kMaxWindow = int64_t{1} << 16;
inline void check_positive_pair(std::array<int64_t, 2> v, const char* what) {
    if (v[0] < 1 || v[1] < 1 || v[0] > kMaxWindow || v[1] > kMaxWindow)
        throw Error(std::string(what) + " must be positive" + (v[0] > kMaxWindow || v[1] > kMaxWindow ? " and at most 65536" : "") +
                    ", got (" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")");
}

// The same for a 1-D layer's window or stride.
inline void check_positive_size(int64_t v, const char* what) {
    if (v < 1 || v > kMaxWindow)
        throw Error(std::string(what) + " must be positive" + (v > kMaxWindow ? " and at most 65536" : "") + ", got " +
                    std::to_string(v));
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_WINDOW_2D_HPP
