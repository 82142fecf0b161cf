// Reads `onefit fit`'s JSON config (the format is documented in config.hpp): every key is
// looked up in a table of known keys and checked for type and range, so a typo or a wrong
// value fails with the file name and the key path instead of being silently ignored.
#include "config.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

namespace onefit::cli {
namespace {

using nlohmann::json;

// A config is a few hundred bytes; the cap keeps `onefit fit /dev/zero` from reading forever.
constexpr size_t kMaxConfigBytes = 1 << 20;

std::string format_double(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

std::string read_config_text(const std::string& path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw Error(path + ": cannot open the config file (" + std::strerror(errno) + ")");
    std::string text;
    char chunk[1 << 14];
    size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) {
        text.append(chunk, got);
        if (text.size() > kMaxConfigBytes)
            throw Error(path + ": the config file is larger than 1 MiB; is it the right file?");
    }
    if (std::ferror(file.get())) throw Error(path + ": cannot read the config file (" + std::strerror(errno) + ")");
    return text;
}

// "a string \"20\"", "a number 2.5", "null": what was found instead of the expected type.
std::string describe(const json& value) {
    switch (value.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return std::string("a boolean ") + (value.get<bool>() ? "true" : "false");
        case json::value_t::string: return "a string \"" + printable(value.get<std::string>(), 30) + "\"";
        case json::value_t::array: return "an array";
        case json::value_t::object: return "an object";
        case json::value_t::number_float: return "a number " + format_double(value.get<double>());
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return "a number " + value.dump();
        default: return "a binary value";
    }
}

// Walks one JSON document, naming the file and key path in every error.
class ConfigReader {
public:
    explicit ConfigReader(std::string file) : file_(std::move(file)) {}

    std::string where(const std::string& key) const { return file_ + ": '" + key + "'"; }

    Error type_error(const json& value, const std::string& key, const std::string& expected) const {
        return Error(where(key) + " must be " + expected + ", got " + describe(value));
    }

    // Checks `object` is an object whose keys are all in `known`.
    void check_object(const json& object, const std::string& key, std::initializer_list<const char*> known) const {
        if (!object.is_object()) throw type_error(object, key, "an object");
        for (const auto& [name, value] : object.items()) {
            bool found = false;
            for (const char* k : known) found = found || name == k;
            if (found) continue;
            std::string list;
            for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
            const std::string full = key.empty() ? name : key + "." + name;
            throw Error(file_ + ": unknown key '" + printable(full) + "' (known" +
                        (key.empty() ? "" : " in '" + key + "'") + ": " + list + ")");
        }
    }

    int64_t integer(const json& value, const std::string& key, int64_t min, int64_t max) const {
        if (!value.is_number_integer()) throw type_error(value, key, "an integer");
        if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max))
            throw Error(where(key) + " must be at most " + std::to_string(max) + ", got " + value.dump());
        const int64_t v = value.get<int64_t>();
        check_int(v, min, max, where(key));
        return v;
    }

