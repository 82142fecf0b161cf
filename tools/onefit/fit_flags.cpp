// The `fit` subcommand's flags: each overrides one key of the config file and is checked
// with the same rules, its errors naming the flag.
#include <charconv>
#include <limits>

#include "fit_command.hpp"

namespace onefit::cli {
namespace {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start) items.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return items;
}

// "32:relu,dropout:0.2,3:softmax" or "conv:32:3:relu,maxpool:2,flatten,10:softmax": comma
// separated layers, each UNITS[:ACTIVATION], dropout:RATE, flatten, reshape:D1[:D2[:D3]],
// conv:FILTERS:KERNEL[:ACTIVATION][:same|valid][:STRIDE], maxpool|avgpool[:SIZE[:STRIDE]][:same|valid]
// globalavgpool or batchnorm[:MOMENTUM]; and any kind by its config word and Keras's argument
// names, TYPE[:NAME=VALUE...] (batch_normalization:momentum=0.9:center=false, a pair or shape 3x3).
constexpr const char* kLayerForms =
    "UNITS[:ACTIVATION] (32:relu), dropout:RATE, flatten, reshape:D1:D2:D3, "
    "conv:FILTERS:KERNEL[:ACTIVATION][:same][:STRIDE] (conv:32:3:relu), maxpool[:SIZE[:STRIDE]][:same], "
    "avgpool[:SIZE[:STRIDE]][:same], globalavgpool, batchnorm[:MOMENTUM], or TYPE[:NAME=VALUE...] with a "
    "config type and Keras's argument names (max_pooling2d:pool_size=3:strides=2)";

