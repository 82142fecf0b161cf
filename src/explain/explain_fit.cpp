// explain_fit: one profiled fit, then the calibration, the projections and the lints, gathered
// into the report that `onefit explain` prints and the Python module returns.
#include <algorithm>
#include <chrono>
#include <sstream>

#include "onefit/error.hpp"
#include "onefit/explain.hpp"
#include "program/training_program.hpp"

namespace onefit {

namespace {

// The model's training position (parameters, moving statistics, optimizer slots and step count,
// stop_training), put back when the explained fit ends, however it ends: explaining a fitted model
// must not train it further.
class KeepTrainingPosition {
public:
    explicit KeepTrainingPosition(Sequential& model)
        : model_(model), program_(model.program_state()), params_(program_.params), state_(program_.state),
          slots_(program_.optimizer_slots), step_(program_.optimizer_step), stop_training_(model.stop_training) {}
    ~KeepTrainingPosition() {
        program_.params = std::move(params_);
        program_.state = std::move(state_);
        program_.optimizer_slots = std::move(slots_);
        program_.optimizer_step = step_;
        ++program_.weights_version;  // as set_weights: whatever read the weights reads them again
        model_.stop_training = stop_training_;
    }
    KeepTrainingPosition(const KeepTrainingPosition&) = delete;
    KeepTrainingPosition& operator=(const KeepTrainingPosition&) = delete;

private:
    Sequential& model_;
    TrainingProgram& program_;
    std::vector<float> params_, state_, slots_;
    int64_t step_;
    bool stop_training_;
};

}  // namespace

const DeviceProfile& profile_for(Device device, const std::vector<DeviceProfile>& profiles) {
    for (const DeviceProfile& p : profiles)
        if (p.device == device && (p.present || device == Device::cpu)) return p;
    for (const DeviceProfile& p : profiles)
        if (p.device == device) return p;
    return profiles.front();
}

FitWork fit_work(const Sequential& model, int64_t train_rows, int64_t validation_rows, int64_t epochs,
                 int64_t batch_size, int64_t steps_per_epoch, bool host_looks_each_epoch) {
    FitWork work = fit_work(step_work(model, batch_size), train_rows, validation_rows, shape_elements(model.input_shape()), epochs,
                            steps_per_epoch);
    // The live bar's ~30 chunks per epoch happen only on a terminal; counted as one per epoch.
    work.program_calls = host_looks_each_epoch ? epochs : 1;
    return work;
}

ExplainReport explain_fit(Sequential& model, const Tensor& x_train, const Tensor& y_train, const Tensor* x_val,
                          const Tensor* y_val, FitOptions options, CommandTimes times, std::string run,
                          bool recalibrate) {
    if (options.validation_split > 0)
        throw Error("explain: give the validation rows as data (validation_split is not explained)");
    const int64_t train_rows = x_train.rows(), validation_rows = x_val && y_val ? x_val->rows() : 0;
    if (validation_rows > 0) options.validation_data = std::make_pair(*x_val, *y_val);
    FitProfile profile;
    options.profile = &profile;
    std::ostringstream fit_output;  // epoch lines cost what they cost; captured, not shown
    options.out = &fit_output;
    options.print_warnings = false;  // they become lints
    const bool looks_each_epoch = options.verbose != 0 || !options.callbacks.empty();
    History history;
    {
        const KeepTrainingPosition keep(model);
        const auto start = std::chrono::steady_clock::now();
        history = model.fit(x_train, y_train, options);
        times.fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    // Calibrated after the fit, so the fit explained is the cold one a user runs.
    const DeviceProfile cpu = cpu_profile(recalibrate);
    const std::vector<DeviceProfile> profiles = device_profiles(cpu);
    ExplainReport report;
    report.run = std::move(run);
    report.device = device_name(options.device);
    report.ran_on = profile_for(options.device, profiles);
    const int64_t epochs_run = static_cast<int64_t>(history.epoch.size());
    report.work = fit_work(model, train_rows, validation_rows, epochs_run, options.batch_size, options.steps_per_epoch,
                           looks_each_epoch);
    report.phases = fit_phases(profile, times, report.work, report.ran_on);
    report.train_seconds = std::max(0.0, profile.program_seconds - profile.validation_seconds);
    const FitWork planned = fit_work(model, train_rows, validation_rows, options.epochs - options.initial_epoch,
                                     options.batch_size, options.steps_per_epoch, looks_each_epoch);
    for (const DeviceProfile& p : profiles) report.projections.push_back(project(p, planned));
    report.picked_device = device_name(pick_device(planned, profiles));
    report.reason = projection_reason(planned, report.projections);
    report.history = history;
    report.kernels = profile.kernels;

    LintInput lint;
    lint.warnings = model.warnings();
    lint.x_train = &x_train;
    lint.y_train = &y_train;
    if (validation_rows > 0) lint.y_validation = y_val;
    lint.history = &report.history;
    for (const Layer& layer : model.layers())
        if (layer.kind == Layer::Kind::Dense) lint.output_width = layer.units;  // the last Dense's
    lint.loss = model.loss().kind;
    lint.batch_size = options.batch_size;
    lint.train_rows = train_rows;
    lint.steps_per_epoch = options.steps_per_epoch;
    lint.command_line = times.command_line;
    const double steps = static_cast<double>(std::max<int64_t>(1, report.work.steps));
    for (const Phase& p : report.phases) {
        if (p.name == "compute") lint.step_compute_seconds = p.seconds / steps;
        if (p.name == "dispatch overhead") lint.step_overhead_seconds = p.seconds / steps;
    }
    report.lints = lint_fit(lint);
    return report;
}

}  // namespace onefit