    uint64_t seed(const json& value, const std::string& key) const {
        if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0))
            throw type_error(value, key, "a non-negative integer");
        return value.get<uint64_t>();
    }

    double number(const json& value, const std::string& key) const {
        if (!value.is_number()) throw type_error(value, key, "a number");
        return value.get<double>();
    }

    bool boolean(const json& value, const std::string& key) const {
        if (!value.is_boolean()) throw type_error(value, key, "true or false");
        return value.get<bool>();
    }

    std::string string(const json& value, const std::string& key) const {
        if (!value.is_string()) throw type_error(value, key, "a string");
        return value.get<std::string>();
    }

    void read_data(const json& data, FitConfig& config) const {
        check_object(data, "data", {"source", "label", "test_size", "shuffle_split", "split_seed"});
        if (data.contains("source")) {
            config.source = string(data["source"], "data.source");
            if (config.source.empty()) throw Error(where("data.source") + " is empty; give \"iris\" or a CSV path");
            // A relative CSV path means: next to the config file.
            const std::filesystem::path source(config.source);
            if (config.source != "iris" && source.is_relative())
                config.source = (std::filesystem::path(file_).parent_path() / source).string();
        }
        if (data.contains("label")) {
            const json& label = data["label"];
            config.label = label.is_number_integer() ? std::to_string(seed(label, "data.label"))
                                                     : string(label, "data.label");
        }
        if (data.contains("test_size")) {
            config.test_size = number(data["test_size"], "data.test_size");
            config.given.insert("data.test_size");
            check_fraction(config.test_size, where("data.test_size"));
        }
        if (data.contains("shuffle_split")) config.shuffle_split = boolean(data["shuffle_split"], "data.shuffle_split");
        if (data.contains("split_seed")) config.split_seed = seed(data["split_seed"], "data.split_seed");
    }

    // A layer: its "type" (default dense), "name" and the kind's Keras arguments, read through
    // make_layer from the kind's declaration; an error names the key it is about.
    // {"shares": "encoder", "inputs": [...]}: the earlier layer of that name called again (its weights shared).
    Layer shared(const json& spec, const std::vector<Layer>& earlier, const std::string& key) const {
        for (const auto& [field, value] : spec.items())
            if (field != "shares" && field != "inputs")
                throw Error(where(key + "." + field) + ": a shared layer's call takes only \"shares\" and \"inputs\" "
                                                       "(its arguments are its layer's)");
        const std::string name = string(spec["shares"], key + ".shares");
        const std::vector<std::string> names = default_layer_names(earlier);
        for (size_t j = 0; j < earlier.size(); ++j)
            if (names[j] == name && earlier[j].shares < 0) return shared_call(earlier, j);
        throw Error(where(key + ".shares") + ": '" + printable(name, 100) + "' names no earlier layer");
    }

    Layer layer(const json& spec, const std::string& key) const {
        if (!spec.is_object()) throw type_error(spec, key, "an object such as {\"units\": 32, \"activation\": \"relu\"}");
        const std::string type = spec.contains("type") ? string(spec["type"], key + ".type") : "dense";
        const std::string name = spec.contains("name") ? string(spec["name"], key + ".name") : "";
        LayerArguments arguments;
        for (const auto& [field, value] : spec.items())
            if (field != "type" && field != "name" && field != "inputs")
                arguments.emplace_back(field, layer_value(value, key + "." + field));
        try {
            return make_layer(type, arguments, name);
        } catch (const LayerArgumentError& e) {  // named by the key of the argument it is about
            throw Error(where(e.argument.empty() ? key : key + "." + e.argument) + ": " + printable(e.what(), 300));
        }
    }

    // A Keras schedule as Keras serialises one: {"class_name": "ExponentialDecay", "config": {...}}.
    LearningRateSchedule schedule(const json& value, const std::string& key) const {
        check_object(value, key, {"module", "class_name", "config", "registered_name"});
        if (!value.contains("class_name")) throw Error(where(key) + ": a schedule needs its \"class_name\"");
        const std::string class_name = string(value["class_name"], key + ".class_name");
        const json config = value.contains("config") ? value["config"] : json::object();
        if (!config.is_object()) throw type_error(config, key + ".config", "an object of the schedule's arguments");
        ScheduleArguments arguments;
        for (const auto& [field, v] : config.items()) {
            const std::string at = key + ".config." + field;
            if (v.is_null()) arguments.emplace_back(field, std::monostate{});
            else if (v.is_boolean()) arguments.emplace_back(field, v.get<bool>());
            else if (v.is_number_integer()) arguments.emplace_back(field, v.get<int64_t>());
            else if (v.is_number()) arguments.emplace_back(field, v.get<double>());
            else if (v.is_array()) {
                std::vector<double> list;
                for (size_t i = 0; i < v.size(); ++i) list.push_back(number(v[i], at + "[" + std::to_string(i) + "]"));
                arguments.emplace_back(field, list);
            } else if (field != "name") {
                throw type_error(v, at, "a number, true/false, null or a list of numbers");
            }
        }
        try {
            return make_schedule(class_name, arguments);
        } catch (const Error& e) {
            throw Error(where(key) + ": " + printable(e.what(), 300));
        }
    }

    LayerValue layer_value(const json& value, const std::string& key) const {
        switch (value.type()) {
            case json::value_t::null: return std::monostate{};
            case json::value_t::boolean: return value.get<bool>();
            case json::value_t::string: return value.get<std::string>();
            case json::value_t::number_float: return value.get<double>();
            case json::value_t::number_integer:
            case json::value_t::number_unsigned: return integer(value, key, std::numeric_limits<int64_t>::min(), kMaxUnits);
            case json::value_t::array: {
                std::vector<int64_t> list;
                for (size_t i = 0; i < value.size(); ++i)
                    list.push_back(integer(value[i], key + "[" + std::to_string(i) + "]",
                                           std::numeric_limits<int64_t>::min(), kMaxUnits));
                return list;
            }
            default: throw type_error(value, key, "a number, a string, true/false, null or a list of integers");
        }
    }

    void read_model(const json& model, FitConfig& config) const {
        check_object(model, "model", {"layers", "inputs"});
        if (model.contains("inputs")) {  // several inputs: each one's shape
            const json& inputs = model["inputs"];
            if (!inputs.is_array() || inputs.size() < 2)
                throw type_error(inputs, "model.inputs", "a list of two or more input shapes ([4] or 4 each)");
            config.input_shapes.clear();
            config.given.insert("model.inputs");
            for (size_t k = 0; k < inputs.size(); ++k) {
                const std::string key = "model.inputs[" + std::to_string(k) + "]";
                const json one = inputs[k].is_array() ? inputs[k] : json::array({inputs[k]});
                if (one.empty() || one.size() > 3) throw type_error(inputs[k], key, "a shape of 1 to 3 positive integers");
                Shape shape;
                for (size_t d = 0; d < one.size(); ++d)
                    shape.push_back(integer(one[d], key + "[" + std::to_string(d) + "]", 1, kMaxUnits));
                config.input_shapes.push_back(shape);
            }
        }
        if (!model.contains("layers")) return;
        const json& layers = model["layers"];
        if (!layers.is_array() || layers.empty()) throw type_error(layers, "model.layers", "a non-empty array of layers");
        config.layers.clear();
        config.given.insert("model.layers");
        for (size_t i = 0; i < layers.size(); ++i)
            config.layers.push_back(layers[i].is_object() && layers[i].contains("shares")
                                        ? shared(layers[i], config.layers, "model.layers[" + std::to_string(i) + "]")
                                        : layer(layers[i], "model.layers[" + std::to_string(i) + "]"));
        // A Functional layer's "inputs": names of earlier layers (or "input", and "input_1", ... of
        // several), once all are known.
        const std::vector<std::string> names = default_layer_names(config.layers);
        for (size_t i = 0; i < layers.size(); ++i) {
            if (!layers[i].contains("inputs")) continue;
            const std::string key = "model.layers[" + std::to_string(i) + "].inputs";
            const json& inputs = layers[i]["inputs"];
            if (!inputs.is_array() || inputs.empty()) throw type_error(inputs, key, "a non-empty list of layer names");
            std::vector<std::string> given;
            for (size_t k = 0; k < inputs.size(); ++k) given.push_back(string(inputs[k], key + "[" + std::to_string(k) + "]"));
            try {
                config.layers[i].inputs = layer_inputs_from_names(given, names, i);
            } catch (const Error& e) {
                throw Error(where(key) + ": " + printable(e.what(), 300));
            }
        }
    }

    void read_compile(const json& compile, FitConfig& config) const {
        check_object(compile, "compile", {"optimizer", "loss", "metrics"});
        if (compile.contains("optimizer")) {
            const json& optimizer = compile["optimizer"];
            config.given.insert("compile.optimizer");
            if (optimizer.is_string()) {
                config.optimizer = optimizer.get<std::string>();
            } else {
                check_object(optimizer, "compile.optimizer",
                             {"name", "learning_rate", "clipnorm", "clipvalue", "global_clipnorm"});
                if (optimizer.contains("name")) config.optimizer = string(optimizer["name"], "compile.optimizer.name");
                for (auto [key, field] : {std::pair{"clipnorm", &FitConfig::clipnorm}, std::pair{"clipvalue", &FitConfig::clipvalue},
                                          std::pair{"global_clipnorm", &FitConfig::global_clipnorm}})
                    if (optimizer.contains(key) && !optimizer[key].is_null()) {
                        const std::string at = std::string("compile.optimizer.") + key;
                        const double v = number(optimizer[key], at);
                        if (!(v > 0) || !std::isfinite(v)) throw Error(where(at) + ": must be a positive number or null");
                        config.*field = static_cast<float>(v);
                    }
                if (optimizer.contains("learning_rate") && optimizer["learning_rate"].is_object()) {
                    config.learning_rate_schedule = schedule(optimizer["learning_rate"], "compile.optimizer.learning_rate");
                    config.learning_rate = scheduled_learning_rate(config.learning_rate_schedule, 0);
                    config.given.insert("compile.optimizer.learning_rate");
                } else if (optimizer.contains("learning_rate")) {
                    config.learning_rate = number(optimizer["learning_rate"], "compile.optimizer.learning_rate");
                    config.given.insert("compile.optimizer.learning_rate");
                    check_learning_rate(config.learning_rate, where("compile.optimizer.learning_rate"));
                }
            }
            check_optimizer(config.optimizer, where("compile.optimizer"));
        }
        if (compile.contains("loss")) {
            config.loss = string(compile["loss"], "compile.loss");
            config.given.insert("compile.loss");
            check_loss(config.loss, where("compile.loss"));
        }
        if (compile.contains("metrics")) {
            const json& metrics = compile["metrics"];
            if (!metrics.is_array()) throw type_error(metrics, "compile.metrics", "an array of names");
            config.metrics.clear();
            for (size_t i = 0; i < metrics.size(); ++i)
                config.metrics.push_back(string(metrics[i], "compile.metrics[" + std::to_string(i) + "]"));
            check_metrics(config.metrics, where("compile.metrics"));
        }
    }

    void read_fit(const json& fit, FitConfig& config) const {
        check_object(fit, "fit", {"batch_size", "epochs", "validation_split", "shuffle", "seed", "verbose", "steps_per_epoch", "device"});
        const int64_t max_int = std::numeric_limits<int32_t>::max();
        if (fit.contains("batch_size")) {
            config.batch_size = integer(fit["batch_size"], "fit.batch_size", 1, max_int);
            config.given.insert("fit.batch_size");
        }
        if (fit.contains("epochs")) config.epochs = integer(fit["epochs"], "fit.epochs", 1, kMaxEpochs);
        if (fit.contains("validation_split")) {
            config.validation_split = number(fit["validation_split"], "fit.validation_split");
            config.given.insert("fit.validation_split");
            check_fraction(config.validation_split, where("fit.validation_split"));
        }
        if (fit.contains("shuffle")) {
            config.shuffle = boolean(fit["shuffle"], "fit.shuffle");
            config.given.insert("fit.shuffle");
        }
        if (fit.contains("seed")) config.seed = seed(fit["seed"], "fit.seed");
        if (fit.contains("verbose")) config.verbose = static_cast<int>(integer(fit["verbose"], "fit.verbose", 0, 2));
        if (fit.contains("device")) {
            config.device = string(fit["device"], "fit.device");
            check_device(config.device, where("fit.device"));
        }
        if (fit.contains("steps_per_epoch") && !fit["steps_per_epoch"].is_null())
            config.steps_per_epoch = integer(fit["steps_per_epoch"], "fit.steps_per_epoch", 1, kMaxSteps);
    }

