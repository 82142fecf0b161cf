// The CPU step loop. One training step, top to bottom: forward through every op, loss value
// and gradient, backward through every op, one optimizer pass over all parameters. Every
// buffer is allocated in the constructor; a step allocates nothing and dispatches once per op
// (a switch), never per element. The product layers (Dense, Conv2D) run here on the GEMM this
// machine measured fastest; every other kind runs its op's forward and backward (nn/ops/*.hpp)
// on buffers its spec asked for. Templated on the scalar: float for training, double for the
// finite-difference gradient tests.
//
// Small trailing layers (a classifier head after a big first layer: MNIST's 256 -> 10) are too
// small to split their products over threads, so they would leave the other core idle. Their
// rows are independent, though: the "tail" runs as two halves of the batch, one per thread, and
// the halves' parameter gradients are added at the end. Whether and where a step splits depends
// only on the model and the batch's row count, never on the thread count, so a fit's result
// does not depend on the machine's cores.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_RUNTIME_CPU_CPU_EXECUTOR_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_RUNTIME_CPU_CPU_EXECUTOR_HPP
#undef ONEFIT_RUNTIME_CPU_CPU_EXECUTOR_HPP
#else
#define ONEFIT_RUNTIME_CPU_CPU_EXECUTOR_HPP
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/rng.hpp"
#include "core/thread_pool.hpp"
#include "nn/activation.hpp"
#include "nn/regularizer_penalty.hpp"
#include "nn/dropout.hpp"
#include "nn/losses.hpp"
#include "nn/metrics.hpp"
#include "nn/ops/all_ops.hpp"
#include "nn/optimizer_math.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"
#include "runtime/cpu/dense_kernels.hpp"
#include "runtime/cpu/layer_kernels.hpp"
#include "runtime/cpu/shared_gradients.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(cpu)

// Parameter counts from which the optimizer pass is split over the thread pool.
inline constexpr int64_t kParallelUpdateMin = 1 << 16;
// The tail runs in two halves for batches of at least this many rows, when its products come
// to at least this many flops per step (a parallel_for costs ~1 us; the seed's whole model is
// ~30 kflop per step and never splits).
inline constexpr int64_t kSplitMinRows = 32;
inline constexpr double kSplitMinFlops = 1 << 19;
// A batch's image ops (im2col, col2im, pooling) split over the pool from this many input plus
// output values (a parallel_for's ~1 us against ~10 us of copying).
inline constexpr int64_t kSplitMinImageValues = 1 << 15;

