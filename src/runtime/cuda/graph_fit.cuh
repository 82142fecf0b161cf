// Models too large for one block's shared memory: each step is a short sequence of cuBLASLt
// products (bias fused in the epilogue) and fused elementwise kernels over preallocated device
// buffers. Everything that changes from step to step (which rows, Adam's t, which epoch's log)
// is read from device memory, so one epoch's sequence is captured once into a CUDA graph and
// replayed with one launch per epoch. No host synchronisation until the host reads the logs.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <tuple>
#include <vector>

#include "runtime/cuda/cublaslt_loader.cuh"
#include "runtime/cuda/cuda_check.cuh"
#include "runtime/cuda/device_program.cuh"
#include "runtime/cuda/tiny_fit_kernel.cuh"

namespace onefit::cuda {

// Device-side cursor of the graph path: the global step being run and the fit's epoch table.
struct GraphCursor {
    int64_t step;
};

__device__ inline int epoch_of_step(const DeviceData& d, int64_t step) {
    int e = 0;
    while (d.epoch_first_step[e + 1] <= step) ++e;
    return e;
}

__global__ void gather_batch_kernel(DeviceData d, const GraphCursor* cur, float* xb, float* yb, int rows) {
    const int32_t* order = d.order + d.batch_start[cur->step];
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * d.x_width; idx += gridDim.x * blockDim.x)
        xb[idx] = d.x[int64_t(order[idx / d.x_width]) * d.x_width + idx % d.x_width];
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < rows * d.y_width; idx += gridDim.x * blockDim.x)
        yb[idx] = d.y[int64_t(order[idx / d.y_width]) * d.y_width + idx % d.y_width];
}

__global__ void activation_kernel(Activation act, const float* z, float* a, int rows, int width) {
    if (act == Activation::softmax) {
        for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
            const float* zr = z + int64_t(r) * width;
            float* ar = a + int64_t(r) * width;
            float mx = zr[0], s = 0;
            for (int j = 1; j < width; ++j) mx = fmaxf(mx, zr[j]);
            for (int j = 0; j < width; ++j) s += (ar[j] = nn::exp_fast(zr[j] - mx));
            for (int j = 0; j < width; ++j) ar[j] /= s;
        }
        return;
    }
    nn::with_activation(act, [&]<Activation A>() {
        for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < int64_t(rows) * width; i += gridDim.x * blockDim.x)
            a[i] = nn::activate<A>(z[i]);
    });
}

__global__ void activation_backward_kernel(Activation act, const float* z, const float* a, float* g, int rows,
                                           int width) {
    if (act == Activation::softmax) {
        for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
            const float* p = a + int64_t(r) * width;
            float* gr = g + int64_t(r) * width;
            float dot = 0;
            for (int j = 0; j < width; ++j) dot += gr[j] * p[j];
            for (int j = 0; j < width; ++j) gr[j] = p[j] * (gr[j] - dot);
        }
        return;
    }
    nn::with_activation(act, [&]<Activation A>() {
        for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < int64_t(rows) * width; i += gridDim.x * blockDim.x)
            g[i] *= nn::activation_slope<A>(z[i], a[i]);
    });
}

