#include "io/keras_compile.hpp"

#include <cctype>
#include <functional>
#include <map>

#include "io/keras_object.hpp"
#include "io/layer_json.hpp"
#include "io/schedule_json.hpp"
#include "nn/metrics.hpp"
#include "program/training_program.hpp"

namespace onefit::io {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// ---- Writing the compile config ----

struct LossClass {
    LossKind kind;
    const char* keras_class;
};
constexpr LossClass kLossClasses[] = {{LossKind::log_cosh, "LogCosh"},
                                      {LossKind::mean_squared_error, "MeanSquaredError"},
                                      {LossKind::mean_absolute_error, "MeanAbsoluteError"},
                                      {LossKind::huber, "Huber"},
                                      {LossKind::binary_crossentropy, "BinaryCrossentropy"},
                                      {LossKind::categorical_crossentropy, "CategoricalCrossentropy"},
                                      {LossKind::sparse_categorical_crossentropy, "SparseCategoricalCrossentropy"}};

bool smooths(LossKind kind) { return kind == LossKind::binary_crossentropy || kind == LossKind::categorical_crossentropy; }
bool has_logits(LossKind kind) { return smooths(kind) || kind == LossKind::sparse_categorical_crossentropy; }

ordered_json loss_json(const Loss& loss) {
    if (!loss.from_logits && loss.label_smoothing == 0.0f && loss.delta == 1.0f) return loss_name(loss.kind);
    ordered_json c = {{"name", loss_name(loss.kind)}, {"reduction", "sum_over_batch_size"}};
    if (has_logits(loss.kind)) c["from_logits"] = loss.from_logits;
    if (smooths(loss.kind)) c["label_smoothing"] = shortest(loss.label_smoothing);
    if (loss.kind == LossKind::huber) c["delta"] = shortest(loss.delta);
    for (const LossClass& l : kLossClasses)
        if (l.kind == loss.kind) return keras_object("keras.losses", l.keras_class, c);
    return loss_name(loss.kind);
}

const char* optimizer_class(OptimizerKind kind) {
    switch (kind) {
        case OptimizerKind::sgd: return "SGD";
        case OptimizerKind::adam: return "Adam";
        case OptimizerKind::adamw: return "AdamW";
        case OptimizerKind::rmsprop: return "RMSprop";
        case OptimizerKind::adagrad: return "Adagrad";
    }
    return "Adam";
}

ordered_json off_or(float v) { return v != 0.0f ? ordered_json(shortest(v)) : ordered_json(nullptr); }

ordered_json optimizer_json(const Optimizer& o) {
    ordered_json c = {{"name", optimizer_name(o.kind)}};
    if (o.learning_rate_schedule.kind != ScheduleKind::constant) {
        ordered_json s = schedule_json(o.learning_rate_schedule);
        c["learning_rate"] = keras_object("keras.optimizers.schedules", s["class_name"], s["config"]);
    } else {
        c["learning_rate"] = shortest(o.learning_rate);
    }
    c["weight_decay"] = o.kind == OptimizerKind::adamw ? ordered_json(shortest(o.weight_decay)) : off_or(o.weight_decay);
    c["clipnorm"] = off_or(o.clipnorm);
    c["global_clipnorm"] = off_or(o.global_clipnorm);
    c["clipvalue"] = off_or(o.clipvalue);
    c["use_ema"] = false;
    c["loss_scale_factor"] = nullptr;
    c["gradient_accumulation_steps"] = nullptr;
    switch (o.kind) {
        case OptimizerKind::adam:
        case OptimizerKind::adamw:
            c["beta_1"] = shortest(o.beta_1), c["beta_2"] = shortest(o.beta_2);
            c["epsilon"] = shortest(o.epsilon), c["amsgrad"] = o.amsgrad;
            break;
        case OptimizerKind::sgd: c["momentum"] = shortest(o.momentum), c["nesterov"] = o.nesterov; break;
        case OptimizerKind::rmsprop:
            c["rho"] = shortest(o.rho), c["momentum"] = shortest(o.momentum);
            c["epsilon"] = shortest(o.epsilon), c["centered"] = o.centered;
            break;
        case OptimizerKind::adagrad:
            c["initial_accumulator_value"] = shortest(o.initial_accumulator_value), c["epsilon"] = shortest(o.epsilon);
            break;
    }
    return keras_object("keras.optimizers", optimizer_class(o.kind), c);
}

// onefit's metric names as Keras's compile() takes them: a plain name as is; a metric object
// (AUC(curve="PR"), F1Score(average=...), one named by "key=spec") as its serialised object.
ordered_json metric_json(const std::string& name) {
    std::string key = name, spec = name;
    const size_t equals = name.find('=');
    if (equals != std::string::npos) key = name.substr(0, equals), spec = name.substr(equals + 1);
    const auto named = [&](const char* cls, ordered_json c) {
        c["name"] = key;
        return keras_object("keras.metrics", cls, c);
    };
    if (spec == "pr_auc") return named("AUC", {{"curve", "PR"}});
    if (spec.rfind("f1_score(", 0) == 0 || spec.rfind("fbeta_score(", 0) == 0) {  // (resolve_metric reads the spec)
        const nn::Metric m = nn::resolve_metric(spec, 1, 1);
        const bool fbeta = spec[1] == 'b';
        ordered_json c = {{"average", m.kind == nn::MetricKind::f1_micro      ? "micro"
                                      : m.kind == nn::MetricKind::f1_weighted ? "weighted"
                                                                              : "macro"}};
        if (fbeta) c["beta"] = m.beta;
        c["threshold"] = m.threshold < 0 ? ordered_json(nullptr) : ordered_json(m.threshold);
        return named(fbeta ? "FBetaScore" : "F1Score", c);
    }
    for (const auto& [word, cls] : {std::pair{"top_k_categorical_accuracy(", "TopKCategoricalAccuracy"},
                                    std::pair{"sparse_top_k_categorical_accuracy(", "SparseTopKCategoricalAccuracy"}})
        if (spec.rfind(word, 0) == 0) return named(cls, {{"k", nn::resolve_metric(spec, 1, 1).k}});
    if (key == spec) return name;
    static const std::map<std::string, const char*> classes = {
        {"auc", "AUC"}, {"precision", "Precision"}, {"recall", "Recall"}, {"r2_score", "R2Score"}};
    const auto it = classes.find(spec);
    if (it != classes.end()) return named(it->second, ordered_json::object());
    return spec;  // a plain Keras name under another key: Keras names it itself
}

// ---- Reading the compile config ----

float number_or_off(const JsonFile& f, const json& c, const char* key, const std::string& at) {
    if (!c.contains(key) || c[key].is_null()) return 0.0f;
    return f.number(c, key, at + "." + key);
}

Optimizer read_optimizer(const JsonFile& f, const json& spec, const std::string& at) {
    if (spec.is_string()) return f.named(at, [&] { return optimizer_from_name(spec.get<std::string>()); });
    std::string cls = f.string(spec, "class_name", at + ".class_name");
    std::string lower;
    for (char ch : cls) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Optimizer o = f.named(at + ".class_name", [&] { return optimizer_from_name(lower); });
    const json& c = f.get(spec, "config", at + ".config");
    const std::string where = at + ".config";
    const std::map<std::string, std::function<void(const json&)>> fields = {
        {"learning_rate",
         [&](const json& v) {
             if (v.is_object()) o.learning_rate_schedule = read_schedule(f, v, where + ".learning_rate");
             else o.learning_rate = f.number(c, "learning_rate", where + ".learning_rate");
         }},
        {"weight_decay", [&](const json&) { o.weight_decay = number_or_off(f, c, "weight_decay", where); }},
        {"clipnorm", [&](const json&) { o.clipnorm = number_or_off(f, c, "clipnorm", where); }},
        {"global_clipnorm", [&](const json&) { o.global_clipnorm = number_or_off(f, c, "global_clipnorm", where); }},
        {"clipvalue", [&](const json&) { o.clipvalue = number_or_off(f, c, "clipvalue", where); }},
        {"beta_1", [&](const json&) { o.beta_1 = f.number(c, "beta_1", where + ".beta_1"); }},
        {"beta_2", [&](const json&) { o.beta_2 = f.number(c, "beta_2", where + ".beta_2"); }},
        {"epsilon", [&](const json&) { o.epsilon = f.number(c, "epsilon", where + ".epsilon"); }},
        {"amsgrad", [&](const json&) { o.amsgrad = f.boolean(c, "amsgrad", where + ".amsgrad"); }},
        {"momentum", [&](const json&) { o.momentum = f.number(c, "momentum", where + ".momentum"); }},
        {"nesterov", [&](const json&) { o.nesterov = f.boolean(c, "nesterov", where + ".nesterov"); }},
        {"rho", [&](const json&) { o.rho = f.number(c, "rho", where + ".rho"); }},
        {"centered", [&](const json&) { o.centered = f.boolean(c, "centered", where + ".centered"); }},
        {"initial_accumulator_value",
         [&](const json&) { o.initial_accumulator_value = f.number(c, "initial_accumulator_value", where + ".initial_accumulator_value"); }}};
    for (const auto& [key, value] : c.items()) {
        if (key == "name" || key == "ema_momentum" || key == "ema_overwrite_frequency") continue;
        if ((key == "use_ema" && value == false) ||
            ((key == "loss_scale_factor" || key == "gradient_accumulation_steps") && value.is_null()))
            continue;
        const auto it = fields.find(key);
        if (it == fields.end()) throw f.error(where + "." + key, "is " + printable(value.dump(), 60) + ", which onefit's " + cls + " does not support");
        it->second(value);
    }
    return o;
}

Loss read_loss(const JsonFile& f, const json& spec, const std::string& at) {
    if (spec.is_string()) return f.named(at, [&] { return loss_from_name(spec.get<std::string>()); });
    const std::string cls = f.string(spec, "class_name", at + ".class_name");
    Loss loss;
    bool found = false;
    for (const LossClass& l : kLossClasses)
        if (cls == l.keras_class) loss.kind = l.kind, found = true;
    if (!found) throw f.error(at + ".class_name", "is " + printable(cls) + ", a loss onefit lacks");
    const json& c = f.get(spec, "config", at + ".config");
    const std::string where = at + ".config";
    for (const auto& [key, value] : c.items()) {
        if (key == "name" || key == "dtype") continue;
        if (key == "reduction" && value == "sum_over_batch_size") continue;
        if ((key == "axis" && value == -1) || (key == "ignore_class" && value.is_null())) continue;
        if (key == "from_logits" && has_logits(loss.kind)) loss.from_logits = f.boolean(c, key, where + "." + key);
        else if (key == "label_smoothing" && smooths(loss.kind)) loss.label_smoothing = f.number(c, key, where + "." + key);
        else if (key == "delta" && loss.kind == LossKind::huber) loss.delta = f.number(c, key, where + "." + key);
        else throw f.error(where + "." + key, "is " + printable(value.dump(), 60) + ", which onefit's " + cls + " does not support");
    }
    return loss;
}

std::string read_metric(const JsonFile& f, const json& spec, const std::string& at) {
    if (spec.is_string()) return spec.get<std::string>();
    const std::string cls = f.string(spec, "class_name", at + ".class_name");
    const json& c = f.get(spec, "config", at + ".config");
    std::string name = c.contains("name") && c["name"].is_string() ? c["name"].get<std::string>() : snake_case(cls);
    std::string metric = snake_case(cls);
    for (const auto& [key, value] : c.items()) {
        if (key == "name" || key == "dtype") continue;
        if (cls == "AUC" && key == "curve") {
            if (value == "PR") metric = "pr_auc";
            else if (value != "ROC") throw f.error(at + ".config.curve", "must be ROC or PR");
            continue;
        }
        if ((cls == "F1Score" || cls == "FBetaScore") && (key == "average" || key == "threshold")) continue;
        if (cls == "FBetaScore" && key == "beta") continue;
        if ((cls == "TopKCategoricalAccuracy" || cls == "SparseTopKCategoricalAccuracy") && key == "k") {
            const int64_t top = f.integer(c, "k", at + ".config.k", 1);
            if (top != 5) metric += "(" + std::to_string(top) + ")";
            continue;
        }
        const bool off = value.is_null() || value == false || (key == "num_thresholds" && value == 200) ||
                         (key == "summation_method" && value == "interpolation") || (key == "k" && value == 5) ||
                         (key == "class_aggregation" && value == "uniform_average") ||
                         (key == "num_regressors" && value == 0) || (key == "beta" && value == 1);
        if (!off) throw f.error(at + ".config." + key, "is " + printable(value.dump(), 60) + ", which onefit's " + cls + " does not support");
    }
    if (cls == "F1Score" || cls == "FBetaScore") {
        const json& average = f.get(c, "average", at + ".config.average");
        if (!average.is_string()) throw f.error(at + ".config.average", "is None (one value per class); onefit takes micro, macro or weighted");
        metric = (cls == "F1Score" ? "f1_score(" : "fbeta_score(") + average.get<std::string>();
        if (cls == "FBetaScore") metric += ", " + std::to_string(c.contains("beta") ? f.number(c, "beta", at + ".config.beta") : 1.0);
        if (c.contains("threshold") && !c["threshold"].is_null()) metric += ", " + std::to_string(f.number(c, "threshold", at + ".config.threshold"));
        metric += ")";
    }
    return name == metric ? metric : name + "=" + metric;
}

}  // namespace

