// fit(): checks the data once, builds the CPU training program for it, and runs it, stopping
// on the host only where something must look (progress, callbacks); with verbose=0 and no
// callbacks the whole fit is one call.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "nn/metrics.hpp"
#include "onefit/error.hpp"
#include "onefit/model.hpp"
#include "program/fit_plan.hpp"
#include "runtime/cpu/cpu_simd.hpp"
#include "runtime/cpu/gemm.hpp"
#include "runtime/cuda/cuda_fit.hpp"
#include "train/checks.hpp"
#include "train/progress.hpp"

namespace onefit {
namespace {

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

bool is_terminal(std::ostream& out) { return &out == &std::cout && isatty(STDOUT_FILENO); }

void check_options(const FitOptions& o) {
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
    train::check_features(prog, validation.x(), "validation dataset x");
    train::check_labels(prog, validation.y(), validation.x().rows(), "validation dataset y");
    if (validation.cardinality() < 0) throw Error("fit: the validation dataset repeats forever; it must be finite");
    return validation;
}
}  // namespace

History Sequential::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
    require_not_fitting("fit");
    check_options(options);
    const TrainingProgram& prog = program();
    train::check_features(prog, x, "x");
    if (options.validation_split > 0 && (options.validation_data || options.validation_dataset))
        throw Error("fit: give validation_data or validation_split, not both");

    // validation_split takes the last rows, before any shuffling (Keras: floor(n * (1 - split))).
    // Features are read where they are (views of x); labels are small and copied.
    FeatureView x_train(x), x_val;
    const Tensor* y_train = &y;
    const Tensor* y_val = nullptr;
    Tensor y_head, y_tail;
    if (options.validation_split > 0) {
        const int64_t split = static_cast<int64_t>(std::floor(static_cast<double>(x.rows()) * (1.0 - options.validation_split)));
        if (split < 1 || split >= x.rows())
            throw Error("fit: validation_split " + std::to_string(options.validation_split) + " of " +
                        std::to_string(x.rows()) + " rows leaves no training or no validation rows");
        x_train = FeatureView(x, 0, split), x_val = FeatureView(x, split, x.rows() - split);
        y_head = y.slice_rows(0, split), y_tail = y.slice_rows(split, y.rows());
        y_train = &y_head, y_val = &y_tail;
    } else if (options.validation_data && !options.validation_data->first.empty()) {
        const auto& [vx, vy] = *options.validation_data;
        train::check_features(prog, vx, "validation x");
        x_val = FeatureView(vx), y_val = &vy;
    }
    warnings_ = train::check_labels(prog, *y_train, x_train.rows, "y");
    if (y_val) {
        for (auto& w : train::check_labels(prog, *y_val, x_val.rows, "validation y"))
            if (warnings_.empty()) warnings_.push_back(w);
        if (label_width(*y_val) != label_width(*y_train))
            throw Error("fit: validation labels have width " + std::to_string(label_width(*y_val)) +
                        " but training labels " + std::to_string(label_width(*y_train)));
        for (auto& w : train::check_class_coverage(prog, *y_train, *y_val)) warnings_.push_back(w);
    }

    FitPlan plan;
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
    // Run through the shared driver below.
    FitOptions rest = options;
    rest.validation_data.reset();
    rest.validation_split = 0;
    return run_fit(plan, rest);
}

History Sequential::fit(const Dataset& train, const FitOptions& options) {
    require_not_fitting("fit");
    check_options(options);
    const TrainingProgram& prog = program();
    if (options.validation_split > 0)
        throw Error("fit: validation_split is not supported with a Dataset (as in Keras); pass validation data");
    train::check_features(prog, train.x(), "dataset x");
    warnings_ = train::check_labels(prog, train.y(), train.x().rows(), "dataset y");
    if (train.cardinality() < 0 && options.steps_per_epoch < 0)
        throw Error("fit: the dataset repeats forever; pass steps_per_epoch");
    FitPlan plan;
    plan.dataset = train;
    plan.y_width = label_width(train.y());
    if (options.validation_data) {
        const auto& [vx, vy] = *options.validation_data;
        train::check_features(prog, vx, "validation x");
        train::check_labels(prog, vy, vx.rows(), "validation y");
        plan.val_x = FeatureView(vx);
        plan.val_y = &vy;
    } else if (options.validation_dataset) {
        plan.val_dataset = checked_validation_dataset(prog, *options.validation_dataset);
    }
    FitOptions rest = options;
    rest.validation_data.reset();
    return run_fit(plan, rest);
}

