// The CPU step loop. One training step, top to bottom: forward through every op, loss value
// and gradient, backward through every op, one optimizer pass over all parameters. Every
// buffer is allocated in the constructor; a step allocates nothing and dispatches once per op
// (a switch), never per element. Templated on the scalar: float for training, double for the
// finite-difference gradient tests.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "core/thread_pool.hpp"
#include "nn/activation.hpp"
#include "nn/losses.hpp"
#include "nn/metrics.hpp"
#include "nn/optimizer_math.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"
#include "runtime/cpu/dense_kernels.hpp"

namespace onefit::cpu {

// Parameter counts from which the optimizer pass is split over the thread pool.
inline constexpr int64_t kParallelUpdateMin = 1 << 16;

template <class T>
class CpuExecutor {
public:
    CpuExecutor(const TrainingProgram& program, int64_t max_rows, std::vector<nn::Metric> metrics, int64_t y_width,
                uint64_t dropout_seed)
        : program_(program), ops_(program.ops), max_rows_(max_rows), y_width_(y_width),
          metrics_(std::move(metrics)), params_(program.params.begin(), program.params.end()),
          grads_(params_.size()), slots_(program.optimizer_slots.begin(), program.optimizer_slots.end()),
          step_(program.optimizer_step), dropout_seed_(dropout_seed) {
        const size_t n = ops_.size();
        z_.resize(n), a_.resize(n), da_.resize(n), mask_.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const size_t size = static_cast<size_t>(max_rows * ops_[i].out_width);
            z_[i].assign(size, T(0));
            da_[i].assign(size, T(0));
            const bool own_output = ops_[i].kind == Layer::Kind::Dropout || ops_[i].dense.activation != Activation::linear;
            if (own_output) a_[i].assign(size, T(0));
            if (ops_[i].kind == Layer::Kind::Dropout) mask_[i].assign(size, T(1));
        }
    }

    // Writes the parameters and optimizer state back (after a fit).
    void store_state(TrainingProgram& program) const {
        for (size_t i = 0; i < params_.size(); ++i) program.params[i] = static_cast<float>(params_[i]);
        for (size_t i = 0; i < slots_.size(); ++i) program.optimizer_slots[i] = static_cast<float>(slots_[i]);
        program.optimizer_step = step_;
    }

    // The model's output (probabilities after softmax) for the last forward pass.
    const T* output() const { return out(ops_.size() - 1); }
    T* params() { return params_.data(); }
    const T* grads() const { return grads_.data(); }
    int64_t max_rows() const { return max_rows_; }

    void forward(const T* x, int64_t rows, bool training) {
        const T* in = x;
        for (size_t i = 0; i < ops_.size(); ++i) {
            const ProgramOp& op = ops_[i];
            if (op.kind == Layer::Kind::Dense) {
                const DenseOp& d = op.dense;
                const bool activated = dense_forward(z_[i].data(), in, params_.data() + d.weight,
                                                     d.use_bias ? params_.data() + d.bias : nullptr, rows, d.in, d.out,
                                                     d.out_major, d.use_blas,
                                                     d.activation == Activation::relu ? out(i) : nullptr);
                if (!activated) nn::activation_forward(d.activation, z_[i].data(), out(i), rows, d.out);
            } else {  // inverted dropout: keep with probability 1 - rate, scaled by 1 / (1 - rate)
                const int64_t n = rows * op.out_width;
                T* m = mask_[i].data();
                if (training && op.dropout_rate > 0.0f) {
                    const T keep = T(1) / (T(1) - T(op.dropout_rate));
                    const uint64_t key = dropout_key(dropout_seed_, step_, static_cast<int64_t>(i));
                    for (int64_t j = 0; j < n; ++j) m[j] = hash_uniform(key, static_cast<uint64_t>(j)) < op.dropout_rate ? T(0) : keep;
                } else {
                    for (int64_t j = 0; j < n; ++j) m[j] = T(1);
                }
                T* o = out(i);
                for (int64_t j = 0; j < n; ++j) o[j] = in[j] * m[j];
            }
            in = out(i);
        }
    }

    // Loss value (summed over rows) and all parameter gradients for one batch, no update.
    double loss_and_gradients(const T* x, const T* y, int64_t rows) {
        forward(x, rows, true);
        const size_t last = ops_.size() - 1;
        const T* loss_in = program_.loss_takes_logits ? z_[last].data() : output();
        const double loss = nn::loss_forward_backward<true>(program_.loss, program_.loss_takes_logits, loss_in, y, rows,
                                                            program_.output_width, y_width_, da_[last].data(),
                                                            T(1) / T(rows));
        backward(x, rows);
        return loss;
    }

    void train_step(const T* x, const T* y, int64_t rows, LogSums& sums) {
        sums.loss += loss_and_gradients(x, y, rows);
        add_metrics(y, rows, sums);
        ++step_;
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

    void evaluate_batch(const T* x, const T* y, int64_t rows, LogSums& sums) {
        forward(x, rows, false);
        const size_t last = ops_.size() - 1;
        const T* loss_in = program_.loss_takes_logits ? z_[last].data() : output();
        sums.loss += nn::loss_forward_backward<false>(program_.loss, program_.loss_takes_logits, loss_in, y, rows,
                                                      program_.output_width, y_width_, static_cast<T*>(nullptr), T(1));
        add_metrics(y, rows, sums);
    }

private:
    T* out(size_t i) { return a_[i].empty() ? z_[i].data() : a_[i].data(); }
    const T* out(size_t i) const { return a_[i].empty() ? z_[i].data() : a_[i].data(); }

    void backward(const T* x, int64_t rows) {
        for (size_t i = ops_.size(); i-- > 0;) {
            const ProgramOp& op = ops_[i];
            const T* in = i == 0 ? x : out(i - 1);
            T* din = i == 0 ? nullptr : da_[i - 1].data();
            T* dout = da_[i].data();
            if (op.kind == Layer::Kind::Dense) {
                const DenseOp& d = op.dense;
                const bool fused_with_loss = i + 1 == ops_.size() && program_.loss_takes_logits;
                if (!fused_with_loss) nn::activation_backward(d.activation, z_[i].data(), out(i), dout, rows, d.out);
                dense_backward(grads_.data() + d.weight, d.use_bias ? grads_.data() + d.bias : nullptr, din, dout, in,
                               params_.data() + d.weight, rows, d.in, d.out, d.out_major, d.use_blas);
            } else if (din) {
                const T* m = mask_[i].data();
                for (int64_t j = 0, n = rows * op.out_width; j < n; ++j) din[j] = dout[j] * m[j];
            }
        }
    }

    void add_metrics(const T* y, int64_t rows, LogSums& sums) const {
        for (size_t k = 0; k < metrics_.size(); ++k)
            sums.metrics[k] += nn::metric_sum(metrics_[k].kind, output(), y, rows, program_.output_width, y_width_);
        sums.samples += rows;
    }

    const TrainingProgram& program_;
    const std::vector<ProgramOp>& ops_;
    int64_t max_rows_, y_width_;
    std::vector<nn::Metric> metrics_;
    std::vector<T> params_, grads_, slots_;
    int64_t step_;
    uint64_t dropout_seed_;
    // Per op: pre-activation z, output a (empty when it would equal z), dL/d(output), dropout mask.
    std::vector<std::vector<T>> z_, a_, da_, mask_;
};

}  // namespace onefit::cpu
