// The persistent kernel for tiny models: ONE thread block runs every step of every epoch of the
// fit (a sweep's members: a block each, tiny_members_kernel), validation and metric sums
// included, with parameters, gradients, optimizer state and the batch's activations in shared
// memory. The host launches it once for the whole fit (or once
// per epoch when it must look), so a fit of the seed's Iris model costs one launch instead of
// hundreds of host round trips. The math is the shared ONEFIT_HD code of src/nn.
#pragma once
#include <cstdint>

#include "core/rng.hpp"
#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/optimizer_math.hpp"
#include "runtime/cuda/device_loss.cuh"
#include "runtime/cuda/device_model.hpp"

namespace onefit::cuda {

inline constexpr int kTinyThreads = kBlockThreads;

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
    l.scratch = at, at += kTinyThreads;  // block_sum's
    l.total = at;
    return l;
}

struct TinyBuffers {
    float *params, *grads, *slots, *xb, *yb, *scratch;
    float* z[kMaxOps];   // Dropout: its mask
    float* a[kMaxOps];
    float* da[kMaxOps];
};

__device__ inline float weight_at(const DeviceOp& op, const float* params, int k, int j) {
    return op.out_major ? params[op.weight + int64_t(j) * op.in + k] : params[op.weight + int64_t(k) * op.out + j];
}

__device__ inline void tiny_forward(const DeviceModel& m, TinyBuffers& b, const float* x, int rows, bool training,
                                    int64_t step) {
    const float* in = x;
    for (int i = 0; i < m.n_ops; ++i) {
        const DeviceOp& op = m.ops[i];
        const int n = rows * op.out;
        if (op.kind == Layer::Kind::Dense) {
            for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {  // z = x W + b
                const int r = idx / op.out, j = idx % op.out;
                float s = op.use_bias ? b.params[op.bias + j] : 0.0f;
                for (int k = 0; k < op.in; ++k) s += in[r * op.in + k] * weight_at(op, b.params, k, j);
                b.z[i][idx] = s;
            }
            __syncthreads();
            if (op.activation == Activation::softmax) {
                for (int r = threadIdx.x; r < rows; r += blockDim.x)
                    nn::softmax_row(b.z[i] + r * op.out, b.a[i] + r * op.out, int64_t(op.out));
            } else {
                nn::with_activation(op.activation, [&]<Activation A>() {
                    for (int idx = threadIdx.x; idx < n; idx += blockDim.x) b.a[i][idx] = nn::activate<A>(b.z[i][idx]);
                });
            }
        } else {  // Dropout: the mask (kept in z) from (seed, step, op), the same one the CPU draws
            const uint64_t key = dropout_key(m.dropout_seed, step, i);
            const float keep = nn::dropout_keep_scale<float>(op.rate);
            for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
                b.z[i][idx] = nn::dropout_mask(training, op.rate, keep, key, uint64_t(idx));
                b.a[i][idx] = in[idx] * b.z[i][idx];
            }
        }
        __syncthreads();
        in = b.a[i];
    }
}

__device__ inline void tiny_backward(const DeviceModel& m, TinyBuffers& b, const float* x, int rows) {
    for (int i = m.n_ops - 1; i >= 0; --i) {
        const DeviceOp& op = m.ops[i];
        const float* in = i == 0 ? x : b.a[i - 1];
        float* din = i == 0 ? nullptr : b.da[i - 1];
        float* dz = b.da[i];
        const int n = rows * op.out;
        if (op.kind == Layer::Kind::Dropout) {
            if (din)
                for (int idx = threadIdx.x; idx < n; idx += blockDim.x) din[idx] = dz[idx] * b.z[i][idx];
            __syncthreads();
            continue;
        }
        const bool fused = i == m.n_ops - 1 && m.loss_takes_logits;  // the loss gave dL/dz already
        if (!fused && op.activation == Activation::softmax) {
            for (int r = threadIdx.x; r < rows; r += blockDim.x)
                nn::softmax_backward_row(b.a[i] + r * op.out, dz + r * op.out, int64_t(op.out));
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
    const int last = m.n_ops - 1;
    int64_t row = 0;
    for (int v = 0; v < d.n_val_batches; ++v) {
        const int rows = d.val_batch_rows[v];
        tiny_forward(m, b, d.val_x + row * d.x_width, rows, false, 0);
        batch_loss(m, b.z[last], b.a[last], d.val_y + row * d.y_width, d.y_width, rows, nullptr, b.scratch, sums);
        row += rows;
    }
}

// One fit's launch range in one block (the kernels below).
__device__ inline void tiny_fit(const DeviceModel& m, const DeviceData& d, LaunchRange range) {
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
    const int last = m.n_ops - 1;
    int epoch = epoch_of_step(d.epoch_first_step, range.step_begin);
    LogSums train = d.logs[epoch].train;  // continue the epoch's sums (chunked launches)
    bool unsaved = false;
    for (int64_t s = range.step_begin; s < range.step_end; ++s) {
        const int rows = d.batch_rows[s];
        const int32_t* order = d.order + d.batch_start[s];
        for (int idx = threadIdx.x; idx < rows * d.x_width; idx += blockDim.x)  // gather the batch
            b.xb[idx] = batch_element(d.x, d.x_width, order, idx);
        for (int idx = threadIdx.x; idx < rows * d.y_width; idx += blockDim.x)
            b.yb[idx] = batch_element(d.y, d.y_width, order, idx);
        __syncthreads();
        tiny_forward(m, b, b.xb, rows, true, t);
        batch_loss(m, b.z[last], b.a[last], b.yb, d.y_width, rows, b.da[last], b.scratch, train);
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
            // As DeviceProgram::finite_loss: stop after this epoch, its parameters kept. Every
            // thread holds the same sums (block_sum), so all of them leave the loop together.
            if (range.stop_after_nonfinite && !isfinite(train.loss)) break;
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

__global__ void __launch_bounds__(kTinyThreads) tiny_fit_kernel(DeviceModel m, DeviceData d, LaunchRange range) {
    tiny_fit(m, d, range);
}

// Many fits of one shape and schedule in ONE launch (a sweep's members): block k runs member k's
// fit, its model and data read from the arrays, each exactly as tiny_fit_kernel runs it alone.
__global__ void __launch_bounds__(kTinyThreads)
    tiny_members_kernel(const DeviceModel* models, const DeviceData* data, LaunchRange range) {
    const DeviceModel m = models[blockIdx.x];
    const DeviceData d = data[blockIdx.x];
    tiny_fit(m, d, range);
}

}  // namespace onefit::cuda
