// The training program as the GPU kernels see it: plain structs passed by value as kernel
// arguments, plus device pointers into one arena that holds all data, parameters and logs.
// Plain C++ (no CUDA types), so host-side tests can include it; the few lookups both kernel
// paths need are ONEFIT_HD functions here, written once.
#pragma once
#include <cstdint>

#include "core/hd.hpp"
#include "nn/metrics.hpp"
#include "nn/optimizer_math.hpp"
#include "onefit/layers.hpp"
#include "onefit/losses.hpp"
#include "program/fit_plan.hpp"

namespace onefit::cuda {

inline constexpr int kMaxOps = 16;

struct DeviceOp {
    Layer::Kind kind;
    int in, out;
    Activation activation;
    bool use_bias, out_major;
    int64_t weight, bias;  // offsets into the parameters
    float rate;            // Dropout
};

struct DeviceModel {
    DeviceOp ops[kMaxOps];
    int n_ops;
    Loss loss;
    bool loss_takes_logits;
    int output_width;
    Optimizer optimizer;
    int64_t n_params;
    int n_slots;  // optimizer state vectors
    nn::MetricKind metrics[kMaxMetrics];
    int n_metrics;
    uint64_t dropout_seed;
};

// Device pointers (all inside one arena) and the schedule of every step of the fit.
struct DeviceData {
    const float *x, *y;             // packed training rows
    int x_width, y_width;           // y_width: packed label width
    const int32_t* order;           // row index of every scheduled row, in step order
    const int64_t* batch_start;     // per global step: index into order
    const int32_t* batch_rows;      // per global step: rows in the batch
    const int64_t* epoch_first_step;  // [epochs + 1]
    const float *val_x, *val_y;
    const int32_t* val_batch_rows;
    int n_val_batches;
    int max_rows;
    float *params, *slots;          // persistent state
    int64_t* step_count;            // optimizer steps taken (Adam's t)
    EpochLog* logs;                 // per epoch
};

// What one launch of the persistent kernel does: global steps [step_begin, step_end)
// (validating at each epoch end it crosses when validate), or only the validation of
// validate_epoch (>= 0). With stop_after_nonfinite, it stops after the first epoch whose
// training loss is not finite (DeviceProgram::run_epochs).
struct LaunchRange {
    int64_t step_begin, step_end;
    bool validate;
    int validate_epoch;
    bool stop_after_nonfinite;
};

// The epoch that global step `step` belongs to (epoch_first_step is ascending, one entry per
// epoch plus the end; epochs before initial_epoch have no steps).
ONEFIT_HD int epoch_of_step(const int64_t* epoch_first_step, int64_t step) {
    int e = 0;
    while (epoch_first_step[e + 1] <= step) ++e;
    return e;
}

// Element idx of a gathered batch (rows of `width` values, row-major) whose rows are
// order[0], order[1], ... of the packed array `data`.
ONEFIT_HD float batch_element(const float* data, int width, const int32_t* order, int64_t idx) {
    return data[int64_t(order[idx / width]) * width + idx % width];
}

}  // namespace onefit::cuda
