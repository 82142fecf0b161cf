// Models too large for one block's shared memory: each step is a short sequence of cuBLASLt
// products (bias fused in the epilogue) and fused elementwise kernels over preallocated device
// buffers. Everything that changes from step to step (which rows, the optimizer step, which
// epoch's log) is read from device memory, so a stretch of steps is captured once into a CUDA
// graph and replayed for every epoch (or progress-bar chunk) with the same batch sizes: one
// graph launch per call from the host, never an eager kernel. No host synchronisation here;
// the caller synchronises when it reads the logs.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "runtime/cuda/cuda_check.cuh"
#include "runtime/cuda/device_layout.hpp"
#include "runtime/cuda/device_model.hpp"
#include "runtime/cuda/graph_cache.hpp"
#include "runtime/cuda/graph_kernels.cuh"
#include "runtime/cuda/matmul_plans.cuh"

namespace onefit::cuda {

// Graphs kept at once (GraphCache): an array fit needs one to three.
inline constexpr size_t kMaxGraphs = 8;

struct GraphDestroy {
    void operator()(cudaGraph_t g) const { cudaGraphDestroy(g); }
};
using GraphHandle = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDestroy>;

// A stream capture that is ended however the capturing code leaves: when it throws, the
// partial graph is ended and destroyed, so the stream can run eagerly again and nothing leaks.
class StreamCapture {
public:
    explicit StreamCapture(cudaStream_t stream) {
        ONEFIT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        stream_ = stream;
    }
    StreamCapture(const StreamCapture&) = delete;
    StreamCapture& operator=(const StreamCapture&) = delete;
    GraphHandle end() {
        cudaGraph_t graph = nullptr;
        const cudaStream_t stream = stream_;
        stream_ = nullptr;
        ONEFIT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        return GraphHandle(graph);
    }
    ~StreamCapture() {
        if (!stream_) return;
        cudaGraph_t graph = nullptr;
        cudaStreamEndCapture(stream_, &graph);  // an invalidated capture ends with an error and no graph
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError();  // the abandoned capture's error is not the next call's
    }

private:
    cudaStream_t stream_ = nullptr;
};

class GraphFit {
public:
    // batch_rows: rows of every global step; val_batch_rows: the validation batches, in order.
    GraphFit(const DeviceModel& m, const DeviceData& d, std::vector<int32_t> batch_rows,
             std::vector<int32_t> val_batch_rows, cudaStream_t stream);
    GraphFit(const GraphFit&) = delete;
    GraphFit& operator=(const GraphFit&) = delete;
    ~GraphFit();

    // Enqueues global steps [first, last), all of one epoch, then that epoch's validation when
    // validate: one graph launch.
    void run_steps(int64_t first, int64_t last, bool validate);
    // Enqueues the validation of the epoch whose last step ran last: one graph launch.
    void run_validation();

private:
    void launch(GraphKey key);
    cudaGraphExec_t capture(const GraphKey& key);
    void step(int rows);  // one training step, for the cursor's step
    void validate();      // every validation batch, into the log of the epoch just trained
    void forward(const float* x, int rows, bool training);
    void backward(int rows);
    static int grid(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 1024)); }

    DeviceModel m_;
    DeviceData d_;
    std::vector<int32_t> batch_rows_, val_rows_;
    cudaStream_t stream_;
    MatmulPlans matmuls_;
    DeviceMemory<char> buffers_;
    DeviceMemory<GraphCursor> cursor_;
    int64_t cursor_step_ = 0;  // where the device cursor is (the host set it, then steps advanced it)
    float *grads_ = nullptr, *xb_ = nullptr, *yb_ = nullptr;
    float *z_[kMaxOps] = {}, *a_[kMaxOps] = {}, *da_[kMaxOps] = {};
    GraphCache<cudaGraphExec_t> graphs_{kMaxGraphs};
};

