// What fit() does around the device's part, shared with sweep(), which runs many members'
// device parts as one program: the checks and plan of a fit on arrays, the plan's per-fit
// fields, and the History from the device's per-epoch sums.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/metrics.hpp"
#include "onefit/model.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"

namespace onefit::train {

// Errors for options no fit accepts (batch_size < 1, ...).
void check_fit_options(const FitOptions& options);

// A validation Dataset, checked against the program (finite, shapes).
const Dataset& checked_validation_dataset(const TrainingProgram& program, const Dataset& validation);

// fit(x, y)'s plan: features viewed where they are, validation_split's rows taken from the end
// (labels copied here), or validation_data; data checked, warnings replaced. The plan points
// into this object, x, y and options' validation data: all must outlive its use.
struct ArrayFit {
    FitPlan plan;
    FitOptions rest;  // the options less validation data and split, for the driver
    Tensor y_head, y_tail;

    ArrayFit() = default;
    ArrayFit(const ArrayFit&) = delete;
    ArrayFit& operator=(const ArrayFit&) = delete;
};
void prepare_array_fit(const TrainingProgram& program, const Tensor& x, const Tensor& y, const FitOptions& options,
                       std::vector<std::string>& warnings, ArrayFit& out);

// The plan's fields every fit takes from its options (epochs, seed, validation batch size).
void complete_plan(FitPlan& plan, const FitOptions& options, uint64_t model_seed);
// The compiled metric names resolved for the plan's labels.
std::vector<nn::Metric> plan_metrics(const TrainingProgram& program, const FitPlan& plan);

// An epoch's Keras logs (loss, metrics, val_...) from the device's sums.
Logs epoch_logs(const EpochLog& log, const std::vector<nn::Metric>& metrics, bool validation);
// Appends epoch's logs to history and returns them in `logs`. A loss that is not finite ends
// training, as keras.callbacks.TerminateOnNaN: a warning is added and true returned.
bool record_epoch(History& history, Logs& logs, const EpochLog& log, int64_t epoch,
                  const std::vector<nn::Metric>& metrics, bool validation, std::vector<std::string>& warnings);

}  // namespace onefit::train
