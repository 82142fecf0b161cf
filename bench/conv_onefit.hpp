// onefit's side of bench/conv_onednn.cpp: one Conv2D's work in a training step as CpuExecutor<float>
// runs it (im2col / col2im over the thread pool as over_parts splits them, dense_forward /
// dense_backward), through the copy of those header kernels that the step loop runs on this CPU
// (conv_onefit.cpp is compiled per SIMD target).
#pragma once
#include <cstdint>

#include "nn/layer_kinds.hpp"

namespace conv_bench {

struct OnefitConv {
    onefit::nn::Window2D win;
    int64_t images = 0, patch = 0, pixels = 0, filters = 0;
    bool use_blas = false;  // the measured GEMM (lower.cpp's rule, or forced)
    const float *x = nullptr, *kernel = nullptr, *bias = nullptr, *dz = nullptr;
    float *cols = nullptr, *z = nullptr, *dw = nullptr, *db = nullptr;
    float *dcols = nullptr, *dx = nullptr;  // null for a first layer (no input gradient)
};

void onefit_conv_forward(const OnefitConv& c);
void onefit_conv_backward(const OnefitConv& c);

}  // namespace conv_bench