History Sequential::run_fit(FitPlan& plan, const FitOptions& options) {
    using clock = std::chrono::steady_clock;
    const auto seconds_since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
    const auto prepare_start = clock::now();
    TrainingProgram& prog = *program_;
    fitting_ = true;
    struct FittingUntilReturn {
        bool& fitting;
        ~FittingUntilReturn() { fitting = false; }
    } fitting_until_return{fitting_};
    const int64_t first_step = prog.optimizer_step;
    const int verbose = options.verbose < 0 ? 1 : options.verbose;
    std::ostream& out = options.out ? *options.out : std::cout;
    plan.epochs = options.epochs;
    plan.initial_epoch = options.initial_epoch;
    plan.steps_per_epoch = options.steps_per_epoch;
    plan.seed = options.seed.value_or(seed_);
    plan.validation_batch_size = validation_batch_rows(options.validation_batch_size, options.batch_size);

    std::vector<nn::Metric> metrics;
    for (const std::string& m : prog.metric_names) metrics.push_back(nn::resolve_metric(m, prog.output_width, plan.y_width));
    if (verbose > 0 && options.print_warnings)
        for (const std::string& w : warnings_) std::cerr << "onefit: warning: " << w << "\n";

    std::unique_ptr<DeviceProgram> device_program;
    if (options.device == Device::cuda)
        device_program = cuda::make_cuda_fit(prog, plan, metrics);
    else
        device_program = cpu::make_cpu_fit(prog, plan, metrics);
    DeviceProgram& program = *device_program;
    FitProfile* profile = options.profile;
    if (profile) {
        *profile = FitProfile{};
        profile->device = device_name(options.device);
        if (options.device == Device::cpu) {
            profile->kernels = "SIMD " + cpu::simd_target();
            for (const ProgramOp& op : prog.ops)
                if (op.kind == Layer::Kind::Dense && op.dense.use_blas) {
                    profile->kernels += "; GEMM " + cpu::gemm_choice_summary();
                    break;
                }
        }
        profile->prepare_seconds = seconds_since(prepare_start);
        program.enable_profiling();
    }
    // Times one call into the program (only when profiling).
    auto call = [&](auto&& f) {
        const auto start = profile ? clock::now() : clock::time_point{};
        f();
        if (profile) profile->program_seconds += seconds_since(start), ++profile->program_calls;
    };
    const auto host_start = clock::now();
    const bool validation = program.has_validation();
    train::ProgressPrinter progress(out, verbose, is_terminal(out), options.epochs);
    History history;
    stop_training = false;
    // A callback's set_weights (on_train_begin, on_epoch_begin, or the last epoch's end)
    // reaches the device's copy before the next epoch runs, as in Keras.
    int64_t weights_seen = prog.weights_version;
    for (Callback* cb : options.callbacks) cb->model = this, cb->out = &out;
    for (Callback* cb : options.callbacks) cb->on_train_begin();

    Logs logs;
    auto record = [&](int64_t epoch) {
        logs = epoch_logs(program.logs()[static_cast<size_t>(epoch)], metrics, validation);
        history.epoch.push_back(epoch);
        for (const auto& [k, v] : logs) history.history[k].push_back(v);
        if (!std::isfinite(logs["loss"]) && !stop_training) {  // as keras.callbacks.TerminateOnNaN
            warnings_.push_back("the loss became " + std::to_string(logs["loss"]) + " at epoch " +
                                std::to_string(epoch + 1) + ": training stopped; lower the learning rate");
            if (verbose > 0 && options.print_warnings) std::cerr << "onefit: warning: " << warnings_.back() << "\n";
            stop_training = true;
        }
    };
    if (verbose == 0 && options.callbacks.empty()) {
        // Nothing looks: one call. The program itself stops after an epoch whose loss is not
        // finite, so the weights it leaves are those of the last epoch recorded.
        int64_t end = options.epochs;
        call([&] { end = program.run_epochs(options.initial_epoch, options.epochs); });
        for (int64_t e = options.initial_epoch; e < end && !stop_training; ++e) record(e);
    } else {
        for (int64_t epoch = options.initial_epoch; epoch < options.epochs && !stop_training; ++epoch) {
            for (Callback* cb : options.callbacks) cb->on_epoch_begin(epoch);
            if (prog.weights_version != weights_seen) {
                program.load_state();
                weights_seen = prog.weights_version;
            }
            call([&] { program.begin_epoch(epoch); });
            const int64_t steps = program.steps_in_epoch();
            progress.epoch_begin(epoch, steps);
            // A live bar runs the steps in about 30 chunks; otherwise the epoch is one call.
            const int64_t chunk = progress.live() ? std::max<int64_t>(1, steps / 30) : steps;
            for (int64_t done = 0; done < steps;) {
                const int64_t n = std::min(chunk, steps - done);
                call([&] { program.train_steps(n); });
                done += n;
                const LogSums& s = program.logs()[static_cast<size_t>(epoch)].train;
                if (done < steps) progress.update(done, s.loss / static_cast<double>(std::max<int64_t>(s.samples, 1)));
            }
            call([&] { program.end_epoch(); });
            record(epoch);
            progress.epoch_end(logs);
            // Callbacks may read or save the weights (ModelCheckpoint, EarlyStopping): give them
            // this epoch's. One parameter copy per epoch, only when there are callbacks.
            if (!options.callbacks.empty()) program.store_state();
            for (Callback* cb : options.callbacks) cb->on_epoch_end(epoch, logs);
        }
    }
    const auto read_back_start = clock::now();
    program.store_state();
    if (profile) {
        profile->read_back_seconds = seconds_since(read_back_start);
        profile->validation_seconds = program.validation_seconds();
        profile->steps = prog.optimizer_step - first_step;
        profile->host_seconds = std::max(0.0, seconds_since(host_start) - profile->program_seconds -
                                                  profile->read_back_seconds);
    }
    for (Callback* cb : options.callbacks) cb->on_train_end(logs);
    return history;
}

}  // namespace onefit