private:
    std::string file_;
};

}  // namespace

FitConfig read_config(const std::string& path) {
    const std::string text = read_config_text(path);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw Error(path + ": the config file is empty; write a JSON object such as {\"fit\": {\"epochs\": 50}}");
    json document;
    try {
        document = json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
    } catch (const json::parse_error& e) {
        // what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ...".
        std::string detail = e.what();
        const size_t bracket = detail.find("] ");
        if (bracket != std::string::npos) detail.erase(0, bracket + 2);
        throw Error(path + ": malformed JSON: " + printable(detail, 200));
    }
    if (!document.is_object())
        throw Error(path + ": the config must be a JSON object such as {\"fit\": {\"epochs\": 50}}, got " +
                    describe(document));
    const ConfigReader reader(path);
    reader.check_object(document, "", {"data", "model", "compile", "fit"});
    FitConfig config;
    if (document.contains("data")) reader.read_data(document["data"], config);
    if (document.contains("model")) reader.read_model(document["model"], config);
    if (document.contains("compile")) reader.read_compile(document["compile"], config);
    if (document.contains("fit")) reader.read_fit(document["fit"], config);
    return config;
}

void check_int(int64_t value, int64_t min, int64_t max, const std::string& where) {
    if (value < min) throw Error(where + " must be at least " + std::to_string(min) + ", got " + std::to_string(value));
    if (value > max) throw Error(where + " must be at most " + std::to_string(max) + ", got " + std::to_string(value));
}

