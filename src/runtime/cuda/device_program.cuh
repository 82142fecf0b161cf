// The training program as the GPU kernels see it: plain structs passed by value as kernel
// arguments, plus device pointers into one arena that holds all data, parameters and logs.
#pragma once
#include <cstdint>

#include "nn/metrics.hpp"
#include "nn/optimizer_math.hpp"
#include "onefit/layers.hpp"
#include "onefit/losses.hpp"
#include "program/fit_plan.hpp"

namespace onefit::cuda {

inline constexpr int kMaxOps = 16;

struct DeviceOp {
    int kind;  // 0 dense, 1 dropout
    int in, out;
    Activation activation;
    int use_bias, out_major;
    int64_t weight, bias;  // offsets into the parameters
    float rate;
};

struct DeviceModel {
    DeviceOp ops[kMaxOps];
    int n_ops;
    LossKind loss;
    int loss_takes_logits;
    float huber_delta;
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

// What one launch does: global steps [step_begin, step_end) (validating at each epoch end it
// crosses when validate), or only the validation of validate_epoch (>= 0).
struct LaunchRange {
    int64_t step_begin, step_end;
    int validate;
    int validate_epoch;
};

}  // namespace onefit::cuda