template <class T>
class CpuExecutor {
public:
    CpuExecutor(const TrainingProgram& program, int64_t max_rows, std::vector<nn::Metric> metrics, int64_t y_width,
                uint64_t dropout_seed)
        : program_(program), ops_(program.ops), max_rows_(max_rows), y_width_(y_width),
          metrics_(std::move(metrics)), params_(program.params.begin(), program.params.end()),
          grads_(params_.size()), state_(program.state.begin(), program.state.end()),
          slots_(program.optimizer_slots.begin(), program.optimizer_slots.end()),
          step_(program.optimizer_step), dropout_seed_(dropout_seed) {
        for (const nn::Metric& m : metrics_) metric_counts_.emplace_back(static_cast<size_t>(m.counts), 0.0);
        for (const ProgramOp& op : ops_)
            for (const ParamRef& p : op.params) {
                if (p.trainable) gradient_arrays_.push_back({p.offset, p.offset + shape_elements(p.shape)});
                if (p.trainable && p.regularizer.active())
                    regularized_.push_back({p.offset, p.offset + shape_elements(p.shape), p.regularizer});
            }
        const size_t n = ops_.size();
        for (size_t i = 0; i < n; ++i)
            if (ops_[i].activity_regularizer().active()) activity_ops_.push_back(i);
        z_.resize(n), a_.resize(n), da_.resize(n), scratch_.resize(n), cols_.resize(n), indices_.resize(n);
        splits_.resize(n);
        size_t dcols = 0;
        for (size_t i = 0; i < n; ++i) {
            const ProgramOp& op = ops_[i];
            const size_t size = static_cast<size_t>(max_rows * op.out_width);
            z_[i].assign(size, T(0));
            da_[i].assign(size, T(0));
            if (op.activation() != Activation::linear) a_[i].assign(size, T(0));
            scratch_[i].assign(static_cast<size_t>(max_rows * op.spec.scratch_per_sample + op.spec.op_scratch), T(0));
            indices_[i].assign(static_cast<size_t>(max_rows * op.spec.indices_per_sample), 0);
            // Parts of a batch would each write the op's whole parameter gradients or per-batch
            // scratch: such ops (and any whose samples depend on each other) run whole.
            splits_[i] = op.spec.input.size() == 3 && op.inputs.size() == 1 && op.spec.rows_independent &&
                         op.spec.op_scratch == 0 &&
                         (op.has_product() || op.trainable_count == 0);
            if (op.kind == Layer::Kind::Conv2D && !op.conv.identity_patches) {
                const size_t patches = static_cast<size_t>(max_rows * op.spec.window.out_h * op.spec.window.out_w * op.conv.patch);
                cols_[i].assign(patches, T(0));
                if (op.inputs[0] >= 0) dcols = std::max(dcols, patches);
            }
            // The GEMM library is chosen (measured, the first time on a machine) here, on the
            // calling thread, not in a step on a pool worker.
            const bool blas = (op.kind == Layer::Kind::Dense && op.dense.use_blas) ||
                              (op.kind == Layer::Kind::Conv2D && op.conv.use_blas);
            if (std::is_same_v<T, float> && blas) prepare_gemm_choice();
        }
        dcols_.assign(dcols, T(0));
        if (program.input_shapes.size() > 1) inputs_.assign(static_cast<size_t>(max_rows * program.input_width), T(0));
        for (size_t k = 0; k < program.input_shapes.size(); ++k) input_blocks_.push_back(max_rows * program.input_offset(k));
        plan_gradient_sums();
        shared_gradients_.plan(ops_, params_.size());
        plan_tail(max_rows);
    }

    // Writes the parameters and optimizer state back (after a fit).
    void store_state(TrainingProgram& program) const {
        for (size_t i = 0; i < params_.size(); ++i) program.params[i] = static_cast<float>(params_[i]);
        for (size_t i = 0; i < state_.size(); ++i) program.state[i] = static_cast<float>(state_[i]);
        for (size_t i = 0; i < slots_.size(); ++i) program.optimizer_slots[i] = static_cast<float>(slots_[i]);
        program.optimizer_step = step_;
    }
    void load_state(const TrainingProgram& program) {
        std::copy(program.params.begin(), program.params.end(), params_.begin());
        std::copy(program.state.begin(), program.state.end(), state_.begin());
        std::copy(program.optimizer_slots.begin(), program.optimizer_slots.end(), slots_.begin());
        step_ = program.optimizer_step;
    }

    // The model's output (probabilities after softmax) for the last forward pass.
    const T* output() const { return out(ops_.size() - 1); }
    T* params() { return params_.data(); }
    const T* grads() const { return grads_.data(); }
    int64_t max_rows() const { return max_rows_; }

    void forward(const T* x, int64_t rows, bool training) {
        x = split_inputs(x, rows);
        for (size_t i = 0; i < ops_.size(); ++i) forward_op(i, x, 0, rows, training);
    }

    // Loss value (summed over rows) and all parameter gradients for one batch, no update. With
    // sample weights (one per row), each row's loss and gradient are weighted by its own, still
    // divided by the batch's rows (Keras's sum_over_batch_size with sample_weight).
    double loss_and_gradients(const T* x, const T* y, int64_t rows, const T* weights = nullptr) {
        const size_t n = ops_.size(), tail = rows >= kSplitMinRows ? tail_ : n;
        weights_ = weights;
        x = split_inputs(x, rows);
        for (size_t i = 0; i < tail; ++i) forward_op(i, x, 0, rows, true, /*defer_activation=*/i + 1 == tail && tail < n);
        const double loss = tail < n ? tail_in_halves(x, y, rows) : output_loss<true>(y, 0, rows, T(1) / T(rows));
        const double activity = activity_penalty(rows);
        for (size_t i = tail; i-- > 0;) {
            const bool tail_did_activation = tail < n && i + 1 == tail;
            if (!activity_ops_.empty()) add_activity_gradient(i, rows);
            if (!tail_did_activation) activation_backward_op(i, 0, rows);
            params_backward_op(i, x, 0, rows, shared_gradients_.target(i, grads_.data()), 0);
            shared_gradients_.add(ops_[i], i, grads_.data());
        }
        return loss + activity + static_cast<double>(rows) * weight_penalty(true);
    }

