// What the fit driver (src/train) asks of any device's compiled fit. Calls are per epoch or per
// chunk of steps, never per element; the device runs everything in between on its own.
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

#include "program/fit_plan.hpp"

namespace onefit {

class DeviceProgram {
public:
    virtual ~DeviceProgram() = default;
    // Epochs [first, last): training steps, validation, results in logs()[epoch].
    virtual void run_epochs(int64_t first, int64_t last) = 0;
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
    // Seconds spent in validation so far, measured only after enable_profiling (a clock read per
    // epoch end; nothing when off).
    void enable_profiling() { profiling_ = true; }
    double validation_seconds() const { return validation_seconds_; }

protected:
    bool profiling_ = false;
    double validation_seconds_ = 0;
};

}  // namespace onefit
