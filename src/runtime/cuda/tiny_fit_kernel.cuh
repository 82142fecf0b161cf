// The persistent kernel for tiny models: ONE thread block runs every step of every epoch of the
// fit, validation and metric sums included, with parameters, gradients, optimizer state and the
// batch's activations in shared memory. The host launches it once for the whole fit (or once
// per epoch when it must look), so a fit of the seed's Iris model costs one launch instead of
// hundreds of host round trips. The math is the shared ONEFIT_HD code of src/nn.
#pragma once
#include <cstdint>

#include "core/rng.hpp"
#include "nn/activation.hpp"
#include "nn/losses.hpp"
#include "nn/metrics.hpp"
#include "nn/optimizer_math.hpp"
#include "runtime/cuda/device_program.cuh"

namespace onefit::cuda {

inline constexpr int kTinyThreads = 256;

// Shared-memory layout, in floats. The host computes it too, to decide whether the model fits.
struct TinyLayout {
    int64_t params, grads, slots, xb, yb, act[kMaxOps], scratch, total;
};

__host__ __device__ inline TinyLayout tiny_layout(const DeviceModel& m, int x_width, int y_width, int max_rows) {
    TinyLayout l{};
    int64_t at = 0;
    l.params = at, at += m.n_params;
    l.grads = at, at += m.n_params;
    l.slots = at, at += m.n_params * m.n_slots;
    l.xb = at, at += int64_t(max_rows) * x_width;
    l.yb = at, at += int64_t(max_rows) * y_width;
    for (int i = 0; i < m.n_ops; ++i) {  // z, a, da per op, each max_rows x out
        l.act[i] = at;
        at += 3 * int64_t(max_rows) * m.ops[i].out;
    }
    l.scratch = at, at += int64_t(kTinyThreads) * (1 + kMaxMetrics);
    l.total = at;
    return l;
}

struct TinyBuffers {
    float *params, *grads, *slots, *xb, *yb, *scratch;
    float* z[kMaxOps];
    float* a[kMaxOps];
    float* da[kMaxOps];
};

// Sum of one value per thread, returned to every thread (fixed order: deterministic).
__device__ inline double block_sum(float* scratch, float v) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    double total = 0;
    for (int i = 0; i < blockDim.x; ++i) total += scratch[i];
    __syncthreads();
    return total;
}

__device__ inline float weight_at(const DeviceOp& op, const float* params, int k, int j) {
    return op.out_major ? params[op.weight + int64_t(j) * op.in + k] : params[op.weight + int64_t(k) * op.out + j];
}

__device__ inline void tiny_forward(const DeviceModel& m, TinyBuffers& b, const float* x, int rows, bool training,
                                    int64_t step) {
    const float* in = x;
    for (int i = 0; i < m.n_ops; ++i) {
        const DeviceOp& op = m.ops[i];
        const int n = rows * op.out;
        if (op.kind == 0) {
            for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {  // z = x W + b
                const int r = idx / op.out, j = idx % op.out;
                float s = op.use_bias ? b.params[op.bias + j] : 0.0f;
                for (int k = 0; k < op.in; ++k) s += in[r * op.in + k] * weight_at(op, b.params, k, j);
                b.z[i][idx] = s;
            }
            __syncthreads();
            if (op.activation == Activation::softmax) {
                for (int r = threadIdx.x; r < rows; r += blockDim.x) {
                    const float* zr = b.z[i] + r * op.out;
                    float* ar = b.a[i] + r * op.out;
                    float mx = zr[0], s = 0;
                    for (int j = 1; j < op.out; ++j) mx = fmaxf(mx, zr[j]);
                    for (int j = 0; j < op.out; ++j) s += (ar[j] = nn::exp_fast(zr[j] - mx));
                    for (int j = 0; j < op.out; ++j) ar[j] /= s;
                }
            } else {
                nn::with_activation(op.activation, [&]<Activation A>() {
                    for (int idx = threadIdx.x; idx < n; idx += blockDim.x) b.a[i][idx] = nn::activate<A>(b.z[i][idx]);
                });
            }
        } else {  // inverted dropout, mask from (seed, step, op): the CPU draws the same one
            const uint64_t key = dropout_key(m.dropout_seed, step, i);
            const float keep = 1.0f / (1.0f - op.rate);
            for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
                const float mask = !training || op.rate == 0.0f ? 1.0f
                                   : hash_uniform(key, uint64_t(idx)) < op.rate ? 0.0f : keep;
                b.z[i][idx] = mask;
                b.a[i][idx] = in[idx] * mask;
            }
        }
        __syncthreads();
        in = b.a[i];
    }
}