    // The first op of the tail that loss_and_gradients runs in two halves (the op count: none).
    size_t tail_begin() const { return tail_; }

    void train_step(const T* x, const T* y, int64_t rows, LogSums& sums, const T* weights = nullptr) {
        sums.loss += loss_and_gradients(x, y, rows, weights);
        add_metrics(y, rows, sums);
        ++step_;
        if (nn::clips_gradients(program_.optimizer))
            nn::clip_gradients(program_.optimizer, grads_.data(), gradient_arrays_.data(), gradient_arrays_.size());
        const int64_t n = static_cast<int64_t>(params_.size());
        ThreadPool& pool = ThreadPool::instance();
        if (n < kParallelUpdateMin || pool.num_threads() == 1) {
            nn::optimizer_step(program_.optimizer, params_.data(), grads_.data(), slots_.data(), n, step_);
            return;
        }
        // Large models: the update is memory-bound, so both cores' bandwidth helps (measured on
        // the 784-256-10 MLP: 52 -> 32 us per step). Elementwise, so the split changes no result.
        const int64_t tasks = pool.num_threads(), chunk = (n + tasks - 1) / tasks;
        pool.parallel_for(tasks, [&](int64_t task) {
            const int64_t begin = task * chunk, end = std::min(n, begin + chunk);
            if (begin < end)
                nn::optimizer_step_range(program_.optimizer, params_.data(), grads_.data(), slots_.data(), n, step_,
                                         begin, end);
        });
    }

    void evaluate_batch(const T* x, const T* y, int64_t rows, LogSums& sums, const T* weights = nullptr) {
        forward(x, rows, false);  // (splits the inputs)
        weights_ = weights;
        sums.loss += output_loss<false>(y, 0, rows, T(1)) + activity_penalty(rows) +
                     static_cast<double>(rows) * weight_penalty(false);
        add_metrics(y, rows, sums);
    }

private:
    // Keras's weight regularizers: the penalty l1 sum|w| + l2 sum w^2 of every regularized array,
    // which Keras adds to each batch's loss (so a loss summed over rows gets it rows times), and
    // with kGrad its gradient l1 sign(w) + 2 l2 w added to the weights' gradients. Sums in double.
    double weight_penalty(bool with_gradient) {
        double penalty = 0;
        for (const Regularized& r : regularized_) {
            const T* w = params_.data() + r.begin;
            penalty += nn::regularizer_penalty(r.regularizer, w, r.end - r.begin);
            if (!with_gradient) continue;
            T* g = grads_.data() + r.begin;
            for (int64_t i = 0; i < r.end - r.begin; ++i) g[i] += nn::regularizer_gradient(r.regularizer, w[i]);
        }
        return penalty;
    }

    // Keras 3's activity regularizers: each regularized op's penalty l1 sum|a| + l2 sum a^2 over the
    // batch's outputs a (after forward), divided by the batch's rows, so the loss summed over rows
    // gets it once.
    double activity_penalty(int64_t rows) const {
        double penalty = 0;
        for (const size_t i : activity_ops_) {
            penalty += nn::regularizer_penalty(ops_[i].activity_regularizer(), out(i), rows * ops_[i].out_width);
        }
        return penalty;
    }
    // Its gradient (l1 sign(a) + 2 l2 a) / rows added to op i's dL/da, once every reader of the
    // output has written it and before the op's activation is differentiated.
    void add_activity_gradient(size_t i, int64_t rows) {
        const Regularizer& r = ops_[i].activity_regularizer();
        if (!r.active()) return;
        const T scale = T(1) / T(rows);
        const T* a = out(i);
        T* da = da_[i].data();
        for (int64_t e = 0; e < rows * ops_[i].out_width; ++e) da[e] += scale * nn::regularizer_gradient(r, a[e]);
    }

