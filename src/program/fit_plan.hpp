// What one fit() call asks of a device: the data, the schedule of batches, and where the
// per-epoch results go. Device-independent; each runtime packs the data its own way.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "onefit/dataset.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

inline constexpr int kMaxMetrics = 8;

// Sums over the samples seen so far (divided by `samples` when an epoch is logged).
struct LogSums {
    double loss = 0;
    double metrics[kMaxMetrics] = {};
    int64_t samples = 0;
};

struct EpochLog {
    LogSums train, validation;
};

// One member of fits run together (stacked in SIMD lanes on the CPU, a block each in one launch
// on the GPU): its logs per epoch of its plan, valid for [first, end_epoch), end_epoch being the
// epoch after its last (earlier than asked when its loss stopped being finite).
struct MemberResult {
    std::vector<EpochLog> logs;
    int64_t end_epoch = 0;
};

// Rows [first, first + count) of a caller's 2-D float tensor, not owned (the tensor outlives
// the fit). Features are most of a fit's data (MNIST: 188 MB), so fit() passes them as views:
// validation_split's two parts of x included, where a copy would cost more than an epoch.
struct FeatureView {
    const float* data = nullptr;  // nullptr: none
    int64_t rows = 0, width = 0;

    FeatureView() = default;
    FeatureView(const Tensor& t, int64_t first, int64_t count)
        : data(t.data() + first * t.row_width()), rows(count), width(t.row_width()) {}
    explicit FeatureView(const Tensor& t) : FeatureView(t, 0, t.rows()) {}
    explicit operator bool() const { return data != nullptr; }
};

struct FitPlan {
    // Training data: x (N, F) and y (N, y_width), or a Dataset over such arrays.
    FeatureView x;
    const Tensor* y = nullptr;
    std::optional<Dataset> dataset;
    int64_t batch_size = 32;   // arrays only
    bool shuffle = true;       // arrays only: a new permutation each pass, as Keras
    int64_t steps_per_epoch = -1;
    int64_t epochs = 1;
    int64_t initial_epoch = 0;  // epochs before it are skipped (their batches still drawn)
    uint64_t seed = 0;         // shuffling and dropout
    // Validation (optional): arrays, evaluated in order in batches of validation_batch_size,
    // or a Dataset, evaluated as its first pass yields it.
    FeatureView val_x;
    const Tensor* val_y = nullptr;
    std::optional<Dataset> val_dataset;
    int64_t validation_batch_size = 32;
    int64_t y_width = 1;
    // Keras's sample_weight: one per training (validation) row, weighting its loss; null: none.
    // Not owned: the caller's tensors (or the training Dataset's weights) outlive the fit. A
    // validation Dataset's weights stay in it (its rows are gathered with them).
    const float* sample_weight = nullptr;
    const float* val_sample_weight = nullptr;
    bool weighted() const { return sample_weight || val_sample_weight || (val_dataset && val_dataset->sample_weight()); }
};

// Validation batch rows when the user names none: the training batch size, as Keras, but at
// least 64 rows. Validation sums per-sample losses and metrics, so the batch size changes only
// the order of float additions, and fewer, fuller batches cost less: the seed's 45 validation
// rows run as one batch instead of 20 + 20 + 5.
inline constexpr int64_t kMinDefaultValidationBatch = 64;
inline int64_t validation_batch_rows(int64_t requested, int64_t batch_size) {
    return requested > 0 ? requested : std::max(batch_size, kMinDefaultValidationBatch);
}

// Label width as the program sees it: (N,) and (N,1) are 1; (N,K) is K.
inline int64_t label_width(const Tensor& y) { return y.rank() <= 1 ? 1 : y.row_width(); }

}  // namespace onefit
