// `onefit evaluate`, `onefit predict`, the data formats of --data and `onefit fit`'s persistence
// flags. Every output path is checked before any work, and files are written atomically, so a
// bad flag changes nothing on disk.
#include "model_commands.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <iostream>
#include <limits>

namespace onefit::cli {

void check_parent_exists(const std::string& path, const std::string& flag) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    const size_t slash = p.find_last_of('/');
    const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
    struct stat st {};
    if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw Error(flag + " " + printable(path, 200) + ": the folder " + printable(parent, 200) +
                    " does not exist; create it first");
}

namespace {

std::string format_float(double v, const char* format) {
    char text[40];
    std::snprintf(text, sizeof text, format, v);
    return text;
}

Sequential load_for_use(const std::string& dir) {
    if (dir.empty()) throw Error("--model is required: the folder `onefit fit --save` wrote");
    return load_model(dir);
}

// Features for predict: a CSV's label column (named, or the last) is dropped unless the file has
// exactly the model's input width of columns, which then are all features.
Tensor load_features(const ModelFlags& flags, int64_t width) {
    if (flags.data == "iris") return load_iris().x;
    const DataFormat format = detect_data_format(flags.data);
    if (format == DataFormat::npy) return read_npy(flags.data);
    if (format == DataFormat::idx) {
        const Tensor x = read_idx(flags.data);
        return x.reshaped({x.rows(), x.row_width()});
    }
    CsvOptions options;
    options.label_column = flags.label;
    LabeledData data = read_csv(flags.data, options);
    if (!flags.label.empty() || data.x.row_width() + 1 != width) return data.x;
    // No label column: put the last column (read as the label) back.
    Tensor x({data.x.rows(), width});
    for (int64_t r = 0; r < x.rows(); ++r) {
        for (int64_t c = 0; c + 1 < width; ++c) x.at(r, c) = data.x.at(r, c);
        x.at(r, width - 1) = data.y[r];
    }
    return x;
}

}  // namespace

void number_classes_as(const Sequential& model, const std::vector<std::string>& classes, const std::string& source,
                       const std::vector<Tensor*>& labels) {
    if (classes.empty()) return;
    const auto listed = [](const std::vector<std::string>& names) {
        std::string list;
        for (const std::string& n : names) list.append(list.empty() ? "" : ", ").append(printable(n, 40));
        return list;
    };
    const std::vector<std::string>& known = model.class_names;
    if (known.empty()) {
        // A model saved before onefit kept class names learnt them numbered in sorted order, as
        // a file holding every class still numbers them; a file with fewer cannot be matched.
        const int64_t outputs = shape_elements(model.output_shape());
        if (static_cast<int64_t>(classes.size()) == (outputs == 1 ? 2 : outputs)) return;
        throw Error(source + ": its labels are names (" + listed(classes) +
                    "), but the model records no class names (it learnt numbered labels, or an older onefit saved "
                    "it), so they cannot be matched to its outputs; give numbered labels, or fit it again");
    }
    std::vector<float> index;
    for (const std::string& name : classes) {
        const auto at = std::find(known.begin(), known.end(), name);
        if (at == known.end())
            throw Error(source + ": label '" + printable(name, 40) + "' is not one of the model's classes (" +
                        listed(known) + ")");
        index.push_back(static_cast<float>(at - known.begin()));
    }
    for (Tensor* y : labels)
        for (int64_t i = 0; y && i < y->size(); ++i) (*y)[i] = index[static_cast<size_t>((*y)[i])];
}