__global__ void dropout_kernel(DeviceModel m, const GraphCursor* cur, int op, const float* in, float* mask, float* out,
                               int n, int64_t base_step) {
    const uint64_t key = dropout_key(m.dropout_seed, base_step + cur->step, op);
    const float rate = m.ops[op].rate, keep = 1.0f / (1.0f - rate);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        mask[i] = hash_uniform(key, uint64_t(i)) < rate ? 0.0f : keep;
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

// Loss and metrics of one batch, one block: gradient into g (when training), sums into a log.
__global__ void loss_kernel(DeviceModel m, DeviceData d, const GraphCursor* cur, const float* logits,
                            const float* probs, const float* y, float* g, int rows, int validate_epoch) {
    __shared__ float scratch[kTinyThreads];
    TinyBuffers b{};
    b.scratch = scratch;
    const int last = m.n_ops - 1;
    b.z[last] = const_cast<float*>(logits);
    b.a[last] = const_cast<float*>(probs);
    b.da[last] = g;
    LogSums sums{};
    tiny_loss(m, b, y, d.y_width, rows, g != nullptr, sums);
    if (threadIdx.x != 0) return;
    // validate_epoch: >= 0 that epoch's validation; -2 the validation of the epoch just trained
    // (inside a replayed graph the epoch is only known on the device); -1 training.
    const int epoch = validate_epoch == -2 ? epoch_of_step(d, cur->step - 1) : validate_epoch;
    LogSums& log = validate_epoch != -1 ? d.logs[epoch].validation : d.logs[epoch_of_step(d, cur->step)].train;
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

__global__ void advance_kernel(DeviceData d, GraphCursor* cur) {
    ++*d.step_count;
    ++cur->step;
}

__global__ void set_cursor_kernel(GraphCursor* cur, int64_t step) { cur->step = step; }

class GraphFit {
public:
    GraphFit(const DeviceModel& m, const DeviceData& d, const std::vector<int64_t>& epoch_first_step,
             const std::vector<int32_t>& batch_rows, const std::vector<int32_t>& val_batch_rows, int64_t base_step,
             std::atomic<long long>& launches);
    ~GraphFit();
    void run(LaunchRange range);
    cudaStream_t stream() const { return stream_; }

private:
    // Row-major C[M,N] = op(A) op(B) (+ bias per column of C, in the epilogue), beta 0.
    void matmul(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                float* c, int ldc, const float* bias);
    void step(int rows);            // one training step on stream_, for the cursor's step
    void validate(int epoch);       // the validation batches on stream_
    void forward(const float* x, int rows, bool training);
    int launch_grid(int64_t n) const { return int(std::min<int64_t>((n + 255) / 256, 1024)); }

    DeviceModel m_;
    DeviceData d_;
    std::vector<int64_t> epoch_first_step_;
    std::vector<int32_t> batch_rows_host_, val_rows_host_;
    std::atomic<long long>& launches_;
    cudaStream_t stream_ = nullptr;
    cublasLtHandle_t lt_ = nullptr;
    void* workspace_ = nullptr;
    size_t workspace_bytes_ = 32u << 20;
    float *buffers_ = nullptr, *grads_ = nullptr, *xb_ = nullptr, *yb_ = nullptr;
    float *z_[kMaxOps] = {}, *a_[kMaxOps] = {}, *da_[kMaxOps] = {};
    GraphCursor* cursor_ = nullptr;
    int64_t base_step_ = 0;
    std::map<std::vector<int32_t>, cudaGraphExec_t> graphs_;  // by the epoch's batch sizes
};

inline GraphFit::GraphFit(const DeviceModel& m, const DeviceData& d, const std::vector<int64_t>& epoch_first_step,
                          const std::vector<int32_t>& batch_rows, const std::vector<int32_t>& val_batch_rows,
                          int64_t base_step, std::atomic<long long>& launches)
    : m_(m), d_(d), epoch_first_step_(epoch_first_step), batch_rows_host_(batch_rows), val_rows_host_(val_batch_rows),
      launches_(launches), base_step_(base_step) {
    ONEFIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtCreate(&lt_));
    ONEFIT_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
    // Every activation, gradient and batch buffer, allocated once.
    int64_t floats = m.n_params + int64_t(d.max_rows) * (d.x_width + d.y_width);
    for (int i = 0; i < m.n_ops; ++i) floats += 3 * int64_t(d.max_rows) * m.ops[i].out;
    ONEFIT_CUDA_CHECK(cudaMalloc(&buffers_, size_t(floats) * sizeof(float)));
    float* at = buffers_;
    grads_ = at, at += m.n_params;
    xb_ = at, at += int64_t(d.max_rows) * d.x_width;
    yb_ = at, at += int64_t(d.max_rows) * d.y_width;
    for (int i = 0; i < m.n_ops; ++i) {
        const int64_t size = int64_t(d.max_rows) * m.ops[i].out;
        z_[i] = at, a_[i] = at + size, da_[i] = at + 2 * size;
        at += 3 * size;
    }
    ONEFIT_CUDA_CHECK(cudaMalloc(&cursor_, sizeof(GraphCursor)));
}

inline GraphFit::~GraphFit() {
    for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
    cudaFree(cursor_);
    cudaFree(buffers_);
    cudaFree(workspace_);
    if (lt_) cublaslt().cublasLtDestroy(lt_);
    if (stream_) cudaStreamDestroy(stream_);
}

inline void GraphFit::matmul(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
                             int ldb, float* c, int ldc, const float* bias) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    cublasLtMatmulDesc_t op;
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, tb = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (bias) {
        const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    // Column-major shapes: A' = B^T-ish (n x k), B' = A^T-ish (k x m), C' = C^T (n x m).
    cublasLtMatrixLayout_t la, lb, lc;
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, trans_b ? k : n, trans_b ? n : k, ldb));
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, trans_a ? m : k, trans_a ? k : m, lda));
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, ldc));
    cublasLtMatmulPreference_t pref;
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulPreferenceCreate(&pref));
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                             &workspace_bytes_, sizeof workspace_bytes_));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulAlgoGetHeuristic(lt_, op, la, lb, lc, lc, pref, 1, &heuristic, &found));
    if (found == 0) throw Error("cuBLASLt found no algorithm for a " + std::to_string(m) + "x" + std::to_string(n) +
                                "x" + std::to_string(k) + " product");
    const float one = 1.0f, zero = 0.0f;
    ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmul(lt_, op, &one, b, la, a, lb, &zero, c, lc, c, lc, &heuristic.algo, workspace_,
                                       workspace_bytes_, stream_));
    ++launches_;
    cublaslt().cublasLtMatmulPreferenceDestroy(pref);
    cublaslt().cublasLtMatrixLayoutDestroy(lc);
    cublaslt().cublasLtMatrixLayoutDestroy(lb);
    cublaslt().cublasLtMatrixLayoutDestroy(la);
    cublaslt().cublasLtMatmulDescDestroy(op);
}