    T* out(size_t i) { return a_[i].empty() ? z_[i].data() : a_[i].data(); }
    const T* out(size_t i) const { return a_[i].empty() ? z_[i].data() : a_[i].data(); }

    // Op i's forward for rows [r0, r0 + rows). With defer_activation, only the product: the
    // activation comes later from activation_forward_op.
    // Row r0 of op i's input number k (of a merge; else its only one): the batch x (one of its
    // inputs, split_inputs's) or an op's output.
    const T* op_input(size_t i, const T* x, int64_t r0, size_t k = 0) const {
        const int32_t source = ops_[i].inputs[k];
        const int64_t width = k == 0 ? ops_[i].in_width : shape_elements(ops_[i].spec.inputs[k]);  // (a merge's others)
        if (source < -1) x += input_blocks_[static_cast<size_t>(-1 - source)];
        return (source < 0 ? x : out(static_cast<size_t>(source))) + r0 * width;
    }

    // A model of several inputs: the batch's rows (each input's values side by side) copied into
    // one block per input, input k's at max_rows * input_offset(k), so each is rows of its own
    // width as its readers take them. One input: x itself.
    const T* split_inputs(const T* x, int64_t rows) {
        if (inputs_.empty()) return x;
        const int64_t width = program_.input_width;
        int64_t offset = 0;
        for (const Shape& shape : program_.input_shapes) {
            const int64_t n = shape_elements(shape);
            T* block = inputs_.data() + max_rows_ * offset;
            for (int64_t r = 0; r < rows; ++r) std::copy(x + r * width + offset, x + r * width + offset + n, block + r * n);
            offset += n;
        }
        return inputs_.data();
    }

    void forward_op(size_t i, const T* x, int64_t r0, int64_t rows, bool training, bool defer_activation = false) {
        const ProgramOp& op = ops_[i];
        const int64_t width = op.out_width;
        const T* in = op_input(i, x, r0);
        T* z = z_[i].data() + r0 * width;
        T* relu_out = op.activation() == Activation::relu && !defer_activation ? out(i) + r0 * width : nullptr;
        bool activated = false;
        switch (op.kind) {
            case Layer::Kind::Dense: {
                const DenseOp& d = op.dense;
                activated = dense_forward(z, in, params_.data() + d.weight, d.use_bias ? params_.data() + d.bias : nullptr,
                                          rows, d.in, d.out, d.out_major, d.use_blas, relu_out);
                break;
            }
            case Layer::Kind::Conv2D: {  // im2col, then the Dense product over every output pixel
                const Conv2DOp& c = op.conv;
                activated = dense_forward(z, conv_patches(i, in, r0, rows, true), params_.data() + c.weight,
                                          c.use_bias ? params_.data() + c.bias : nullptr, rows * pixels(op), c.patch,
                                          c.filters, false, c.use_blas, relu_out);
                break;
            }
            default: {  // every other kind: its op
                const T* ins[nn::kMaxLayerInputs];
                for (size_t k = 0; k < op.inputs.size(); ++k) ins[k] = op_input(i, x, r0, k);
                return over_parts(op, rows, [&](int64_t a, int64_t n) {
                    nn::OpArgs<T> args = op_args(i, r0 + a, n, training, in + a * op.in_width, z + a * width);
                    args.ins = ins, args.n_inputs = static_cast<int>(op.inputs.size());  // (a merge runs whole)
                    nn::op_forward(args);
                });
            }
        }
        if (!activated && !defer_activation) activation_forward_op(i, r0, rows);
    }

    // What op i's kernels get for rows [r0, r0 + rows) of the batch (nn/ops/op.hpp).
    nn::OpArgs<T> op_args(size_t i, int64_t r0, int64_t rows, bool training, const T* in, T* out) {
        const ProgramOp& op = ops_[i];
        nn::OpArgs<T> a{op.layer, op.spec};
        a.rows = rows, a.first_row = r0, a.training = training;
        if (op.spec.draws_random) a.random_key = dropout_key(dropout_seed_, step_, static_cast<int64_t>(i));
        a.params = params_.data() + op.params_offset;
        a.state = state_.data() + op.state_offset;
        a.scratch = scratch_[i].data() + r0 * op.spec.scratch_per_sample;
        a.indices = indices_[i].data() + r0 * op.spec.indices_per_sample;
        a.op_scratch = scratch_[i].data() + max_rows_ * op.spec.scratch_per_sample;
        a.in = in, a.out = out;
        return a;
    }