std::vector<std::string> split_fields(const std::string& item) {
    std::vector<std::string> fields;
    size_t start = 0;
    while (true) {
        const size_t colon = item.find(':', start);
        fields.push_back(item.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
        if (colon == std::string::npos) return fields;
        start = colon + 1;
    }
}

bool parse_integer(const std::string& text, int64_t& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool parse_double(const std::string& text, double& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool is_layer_type(const std::string& word) {
    for (const LayerKindDescription& kind : layer_kinds())
        if (kind.type == word) return true;
    return false;
}

// A NAME=VALUE's value: true/false/none, an integer, a number, AxB[xC] (a pair or shape), or a word.
LayerValue flag_value(const std::string& text) {
    if (text == "true" || text == "false") return text == "true";
    if (text == "none" || text == "None") return std::monostate{};
    int64_t n = 0;
    double d = 0;
    if (parse_integer(text, n)) return n;
    if (parse_double(text, d)) return d;
    std::vector<int64_t> dims;
    size_t start = 0;
    for (size_t x = 0; x <= text.size(); ++x)
        if (x == text.size() || text[x] == 'x') {
            if (!parse_integer(text.substr(start, x - start), n)) return text;
            dims.push_back(n), start = x + 1;
        }
    return dims;
}

Layer declared_layer(const std::vector<std::string>& fields, const std::string& where) {
    LayerArguments arguments;
    for (size_t i = 1; i < fields.size(); ++i) {
        const size_t eq = fields[i].find('=');
        arguments.emplace_back(fields[i].substr(0, eq), flag_value(fields[i].substr(eq + 1)));
    }
    try {
        return make_layer(fields[0], arguments);
    } catch (const Error& e) {
        throw Error(where + ": " + printable(e.what(), 300));
    }
}

Layer parse_image_layer(const std::vector<std::string>& fields, const std::string& where) {
    const std::string& head = fields[0];
    std::vector<int64_t> numbers;
    std::string padding = "valid", activation = "linear";
    for (size_t i = 1; i < fields.size(); ++i) {
        int64_t n = 0;
        if (parse_integer(fields[i], n)) numbers.push_back(n);
        else if (fields[i] == "same" || fields[i] == "valid") padding = fields[i];
        else activation = fields[i];
    }
    try {
        if (head == "flatten" && fields.size() == 1) return Flatten();
        if (head == "globalavgpool" && fields.size() == 1) return GlobalAveragePooling2D();
        if (head == "reshape" && !numbers.empty() && numbers.size() + 1 == fields.size()) return Reshape(numbers);
        if ((head == "conv" || head == "conv2d") && numbers.size() >= 2 && numbers.size() <= 3) {
            check_int(numbers[0], 1, kMaxUnits, where + ": filters");
            return Conv2D(numbers[0], numbers[1], numbers.size() == 3 ? numbers[2] : 1, padding, activation);
        }
        const bool pool = head == "maxpool" || head == "avgpool";
        if (pool && numbers.size() <= 2 && activation == "linear") {
            const int64_t size = numbers.empty() ? 2 : numbers[0], stride = numbers.size() == 2 ? numbers[1] : 0;
            return head == "maxpool" ? MaxPooling2D(size, stride, padding) : AveragePooling2D(size, stride, padding);
        }
    } catch (const Error& e) {
        const std::string what = e.what();  // (check_int's already names the item)
        throw Error(what.rfind(where, 0) == 0 ? what : where + ": " + printable(what, 300));
    }
    throw Error(where + ": a layer is " + kLayerForms);
}

std::vector<Layer> parse_layers(const std::string& text) {
    std::vector<Layer> layers;
    for (const std::string& item : split_list(text)) {
        const std::string where = "--layers '" + printable(item) + "'";
        const std::vector<std::string> fields = split_fields(item);
        const std::string& head = fields[0];
        // A config word alone is that kind at its defaults (layer_normalization), but dropout's
        // short form (dropout:RATE) keeps its own message.
        bool declared = is_layer_type(head) && (fields.size() > 1 || head != "dropout");
        for (size_t i = 1; i < fields.size(); ++i) declared = declared && fields[i].find('=') != std::string::npos;
        if (declared) {
            layers.push_back(declared_layer(fields, where));
            continue;
        }
        if (head == "dropout") {
            double rate = 0.0;
            if (fields.size() != 2 || !parse_double(fields[1], rate))
                throw Error(where + ": a dropout layer is dropout:RATE, e.g. dropout:0.2");
            layers.push_back(make_dropout(rate, "", where));
            continue;
        }
        if (head == "batchnorm") {
            double momentum = 0.99;
            if (fields.size() > 2 || (fields.size() == 2 && !parse_double(fields[1], momentum)))
                throw Error(where + ": a batch normalization layer is batchnorm[:MOMENTUM], e.g. batchnorm:0.9");
            try {
                layers.push_back(BatchNormalization(static_cast<float>(momentum)));
            } catch (const Error& e) {
                throw Error(where + ": " + e.what());
            }
            continue;
        }
        int64_t units = 0;
        if (!parse_integer(head, units)) {
            layers.push_back(parse_image_layer(fields, where));
            continue;
        }
        check_int(units, 1, kMaxUnits, where + ": units");
        const size_t colon = item.find(':');
        layers.push_back(make_dense(units, colon == std::string::npos ? "linear" : item.substr(colon + 1), true, "", where));
    }
    if (layers.empty()) throw Error("--layers is empty; give e.g. 32:relu,3:softmax");
    return layers;
}

// A flag's value into an optional; CLI11 converts and reports values of the wrong type.
template <class T>
CLI::Option* add(CLI::App& app, const std::string& name, std::optional<T>& target, const std::string& help) {
    return app.add_option_function<T>(name, [&target](const T& value) { target = value; }, help);
}

}  // namespace

CLI::App* add_fit_command(CLI::App& app, FitFlags& flags) {
    CLI::App* fit = app.add_subcommand(
        "fit", "Train a model (dense or convolutional): the seed experiment (Iris, 4-32-3, Adam(0.1), log_cosh, 20 epochs) by "
               "default, or the one a JSON config describes; flags override the config.");
    fit->footer(
        "Defaults: with the built-in iris, the seed experiment's (a 30% unshuffled test split, Adam lr 0.1,\n"
        "log_cosh, batch 20, no shuffling). With your own --data (or a config's data.source), what you leave\n"
        "out takes Keras's default: no test split (validate with --validation-split F, or --test-size F),\n"
        "the optimizer's Keras learning rate (Adam 0.001, SGD 0.01), shuffling every epoch, batch 32, and a\n"
        "loss chosen from the labels and the last layer (integer classes + softmax:\n"
        "sparse_categorical_crossentropy; one sigmoid unit + 0/1 labels: binary_crossentropy; otherwise\n"
        "mean_squared_error), said in one line. Layers default to 32:relu,3:softmax.\n"
        "--test-size and --validation-split together are an error.\n\n");
    fit->footer(fit->get_footer() +
        "Examples:\n"
        "  onefit fit                                   # the seed experiment\n"
        "  onefit fit examples/iris_fixed.json --verbose 2\n"
        "  onefit fit --data wine.csv --label quality --layers 64:relu,dropout:0.2,10:softmax \\\n"
        "             --loss sparse_categorical_crossentropy --metrics accuracy --epochs 50\n"
        "  onefit fit --data images.npy --labels labels.npy --metrics accuracy \\\n"
        "             --layers conv:32:3:relu:same,maxpool:2,flatten,dropout:0.5,10:softmax\n"
        "Layers in --layers: UNITS[:ACTIVATION], dropout:RATE, flatten, reshape:D1:D2:D3,\n"
        "conv:FILTERS:KERNEL[:ACTIVATION][:same][:STRIDE], maxpool|avgpool[:SIZE[:STRIDE]][:same], globalavgpool,\n"
        "batchnorm[:MOMENTUM].\n"
        "The config format is documented in tools/onefit/config.hpp; see examples/iris.json.");
    fit->add_option("config", flags.config_path, "JSON config (every key optional; defaults: the seed experiment)")
        ->type_name("CONFIG.json");
    add(*fit, "--data", flags.data, "CSV file with a header row, an .npy or IDX features file (with --labels), or 'iris' (built in)")->type_name("FILE");
    add(*fit, "--label", flags.label, "CSV label column: header name or 0-based index (default: the last)")
        ->type_name("COLUMN");
    add(*fit, "--layers", flags.layers,
        "Layers after the input, e.g. 32:relu,dropout:0.2,3:softmax or conv:32:3:relu,maxpool:2,flatten,10:softmax")
        ->type_name("LIST");
    add(*fit, "--epochs", flags.epochs, "Epochs (default 20)")->type_name("N");
    add(*fit, "--batch-size", flags.batch_size, "Batch size (default 20 on iris, 32 on your data)")->type_name("N");
    add(*fit, "--steps-per-epoch", flags.steps_per_epoch, "Batches per epoch (default: one pass)")->type_name("N");
    add(*fit, "--loss", flags.loss, "Keras loss name (default log_cosh on iris; on your data chosen from the labels)")->type_name("NAME");
    add(*fit, "--optimizer", flags.optimizer, "sgd, adam, adamw, rmsprop or adagrad (default adam)")
        ->type_name("NAME");
    add(*fit, "--lr", flags.learning_rate, "Learning rate (default 0.1 on iris; on your data the optimizer's Keras default)")->type_name("RATE");
    add(*fit, "--metrics", flags.metrics, "Comma-separated metrics, e.g. accuracy,mae")->type_name("LIST");
    add(*fit, "--test-size", flags.test_size, "Fraction of the rows held out for validation (default 0.3 on iris, 0 on your data)")
        ->type_name("FRACTION");
    add(*fit, "--validation-split", flags.validation_split,
        "Validate on this last fraction of the rows (Keras's validation_split; not with --test-size)")
        ->type_name("FRACTION");
    fit->add_flag_function("--shuffle-split", [&flags](int64_t) { flags.shuffle_split = true; },
                           "Shuffle the rows before the test split (default: off, as the seed)");
    add(*fit, "--split-seed", flags.split_seed, "Seed for --shuffle-split (default 0)")->type_name("N");
    fit->add_flag_function("--shuffle", [&flags](int64_t) { flags.shuffle = true; },
                           "Shuffle the training rows every epoch (Keras's default; the default on your data)");
    fit->add_flag_function("--no-shuffle", [&flags](int64_t) { flags.shuffle = false; },
                           "Keep the training rows in order (the default on iris: the seed's unshuffled pipeline)");
    add(*fit, "--seed", flags.seed, "Seed for weights, shuffling and dropout (default 0)")->type_name("N");
    add(*fit, "--device", flags.device, "cpu (default), cuda, or auto (the device projected to finish first)")
        ->type_name("DEVICE");
    fit->add_flag("--profile", flags.profile, "Print where the fit's time went, phase by phase (onefit explain says more)");
    add(*fit, "--verbose", flags.verbose, "0 silent, 1 progress bar, 2 one line per epoch (default 1)")
        ->type_name("0|1|2");
    // Data beside the features, and persistence.
    add(*fit, "--labels", flags.labels, "Labels for an .npy or IDX --data (an .npy or IDX file)")->type_name("FILE");
    add(*fit, "--save", flags.save, "Save the trained model into this folder (onefit evaluate/predict read it)")
        ->type_name("DIR");
    add(*fit, "--resume", flags.resume,
        "Continue a saved fit (its model, optimizer state and epoch) up to --epochs; give the same data and flags")
        ->type_name("DIR");
    add(*fit, "--checkpoint", flags.checkpoint, "Save the model after every epoch into DIR ({epoch:02d} allowed)")
        ->type_name("DIR");
    fit->add_flag("--checkpoint-best", flags.checkpoint_best, "With --checkpoint: save only when --monitor improves");
    add(*fit, "--early-stopping-patience", flags.early_stopping_patience,
        "Stop when --monitor has not improved for N epochs")
        ->type_name("N");
    add(*fit, "--monitor", flags.monitor, "What --checkpoint-best and early stopping watch (default val_loss)")
        ->type_name("KEY");
    add(*fit, "--csv-log", flags.csv_log, "Write each epoch's logs to this CSV file")->type_name("FILE.csv");
    return fit;
}

FitConfig resolve_fit_config(const FitFlags& flags) {
    FitConfig config = flags.config_path.empty() ? FitConfig{} : read_config(flags.config_path);
    if (flags.data) {
        if (flags.data->empty()) throw Error("--data is empty; give a CSV path or 'iris'");
        config.source = *flags.data;  // relative to the working directory, as shells complete it
    }
    if (flags.label) config.label = *flags.label;
    if (flags.layers) config.layers = parse_layers(*flags.layers), config.given.insert("model.layers");
    if (flags.epochs) {
        check_int(*flags.epochs, 1, kMaxEpochs, "--epochs");
        config.epochs = *flags.epochs;
    }
    if (flags.batch_size) {
        check_int(*flags.batch_size, 1, std::numeric_limits<int32_t>::max(), "--batch-size");
        config.batch_size = *flags.batch_size;
        config.given.insert("fit.batch_size");
    }
    if (flags.steps_per_epoch) {
        check_int(*flags.steps_per_epoch, 1, kMaxSteps, "--steps-per-epoch");
        config.steps_per_epoch = *flags.steps_per_epoch;
    }
    if (flags.loss) {
        check_loss(*flags.loss, "--loss");
        config.loss = *flags.loss;
        config.given.insert("compile.loss");
    }
    if (flags.optimizer) {
        check_optimizer(*flags.optimizer, "--optimizer");
        config.optimizer = *flags.optimizer;
        config.given.insert("compile.optimizer");
    }
    if (flags.learning_rate) {
        check_learning_rate(*flags.learning_rate, "--lr");
        config.learning_rate = *flags.learning_rate;
        config.given.insert("compile.optimizer.learning_rate");
    }
    if (flags.metrics) {
        config.metrics = split_list(*flags.metrics);
        check_metrics(config.metrics, "--metrics");
    }
    if (flags.test_size) {
        check_fraction(*flags.test_size, "--test-size");
        config.test_size = *flags.test_size;
        config.given.insert("data.test_size");
    }
    if (flags.validation_split) {
        check_fraction(*flags.validation_split, "--validation-split");
        config.validation_split = *flags.validation_split;
        config.given.insert("fit.validation_split");
    }
    if (flags.shuffle_split) config.shuffle_split = *flags.shuffle_split;
    if (flags.split_seed) {
        check_int(*flags.split_seed, 0, std::numeric_limits<int64_t>::max(), "--split-seed");
        config.split_seed = static_cast<uint64_t>(*flags.split_seed);
    }
    if (flags.shuffle) config.shuffle = *flags.shuffle, config.given.insert("fit.shuffle");
    if (flags.seed) {
        check_int(*flags.seed, 0, std::numeric_limits<int64_t>::max(), "--seed");
        config.seed = static_cast<uint64_t>(*flags.seed);
    }
    if (flags.device) {
        if (*flags.device != "auto") check_device(*flags.device, "--device");
        config.device = *flags.device;
    }
    if (flags.verbose) {
        check_int(*flags.verbose, 0, 2, "--verbose");
        config.verbose = static_cast<int>(*flags.verbose);
    }
    auto path = [](const std::optional<std::string>& value, const char* flag) {
        if (value && value->empty()) throw Error(std::string(flag) + " is empty; give a path");
        return value.value_or("");
    };
    config.labels = path(flags.labels, "--labels");
    config.save_dir = path(flags.save, "--save");
    config.resume_dir = path(flags.resume, "--resume");
    config.checkpoint_dir = path(flags.checkpoint, "--checkpoint");
    config.csv_log = path(flags.csv_log, "--csv-log");
    config.checkpoint_best = flags.checkpoint_best;
    if (flags.checkpoint_best && !flags.checkpoint) throw Error("--checkpoint-best needs --checkpoint DIR");
    if (flags.early_stopping_patience) {
        check_int(*flags.early_stopping_patience, 0, kMaxEpochs, "--early-stopping-patience");
        config.early_stopping_patience = *flags.early_stopping_patience;
    }
    if (flags.monitor) {
        if (flags.monitor->empty()) throw Error("--monitor is empty; give a log key such as val_loss or accuracy");
        config.monitor = *flags.monitor;
    }
    apply_keras_defaults(config);
    return config;
}

}  // namespace onefit::cli
