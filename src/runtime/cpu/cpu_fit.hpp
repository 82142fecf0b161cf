// The whole fit on the CPU: packed data, the batch schedule, the epoch loop with validation.
// The host calls run_epochs(first, last) once when nothing needs to look between epochs, or
// once per epoch (logs, callbacks), or per chunk of steps (live progress bar). Nothing here
// allocates after construction.
#pragma once
#include <xmmintrin.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "onefit/error.hpp"
#include "program/fit_plan.hpp"
#include "runtime/cpu/cpu_executor.hpp"

namespace onefit::cpu {

// Flush denormals to zero while training, as TensorFlow does: without it about a fifth of
// seeded Iris log_cosh fits reach float32 denormals and run five times slower.
class DenormalsAreZero {
public:
    DenormalsAreZero() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }  // FTZ | DAZ
    ~DenormalsAreZero() { _mm_setcsr(saved_); }

private:
    unsigned saved_;
};

template <class T>
std::vector<T> pack(const Tensor& t) {
    return std::vector<T>(t.values().begin(), t.values().end());
}

// Labels packed as the loss reads them. One label per row against a wider output under an
// elementwise loss (the seed's case) is repeated across the row once here, which is what
// tf.keras 2's broadcast computes, so the step loop runs one flat loop over equal shapes.
inline int64_t packed_label_width(const TrainingProgram& program, int64_t y_width) {
    const bool crossentropy = program.loss.kind == LossKind::categorical_crossentropy ||
                              program.loss.kind == LossKind::sparse_categorical_crossentropy;
    return y_width == 1 && !crossentropy ? program.output_width : y_width;
}

template <class T>
std::vector<T> pack_labels(const Tensor& y, int64_t y_width, int64_t packed_width) {
    if (packed_width == y_width) return pack<T>(y);
    std::vector<T> out(static_cast<size_t>(y.rows() * packed_width));
    for (int64_t r = 0; r < y.rows(); ++r)
        for (int64_t j = 0; j < packed_width; ++j) out[static_cast<size_t>(r * packed_width + j)] = T(y[r]);
    return out;
}

template <class T>
class CpuFit {
public:
    CpuFit(TrainingProgram& program, const FitPlan& plan, const std::vector<nn::Metric>& metrics)
        : program_(program), plan_(plan),
          source_x_(plan.dataset ? plan.dataset->x() : *plan.x),
          source_y_(plan.dataset ? plan.dataset->y() : *plan.y),
          y_width_(packed_label_width(program, plan.y_width)),
          x_(pack<T>(source_x_)), y_(pack_labels<T>(source_y_, plan.y_width, y_width_)),
          x_width_(source_x_.row_width()), rows_(source_x_.rows()),
          shuffle_rng_(plan.seed ^ 0x5348554646ull),
          executor_(program, max_batch_rows(plan), metrics, y_width_, plan.seed ^ 0x44524f50ull) {
        if (!plan.dataset) {  // the array schedule: batches of batch_size, the last one partial
            pass_.rows.resize(static_cast<size_t>(rows_));
            std::iota(pass_.rows.begin(), pass_.rows.end(), int64_t{0});
            for (int64_t done = 0; done < rows_; done += plan.batch_size)
                pass_.batch_sizes.push_back(std::min(plan.batch_size, rows_ - done));
        }
        batch_x_.resize(static_cast<size_t>(executor_.max_rows() * x_width_));
        batch_y_.resize(static_cast<size_t>(executor_.max_rows() * y_width_));
        pack_validation();
        logs_.resize(static_cast<size_t>(plan.epochs));
        next_batch_ = pass_.batch_sizes.size();  // the first step starts a pass
    }

    // Epochs [first, last): training steps, then validation, results in logs()[epoch].
    void run_epochs(int64_t first, int64_t last) {
        DenormalsAreZero denormals;
        for (int64_t epoch = first; epoch < last; ++epoch) {
            begin_epoch(epoch);
            train_steps(steps_in_epoch());
            end_epoch();
        }
    }

    // The same, in pieces, for a live progress bar: begin_epoch, train_steps(n)..., end_epoch.
    void begin_epoch(int64_t epoch) {
        epoch_ = epoch;
        if (plan_.steps_per_epoch < 0) start_pass();
        epoch_steps_ = plan_.steps_per_epoch < 0 ? static_cast<int64_t>(pass_.batch_sizes.size()) : plan_.steps_per_epoch;
        logs_[static_cast<size_t>(epoch)] = EpochLog{};
    }
    int64_t steps_in_epoch() const { return epoch_steps_; }