ordered_json keras_compile_json(const TrainingProgram& program) {
    ordered_json metrics = ordered_json::array();
    for (const std::string& m : program.metric_names) metrics.push_back(metric_json(m));
    return {{"optimizer", optimizer_json(program.optimizer)}, {"loss", loss_json(program.loss)},
            {"loss_weights", nullptr}, {"metrics", metrics}, {"weighted_metrics", nullptr},
            {"run_eagerly", false}, {"steps_per_execution", 1}, {"jit_compile", true}};
}

KerasCompile read_keras_compile(const JsonFile& f, const json& c) {
    KerasCompile k;
    for (const char* key : {"loss_weights", "weighted_metrics"})
        if (c.contains(key) && !c[key].is_null()) throw f.error(std::string("compile_config.") + key, "is not supported by onefit");
    const json& loss = f.get(c, "loss", "compile_config.loss");
    if (loss.is_null())
        throw f.error("compile_config.loss", "is None (compiled without a loss); onefit trains with one: load with compile=False and compile it");
    k.loss = read_loss(f, loss, "compile_config.loss");
    k.optimizer = read_optimizer(f, f.get(c, "optimizer", "compile_config.optimizer"), "compile_config.optimizer");
    if (c.contains("metrics") && !c["metrics"].is_null()) {
        const json& m = c["metrics"];
        if (!m.is_array()) throw f.error("compile_config.metrics", "must be a list (per-output metrics are not supported)");
        for (size_t i = 0; i < m.size(); ++i) k.metrics.push_back(read_metric(f, m[i], "compile_config.metrics[" + std::to_string(i) + "]"));
    }
    return k;
}

std::vector<std::vector<int>> keras_slot_groups(const Optimizer& o) {
    switch (o.kind) {
        case OptimizerKind::adam:
        case OptimizerKind::adamw:
            if (o.amsgrad) return {{0, 1}, {2}};
            return {{0, 1}};
        case OptimizerKind::sgd: return o.momentum != 0.0f ? std::vector<std::vector<int>>{{0}} : std::vector<std::vector<int>>{};
        case OptimizerKind::rmsprop: {
            std::vector<std::vector<int>> groups = {{0}};
            if (o.momentum != 0.0f) groups.push_back({1});
            if (o.centered) groups.push_back({o.momentum != 0.0f ? 2 : 1});
            return groups;
        }
        case OptimizerKind::adagrad: return {{0}};
    }
    return {};
}

}  // namespace onefit::io