inline void GraphFit::forward(const float* x, int rows, bool training) {
    const float* in = x;
    for (int i = 0; i < m_.n_ops; ++i) {
        const DeviceOp& op = m_.ops[i];
        const int n = rows * op.out;
        if (op.kind == 0) {  // z = x W + b: W is (in, out), or (out, in) when out_major
            matmul(false, op.out_major != 0, rows, op.out, op.in, in, op.in, d_.params + op.weight,
                   op.out_major ? op.in : op.out, z_[i], op.out, op.use_bias ? d_.params + op.bias : nullptr);
            activation_kernel<<<launch_grid(op.activation == Activation::softmax ? rows : n), 256, 0, stream_>>>(
                op.activation, z_[i], a_[i], rows, op.out);
        } else if (training && op.rate > 0.0f) {
            dropout_kernel<<<launch_grid(n), 256, 0, stream_>>>(m_, cursor_, i, in, z_[i], a_[i], n, base_step_);
        } else {
            ONEFIT_CUDA_CHECK(cudaMemcpyAsync(a_[i], in, size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
        }
        ++launches_;
        in = a_[i];
    }
}

inline void GraphFit::step(int rows) {
    gather_batch_kernel<<<launch_grid(int64_t(rows) * d_.x_width), 256, 0, stream_>>>(d_, cursor_, xb_, yb_, rows);
    forward(xb_, rows, true);
    const int last = m_.n_ops - 1;
    loss_kernel<<<1, kTinyThreads, 0, stream_>>>(m_, d_, cursor_, z_[last], a_[last], yb_, da_[last], rows, -1);
    launches_ += 2;
    for (int i = last; i >= 0; --i) {
        const DeviceOp& op = m_.ops[i];
        const float* in = i == 0 ? xb_ : a_[i - 1];
        float* din = i == 0 ? nullptr : da_[i - 1];
        const int n = rows * op.out;
        if (op.kind == 1) {
            if (din) multiply_kernel<<<launch_grid(n), 256, 0, stream_>>>(da_[i], z_[i], din, n), ++launches_;
            continue;
        }
        if (!(i == last && m_.loss_takes_logits) && op.activation != Activation::linear)
            activation_backward_kernel<<<launch_grid(op.activation == Activation::softmax ? rows : n), 256, 0,
                                         stream_>>>(op.activation, z_[i], a_[i], da_[i], rows, op.out),
                ++launches_;
        if (op.out_major)  // dW (out, in) = dz^T x
            matmul(true, false, op.out, op.in, rows, da_[i], op.out, in, op.in, grads_ + op.weight, op.in, nullptr);
        else  // dW (in, out) = x^T dz
            matmul(true, false, op.in, op.out, rows, in, op.in, da_[i], op.out, grads_ + op.weight, op.out, nullptr);
        if (op.use_bias)
            column_sum_kernel<<<launch_grid(op.out), 256, 0, stream_>>>(da_[i], grads_ + op.bias, rows, op.out),
                ++launches_;
        if (din)  // dx = dz W^T
            matmul(false, op.out_major == 0, rows, op.in, op.out, da_[i], op.out, d_.params + op.weight,
                   op.out_major ? op.in : op.out, din, op.in, nullptr);
    }
    optimizer_kernel<<<launch_grid(m_.n_params), 256, 0, stream_>>>(m_, d_, grads_);
    advance_kernel<<<1, 1, 0, stream_>>>(d_, cursor_);
    launches_ += 2;
    ONEFIT_CUDA_CHECK(cudaGetLastError());
}

inline void GraphFit::validate(int epoch) {
    int64_t row = 0;
    const int last = m_.n_ops - 1;
    for (int32_t rows : val_rows_host_) {
        forward(d_.val_x + row * d_.x_width, rows, false);
        loss_kernel<<<1, kTinyThreads, 0, stream_>>>(m_, d_, cursor_, z_[last], a_[last], d_.val_y + row * d_.y_width,
                                                     nullptr, rows, epoch);
        ++launches_;
        row += rows;
    }
}

inline void GraphFit::run(LaunchRange range) {
    if (range.validate_epoch >= 0) {
        validate(range.validate_epoch);
    } else if (range.step_begin < range.step_end) {
        set_cursor_kernel<<<1, 1, 0, stream_>>>(cursor_, range.step_begin);
        ++launches_;
        int64_t s = range.step_begin;
        while (s < range.step_end) {
            size_t e = 0;
            while (epoch_first_step_[e + 1] <= s) ++e;
            const int64_t epoch_end = epoch_first_step_[e + 1];
            if (!range.validate || s != epoch_first_step_[e] || range.step_end < epoch_end) {
                for (; s < std::min(range.step_end, epoch_end); ++s) step(batch_rows_host_[size_t(s)]);
                continue;
            }
            // A whole epoch with validation: captured once per distinct batch-size sequence, then
            // replayed as one graph launch.
            const std::vector<int32_t> key(batch_rows_host_.begin() + s, batch_rows_host_.begin() + epoch_end);
            auto it = graphs_.find(key);
            if (it == graphs_.end()) {
                cudaGraph_t graph;
                ONEFIT_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
                const long long before = launches_.load();
                for (int64_t t = s; t < epoch_end; ++t) step(batch_rows_host_[size_t(t)]);
                validate(-2);
                launches_ = before;  // captured work runs inside one graph launch
                ONEFIT_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
                cudaGraphExec_t exec;
                ONEFIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
                ONEFIT_CUDA_CHECK(cudaGraphDestroy(graph));
                it = graphs_.emplace(key, exec).first;
            }
            ONEFIT_CUDA_CHECK(cudaGraphLaunch(it->second, stream_));
            ++launches_;
            s = epoch_end;
        }
    }
    ONEFIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace onefit::cuda
