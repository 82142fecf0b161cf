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
#include "train/fit_setup.hpp"
#include "train/progress.hpp"

namespace onefit {
namespace {

bool is_terminal(std::ostream& out) { return &out == &std::cout && isatty(STDOUT_FILENO); }

}  // namespace

History Sequential::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
    require_not_fitting("fit");
    train::ArrayFit fit;
    train::prepare_array_fit(program(), x, y, options, warnings_, fit);
    return run_fit(fit.plan, fit.rest);
}

History Sequential::fit(const Dataset& train, const FitOptions& options) {
    require_not_fitting("fit");
    train::check_fit_options(options);
    const TrainingProgram& prog = program();
    if (options.validation_split > 0)
        throw Error("fit: validation_split is not supported with a Dataset (as in Keras); pass validation data");
    if (options.sample_weight || options.validation_sample_weight)
        throw Error("fit: sample_weight is for arrays; a Dataset carries its own (from_tensor_slices((x, y, sample_weight)))");
    train::check_features(prog, train.x(), "dataset x");
    warnings_ = train::check_labels(prog, train.y(), train.x().rows(), "dataset y");
    if (train.cardinality() < 0 && options.steps_per_epoch < 0)
        throw Error("fit: the dataset repeats forever; pass steps_per_epoch");
    FitPlan plan;
    plan.dataset = train;
    if (const Tensor* w = train.sample_weight()) plan.sample_weight = w->data();  // (checked by the dataset)
    plan.y_width = label_width(train.y());
    if (options.validation_data) {
        const auto& [vx, vy] = *options.validation_data;
        train::check_features(prog, vx, "validation x");
        train::check_labels(prog, vy, vx.rows(), "validation y");
        plan.val_x = FeatureView(vx);
        plan.val_y = &vy;
    } else if (options.validation_dataset) {
        plan.val_dataset = train::checked_validation_dataset(prog, *options.validation_dataset);
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
    train::complete_plan(plan, options, seed_);
    const std::vector<nn::Metric> metrics = train::plan_metrics(prog, plan);
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
                if ((op.kind == Layer::Kind::Dense && op.dense.use_blas) ||
                    (op.kind == Layer::Kind::Conv2D && op.conv.use_blas)) {
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
        const bool broke = train::record_epoch(history, logs, program.logs()[static_cast<size_t>(epoch)], epoch,
                                               metrics, validation, warnings_);
        if (broke && !stop_training) {
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