LabeledData load_labeled_data(const std::string& source, const std::string& label, const std::string& labels_path) {
    if (source == "iris") return load_iris();
    switch (detect_data_format(source)) {
        case DataFormat::npy:
        case DataFormat::idx: {
            const bool npy = detect_data_format(source) == DataFormat::npy;
            if (labels_path.empty())
                throw Error(source + ": " + (npy ? ".npy" : "IDX") +
                            " data holds the features only; give the labels with --labels FILE");
            if (!label.empty()) throw Error("--label chooses a CSV column; " + source + " is not CSV (use --labels FILE)");
            return read_array_pair(source, labels_path);  // (the labels may be the other format)
        }
        case DataFormat::csv:
            break;
    }
    if (!labels_path.empty())
        throw Error("--labels is for .npy and IDX data; the CSV file " + source +
                    " holds its labels (choose the column with --label)");
    CsvOptions options;
    options.label_column = label;
    return read_csv(source, options);
}

// ---- onefit fit's persistence ----

namespace {

// "4-32-3 (32 relu, 3 softmax)": a model's shape as --layers spells it.
std::string describe_layers(int64_t inputs, const std::vector<Layer>& layers) {
    std::string shape = std::to_string(inputs), parts;
    for (const Layer& layer : layers) {
        if (!parts.empty()) parts += ", ";
        if (layer.kind == Layer::Kind::Dropout) {
            parts += "dropout " + format_float(layer.rate, "%g");
            continue;
        }
        shape += "-" + std::to_string(layer.units);
        parts += std::to_string(layer.units) + " " + activation_name(layer.activation);
    }
    return shape + " (" + parts + ")";
}

bool same_layers(const std::vector<Layer>& a, const std::vector<Layer>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].kind != b[i].kind || layer_arguments(a[i]) != layer_arguments(b[i]) || a[i].inputs != b[i].inputs ||
            a[i].shares != b[i].shares)
            return false;
    return true;
}

// A resumed fit trains the saved model with its loss and optimizer: flags or config keys that
// ask for something else are refused rather than silently ignored.
void check_resume_agrees(const FitConfig& config, const Sequential& saved) {
    const std::string start = "--resume " + config.resume_dir + ": ";
    const std::string end = ", and a resumed fit trains the saved one; leave it out, or fit anew without --resume";
    const int64_t inputs = saved.input_shape().empty() ? 0 : saved.input_shape()[0];
    if (config.has("model.layers") && !same_layers(config.layers, saved.layers()))
        throw Error(start + "the saved model is " + describe_layers(inputs, saved.layers()) + " but the layers given are " +
                    describe_layers(inputs, config.layers) + end);
    if (config.has("model.inputs") && config.input_shapes != saved.input_shapes())
        throw Error(start + "the saved model takes " + std::to_string(saved.input_shapes().size()) +
                    " inputs of other shapes than model.inputs gives" + end);
    const Loss& loss = saved.loss();
    const Optimizer& optimizer = saved.optimizer();
    if (config.has("compile.loss") && loss_from_name(config.loss).kind != loss.kind)
        throw Error(start + "the saved model's loss is " + loss_name(loss.kind) + " but the loss given is " +
                    config.loss + end);
    if (config.has("compile.optimizer") && optimizer_from_name(config.optimizer).kind != optimizer.kind)
        throw Error(start + "the saved optimizer is " + optimizer_name(optimizer.kind) +
                    " but the optimizer given is " + config.optimizer + end);
    if (config.has("compile.optimizer.learning_rate") &&
        static_cast<float>(config.learning_rate) != optimizer.learning_rate)
        throw Error(start + "the saved learning rate is " + format_float(optimizer.learning_rate, "%g") +
                    " but the learning rate given is " + format_float(config.learning_rate, "%g") + end);
}

}  // namespace

