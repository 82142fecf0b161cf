// run_fit: data -> split -> model -> compile -> fit, then a short report: one line saying
// what ran, the library's epoch lines and warnings, the final metrics and the fit time.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <utility>

#include "explain_command.hpp"
#include "fit_command.hpp"
#include "model_commands.hpp"

namespace onefit::cli {
namespace {

std::string format_value(double v) {
    char text[32];
    const double a = std::fabs(v);
    std::snprintf(text, sizeof text, (a != 0 && a < 1e-3) ? "%.4e" : "%.4f", v);  // as Keras prints logs
    return text;
}

std::string format_number(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

// Counted before compile, so a mistyped width fails here instead of exhausting memory.
void check_model_size(const Sequential& model) {
    if (model.count_params() > kMaxParams)
        throw Error("the model has more than " + std::to_string(kMaxParams) +
                    " parameters, more than onefit fit trains; use fewer units");
}

// "onefit: iris (105 train / 45 validation rows), 4-32-3, adam(lr=0.1), log_cosh, batch 20, 20 epochs":
// the model that trains (a resumed one's, whatever the flags said).
std::string describe_run(const FitConfig& config, const SplitData& data, const Sequential& model) {
    std::string line = "onefit: " + data.name + " (" + std::to_string(data.train_rows) + " train";
    line += data.validation_rows > 0 ? " / " + std::to_string(data.validation_rows) + " validation rows), "
                                     : " rows, no validation), ";
    line += layers_text(model.input_shape(), model.layers());
    const Optimizer& optimizer = model.optimizer();
    const bool scheduled = optimizer.learning_rate_schedule.kind != ScheduleKind::constant;
    line += ", " + optimizer_name(optimizer.kind) + "(lr=" +
            (scheduled ? schedule_name(optimizer.learning_rate_schedule.kind) + " from " : std::string()) +
            format_number(optimizer.learning_rate) + "), " + loss_name(model.loss().kind);
    if (!config.metrics.empty()) {
        line += ", metrics ";
        for (size_t i = 0; i < config.metrics.size(); ++i) line += (i ? "," : "") + config.metrics[i];
    }
    line += ", batch " + std::to_string(config.batch_size) + ", " + std::to_string(config.epochs) + " epochs";
    if (config.steps_per_epoch > 0) line += " of " + std::to_string(config.steps_per_epoch) + " steps";
    return line;
}

// "final: loss 0.0712 - accuracy 0.9714 - val_loss 0.0833 - val_accuracy 0.9778" (Keras's order).
std::string describe_final(const History& history) {
    std::string line = "final:";
    for (const std::string prefix : {"", "val_"}) {
        auto add = [&](const std::string& key, const std::vector<double>& values) {
            if (!values.empty()) line += (line == "final:" ? " " : " - ") + key + " " + format_value(values.back());
        };
        const auto loss = history.history.find(prefix + "loss");
        if (loss != history.history.end()) add(loss->first, loss->second);
        for (const auto& [key, values] : history.history) {
            const bool validation = key.rfind("val_", 0) == 0;
            if (validation == !prefix.empty() && key != prefix + "loss") add(key, values);
        }
    }
    return line;
}

}  // namespace

static LabeledData load_data(const FitConfig& config) {
    if (config.source != "iris") return load_labeled_data(config.source, config.label, config.labels);
    if (!config.label.empty() && config.label != "species" && config.label != "4")
        throw Error("label '" + printable(config.label) +
                    "' does not apply to the built-in iris (its label is 'species'); give a CSV file to choose "
                    "another label column");
    return load_iris();
}

SplitData split_data(const FitConfig& config) {
    SplitData data;
    data.name = config.source;
    LabeledData all = load_data(config);
    data.sample_shape = all.sample_shape.empty() ? Shape{all.x.row_width()} : all.sample_shape;
    data.class_names = all.class_names;
    if (config.test_size > 0 && config.validation_split > 0)
        throw Error("validation comes from the test split (test_size " + format_number(config.test_size) +
                    ") or from validation_split, not both; give one of them (--test-size or --validation-split)");
    if (config.test_size > 0) {
        try {
            TrainTestSplit split = train_test_split(all.x, all.y, config.test_size, config.shuffle_split, config.split_seed);
            data.x_train = std::move(split.x_train);
            data.y_train = std::move(split.y_train);
            data.validation.emplace(std::move(split.x_test), std::move(split.y_test));
        } catch (const Error& e) {
            throw Error(data.name + ": " + e.what());
        }
        data.train_rows = data.x_train.rows();
        data.validation_rows = data.validation->first.rows();
        return data;
    }
    const int64_t n = all.x.rows();
    data.x_train = std::move(all.x);  // moved: a copy would double the features' memory
    data.y_train = std::move(all.y);
    // Keras's validation_split keeps the first floor(n * (1 - split)) rows for training.
    data.train_rows = static_cast<int64_t>(std::floor(static_cast<double>(n) * (1.0 - config.validation_split)));
    data.validation_rows = config.validation_split > 0 ? n - data.train_rows : 0;
    if (data.train_rows < 1 || (config.validation_split > 0 && data.validation_rows < 1))
        throw Error(data.name + ": validation_split " + format_number(config.validation_split) + " of " +
                    std::to_string(n) + " rows leaves no " + (data.train_rows < 1 ? "training" : "validation") +
                    " rows; choose a split between " + format_number(1.0 / static_cast<double>(n)) + " and " +
                    format_number(1.0 - 1.0 / static_cast<double>(n)));
    return data;
}

double data_file_bytes(const FitConfig& config) {
    double bytes = 0;
    for (const std::string& path : {config.seed_run() ? std::string() : config.source, config.labels}) {
        std::error_code error;
        if (!path.empty()) bytes += static_cast<double>(std::filesystem::file_size(path, error));
        if (error) return 0;
    }
    return bytes;
}

void settle_loss(FitConfig& config, const Tensor& labels, std::ostream* say) {
    if (!config.loss.empty() || !config.resume_dir.empty()) return;  // given, or the saved model's
    const auto [loss, why] = choose_loss(config.layers, labels);
    config.loss = loss;
    if (say) *say << "onefit: loss " << loss << " (" << why << "; --loss to choose another)" << std::endl;
}

FitOptions fit_options(const FitConfig& config, const SplitData& data) {
    FitOptions options;
    options.batch_size = config.batch_size;
    options.epochs = config.epochs;
    options.verbose = config.verbose;
    options.shuffle = config.shuffle;
    options.steps_per_epoch = config.steps_per_epoch;
    options.validation_data = data.validation;
    options.validation_split = data.validation ? 0.0 : config.validation_split;
    return options;
}

FitConfig fit_config_from(const std::vector<std::string>& args, const std::string& command) {
    CLI::App parser("onefit " + command, "onefit " + command);
    FitFlags fit_flags;
    add_fit_command(parser, fit_flags);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    reversed.push_back("fit");
    parser.parse(reversed);
    return resolve_fit_config(fit_flags);
}

// The model sees the data's sample shape (images keep theirs) when a layer before its first Dense
// works on shapes (Conv2D, pooling, Flatten, ...); a Dense model sees each sample flattened, as
// before images had a shape. Dropout and BatchNormalization take either.
Sequential model_from(const FitConfig& config, const Shape& sample_shape) {
    if (!config.input_shapes.empty()) {  // several inputs, side by side in each data row
        Sequential model = Sequential::with_inputs(config.input_shapes, config.seed);
        if (model.input_shape() != Shape{shape_elements(sample_shape)})
            throw Error("model.inputs take " + std::to_string(model.input_shape()[0]) + " values per row, but the data has " +
                        std::to_string(shape_elements(sample_shape)) + " features");
        for (const Layer& layer : config.layers) model.add(layer);
        return model;
    }
    bool image = false;
    for (const Layer& layer : config.layers) {
        if (layer.kind == Layer::Kind::Dense) break;
        image = image || (layer.kind != Layer::Kind::Dropout && layer.kind != Layer::Kind::BatchNormalization);
    }
    Sequential model(image ? sample_shape : Shape{shape_elements(sample_shape)}, config.seed);
    for (const Layer& layer : config.layers) model.add(layer);
    return model;
}

void compile_from(Sequential& model, const FitConfig& config) {
    model.compile(config_optimizer(config),
                  loss_from_name(config.loss), CompileOptions{config.metrics});
}

int run_fit(const FitConfig& given, bool profile) {
    FitConfig config = given;
    CommandTimes times;  // for --profile
    times.command_line = true;
    auto phase_start = std::chrono::steady_clock::now();
    const auto phase_seconds = [&phase_start] {
        const auto now = std::chrono::steady_clock::now();
        return std::chrono::duration<double>(now - std::exchange(phase_start, now)).count();
    };
    SplitData data = split_data(config);
    times.load_seconds = phase_seconds();
    times.load_bytes = data_file_bytes(config);
    settle_loss(config, data.y_train, &std::cout);
    Persistence persistence(config);  // checks its paths before any training
    Sequential model = persistence.resumed ? std::move(*persistence.resumed) : model_from(config, data.sample_shape);
    check_model_size(model);
    if (!persistence.resumed) compile_from(model, config);
    if (persistence.resumed)  // numbered as the model learnt them, whatever this file holds
        number_classes_as(model, data.class_names, data.name,
                          {&data.y_train, data.validation ? &data.validation->second : nullptr});
    else
        model.class_names = data.class_names;
    times.compile_seconds = phase_seconds();
    FitProfile fit_profile;

    FitOptions options = fit_options(config, data);
    options.device = config.device == "auto" ? auto_device(model, data.train_rows, data.validation_rows, config)
                                             : device_from_name(config.device);
    if (profile) options.profile = &fit_profile;
    persistence.apply(options);

    std::cout << describe_run(config, data, model) << std::endl;
    History history;
    double seconds = 0.0;
    try {
        const auto start = std::chrono::steady_clock::now();
        history = model.fit(data.x_train, data.y_train, options);
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (const Error& e) {
        throw Error("training on " + data.name + ": " + e.what());
    }
    // fit prints its warnings unless silent; they must never go unseen.
    if (config.verbose == 0)
        for (const std::string& warning : model.warnings()) std::cerr << "onefit: warning: " << warning << "\n";

    const int64_t batch = std::max<int64_t>(1, std::min(config.batch_size, data.train_rows));
    const int64_t steps_per_epoch =
        config.steps_per_epoch > 0 ? config.steps_per_epoch : (data.train_rows + batch - 1) / batch;
    const int64_t steps = static_cast<int64_t>(history.epoch.size()) * steps_per_epoch;
    char time_line[128];
    std::snprintf(time_line, sizeof time_line, "Time: %.6f s (%.2f us/step, %lld steps)", seconds,
                  steps > 0 ? seconds * 1e6 / static_cast<double>(steps) : 0.0, static_cast<long long>(steps));
    std::cout << describe_final(history) << "\n" << time_line << std::endl;
    persistence.finish(model, history, options);
    if (profile) {
        times.fit_seconds = seconds;
        print_fit_profile(fit_profile, times, model, data.train_rows, data.validation_rows, config,
                          static_cast<int64_t>(history.epoch.size()));
    }
    return 0;
}

}  // namespace onefit::cli
