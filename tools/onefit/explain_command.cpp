// run_explain: the fit as `onefit fit` would run it (same config and flags), once, with
// FitProfile on; then the calibration, the projections and the lints (src/explain).
#include "explain_command.hpp"

#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fit_command.hpp"
#include "model_commands.hpp"

namespace onefit::cli {
namespace {

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

struct ExplainData {
    Tensor x_train, y_train, x_val, y_val;
    int64_t train_rows = 0, validation_rows = 0;
    Shape sample_shape;
};

// The data exactly as `onefit fit` loads and splits it (split_data), with validation_split's last
// rows cut out here so they can be handed to the lints.
ExplainData load(const FitConfig& config) {
    SplitData s = split_data(config);
    ExplainData d;
    if (s.validation) {
        d.x_train = std::move(s.x_train), d.y_train = std::move(s.y_train);
        d.x_val = std::move(s.validation->first), d.y_val = std::move(s.validation->second);
    } else {
        const int64_t n = s.x_train.rows();
        d.x_train = s.x_train.slice_rows(0, s.train_rows), d.y_train = s.y_train.slice_rows(0, s.train_rows);
        if (s.train_rows < n) d.x_val = s.x_train.slice_rows(s.train_rows, n), d.y_val = s.y_train.slice_rows(s.train_rows, n);
    }
    d.train_rows = d.x_train.rows();
    d.validation_rows = d.x_val.rows();
    d.sample_shape = s.sample_shape;
    return d;
}

std::string describe(const FitConfig& config, const ExplainData& d) {
    std::string line = config.source + " (" + std::to_string(d.train_rows) + " train / " +
                       std::to_string(d.validation_rows) + " validation rows), " +
                       layers_text(model_from(config, d.sample_shape).input_shape(), config.layers);
    return line + ", " + config.optimizer + ", " + config.loss + ", batch " + std::to_string(config.batch_size) + ", " +
           std::to_string(config.epochs) + " epochs";
}

FitWork work_of(const Sequential& model, int64_t train_rows, int64_t validation_rows, const FitConfig& config,
                int64_t epochs) {
    const bool callbacks = !config.checkpoint_dir.empty() || config.early_stopping_patience >= 0 ||
                           !config.csv_log.empty();
    return fit_work(model, train_rows, validation_rows, epochs, config.batch_size, config.steps_per_epoch,
                    config.verbose != 0 || callbacks);
}

}  // namespace

CLI::App* add_explain_command(CLI::App& app, ExplainFlags& flags) {
    CLI::App* explain = app.add_subcommand(
        "explain", "Run a fit once and explain it: time per phase, FLOPs and bytes, projected time per device, "
                   "and lints with fixes. Takes every `onefit fit` argument (see onefit fit --help).");
    explain->footer(
        "Examples:\n"
        "  onefit explain                              # the seed experiment\n"
        "  onefit explain examples/iris_fixed.json --json\n"
        "  onefit explain --epochs 50 --report report.html\n"
        "  onefit explain --members 10000          # when does the GPU win?\n"
        "The output and the cost model are documented in docs/explain.md.");
    explain->add_flag("--json", flags.json, "Print one JSON object (schema in docs/explain.md) instead of text");
    explain->add_option("--report", flags.report_path, "Also write a self-contained HTML report with charts")
        ->type_name("FILE.html");
    explain->add_option("--members", flags.members,
                        "Also project a sweep of N members of this fit per device (onefit sweep), and the member "
                        "count from which each device overtakes the CPU")
        ->check(CLI::Range(int64_t{1}, int64_t{1000000000}))
        ->type_name("N");
    explain->add_flag("--recalibrate", flags.recalibrate, "Measure this CPU again instead of using the cached profile");
    explain->allow_extras();
    explain->prefix_command(false);
    return explain;
}

Device auto_device(const Sequential& model, int64_t train_rows, int64_t validation_rows, const FitConfig& config) {
    if (!cuda_available()) return Device::cpu;  // nothing to choose from: no calibration needed
    const FitWork work = work_of(model, train_rows, validation_rows, config, config.epochs);
    if (!work.step.gpu_unsupported.empty()) return Device::cpu;  // layers the CUDA backend does not run
    return pick_device(work, device_profiles(cpu_profile()));
}

void print_fit_profile(const FitProfile& profile, const CommandTimes& times, const Sequential& model,
                       int64_t train_rows, int64_t validation_rows, const FitConfig& config, int64_t epochs_run) {
    const std::vector<DeviceProfile> profiles = device_profiles(cpu_profile());
    const FitWork work = work_of(model, train_rows, validation_rows, config, epochs_run);
    const DeviceProfile& ran_on = profile_for(profile.device == "cuda" ? Device::cuda : Device::cpu, profiles);
    std::cout << "Where the time went (" << profile.steps << " steps, " << profile.program_calls
              << " program call" << (profile.program_calls == 1 ? "" : "s") << ")\n"
              << format_phase_table(fit_phases(profile, times, work, ran_on));
    if (!profile.kernels.empty()) std::cout << "CPU kernels: " << profile.kernels << "\n";
}

int run_explain(const ExplainFlags& flags) {
    // The fit flags, parsed and checked exactly as `onefit fit` parses them.
    FitConfig config = fit_config_from(flags.rest, "explain");
    if (!config.save_dir.empty() || !config.resume_dir.empty())
        throw Error("explain runs the fit to measure it and keeps no model: --save and --resume belong to `onefit fit`");
    if (!flags.report_path.empty()) check_parent_exists(flags.report_path, "--report");

    CommandTimes times;
    times.command_line = true;
    auto start = clock_type::now();
    const ExplainData data = load(config);
    times.load_seconds = since(start);
    times.load_bytes = data_file_bytes(config);
    settle_loss(config, data.y_train, flags.json ? nullptr : &std::cout);

    start = clock_type::now();
    Sequential model = model_from(config, data.sample_shape);
    compile_from(model, config);
    times.compile_seconds = since(start);

    const Device device = config.device == "auto" ? auto_device(model, data.train_rows, data.validation_rows, config)
                                                  : device_from_name(config.device);
    if (device == Device::cuda) {  // the context is created here, before fit
        start = clock_type::now();
        std::string why;
        if (!cuda_available(&why)) throw Error("--device cuda: " + why);
        cuda_device_description();
        times.device_start_seconds = since(start);
    }

    FitOptions options;
    options.batch_size = config.batch_size;
    options.epochs = config.epochs;
    options.verbose = config.verbose == 0 ? 0 : 2;
    options.shuffle = config.shuffle;
    options.device = device;
    options.steps_per_epoch = config.steps_per_epoch;
    const bool validation = data.validation_rows > 0;
    const ExplainReport report = explain_fit(model, data.x_train, data.y_train, validation ? &data.x_val : nullptr,
                                             validation ? &data.y_val : nullptr, options, times,
                                             describe(config, data), flags.recalibrate);

    if (!flags.report_path.empty()) write_file_atomically(flags.report_path, explain_html(report));
    std::vector<SweepProjection> sweep;
    if (flags.members > 0)
        sweep = project_sweep(device_profiles(report.ran_on.device == Device::cpu ? report.ran_on : cpu_profile()),
                              report.work, flags.members);
    if (flags.json) {
        nlohmann::json out = nlohmann::json::parse(explain_json(report));
        if (flags.members > 0) {
            out["sweep"] = {{"members", flags.members}, {"devices", nlohmann::json::array()}};
            for (const SweepProjection& p : sweep)
                out["sweep"]["devices"].push_back({{"device", p.device_name}, {"estimate", p.estimate},
                                                   {"at_once", p.at_once}, {"seconds", p.seconds},
                                                   {"crossover_members", p.crossover}});
        }
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    std::cout << explain_text(report);
    if (flags.members > 0) std::cout << sweep_projection_text(sweep, flags.members);
    if (!flags.json && !report.kernels.empty()) std::cout << "CPU kernels: " << report.kernels << "\n";
    if (!flags.json && !flags.report_path.empty()) std::cout << "report: " << flags.report_path << "\n";
    return 0;
}

}  // namespace onefit::cli