Persistence::Persistence(const FitConfig& config) : config_(config) {
    if (!config.save_dir.empty()) check_parent_exists(config.save_dir, "--save"), check_model_folder(config.save_dir);
    if (!config.csv_log.empty()) check_parent_exists(config.csv_log, "--csv-log");
    struct stat st {};
    if (!config.csv_log.empty() && ::stat(config.csv_log.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw Error("--csv-log " + printable(config.csv_log, 200) + ": is a folder; give the log's file name, e.g. " +
                    printable(config.csv_log, 200) + "/log.csv");
    if (!config.checkpoint_dir.empty()) {
        checkpoint_ = std::make_unique<ModelCheckpoint>(config.checkpoint_dir, config.monitor, config.checkpoint_best);
        check_parent_exists(checkpoint_->path_for(0), "--checkpoint");
    }
    if (config.early_stopping_patience >= 0)
        early_stopping_ = std::make_unique<EarlyStopping>(config.monitor, 0.0, config.early_stopping_patience);
    if (!config.csv_log.empty()) csv_logger_ = std::make_unique<CSVLogger>(config.csv_log);
    if (config.resume_dir.empty()) return;
    resumed.emplace(load_model(config.resume_dir));
    state_ = load_training_state(config.resume_dir);
    try {
        resumed->program();
    } catch (const Error&) {
        throw Error("--resume " + config.resume_dir + ": the model was saved before compile(); nothing to resume");
    }
    check_resume_agrees(config, *resumed);
    if (state_.epoch < 0)
        throw Error("--resume " + config.resume_dir +
                    ": state.json does not say how many epochs ran (saved without an epoch); cannot resume exactly");
    if (state_.epoch >= config.epochs)
        throw Error("--resume " + config.resume_dir + ": " + std::to_string(state_.epoch) +
                    " epochs ran already; pass --epochs greater than that to continue");
    std::cout << "onefit: resuming " << config.resume_dir << " at epoch " << state_.epoch + 1 << " of "
              << config.epochs << " (its model, loss and optimizer; the data and fit flags from this command)"
              << std::endl;
}

void Persistence::apply(FitOptions& options) {
    if (resumed) {
        options.initial_epoch = state_.epoch;
        options.seed = state_.fit_seed;
    }
    if (checkpoint_) checkpoint_->fit_seed = options.seed;
    for (Callback* callback : {static_cast<Callback*>(checkpoint_.get()), static_cast<Callback*>(early_stopping_.get()),
                               static_cast<Callback*>(csv_logger_.get())})
        if (callback) options.callbacks.push_back(callback);
}

void Persistence::finish(const Sequential& model, const History& history, const FitOptions& options) {
    if (early_stopping_ && early_stopping_->stopped_epoch > 0)
        std::cout << "early stopping: " << config_.monitor << " did not improve for " << config_.early_stopping_patience
                  << " epochs; stopped after epoch " << early_stopping_->stopped_epoch + 1 << std::endl;
    if (config_.save_dir.empty()) return;
    const int64_t epochs_done = history.epoch.empty() ? options.initial_epoch : history.epoch.back() + 1;
    save_model(model, config_.save_dir, epochs_done, options.seed);
    std::cout << "saved: " << config_.save_dir << " (epoch " << epochs_done << ")" << std::endl;
}

// ---- evaluate / predict ----

std::pair<CLI::App*, CLI::App*> add_model_commands(CLI::App& app, ModelFlags& flags) {
    CLI::App* evaluate = app.add_subcommand("evaluate", "Loss and metrics of a saved model on labelled data");
    CLI::App* predict = app.add_subcommand("predict", "Predictions of a saved model, as CSV (pred_0, pred_1, ...)");
    for (CLI::App* command : {evaluate, predict}) {
        command->add_option("--model", flags.model, "The folder `onefit fit --save` (or `sweep --ensemble`) wrote")->type_name("DIR")->required();
        command->add_option("--data", flags.data, "CSV, .npy or IDX features ('iris': the built-in set)")
            ->type_name("FILE")
            ->required();
        command->add_option("--label", flags.label, "CSV label column: header name or 0-based index (default: the last)")
            ->type_name("COLUMN");
        command->add_option("--batch-size", flags.batch_size, "Rows per batch (default 32)")->type_name("N");
    }
    evaluate->add_option("--labels", flags.labels, "Labels for .npy or IDX --data")->type_name("FILE");
    predict->add_option("--output", flags.output, "Write the CSV here (atomically) instead of to stdout")
        ->type_name("FILE.csv");
    evaluate->footer("Example: onefit evaluate --model runs/iris --data iris.csv --label species");
    predict->footer("Example: onefit predict --model runs/iris --data new_rows.csv --output predictions.csv");
    return {evaluate, predict};
}

int run_evaluate(const ModelFlags& flags) {
    check_int(flags.batch_size, 1, std::numeric_limits<int32_t>::max(), "--batch-size");
    // A folder `sweep --ensemble` wrote: the loss and metrics of the members' mean prediction.
    const bool ensemble = !flags.model.empty() && is_ensemble(flags.model);
    std::vector<Sequential> members;
    if (ensemble) members = load_ensemble(flags.model);
    else members.push_back(load_for_use(flags.model));
    try {
        for (const Sequential& m : members) m.program();
    } catch (const Error&) {
        throw Error("--model " + flags.model + ": the model was saved without a loss (before compile); cannot evaluate");
    }
    LabeledData data = load_labeled_data(flags.data, flags.label, flags.labels);
    number_classes_as(members.front(), data.class_names, flags.data, {&data.y});
    Logs logs;
    try {
        logs = ensemble ? evaluate_ensemble(members, data.x, data.y, flags.batch_size)
                        : members.front().evaluate(data.x, data.y, flags.batch_size);
    } catch (const Error& e) {
        throw Error("evaluating on " + flags.data + ": " + e.what());
    }
    // Keras's order: loss first, then the metrics.
    std::string line = "loss: " + format_float(logs["loss"], "%.6f");
    for (const auto& [key, value] : logs)
        if (key != "loss") line += " - " + key + ": " + format_float(value, "%.6f");
    std::cout << line << std::endl;
    return 0;
}

int run_predict(const ModelFlags& flags) {
    check_int(flags.batch_size, 1, std::numeric_limits<int32_t>::max(), "--batch-size");
    if (!flags.output.empty()) check_parent_exists(flags.output, "--output");
    // A folder `sweep --ensemble` wrote: every member's prediction, averaged.
    std::vector<Sequential> members;
    if (!flags.model.empty() && is_ensemble(flags.model)) members = load_ensemble(flags.model);
    else members.push_back(load_for_use(flags.model));
    const Tensor x = load_features(flags, members.front().input_shape()[0]);
    Tensor y;
    try {
        y = predict_ensemble(members, x.reshaped({x.rows(), x.row_width()}), flags.batch_size);
    } catch (const Error& e) {
        throw Error("predicting on " + flags.data + ": " + e.what());
    }
    std::string csv;
    // (Appended piece by piece: GCC 12 warns falsely on "," + std::string.)
    for (int64_t k = 0; k < y.row_width(); ++k) {
        csv += k ? ",pred_" : "pred_";
        csv += std::to_string(k);
    }
    csv += "\n";
    for (int64_t r = 0; r < y.rows(); ++r) {
        for (int64_t k = 0; k < y.row_width(); ++k) {
            if (k) csv += ',';
            csv += format_float(y.at(r, k), "%.9g");  // %.9g: a float reads back exactly
        }
        csv += "\n";
    }
    if (flags.output.empty())
        std::cout << csv << std::flush;
    else
        write_file_atomically(flags.output, csv);
    return 0;
}

// ---- export ----

CLI::App* add_export_command(CLI::App& app, ModelFlags& flags) {
    CLI::App* command = app.add_subcommand("export", "A saved model as ONNX (opset 17), which onnxruntime runs");
    command->add_option("--model", flags.model, "The folder or .keras file `onefit fit --save` wrote")->type_name("DIR")->required();
    command->add_option("--onnx", flags.onnx, "Write the ONNX model here (atomically)")->type_name("FILE.onnx")->required();
    command->footer("Example: onefit export --model runs/iris --onnx iris.onnx");
    return command;
}

int run_export(const ModelFlags& flags) {
    check_parent_exists(flags.onnx, "--onnx");
    export_onnx(load_for_use(flags.model), flags.onnx);
    std::cout << "exported: " << flags.onnx << std::endl;
    return 0;
}

}  // namespace onefit::cli