inline GraphFit::GraphFit(const DeviceModel& m, const DeviceData& d, std::vector<int32_t> batch_rows,
                          std::vector<int32_t> val_batch_rows, cudaStream_t stream)
    : m_(m), d_(d), batch_rows_(std::move(batch_rows)), val_rows_(std::move(val_batch_rows)), stream_(stream),
      matmuls_(stream) {
    // Every activation, gradient and batch buffer in one allocation, each 256-byte aligned.
    std::vector<int64_t> widths;
    for (int i = 0; i < m.n_ops; ++i) widths.push_back(m.ops[i].out);
    const GraphBufferLayout l = graph_buffer_layout(m.n_params, d.max_rows, d.x_width, d.y_width, widths);
    char* base = nullptr;
    ONEFIT_CUDA_CHECK(cudaMalloc(&base, l.layout.total_bytes()));
    buffers_.reset(base);
    auto at = [&](size_t offset) { return reinterpret_cast<float*>(base + offset); };
    grads_ = at(l.grads), xb_ = at(l.xb), yb_ = at(l.yb);
    for (int i = 0; i < m.n_ops; ++i) z_[i] = at(l.z[size_t(i)]), a_[i] = at(l.a[size_t(i)]), da_[i] = at(l.da[size_t(i)]);
    GraphCursor* cursor = nullptr;
    ONEFIT_CUDA_CHECK(cudaMalloc(&cursor, sizeof(GraphCursor)));
    cursor_.reset(cursor);
    // On the fit's stream: a plain cudaMemcpy from pageable memory may return before its DMA
    // lands, and the legacy default stream does not order it before this non-blocking stream.
    const GraphCursor start{0};
    ONEFIT_CUDA_CHECK(cudaMemcpyAsync(cursor, &start, sizeof start, cudaMemcpyHostToDevice, stream_));
    ONEFIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

inline GraphFit::~GraphFit() {
    graphs_.for_each([](cudaGraphExec_t exec) { cudaGraphExecDestroy(exec); });
}

inline void GraphFit::run_steps(int64_t first, int64_t last, bool validate) {
    if (first >= last) return;
    if (cursor_step_ != first) {  // only if a caller skipped steps: the schedule runs in order
        const GraphCursor at{first};
        ONEFIT_CUDA_CHECK(cudaMemcpyAsync(cursor_.get(), &at, sizeof at, cudaMemcpyHostToDevice, stream_));
        ONEFIT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // `at` is on this stack
    }
    launch(graph_key(batch_rows_, first, last, validate && !val_rows_.empty()));
    cursor_step_ = last;
}

inline void GraphFit::run_validation() {
    if (!val_rows_.empty()) launch(GraphKey{{}, true});
}

inline void GraphFit::launch(GraphKey key) {
    cudaGraphExec_t* exec = graphs_.find(key);
    if (!exec) {
        const cudaGraphExec_t made = capture(key);
        if (const auto evicted = graphs_.insert(std::move(key), made)) cudaGraphExecDestroy(*evicted);  // freed when done
        ONEFIT_CUDA_CHECK(cudaGraphLaunch(made, stream_));
        return;
    }
    ONEFIT_CUDA_CHECK(cudaGraphLaunch(*exec, stream_));
}

inline cudaGraphExec_t GraphFit::capture(const GraphKey& key) {
    StreamCapture capture(stream_);
    for (int32_t rows : key.batch_rows) step(rows);
    if (key.validate) validate();
    const GraphHandle graph = capture.end();
    cudaGraphExec_t exec = nullptr;
    ONEFIT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
    return exec;
}

inline void GraphFit::forward(const float* x, int rows, bool training) {
    const float* in = x;
    for (int i = 0; i < m_.n_ops; ++i) {
        const DeviceOp& op = m_.ops[i];
        const int n = rows * op.out;
        if (op.kind == Layer::Kind::Dense) {  // z = x W + b: W is (in, out), or (out, in) when out_major
            const float* bias = op.use_bias ? d_.params + op.bias : nullptr;
            const bool bias_added = matmuls_.run(false, op.out_major, rows, op.out, op.in, in, op.in,
                                                 d_.params + op.weight, op.out_major ? op.in : op.out, z_[i], op.out, bias);
            activation_kernel<<<grid(op.activation == Activation::softmax ? rows : n), 256, 0, stream_>>>(
                op.activation, z_[i], a_[i], bias_added ? nullptr : bias, rows, op.out);
        } else {  // Dropout: the mask into z (all ones outside training)
            dropout_kernel<<<grid(n), 256, 0, stream_>>>(m_, d_, i, training, in, z_[i], a_[i], n);
        }
        ONEFIT_CUDA_CHECK_LAUNCH();
        in = a_[i];
    }
}

inline void GraphFit::backward(int rows) {
    const int last = m_.n_ops - 1;
    for (int i = last; i >= 0; --i) {
        const DeviceOp& op = m_.ops[i];
        const float* in = i == 0 ? xb_ : a_[i - 1];
        float* din = i == 0 ? nullptr : da_[i - 1];
        const int n = rows * op.out;
        if (op.kind == Layer::Kind::Dropout) {
            if (din) {
                multiply_kernel<<<grid(n), 256, 0, stream_>>>(da_[i], z_[i], din, n);
                ONEFIT_CUDA_CHECK_LAUNCH();
            }
            continue;
        }
        if (!(i == last && m_.loss_takes_logits) && op.activation != Activation::linear) {
            activation_backward_kernel<<<grid(op.activation == Activation::softmax ? rows : n), 256, 0, stream_>>>(
                op.activation, z_[i], a_[i], da_[i], rows, op.out);
            ONEFIT_CUDA_CHECK_LAUNCH();
        }
        if (op.out_major)  // dW (out, in) = dz^T x
            matmuls_.run(true, false, op.out, op.in, rows, da_[i], op.out, in, op.in, grads_ + op.weight, op.in, nullptr);
        else  // dW (in, out) = x^T dz
            matmuls_.run(true, false, op.in, op.out, rows, in, op.in, da_[i], op.out, grads_ + op.weight, op.out, nullptr);
        if (op.use_bias) {
            column_sum_kernel<<<grid(op.out), 256, 0, stream_>>>(da_[i], grads_ + op.bias, rows, op.out);
            ONEFIT_CUDA_CHECK_LAUNCH();
        }
        if (din)  // dx = dz W^T
            matmuls_.run(false, !op.out_major, rows, op.in, op.out, da_[i], op.out, d_.params + op.weight,
                         op.out_major ? op.in : op.out, din, op.in, nullptr);
    }
}

inline void GraphFit::step(int rows) {
    const int last = m_.n_ops - 1;
    gather_batch_kernel<<<grid(int64_t(rows) * std::max(d_.x_width, d_.y_width)), 256, 0, stream_>>>(
        d_, cursor_.get(), xb_, yb_, rows);
    ONEFIT_CUDA_CHECK_LAUNCH();
    forward(xb_, rows, true);
    loss_kernel<<<1, kBlockThreads, 0, stream_>>>(m_, d_, cursor_.get(), z_[last], a_[last], yb_, da_[last], rows,
                                                  LossLog::train);
    ONEFIT_CUDA_CHECK_LAUNCH();
    backward(rows);
    optimizer_kernel<<<grid(m_.n_params), 256, 0, stream_>>>(m_, d_, grads_);
    ONEFIT_CUDA_CHECK_LAUNCH();
    advance_kernel<<<1, 1, 0, stream_>>>(d_, cursor_.get());
    ONEFIT_CUDA_CHECK_LAUNCH();
}

inline void GraphFit::validate() {
    const int last = m_.n_ops - 1;
    int64_t row = 0;
    for (int32_t rows : val_rows_) {
        forward(d_.val_x + row * d_.x_width, rows, false);
        loss_kernel<<<1, kBlockThreads, 0, stream_>>>(m_, d_, cursor_.get(), z_[last], a_[last],
                                                      d_.val_y + row * d_.y_width, nullptr, rows,
                                                      LossLog::validation_ended);
        ONEFIT_CUDA_CHECK_LAUNCH();
        row += rows;
    }
}

}  // namespace onefit::cuda
