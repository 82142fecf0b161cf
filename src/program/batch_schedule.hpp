// Which rows each training step sees: the batch schedule of a fit, device-independent so the
// CPU and the GPU train on exactly the same batches. Arrays: a pass is a new permutation
// (shuffle) or the identity, cut into batch_size pieces. Datasets: a pass is the Dataset's plan
// for that iteration. An epoch is one pass, or steps_per_epoch batches that continue across
// passes. Planning an array pass allocates nothing.
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "program/fit_plan.hpp"

namespace onefit {

struct ScheduledBatch {
    const int64_t* rows;  // row indices, or nullptr when the batch is rows [first_row, first_row + count)
    int64_t first_row;
    int64_t count;
};

class BatchSchedule {
public:
    BatchSchedule(const FitPlan& plan, int64_t data_rows);

    // Starts an epoch; returns its number of steps.
    int64_t begin_epoch();
    ScheduledBatch next_batch();
    // The largest batch any step (or validation batch) can have: buffers are sized by it.
    int64_t max_batch_rows() const { return max_rows_; }

private:
    void start_pass();
    const FitPlan& plan_;
    int64_t data_rows_, max_rows_ = 1;
    Rng shuffle_rng_;
    DatasetPass pass_;
    bool identity_order_ = true;
    size_t next_batch_ = 0;
    int64_t next_row_ = 0, passes_ = 0;
};

}  // namespace onefit
