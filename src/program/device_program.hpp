// What the fit driver (src/train) asks of any device's compiled fit. Calls are per epoch or per
// chunk of steps, never per element; the device runs everything in between on its own.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "program/fit_plan.hpp"

namespace onefit {

class DeviceProgram {
public:
    virtual ~DeviceProgram() = default;
    // Epochs [first, last): training steps, validation, results in logs()[epoch]. Stops after
    // the first epoch whose training loss is not finite (as keras.callbacks.TerminateOnNaN, at
    // epoch granularity), so the parameters are those of the last epoch in the logs. Returns the
    // epoch after the last one run: `last`, or earlier when it stopped.
    virtual int64_t run_epochs(int64_t first, int64_t last) = 0;
    // The same in pieces, for a live progress bar: begin_epoch, train_steps(n)..., end_epoch.
    virtual void begin_epoch(int64_t epoch) = 0;
    virtual int64_t steps_in_epoch() const = 0;
    virtual void train_steps(int64_t count) = 0;
    virtual void end_epoch() = 0;
    // Per-epoch sums; valid for every epoch run so far.
    virtual const std::vector<EpochLog>& logs() = 0;
    virtual bool has_validation() const = 0;
    // Writes parameters, optimizer state and step count back to the TrainingProgram.
    virtual void store_state() = 0;
    // The other way: reads the TrainingProgram's parameters, optimizer state and step count into
    // the device's copy (a callback changed them with set_weights between epochs).
    virtual void load_state() = 0;
    // Seconds spent in validation so far, measured only after enable_profiling (a clock read per
    // epoch end; nothing when off).
    void enable_profiling() { profiling_ = true; }
    double validation_seconds() const { return validation_seconds_; }

protected:
    // Whether an epoch's training loss sum is finite: the per-epoch stop check of run_epochs.
    static bool finite_loss(const EpochLog& log) { return std::isfinite(log.train.loss); }

    bool profiling_ = false;
    double validation_seconds_ = 0;
};

}  // namespace onefit