// Loss (and, with grad, dL/d(last output or logits) into da[last]) plus metric sums, per thread.
__device__ inline void tiny_loss(const DeviceModel& m, TinyBuffers& b, const float* y, int y_width, int rows,
                                 bool grad, LogSums& sums) {
    const int last = m.n_ops - 1, w = m.output_width;
    const float* in = m.loss_takes_logits ? b.z[last] : b.a[last];
    const float scale = 1.0f / float(rows);
    float loss = 0;
    if (m.loss == LossKind::categorical_crossentropy || m.loss == LossKind::sparse_categorical_crossentropy) {
        const bool sparse = m.loss == LossKind::sparse_categorical_crossentropy;
        for (int r = threadIdx.x; r < rows; r += blockDim.x)
            loss += nn::crossentropy_row(in + r * w, y + r * y_width, w, sparse, m.loss_takes_logits != 0,
                                         grad ? b.da[last] + r * w : nullptr, scale);
    } else {  // labels are packed as wide as the output: one element per thread
        const float elem_scale = scale / float(w);
        for (int idx = threadIdx.x; idx < rows * w; idx += blockDim.x) {
            nn::ValueAndGrad<float> f{};
            if (m.loss == LossKind::binary_crossentropy && m.loss_takes_logits) f = nn::bce_logit_loss(in[idx], y[idx]);
            else if (m.loss == LossKind::log_cosh) f = nn::element_loss<LossKind::log_cosh>(in[idx], y[idx], 0.0f);
            else if (m.loss == LossKind::mean_squared_error) f = nn::element_loss<LossKind::mean_squared_error>(in[idx], y[idx], 0.0f);
            else if (m.loss == LossKind::mean_absolute_error) f = nn::element_loss<LossKind::mean_absolute_error>(in[idx], y[idx], 0.0f);
            else if (m.loss == LossKind::huber) f = nn::element_loss<LossKind::huber>(in[idx], y[idx], m.huber_delta);
            else f = nn::element_loss<LossKind::binary_crossentropy>(in[idx], y[idx], 0.0f);
            loss += f.value / float(w);
            if (grad) b.da[last][idx] = f.grad * elem_scale;
        }
    }
    sums.loss += block_sum(b.scratch, loss);
    for (int k = 0; k < m.n_metrics; ++k) {
        float v = 0;
        for (int r = threadIdx.x; r < rows; r += blockDim.x)
            v += float(nn::metric_sum(m.metrics[k], b.a[last] + r * w, y + r * y_width, 1, w, y_width));
        sums.metrics[k] += block_sum(b.scratch, v);
    }
    sums.samples += rows;
    __syncthreads();
}

__device__ inline void tiny_backward(const DeviceModel& m, TinyBuffers& b, const float* x, int rows) {
    for (int i = m.n_ops - 1; i >= 0; --i) {
        const DeviceOp& op = m.ops[i];
        const float* in = i == 0 ? x : b.a[i - 1];
        float* din = i == 0 ? nullptr : b.da[i - 1];
        float* dz = b.da[i];
        const int n = rows * op.out;
        if (op.kind == 1) {
            if (din)
                for (int idx = threadIdx.x; idx < n; idx += blockDim.x) din[idx] = dz[idx] * b.z[i][idx];
            __syncthreads();
            continue;
        }
        const bool fused = i == m.n_ops - 1 && m.loss_takes_logits;
        if (!fused && op.activation == Activation::softmax) {
            for (int r = threadIdx.x; r < rows; r += blockDim.x) {
                const float* p = b.a[i] + r * op.out;
                float* g = dz + r * op.out;
                float dot = 0;
                for (int j = 0; j < op.out; ++j) dot += g[j] * p[j];
                for (int j = 0; j < op.out; ++j) g[j] = p[j] * (g[j] - dot);
            }
        } else if (!fused) {
            nn::with_activation(op.activation, [&]<Activation A>() {
                for (int idx = threadIdx.x; idx < n; idx += blockDim.x)
                    dz[idx] *= nn::activation_slope<A>(b.z[i][idx], b.a[i][idx]);
            });
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < op.in * op.out; idx += blockDim.x) {  // dW(k, j) = sum_r x[r,k] dz[r,j]
            const int k = idx / op.out, j = idx % op.out;
            float s = 0;
            for (int r = 0; r < rows; ++r) s += in[r * op.in + k] * dz[r * op.out + j];
            b.grads[op.out_major ? op.weight + int64_t(j) * op.in + k : op.weight + idx] = s;
        }
        if (op.use_bias)
            for (int j = threadIdx.x; j < op.out; j += blockDim.x) {
                float s = 0;
                for (int r = 0; r < rows; ++r) s += dz[r * op.out + j];
                b.grads[op.bias + j] = s;
            }
        if (din)
            for (int idx = threadIdx.x; idx < rows * op.in; idx += blockDim.x) {  // dx(r, k) = sum_j dz[r,j] W(k,j)
                const int r = idx / op.in, k = idx % op.in;
                float s = 0;
                for (int j = 0; j < op.out; ++j) s += dz[r * op.out + j] * weight_at(op, b.params, k, j);
                din[idx] = s;
            }
        __syncthreads();
    }
}

