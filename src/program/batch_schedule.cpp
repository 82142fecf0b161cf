#include "program/batch_schedule.hpp"

#include <algorithm>
#include <numeric>

#include "onefit/error.hpp"

namespace onefit {

BatchSchedule::BatchSchedule(const FitPlan& plan, int64_t data_rows)
    : plan_(plan), data_rows_(data_rows), shuffle_rng_(plan.seed ^ 0x5348554646ull) {
    if (plan.dataset) {
        DatasetPass first;
        const int64_t limit = plan.dataset->cardinality() < 0 ? std::max<int64_t>(plan.steps_per_epoch, 1) : -1;
        plan.dataset->plan(0, limit, first);
        for (int64_t b : first.batch_sizes) max_rows_ = std::max(max_rows_, b);
    } else {  // arrays: batches of batch_size, the last one partial
        if (plan.shuffle) {  // unshuffled batches are slices: no 8 bytes per row of row indices
            pass_.rows.resize(static_cast<size_t>(data_rows));
            std::iota(pass_.rows.begin(), pass_.rows.end(), int64_t{0});
        }
        for (int64_t done = 0; done < data_rows; done += plan.batch_size)
            pass_.batch_sizes.push_back(std::min(plan.batch_size, data_rows - done));
        max_rows_ = std::min(plan.batch_size, data_rows);
    }
    next_batch_ = pass_.batch_sizes.size();  // the first step starts a pass
    // Resuming: draw the skipped epochs' batches so every later epoch sees exactly the batches
    // an uninterrupted fit would.
    for (int64_t e = 0; e < plan.initial_epoch; ++e)
        for (int64_t s = begin_epoch(); s > 0; --s) next_batch();
}

int64_t BatchSchedule::begin_epoch() {
    if (plan_.steps_per_epoch > 0) return plan_.steps_per_epoch;
    start_pass();
    return static_cast<int64_t>(pass_.batch_sizes.size());
}

ScheduledBatch BatchSchedule::next_batch() {
    if (next_batch_ == pass_.batch_sizes.size()) start_pass();
    const int64_t count = pass_.batch_sizes[next_batch_++];
    const ScheduledBatch batch{identity_order_ ? nullptr : pass_.rows.data() + next_row_, next_row_, count};
    next_row_ += count;
    return batch;
}

void BatchSchedule::start_pass() {
    if (plan_.dataset) {
        const int64_t limit =
            plan_.dataset->cardinality() < 0 ? std::max<int64_t>(plan_.steps_per_epoch, 1) * plan_.epochs : -1;
        plan_.dataset->plan(passes_, limit, pass_);
        identity_order_ = false;
        if (pass_.batch_sizes.empty()) throw Error("fit: the training dataset yields no batches");
    } else {
        // Shuffling the previous permutation gives a uniform one too; no reset needed.
        identity_order_ = !plan_.shuffle;
        if (plan_.shuffle) shuffle_rng_.shuffle(pass_.rows.data(), data_rows_);
    }
    ++passes_;
    next_batch_ = 0;
    next_row_ = 0;
}

}  // namespace onefit
