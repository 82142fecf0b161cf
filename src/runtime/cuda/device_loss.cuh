// One batch's loss and metric sums, computed by one thread block: the persistent kernel's loss
// step and the graph path's loss kernel both call this. The per-row math is src/nn's
// (sample_loss, metric_sum), shared with the CPU.
#pragma once
#include "nn/losses.hpp"
#include "nn/metrics.hpp"
#include "runtime/cuda/device_model.hpp"

namespace onefit::cuda {

inline constexpr int kBlockThreads = 256;

// Sum of one value per thread, returned to every thread (fixed order: deterministic).
__device__ inline double block_sum(float* scratch, float v) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    double total = 0;
    for (int i = 0; i < blockDim.x; ++i) total += scratch[i];
    __syncthreads();
    return total;
}

// Adds the loss, metric and sample sums of `rows` rows to sums (the same values in every
// thread). logits: the last op's pre-activation; out: its output. With g, also writes
// dL/d(loss input) / rows there (Keras's "sum over batch size"). scratch: blockDim.x floats.
__device__ inline void batch_loss(const DeviceModel& m, const float* logits, const float* out, const float* y,
                                  int y_width, int rows, float* g, float* scratch, LogSums& sums) {
    const int w = m.output_width;
    const float* in = m.loss_takes_logits ? logits : out;
    const float scale = 1.0f / float(rows);
    float loss = 0;
    for (int r = threadIdx.x; r < rows; r += blockDim.x)
        loss += nn::sample_loss(m.loss, m.loss_takes_logits, in + int64_t(r) * w, y + int64_t(r) * y_width,
                                int64_t(w), g ? g + int64_t(r) * w : nullptr, scale);
    sums.loss += block_sum(scratch, loss);
    for (int k = 0; k < m.n_metrics; ++k) {
        float v = 0;
        for (int r = threadIdx.x; r < rows; r += blockDim.x)
            v += float(nn::metric_sum(m.metrics[k], out + int64_t(r) * w, y + int64_t(r) * y_width, 1, w, y_width));
        sums.metrics[k] += block_sum(scratch, v);
    }
    sums.samples += rows;
    __syncthreads();
}

}  // namespace onefit::cuda
