#include "train/fit_setup.hpp"

#include <algorithm>
#include <cmath>

#include "onefit/error.hpp"
#include "data/row_checks.hpp"
#include "train/checks.hpp"

namespace onefit::train {

void check_fit_options(const FitOptions& o) {
    if (o.batch_size < 1) throw Error("fit: batch_size must be at least 1, got " + std::to_string(o.batch_size));
    if (o.epochs < 1) throw Error("fit: epochs must be at least 1, got " + std::to_string(o.epochs));
    if (o.verbose < -1 || o.verbose > 2) throw Error("fit: verbose must be 0, 1 or 2");
    if (!(o.validation_split >= 0.0 && o.validation_split < 1.0))
        throw Error("fit: validation_split must be in [0, 1), got " + std::to_string(o.validation_split));
    if (o.steps_per_epoch == 0 || o.steps_per_epoch < -1) throw Error("fit: steps_per_epoch must be positive");
    if (o.initial_epoch < 0 || o.initial_epoch >= o.epochs)
        throw Error("fit: initial_epoch must be in [0, epochs), got " + std::to_string(o.initial_epoch) + " with epochs " +
                    std::to_string(o.epochs));
}

const Dataset& checked_validation_dataset(const TrainingProgram& prog, const Dataset& validation) {
    check_features(prog, validation.x(), "validation dataset x");
    check_labels(prog, validation.y(), validation.x().rows(), "validation dataset y");
    if (validation.cardinality() < 0) throw Error("fit: the validation dataset repeats forever; it must be finite");
    return validation;
}

void prepare_array_fit(const TrainingProgram& prog, const Tensor& x, const Tensor& y, const FitOptions& options,
                       std::vector<std::string>& warnings, ArrayFit& out) {
    check_fit_options(options);
    check_features(prog, x, "x");
    if (options.validation_split > 0 && (options.validation_data || options.validation_dataset))
        throw Error("fit: give validation_data or validation_split, not both");

    // validation_split takes the last rows, before any shuffling (Keras: floor(n * (1 - split))).
    // Features are read where they are (views of x); labels are small and copied.
    FeatureView x_train(x), x_val;
    const Tensor* y_train = &y;
    const Tensor* y_val = nullptr;
    if (options.sample_weight) {
        check_sample_weight(*options.sample_weight, x.rows(), "sample_weight", "the features have");
        out.plan.sample_weight = options.sample_weight->data();
    }
    if (options.validation_sample_weight && !(options.validation_data && !options.validation_data->first.empty()))
        throw Error("fit: validation_sample_weight needs validation_data (arrays)");
    if (options.validation_split > 0) {
        const int64_t split = static_cast<int64_t>(std::floor(static_cast<double>(x.rows()) * (1.0 - options.validation_split)));
        if (split < 1 || split >= x.rows())
            throw Error("fit: validation_split " + std::to_string(options.validation_split) + " of " +
                        std::to_string(x.rows()) + " rows leaves no training or no validation rows");
        x_train = FeatureView(x, 0, split), x_val = FeatureView(x, split, x.rows() - split);
        out.y_head = y.slice_rows(0, split), out.y_tail = y.slice_rows(split, y.rows());
        y_train = &out.y_head, y_val = &out.y_tail;
        if (options.sample_weight)  // its last rows weight the validation rows, as Keras splits them
            out.plan.val_sample_weight = options.sample_weight->data() + split;
    } else if (options.validation_data && !options.validation_data->first.empty()) {
        const auto& [vx, vy] = *options.validation_data;
        check_features(prog, vx, "validation x");
        x_val = FeatureView(vx), y_val = &vy;
        if (options.validation_sample_weight) {
            check_sample_weight(*options.validation_sample_weight, vx.rows(), "validation sample_weight", "the features have");
            out.plan.val_sample_weight = options.validation_sample_weight->data();
        }
    }
    warnings = check_labels(prog, *y_train, x_train.rows, "y");
    if (y_val) {
        for (auto& w : check_labels(prog, *y_val, x_val.rows, "validation y"))
            if (warnings.empty()) warnings.push_back(w);
        if (label_width(*y_val) != label_width(*y_train))
            throw Error("fit: validation labels have width " + std::to_string(label_width(*y_val)) +
                        " but training labels " + std::to_string(label_width(*y_train)));
        for (auto& w : check_class_coverage(prog, *y_train, *y_val)) warnings.push_back(w);
    }

    FitPlan& plan = out.plan;
    plan.x = x_train;
    plan.y = y_train;
    plan.batch_size = std::min(options.batch_size, x_train.rows);
    plan.shuffle = options.shuffle;
    if (y_val) {
        plan.val_x = x_val;
        plan.val_y = y_val;
    } else if (options.validation_dataset) {  // arrays to train on, a dataset to validate on
        plan.val_dataset = checked_validation_dataset(prog, *options.validation_dataset);
    }
    plan.y_width = label_width(*y_train);
    out.rest = options;
    out.rest.validation_data.reset();
    out.rest.validation_split = 0;
}

void complete_plan(FitPlan& plan, const FitOptions& options, uint64_t model_seed) {
    plan.epochs = options.epochs;
    plan.initial_epoch = options.initial_epoch;
    plan.steps_per_epoch = options.steps_per_epoch;
    plan.seed = options.seed.value_or(model_seed);
    plan.validation_batch_size = validation_batch_rows(options.validation_batch_size, options.batch_size);
}

std::vector<nn::Metric> plan_metrics(const TrainingProgram& program, const FitPlan& plan) {
    std::vector<nn::Metric> metrics;
    for (const std::string& m : program.metric_names)
        metrics.push_back(nn::resolve_metric(m, program.output_width, plan.y_width));
    return metrics;
}

Logs epoch_logs(const EpochLog& log, const std::vector<nn::Metric>& metrics, bool validation) {
    Logs logs;
    auto add = [&](const LogSums& sums, const std::string& prefix) {
        const double n = static_cast<double>(std::max<int64_t>(sums.samples, 1));
        logs[prefix + "loss"] = sums.loss / n;
        for (size_t k = 0; k < metrics.size(); ++k) logs[prefix + metrics[k].name] = sums.metrics[k] / n;
    };
    add(log.train, "");
    if (validation) add(log.validation, "val_");
    return logs;
}

bool record_epoch(History& history, Logs& logs, const EpochLog& log, int64_t epoch,
                  const std::vector<nn::Metric>& metrics, bool validation, std::vector<std::string>& warnings) {
    logs = epoch_logs(log, metrics, validation);
    history.epoch.push_back(epoch);
    for (const auto& [k, v] : logs) history.history[k].push_back(v);
    if (std::isfinite(logs["loss"])) return false;
    warnings.push_back("the loss became " + std::to_string(logs["loss"]) + " at epoch " + std::to_string(epoch + 1) +
                       ": training stopped; lower the learning rate");
    return true;
}

}  // namespace onefit::train