    void train_steps(int64_t count) {
        DenormalsAreZero denormals;
        LogSums& sums = logs_[static_cast<size_t>(epoch_)].train;
        for (int64_t s = 0; s < count; ++s) {
            if (next_batch_ == pass_.batch_sizes.size()) start_pass();
            const int64_t rows = pass_.batch_sizes[next_batch_++];
            const T *x, *y;
            if (identity_order_) {  // unshuffled arrays: batches are slices of the packed data
                x = x_.data() + next_row_ * x_width_;
                y = y_.data() + next_row_ * y_width_;
            } else {
                gather(pass_.rows.data() + next_row_, rows);
                x = batch_x_.data();
                y = batch_y_.data();
            }
            next_row_ += rows;
            executor_.train_step(x, y, rows, sums);
        }
    }

    void end_epoch() {
        DenormalsAreZero denormals;
        LogSums& sums = logs_[static_cast<size_t>(epoch_)].validation;
        int64_t row = 0;
        for (int64_t rows : val_batches_) {
            executor_.evaluate_batch(val_x_.data() + row * x_width_, val_y_.data() + row * y_width_, rows, sums);
            row += rows;
        }
    }

    const std::vector<EpochLog>& logs() const { return logs_; }
    bool has_validation() const { return !val_batches_.empty(); }
    void store_state() { executor_.store_state(program_); }
    CpuExecutor<T>& executor() { return executor_; }

private:
    static int64_t max_batch_rows(const FitPlan& plan) {
        int64_t rows = plan.dataset ? 1 : plan.batch_size;
        if (plan.dataset) {
            DatasetPass pass;
            const int64_t limit = plan.dataset->cardinality() < 0 ? std::max<int64_t>(plan.steps_per_epoch, 1) : -1;
            plan.dataset->plan(0, limit, pass);
            for (int64_t b : pass.batch_sizes) rows = std::max(rows, b);
        }
        return std::max(rows, plan.validation_batch_size);
    }

    // The next pass over the training data: a permutation (shuffle), the identity, or the
    // Dataset's own plan for this iteration.
    void start_pass() {
        if (plan_.dataset) {
            const int64_t limit = plan_.dataset->cardinality() < 0
                                      ? std::max<int64_t>(plan_.steps_per_epoch, 1) * plan_.epochs
                                      : -1;
            plan_.dataset->plan(passes_, limit, pass_);
            identity_order_ = false;
            if (pass_.batch_sizes.empty()) throw Error("fit: the training dataset yields no batches");
        } else {
            // Shuffling the previous permutation gives a uniform one too; no reset needed.
            identity_order_ = !plan_.shuffle;
            if (plan_.shuffle) shuffle_rng_.shuffle(pass_.rows.data(), rows_);
        }
        ++passes_;
        next_batch_ = 0;
        next_row_ = 0;
    }

    void gather(const int64_t* rows, int64_t count) {
        for (int64_t r = 0; r < count; ++r) {
            std::memcpy(batch_x_.data() + r * x_width_, x_.data() + rows[r] * x_width_, sizeof(T) * x_width_);
            std::memcpy(batch_y_.data() + r * y_width_, y_.data() + rows[r] * y_width_, sizeof(T) * y_width_);
        }
    }

    void pack_validation() {
        if (plan_.val_dataset) {
            DatasetPass pass;
            plan_.val_dataset->plan(0, -1, pass);
            const Tensor &vx = plan_.val_dataset->x(), &vy = plan_.val_dataset->y();
            const std::vector<T> vy_packed = pack_labels<T>(vy, plan_.y_width, y_width_);
            for (int64_t r : pass.rows) {
                val_x_.insert(val_x_.end(), vx.data() + r * x_width_, vx.data() + (r + 1) * x_width_);
                val_y_.insert(val_y_.end(), vy_packed.begin() + r * y_width_, vy_packed.begin() + (r + 1) * y_width_);
            }
            for (int64_t b : pass.batch_sizes)
                for (int64_t done = 0; done < b; done += executor_.max_rows())
                    val_batches_.push_back(std::min(executor_.max_rows(), b - done));
        } else if (plan_.val_x) {
            val_x_ = pack<T>(*plan_.val_x);
            val_y_ = pack_labels<T>(*plan_.val_y, plan_.y_width, y_width_);
            const int64_t n = plan_.val_x->rows();
            for (int64_t done = 0; done < n; done += plan_.validation_batch_size)
                val_batches_.push_back(std::min(plan_.validation_batch_size, n - done));
        }
    }

    TrainingProgram& program_;
    FitPlan plan_;
    const Tensor& source_x_;
    const Tensor& source_y_;
    int64_t y_width_;  // packed label width
    std::vector<T> x_, y_, batch_x_, batch_y_, val_x_, val_y_;
    int64_t x_width_, rows_;
    Rng shuffle_rng_;
    CpuExecutor<T> executor_;
    DatasetPass pass_;
    bool identity_order_ = true;
    size_t next_batch_ = 0;
    int64_t next_row_ = 0, passes_ = 0, epoch_ = 0, epoch_steps_ = 0;
    std::vector<int64_t> val_batches_;
    std::vector<EpochLog> logs_;
};

}  // namespace onefit::cpu
