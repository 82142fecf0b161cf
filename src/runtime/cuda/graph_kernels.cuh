// The graph path's elementwise kernels: everything of a step that is not a cuBLASLt product.
// Each reads what changes from step to step (which rows, the optimizer step, which epoch's log)
// from device memory, so a captured sequence of them can be replayed for any step. The math is
// src/nn's ONEFIT_HD code, shared with the CPU and the persistent kernel.
#pragma once
#include <cstdint>

#include "core/rng.hpp"
#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/optimizer_math.hpp"
#include "runtime/cuda/device_loss.cuh"
#include "runtime/cuda/device_model.hpp"

namespace onefit::cuda {

// The graph path's device-side cursor: the global step the next captured step runs.
struct GraphCursor {
    int64_t step;
};

// The cursor's batch: its rows of x and y, gathered into xb and yb.
__global__ void gather_batch_kernel(DeviceData d, const GraphCursor* cur, float* xb, float* yb, int rows) {
    const int32_t* order = d.order + d.batch_start[cur->step];
    for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < int64_t(rows) * d.x_width;
         idx += int64_t(gridDim.x) * blockDim.x)
        xb[idx] = batch_element(d.x, d.x_width, order, idx);
    for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < int64_t(rows) * d.y_width;
         idx += int64_t(gridDim.x) * blockDim.x)
        yb[idx] = batch_element(d.y, d.y_width, order, idx);
}

// a = act(z + bias) for rows x width. With bias (one cuBLASLt's epilogue could not take), z gets
// the bias added first, by the thread that then activates it, so the backward sees the same z.
__global__ void activation_kernel(Activation act, float* z, float* a, const float* bias, int rows, int width) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    if (act == Activation::softmax) {  // one row per thread
        for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += stride) {
            float* zr = z + r * width;
            if (bias)
                for (int j = 0; j < width; ++j) zr[j] += bias[j];
            nn::softmax_row(zr, a + r * width, int64_t(width));
        }
        return;
    }
    nn::with_activation(act, [&]<Activation A>() {
        for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < int64_t(rows) * width; i += stride) {
            if (bias) z[i] += bias[i % width];
            a[i] = nn::activate<A>(z[i]);
        }
    });
}

// g: dL/d(output) in, dL/dz out.
__global__ void activation_backward_kernel(Activation act, const float* z, const float* a, float* g, int rows,
                                           int width) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    if (act == Activation::softmax) {
        for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += stride)
            nn::softmax_backward_row(a + r * width, g + r * width, int64_t(width));
        return;
    }
    nn::with_activation(act, [&]<Activation A>() {
        for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < int64_t(rows) * width; i += stride)
            g[i] *= nn::activation_slope<A>(z[i], a[i]);
    });
}

// Dropout op `op`: mask (1 outside training and at rate 0) and out = in * mask. The mask's key
// uses the optimizer step in device memory, as the CPU's and the persistent kernel's do.
__global__ void dropout_kernel(DeviceModel m, DeviceData d, int op, bool training, const float* in, float* mask,
                               float* out, int n) {
    const float rate = m.ops[op].rate, keep = nn::dropout_keep_scale<float>(rate);
    const uint64_t key = dropout_key(m.dropout_seed, *d.step_count, op);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        mask[i] = nn::dropout_mask(training, rate, keep, key, uint64_t(i));
        out[i] = in[i] * mask[i];
    }
}

__global__ void multiply_kernel(const float* a, const float* b, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = a[i] * b[i];
}

// db[j] = sum_r dz[r, j]
__global__ void column_sum_kernel(const float* dz, float* db, int rows, int width) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < width; j += gridDim.x * blockDim.x) {
        float s = 0;
        for (int r = 0; r < rows; ++r) s += dz[int64_t(r) * width + j];
        db[j] = s;
    }
}

// Which log a loss kernel adds to.
enum class LossLog {
    train,             // the cursor's epoch's training sums (with the gradient into g)
    validation_ended,  // the validation sums of the epoch the cursor just finished
};

// Loss and metrics of one batch, one block of kBlockThreads: sums into a log of d.
__global__ void __launch_bounds__(kBlockThreads)
    loss_kernel(DeviceModel m, DeviceData d, const GraphCursor* cur, const float* logits, const float* out,
                const float* y, float* g, int rows, LossLog target) {
    __shared__ float scratch[kBlockThreads];
    LogSums sums{};
    batch_loss(m, logits, out, y, d.y_width, rows, target == LossLog::train ? g : nullptr, scratch, sums);
    if (threadIdx.x != 0) return;
    // Inside a replayed graph the epoch is only known on the device, from the cursor.
    const int64_t step = target == LossLog::train ? cur->step : cur->step - 1;
    const int epoch = epoch_of_step(d.epoch_first_step, step < 0 ? 0 : step);
    LogSums& log = target == LossLog::train ? d.logs[epoch].train : d.logs[epoch].validation;
    log.loss += sums.loss;
    for (int k = 0; k < m.n_metrics; ++k) log.metrics[k] += sums.metrics[k];
    log.samples += sums.samples;
}

__global__ void optimizer_kernel(DeviceModel m, DeviceData d, const float* grads) {
    const nn::OptimizerStep<float> c = nn::optimizer_step_constants<float>(m.optimizer, *d.step_count + 1);
    nn::with_optimizer(m.optimizer.kind, [&]<OptimizerKind K>() {
        for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < m.n_params; p += int64_t(gridDim.x) * blockDim.x)
            nn::update_parameter<K>(c, d.params[p], grads[p], d.slots, p, m.n_params);
    });
}

// After a step: one more optimizer step taken, the cursor on the next step.
__global__ void advance_kernel(DeviceData d, GraphCursor* cur) {
    ++*d.step_count;
    ++cur->step;
}

}  // namespace onefit::cuda