    static int64_t pixels(const ProgramOp& op) { return op.spec.window.out_h * op.spec.window.out_w; }

    // A Conv2D's im2col rows for batch rows [r0, r0 + rows) (with fill, written from its input
    // first); a 1x1 stride-1 convolution's input is already that matrix.
    const T* conv_patches(size_t i, const T* in, int64_t r0, int64_t rows, bool fill) {
        const ProgramOp& op = ops_[i];
        if (op.conv.identity_patches) return in;
        const int64_t patches = pixels(op) * op.conv.patch;
        T* cols = cols_[i].data() + r0 * patches;
        if (fill)
            over_parts(op, rows, [&](int64_t a, int64_t n) { im2col(cols + a * patches, in + a * op.in_width, n, op.spec.window); });
        return cols;
    }

    // f(first, count) over samples [0, rows), split over the thread pool when the op works on
    // images whose values are worth it (im2col, col2im, pooling: each image's values are computed
    // by one task in one order, so the split changes no result) and its parts write apart.
    template <class F>
    void over_parts(const ProgramOp& op, int64_t rows, F&& f) {
        ThreadPool& pool = ThreadPool::instance();
        const bool split = std::is_same_v<T, float> && splits_[static_cast<size_t>(&op - ops_.data())] &&
                           pool.num_threads() > 1 && rows > 1 &&
                           rows * (op.in_width + op.out_width) >= kSplitMinImageValues;
        if (!split) return f(0, rows);
        const int64_t tasks = std::min<int64_t>(pool.num_threads(), rows), chunk = (rows + tasks - 1) / tasks;
        pool.parallel_for(tasks, [&](int64_t t) {
            const int64_t a = t * chunk, b = std::min(rows, a + chunk);
            if (a < b) f(a, b - a);
        });
    }

    // An activation's rows and width: a Conv2D's act on each pixel's channels (softmax over them).
    static int64_t activation_width(const ProgramOp& op) {
        return op.kind == Layer::Kind::Conv2D ? op.conv.filters : op.out_width;
    }

    void activation_forward_op(size_t i, int64_t r0, int64_t rows) {
        const ProgramOp& op = ops_[i];
        if (!op.has_product()) return;
        const int64_t width = op.out_width, act = activation_width(op);
        nn::activation_forward(op.activation(), z_[i].data() + r0 * width, out(i) + r0 * width, rows * (width / act), act);
    }

    // The loss summed over rows [r0, r0 + rows); with kGrad, its gradient times scale into the
    // last op's da (scale 1 / batch rows: Keras's "sum over batch size").
    template <bool kGrad>
    double output_loss(const T* y, int64_t r0, int64_t rows, T scale) {
        const size_t last = ops_.size() - 1;
        const int64_t width = program_.output_width;
        const T* loss_in = (program_.loss_takes_logits ? z_[last].data() : output()) + r0 * width;
        T* grad = kGrad ? da_[last].data() + r0 * width : nullptr;
        if (!weights_)
            return nn::loss_forward_backward<kGrad>(program_.loss, program_.loss_takes_logits, loss_in, y + r0 * y_width_,
                                                    rows, width, y_width_, grad, scale);
        double total = 0;  // row by row, each scaled by its weight
        for (int64_t r = 0; r < rows; ++r) {
            const T w = weights_[r0 + r];
            total += static_cast<double>(w) *
                     nn::loss_forward_backward<kGrad>(program_.loss, program_.loss_takes_logits, loss_in + r * width,
                                                      y + (r0 + r) * y_width_, 1, width, y_width_,
                                                      kGrad ? grad + r * width : nullptr, scale * w);
        }
        return total;
    }

    // dL/d(output) -> dL/dz in place in da, for rows [r0, r0 + rows). The output op's softmax or
    // sigmoid is already folded into the loss gradient when the loss takes logits.
    void activation_backward_op(size_t i, int64_t r0, int64_t rows) {
        const ProgramOp& op = ops_[i];
        if (!op.has_product() || (i + 1 == ops_.size() && program_.loss_takes_logits)) return;
        const int64_t width = op.out_width, act = activation_width(op);
        const T* z = z_[i].data() + r0 * width;
        nn::activation_backward(op.activation(), z, out(i) + r0 * width, da_[i].data() + r0 * width,
                                rows * (width / act), act);
    }