__device__ inline void tiny_optimizer_step(const DeviceModel& m, TinyBuffers& b, int64_t t) {
    const nn::OptimizerStep<float> c = nn::optimizer_step_constants<float>(m.optimizer, t);
    nn::with_optimizer(m.optimizer.kind, [&]<OptimizerKind K>() {
        for (int64_t p = threadIdx.x; p < m.n_params; p += blockDim.x)
            nn::update_parameter<K>(c, b.params[p], b.grads[p], b.slots, p, m.n_params);
    });
    __syncthreads();
}

__device__ inline void tiny_validate(const DeviceModel& m, const DeviceData& d, TinyBuffers& b, LogSums& sums) {
    int64_t row = 0;
    for (int v = 0; v < d.n_val_batches; ++v) {
        const int rows = d.val_batch_rows[v];
        tiny_forward(m, b, d.val_x + row * d.x_width, rows, false, 0);
        tiny_loss(m, b, d.val_y + row * d.y_width, d.y_width, rows, false, sums);
        row += rows;
    }
}

__global__ void __launch_bounds__(kTinyThreads) tiny_fit_kernel(DeviceModel m, DeviceData d, LaunchRange range) {
    extern __shared__ float smem[];
    const TinyLayout l = tiny_layout(m, d.x_width, d.y_width, d.max_rows);
    TinyBuffers b{smem + l.params, smem + l.grads, smem + l.slots, smem + l.xb, smem + l.yb, smem + l.scratch, {}, {}, {}};
    for (int i = 0; i < m.n_ops; ++i) {
        const int64_t size = int64_t(d.max_rows) * m.ops[i].out;
        b.z[i] = smem + l.act[i], b.a[i] = b.z[i] + size, b.da[i] = b.a[i] + size;
    }
    for (int64_t p = threadIdx.x; p < m.n_params; p += blockDim.x) b.params[p] = d.params[p];
    for (int64_t p = threadIdx.x; p < m.n_params * m.n_slots; p += blockDim.x) b.slots[p] = d.slots[p];
    int64_t t = *d.step_count;
    __syncthreads();

    if (range.validate_epoch >= 0) {
        LogSums sums{};
        tiny_validate(m, d, b, sums);
        if (threadIdx.x == 0) d.logs[range.validate_epoch].validation = sums;
        return;
    }
    if (range.step_begin >= range.step_end) return;
    int epoch = 0;
    while (d.epoch_first_step[epoch + 1] <= range.step_begin) ++epoch;
    LogSums train = d.logs[epoch].train;  // continue the epoch's sums (chunked launches)
    bool unsaved = false;
    for (int64_t s = range.step_begin; s < range.step_end; ++s) {
        const int rows = d.batch_rows[s];
        const int32_t* order = d.order + d.batch_start[s];
        for (int idx = threadIdx.x; idx < rows * d.x_width; idx += blockDim.x)  // gather the batch
            b.xb[idx] = d.x[int64_t(order[idx / d.x_width]) * d.x_width + idx % d.x_width];
        for (int idx = threadIdx.x; idx < rows * d.y_width; idx += blockDim.x)
            b.yb[idx] = d.y[int64_t(order[idx / d.y_width]) * d.y_width + idx % d.y_width];
        __syncthreads();
        tiny_forward(m, b, b.xb, rows, true, t);
        tiny_loss(m, b, b.yb, d.y_width, rows, true, train);
        tiny_backward(m, b, b.xb, rows);
        tiny_optimizer_step(m, b, ++t);
        unsaved = true;
        if (s + 1 == d.epoch_first_step[epoch + 1]) {  // the epoch ends here
            if (threadIdx.x == 0) d.logs[epoch].train = train;
            unsaved = false;
            if (range.validate) {
                LogSums val{};
                tiny_validate(m, d, b, val);
                if (threadIdx.x == 0) d.logs[epoch].validation = val;
            }
            ++epoch;
            train = LogSums{};
        }
    }
    if (threadIdx.x == 0 && unsaved) d.logs[epoch].train = train;  // a chunk that stops inside an epoch
    __syncthreads();
    for (int64_t p = threadIdx.x; p < m.n_params; p += blockDim.x) d.params[p] = b.params[p];
    for (int64_t p = threadIdx.x; p < m.n_params * m.n_slots; p += blockDim.x) d.slots[p] = b.slots[p];
    if (threadIdx.x == 0) *d.step_count = t;
}

}  // namespace onefit::cuda
