// The whole fit on the CPU: packed data, the batch schedule, the epoch loop with validation.
// The host calls run_epochs(first, last) once when nothing needs to look between epochs, or
// once per epoch (logs, callbacks), or per chunk of steps (live progress bar). Nothing here
// allocates after construction (a Dataset input plans each pass at its start, on the host).
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_RUNTIME_CPU_CPU_FIT_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_RUNTIME_CPU_CPU_FIT_HPP
#undef ONEFIT_RUNTIME_CPU_CPU_FIT_HPP
#else
#define ONEFIT_RUNTIME_CPU_CPU_FIT_HPP
#endif

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/denormals.hpp"
#include "program/batch_schedule.hpp"
#include "program/device_program.hpp"
#include "program/packed_data.hpp"
#include "runtime/cpu/cpu_executor.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(cpu)

// Epoch logs made when a fit starts (a fit of more epochs grows them as it goes).
inline constexpr int64_t kReservedEpochLogs = 4096;

template <class T>
class CpuFit final : public DeviceProgram {
public:
    CpuFit(TrainingProgram& program, const FitPlan& plan, const std::vector<nn::Metric>& metrics)
        : program_(program), plan_(plan),
          schedule_(plan_, plan.dataset ? plan.dataset->x().rows() : plan.x.rows),
          max_rows_(std::max(schedule_.max_batch_rows(), max_validation_batch(plan))),
          data_(pack_fit_data<T>(program, plan_, max_rows_)),
          executor_(program, max_rows_, metrics, data_.y_width, plan.seed ^ 0x44524f50ull) {
        batch_x_.resize(static_cast<size_t>(max_rows_ * data_.x_width));
        batch_y_.resize(static_cast<size_t>(max_rows_ * data_.y_width));
        if (data_.w.size()) batch_w_.resize(static_cast<size_t>(max_rows_));
        // Logs for the epochs asked, up to kReservedEpochLogs; a longer fit grows them between
        // epochs, so `epochs=10**8` with EarlyStopping holds only the epochs it runs.
        logs_.resize(static_cast<size_t>(std::min(plan.epochs, kReservedEpochLogs)));
    }

    int64_t run_epochs(int64_t first, int64_t last) override {
        DenormalsAreZero denormals;
        for (int64_t epoch = first; epoch < last; ++epoch) {
            begin_epoch(epoch);
            train_steps(steps_in_epoch());
            end_epoch();
            if (!finite_loss(logs_[static_cast<size_t>(epoch)])) return epoch + 1;
        }
        return last;
    }

    void begin_epoch(int64_t epoch) override {
        epoch_ = epoch;
        epoch_steps_ = schedule_.begin_epoch();
        if (static_cast<size_t>(epoch) >= logs_.size())
            logs_.resize(std::max(static_cast<size_t>(epoch) + 1, 2 * logs_.size()));
        logs_[static_cast<size_t>(epoch)] = EpochLog{};
        executor_.reset_metric_counts();
    }
    int64_t steps_in_epoch() const override { return epoch_steps_; }

    void train_steps(int64_t count) override {
        DenormalsAreZero denormals;
        LogSums& sums = logs_[static_cast<size_t>(epoch_)].train;
        const int64_t xw = data_.x_width, yw = data_.y_width;
        for (int64_t s = 0; s < count; ++s) {
            const ScheduledBatch b = schedule_.next_batch();
            const T* x = data_.x.data() + b.first_row * xw;  // unshuffled: a slice of the packed data
            const T* y = data_.y.data() + b.first_row * yw;
            const T* w = data_.w.size() ? data_.w.data() + b.first_row : nullptr;
            if (b.rows) {  // shuffled: gather the batch's rows
                gather(b.rows, b.count);
                x = batch_x_.data();
                y = batch_y_.data();
                if (w) w = batch_w_.data();
            }
            executor_.train_step(x, y, b.count, sums, w);
        }
        executor_.finish_metrics(sums);
    }

    void end_epoch() override {
        DenormalsAreZero denormals;
        const auto start = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        LogSums& sums = logs_[static_cast<size_t>(epoch_)].validation;
        executor_.reset_metric_counts();  // (the epoch's training values are in its logs already)
        int64_t row = 0;
        for (int64_t rows : data_.val_batches) {
            executor_.evaluate_batch(data_.val_x.data() + row * data_.x_width, data_.val_y.data() + row * data_.y_width,
                                     rows, sums, data_.val_w.size() ? data_.val_w.data() + row : nullptr);
            row += rows;
        }
        executor_.finish_metrics(sums);
        if (profiling_)
            validation_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    const std::vector<EpochLog>& logs() override { return logs_; }
    bool has_validation() const override { return !data_.val_batches.empty(); }
    void store_state() override { executor_.store_state(program_); }
    void load_state() override { executor_.load_state(program_); }
    CpuExecutor<T>& executor() { return executor_; }

private:
    // Copies the batch's rows together. Large batches split the copy over the thread pool
    // (measured on the MNIST-shaped MLP: 55 -> 34 us per step); small ones stay on this thread.
    // Rows are random, so the hardware prefetcher only starts within each row; asking for the
    // row two ahead keeps several rows' misses in flight (128 rows of 784 floats from a 188 MB
    // array, one thread: 32 -> 22 us).
    void gather(const int64_t* rows, int64_t count) {
        const int64_t xw = data_.x_width, yw = data_.y_width;
        auto copy = [&](int64_t first, int64_t last) {
            for (int64_t r = first; r < last; ++r) {
                if (r + 2 < last) prefetch_row(data_.x.data() + rows[r + 2] * xw, xw);
                std::memcpy(batch_x_.data() + r * xw, data_.x.data() + rows[r] * xw, sizeof(T) * xw);
                std::memcpy(batch_y_.data() + r * yw, data_.y.data() + rows[r] * yw, sizeof(T) * yw);
                if (!batch_w_.empty()) batch_w_[static_cast<size_t>(r)] = data_.w.data()[rows[r]];
            }
        };
        ThreadPool& pool = ThreadPool::instance();
        if (count * xw < (1 << 16) || pool.num_threads() == 1) return copy(0, count);
        const int64_t tasks = pool.num_threads(), chunk = (count + tasks - 1) / tasks;
        pool.parallel_for(tasks, [&](int64_t task) { copy(task * chunk, std::min(count, (task + 1) * chunk)); });
    }

    static void prefetch_row(const T* row, int64_t width) {
        const char* p = reinterpret_cast<const char*>(row);
        for (int64_t byte = 0; byte < width * int64_t(sizeof(T)); byte += 64) __builtin_prefetch(p + byte, 0, 3);
    }

    TrainingProgram& program_;
    FitPlan plan_;
    BatchSchedule schedule_;
    int64_t max_rows_;
    PackedData<T> data_;
    CpuExecutor<T> executor_;
    std::vector<T> batch_x_, batch_y_, batch_w_;
    int64_t epoch_ = 0, epoch_steps_ = 0;
    std::vector<EpochLog> logs_;
};

ONEFIT_SIMD_END(cpu)
#endif  // ONEFIT_RUNTIME_CPU_CPU_FIT_HPP