    // From dL/dz of rows [r0, r0 + rows): op i's parameter gradients, written to g[index - g_first]
    // for the parameters' indices, and dL/d(its input) for those rows (none for the first op).
    void params_backward_op(size_t i, const T* x, int64_t r0, int64_t rows, T* g, int64_t g_first) {
        const ProgramOp& op = ops_[i];
        const int64_t width = op.out_width;
        const T* in = op_input(i, x, r0);
        T* din = input_gradient(i, 0, r0);
        const T* dout = da_[i].data() + r0 * width;
        if (op.inputs.size() > 1) return merge_backward(i, x, r0, rows);
        switch (op.kind) {
            case Layer::Kind::Dense: {
                const DenseOp& d = op.dense;
                dense_backward(g + (d.weight - g_first), d.use_bias ? g + (d.bias - g_first) : nullptr, din, dout, in,
                               params_.data() + d.weight, rows, d.in, d.out, d.out_major, d.use_blas);
                return add_input_gradient(i, 0, r0, rows);
            }
            case Layer::Kind::Conv2D: {  // the product's gradients, the input's through col2im
                const Conv2DOp& c = op.conv;
                T* dcols = !din ? nullptr : c.identity_patches ? din : dcols_.data() + r0 * pixels(op) * c.patch;
                dense_backward(g + (c.weight - g_first), c.use_bias ? g + (c.bias - g_first) : nullptr, dcols, dout,
                               conv_patches(i, in, r0, rows, false), params_.data() + c.weight, rows * pixels(op),
                               c.patch, c.filters, false, c.use_blas);
                if (din && !c.identity_patches) {
                    const int64_t patches = pixels(op) * c.patch;
                    over_parts(op, rows, [&](int64_t a, int64_t n) {
                        col2im(din + a * op.in_width, dcols + a * patches, n, op.spec.window);
                    });
                }
                return add_input_gradient(i, 0, r0, rows);
            }
            default:
                break;
        }
        // Every other kind: its op (which may have parameter gradients even as the first op).
        const bool has_grads = op.trainable_count > 0;
        if (!din && !has_grads) return;
        over_parts(op, rows, [&](int64_t a, int64_t n) {
            nn::OpArgs<T> args = op_args(i, r0 + a, n, true, in + a * op.in_width, out(i) + (r0 + a) * width);
            args.grads = g + (op.params_offset - g_first);
            args.dout = dout + a * width;
            args.din = din ? din + a * op.in_width : nullptr;
            nn::op_backward(args);
        });
        add_input_gradient(i, 0, r0, rows);
    }

    // Where op i's backward writes the gradient of its input k for rows from r0: that input's own
    // gradient buffer, or (when a later op already wrote to it: an output several ops read)
    // gradient_sum_, which add_input_gradient then adds to it. Null for the model's input.
    T* input_gradient(size_t i, size_t k, int64_t r0) {
        const int32_t source = ops_[i].inputs[k];
        if (source < 0) return nullptr;
        const int64_t width = ops_[static_cast<size_t>(source)].out_width;
        return (sums_gradient_[i][k] ? gradient_sum_.data() : da_[static_cast<size_t>(source)].data()) + r0 * width;
    }
    void add_input_gradient(size_t i, size_t k, int64_t r0, int64_t rows) {
        if (!sums_gradient_[i][k]) return;
        const size_t source = static_cast<size_t>(ops_[i].inputs[k]);
        const int64_t n = rows * ops_[source].out_width, first = r0 * ops_[source].out_width;
        T* to = da_[source].data() + first;
        const T* from = gradient_sum_.data() + first;
        for (int64_t e = 0; e < n; ++e) to[e] += from[e];
    }