void check_fraction(double value, const std::string& where) {
    if (!(value >= 0.0 && value < 1.0))
        throw Error(where + " must be a fraction in [0, 1), got " + format_double(value));
}

void check_learning_rate(double value, const std::string& where) {
    if (!(value > 0.0 && value <= 1e6))
        throw Error(where + " must be a positive number (e.g. 0.001), got " + format_double(value));
}

// The library's own name tables decide; the message gains the key or flag.
void check_device(const std::string& name, const std::string& where) {
    if (name == "auto") return;  // resolved by explain's cost model when the fit starts
    try {
        device_from_name(name);
    } catch (const Error& e) {
        throw Error(where + ": " + e.what() + "; or auto, the device projected to finish first");
    }
}

void check_loss(const std::string& name, const std::string& where) {
    try {
        loss_from_name(name);
    } catch (const Error& e) {
        throw Error(where + ": " + printable(e.what(), 300));
    }
}

void check_optimizer(const std::string& name, const std::string& where) {
    try {
        optimizer_from_name(name);
    } catch (const Error& e) {
        throw Error(where + ": " + printable(e.what(), 300));
    }
}

void check_metrics(const std::vector<std::string>& names, const std::string& where) {
    // Metric names have no public lookup; compiling a one-unit model runs the library's own check.
    try {
        Sequential probe({1});
        probe.add(Dense(1));
        probe.compile(Adam(), Loss{}, CompileOptions{names});
    } catch (const Error& e) {
        throw Error(where + ": " + printable(e.what(), 300));
    }
}