    // A merge's backward (nn/ops/merge.hpp): each input's gradient in turn. Merges hold no parameters.
    void merge_backward(size_t i, const T* x, int64_t r0, int64_t rows) {
        const ProgramOp& op = ops_[i];
        const T* ins[nn::kMaxLayerInputs];
        for (size_t k = 0; k < op.inputs.size(); ++k) ins[k] = op_input(i, x, r0, k);
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            T* din = input_gradient(i, k, r0);
            if (!din) continue;
            nn::OpArgs<T> args = op_args(i, r0, rows, true, ins[0], out(i) + r0 * op.out_width);
            args.ins = ins, args.n_inputs = static_cast<int>(op.inputs.size()), args.input_slot = static_cast<int>(k);
            args.dout = da_[i].data() + r0 * op.out_width;
            args.din = din;
            nn::op_backward(args);
            add_input_gradient(i, k, r0, rows);
        }
    }

    // Which input gradients are sums: backward runs from the last op down, so the first op (from
    // the end) to read an output overwrites its gradient and every later reader adds to it.
    void plan_gradient_sums() {
        std::vector<bool> written(ops_.size(), false);
        int64_t widest = 0;
        sums_gradient_.assign(ops_.size(), {});
        for (size_t i = ops_.size(); i-- > 0;)
            for (const int32_t source : ops_[i].inputs) {
                const bool sum = source >= 0 && written[static_cast<size_t>(source)];
                sums_gradient_[i].push_back(sum);
                if (sum) widest = std::max(widest, ops_[static_cast<size_t>(source)].out_width);
                if (source >= 0) written[static_cast<size_t>(source)] = true;
            }
        gradient_sum_.assign(static_cast<size_t>(max_rows_ * widest), T(0));
    }

    // Picks the tail: the longest run of trailing ops whose products are all too small to use
    // the pool, if together they are worth a second thread.
    void plan_tail(int64_t max_rows) {
        const size_t n = ops_.size();
        tail_ = n;
        // (A chain's tail only; an activity penalty's gradient is added for the whole batch.)
        if (max_rows < kSplitMinRows || program_.graph || !activity_ops_.empty()) return;
        double flops = 0;
        size_t first = n;
        for (size_t i = n; i-- > 0;) {
            if (ops_[i].kind != Layer::Kind::Dense && ops_[i].kind != Layer::Kind::Dropout) break;  // image ops: whole batches
            if (ops_[i].kind == Layer::Kind::Dense) {
                const double product = 2.0 * double(max_rows) * double(ops_[i].dense.in) * double(ops_[i].dense.out);
                if (product >= kGemmParallelFlops) break;
                flops += 3 * product;  // forward, weight and input gradients
            }
            first = i;
        }
        if (first == n || flops < kSplitMinFlops) return;
        tail_ = first;
        tail_params_ = first_param(first);
        for (std::vector<T>& p : partial_grads_) p.assign(params_.size() - static_cast<size_t>(tail_params_), T(0));
    }

    int64_t first_param(size_t from) const {  // the first (trainable) parameter index of ops [from, n)
        return from < ops_.size() ? ops_[from].params_offset : static_cast<int64_t>(params_.size());
    }

    // The tail on two halves of the batch: op tail-1's activation, the tail's forward, the loss,
    // the tail's backward and op tail-1's activation gradient, all row by row; each half's
    // parameter gradients go to its own buffer and are added here. Returns the loss sum.
    double tail_in_halves(const T* x, const T* y, int64_t rows) {
        const size_t n = ops_.size();
        const int64_t half = std::min(rows, (rows / 2 + 15) / 16 * 16);  // whole vectors of rows where possible
        double loss[2] = {0, 0};
        const auto run_half = [&](int64_t h) {
            const int64_t r0 = h == 0 ? 0 : half, count = h == 0 ? half : rows - half;
            if (tail_ > 0) activation_forward_op(tail_ - 1, r0, count);
            for (size_t i = tail_; i < n; ++i) forward_op(i, x, r0, count, true);
            loss[h] = output_loss<true>(y, r0, count, T(1) / T(rows));
            for (size_t i = n; i-- > tail_;) {
                activation_backward_op(i, r0, count);
                params_backward_op(i, x, r0, count, partial_grads_[h].data(), tail_params_);
            }
            if (tail_ > 0) activation_backward_op(tail_ - 1, r0, count);
        };
        if constexpr (std::is_same_v<T, float>) {
            ThreadPool::instance().parallel_for(2, run_half);
        } else {  // double runs in the gradient tests only, where OpenBLAS must not be called concurrently
            run_half(0), run_half(1);
        }
        T* g = grads_.data() + tail_params_;
        const T* a = partial_grads_[0].data();
        const T* b = partial_grads_[1].data();
        for (size_t k = 0; k < partial_grads_[0].size(); ++k) g[k] = a[k] + b[k];
        return loss[0] + loss[1];
    }

    void add_metrics(const T* y, int64_t rows, LogSums& sums) {
        for (size_t k = 0; k < metrics_.size(); ++k) {
            if (metrics_[k].counts)
                nn::metric_count(metrics_[k], output(), y, rows, program_.output_width, y_width_,
                                 metric_counts_[k].data());
            else
                sums.metrics[k] += nn::metric_sum(metrics_[k].kind, output(), y, rows, program_.output_width, y_width_,
                                                metrics_[k].k);
        }
        sums.samples += rows;
    }