Layer make_dense(int64_t units, const std::string& activation, bool use_bias, const std::string& name,
                 const std::string& where) {
    try {
        return Dense(units, activation_from_name(activation), use_bias, name);
    } catch (const Error& e) {
        throw Error(where + ": " + printable(e.what(), 300));
    }
}

Layer make_dropout(double rate, const std::string& name, const std::string& where) {
    if (!(rate >= 0.0 && rate < 1.0))
        throw Error(where + ": a dropout rate must be in [0, 1), got " + format_double(rate));
    return Dropout(static_cast<float>(rate), name);
}

std::string layers_text(const Shape& input_shape, const std::vector<Layer>& layers) {
    // Appends only: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
    std::string line;
    const auto dims = [&line](const auto& values) {
        for (size_t i = 0; i < values.size(); ++i) line.append(i ? "x" : "").append(std::to_string(values[i]));
    };
    dims(input_shape);
    for (const Layer& layer : layers) {
        line.append("-");
        switch (layer.kind) {
            case Layer::Kind::Dense: line.append(std::to_string(layer.units)); break;
            case Layer::Kind::Dropout: line.append("dropout(").append(format_double(layer.rate)).append(")"); break;
            case Layer::Kind::Flatten: line.append("flatten"); break;
            case Layer::Kind::Reshape: line.append("reshape("), dims(layer.target_shape), line.append(")"); break;
            case Layer::Kind::Conv2D:
                line.append("conv").append(std::to_string(layer.filters)).append("(");
                dims(layer.kernel_size), line.append(")");
                break;
            case Layer::Kind::MaxPooling2D: line.append("maxpool("), dims(layer.pool_size), line.append(")"); break;
            case Layer::Kind::AveragePooling2D: line.append("avgpool("), dims(layer.pool_size), line.append(")"); break;
            case Layer::Kind::GlobalAveragePooling2D: line.append("globalavgpool"); break;
            case Layer::Kind::BatchNormalization: line.append("batchnorm"); break;
            default: line.append(layer_type(layer.kind));  // a kind without a short form: its config word
        }
    }
    return line;
}

std::string printable(const std::string& text, size_t max_chars) {
    std::string out;
    for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (text.size() > max_chars) out += "...";
    return out;
}

}  // namespace onefit::cli