public:
    // The ratio metrics (Precision, AUC, ...) count over a whole epoch's batches: their counts start
    // at zero (an epoch's training, its validation, an evaluate) and their values are written into
    // the sums (as value x samples, as a per-sample metric's sum) whenever the logs may be read.
    void reset_metric_counts() {
        for (std::vector<double>& c : metric_counts_) std::fill(c.begin(), c.end(), 0.0);
    }
    void finish_metrics(LogSums& sums) const {
        for (size_t k = 0; k < metrics_.size(); ++k)
            if (metrics_[k].counts && sums.samples > 0)
                sums.metrics[k] = nn::metric_result(metrics_[k], metric_counts_[k].data(), program_.output_width,
                                                    sums.samples) *
                                  static_cast<double>(sums.samples);
    }

private:

    const TrainingProgram& program_;
    const std::vector<ProgramOp>& ops_;
    int64_t max_rows_, y_width_;
    std::vector<nn::Metric> metrics_;
    std::vector<std::vector<double>> metric_counts_;  // per ratio metric: its counts (add_metrics)
    std::vector<T> params_, grads_, state_, slots_;
    std::vector<nn::GradientArray> gradient_arrays_;  // each trainable array's gradient, for clipping
    struct Regularized {
        int64_t begin, end;
        Regularizer regularizer;
    };
    std::vector<Regularized> regularized_;  // the arrays with a penalty (weight_penalty)
    std::vector<size_t> activity_ops_;      // the ops whose outputs have one (activity_penalty)
    const T* weights_ = nullptr;            // this batch's sample weights (none: every row 1)
    int64_t step_;
    uint64_t dropout_seed_;
    size_t tail_ = 0;           // the first op of the tail (ops_.size(): no tail)
    int64_t tail_params_ = 0;   // the tail's first parameter index
    std::vector<T> partial_grads_[2];  // each half's gradients of the tail's parameters
    // Per op: pre-activation z, output a (empty when it would equal z), dL/d(output), the op's
    // scratch (per sample, then for the batch), a Conv2D's im2col rows (kept from forward for its
    // weight gradient), the op's int32 scratch per sample (a max pool's argmax).
    std::vector<std::vector<T>> z_, a_, da_, scratch_, cols_;
    std::vector<std::vector<int32_t>> indices_;
    std::vector<T> dcols_;  // the input gradient's im2col rows, shared by the Conv2D ops
    std::vector<uint8_t> splits_;  // per op: whether a batch may run in parts (over_parts)
    // Per op and input: whether its gradient is added to what another op wrote (plan_gradient_sums).
    std::vector<std::vector<uint8_t>> sums_gradient_;
    std::vector<T> gradient_sum_;  // such an input's gradient before it is added
    std::vector<T> inputs_;        // a model of several inputs: the batch split per input (split_inputs)
    std::vector<int64_t> input_blocks_;  // where input k's block starts in inputs_ (max_rows * input_offset(k))
    SharedGradients<T> shared_gradients_;  // a shared layer's calls' gradients, summed
};

ONEFIT_SIMD_END(cpu)
#endif  // ONEFIT_RUNTIME_CPU_CPU_EXECUTOR_HPP
