#include "io/keras_config.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <variant>

#include "core/overloaded.hpp"
#include "io/keras_compile.hpp"
#include "io/keras_object.hpp"
#include "io/layer_json.hpp"
#include "nn/layer_kinds.hpp"
#include "nn/metrics.hpp"
#include "onefit/model.hpp"
#include "program/training_program.hpp"

namespace onefit::io {
namespace {

// The most calls (inbound nodes) of one shared layer that a file may give.
constexpr size_t kMaxLayerCalls = 256;

using nlohmann::ordered_json;

ordered_json regularizer_json(const Regularizer& r) {
    if (r.l2 == 0.0f) return keras_object("keras.regularizers", "L1", {{"l1", shortest(r.l1)}});
    if (r.l1 == 0.0f) return keras_object("keras.regularizers", "L2", {{"l2", shortest(r.l2)}});
    return keras_object("keras.regularizers", "L1L2", {{"l1", shortest(r.l1)}, {"l2", shortest(r.l2)}});
}

ordered_json shape_json(const Shape& per_sample) {
    ordered_json s = ordered_json::array({nullptr});
    for (int64_t d : per_sample) s.push_back(d);
    return s;
}

ordered_json layer_config_json(const Layer& layer, const std::string& name) {
    ordered_json c = {{"name", name}, {"trainable", true}, {"dtype", "float32"}};
    for (const auto& [key, value] : layer_arguments(layer)) {
        ordered_json& v = c[key];
        if (key.size() > 12 && key.ends_with("_regularizer")) {
            if (const auto* text = std::get_if<std::string>(&value)) v = regularizer_json(regularizer_from_text(*text));
            else v = nullptr;
            continue;
        }
        std::visit(Overloaded{[&](std::monostate) { v = nullptr; }, [&](double d) { v = shortest(static_cast<float>(d)); },
                              [&](const auto& x) { v = x; }},
                   value);
    }
    return c;
}

// ---- Reading ----

// A value Keras's config holds, as make_layer takes it.
LayerValue layer_value(const JsonFile& f, const json& v, const std::string& key, const std::string& at, bool wants_int) {
    if (v.is_null()) return std::monostate{};
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
        std::vector<int64_t> list;
        for (const json& e : v) {
            if (!e.is_number_integer()) throw f.error(at, "must be a list of integers, got " + printable(v.dump()));
            list.push_back(e.get<int64_t>());
        }
        if (wants_int && list.size() == 1) return list[0];  // Conv1D's kernel_size (3,)
        return list;
    }
    if (v.is_object() && key.ends_with("_regularizer")) {
        const std::string cls = f.string(v, "class_name", at + ".class_name");
        const json& c = f.get(v, "config", at + ".config");
        Regularizer r;
        if (cls != "L1" && cls != "L2" && cls != "L1L2")
            throw f.error(at, "is a " + printable(cls) + " regularizer; onefit has L1, L2 and L1L2");
        if (c.contains("l1")) r.l1 = f.number(c, "l1", at + ".config.l1");
        if (c.contains("l2")) r.l2 = f.number(c, "l2", at + ".config.l2");
        return r.active() ? LayerValue(regularizer_text(r)) : LayerValue(std::monostate{});
    }
    throw f.error(at, "is " + printable(v.dump(), 80) + ", which onefit cannot read as a layer argument");
}

// What a Keras layer config may hold that onefit's layers do not have: each key, the values that
// mean "not used" (read and ignored) and what the refusal of any other value says onefit supports.
struct KerasOnlyKey {
    const char* key;
    std::vector<json> off;
    const char* supported;
};

const KerasOnlyKey* keras_only_key(const std::string& key) {
    static const std::vector<KerasOnlyKey> keys = [] {
        std::vector<KerasOnlyKey> k;
        for (const char* none : {"kernel_constraint", "bias_constraint", "embeddings_constraint", "beta_constraint",
                                 "gamma_constraint", "quantization_config", "lora_rank", "lora_alpha", "noise_shape",
                                 "renorm_clipping", "beta_regularizer", "gamma_regularizer", "activity_regularizer"})
            k.push_back({none, {nullptr}, "None"});
        for (const char* off : {"keepdims", "synchronized", "renorm", "rms_scaling", "sparse"}) k.push_back({off, {false}, "false"});
        k.push_back({"data_format", {nullptr, "channels_last"}, "channels_last"});
        k.push_back({"dilation_rate", {1, json::array({1}), json::array({1, 1})}, "1"});
        k.push_back({"groups", {1}, "1"});
        k.push_back({"axis", {-1, json::array({-1})}, "the last axis (-1)"});  // BatchNormalization's
        return k;
    }();
    for (const KerasOnlyKey& k : keys)
        if (key == k.key) return &k;
    return nullptr;
}

// Keys that are read elsewhere or change nothing onefit computes: the name, Dropout's seed (the
// fit's seed draws onefit's masks), BatchNormalization's renorm_momentum (renorm is off), and the
// initialisers of arrays the file's weights replace.
bool is_ignored(const std::string& key, const Layer& defaults) {
    if (key == "name" || key == "trainable" || key == "dtype" || key == "seed" || key == "renorm_momentum") return true;
    if (!key.ends_with("_initializer")) return false;
    for (const nn::LayerAttribute& a : nn::layer_kind(defaults.kind).attributes())
        if (key == a.name) return false;
    return true;
}

std::string initializer_name(const JsonFile& f, const json& v, const std::string& at) {
    if (v.is_string()) return v.get<std::string>();
    return snake_case(f.string(v, "class_name", at + ".class_name"));
}

void check_dtype(const JsonFile& f, const json& config, const std::string& at) {
    if (!config.contains("dtype") || config["dtype"].is_null()) return;
    const json& d = config["dtype"];
    std::string name = d.is_string() ? d.get<std::string>() : "";
    if (d.is_object() && d.contains("config") && d["config"].is_object() && d["config"].contains("name") &&
        d["config"]["name"].is_string())
        name = d["config"]["name"].get<std::string>();
    if (name != "float32") throw f.error(at + ".dtype", "is " + printable(name.empty() ? d.dump() : name) + "; onefit runs float32");
}

Layer read_layer_config(const JsonFile& f, const json& entry, const std::string& at) {
    const std::string cls = f.string(entry, "class_name", at + ".class_name");
    const json& config = f.get(entry, "config", at + ".config");
    if (!config.is_object()) throw f.error(at + ".config", "must be an object");
    Layer::Kind kind{};
    bool found = false;
    for (Layer::Kind k : nn::all_layer_kinds())
        if (cls == nn::layer_kind(k).keras_class) kind = k, found = true;
    if (!found) {
        std::string known;
        for (Layer::Kind k : nn::all_layer_kinds()) known += (known.empty() ? "" : ", ") + std::string(nn::layer_kind(k).keras_class);
        throw f.error(at + ".class_name", "is " + printable(cls) + ", a layer onefit lacks; it has " + known);
    }
    const std::string where = at + ".config";
    const std::string name = f.string(config, "name", where + ".name");
    if (config.contains("trainable") && config["trainable"] == false)
        throw f.error(where + ".trainable", "is false (a frozen layer); onefit trains every layer");
    check_dtype(f, config, where);
    const Layer defaults = nn::default_layer(kind);
    std::map<std::string, bool> ints;
    for (const nn::LayerAttribute& a : nn::layer_kind(kind).attributes())
        ints[a.name] = std::holds_alternative<int64_t Layer::*>(a.field);
    LayerArguments arguments;
    for (const auto& [key, value] : config.items()) {
        const std::string field = where + "." + key;
        if (is_ignored(key, defaults)) continue;
        if (const KerasOnlyKey* only = ints.count(key) ? nullptr : keras_only_key(key)) {
            if (std::find(only->off.begin(), only->off.end(), value) != only->off.end()) continue;
            throw f.error(field, "is " + printable(value.dump(), 60) + "; onefit supports only " + only->supported);
        }
        if (key.ends_with("_initializer")) {
            arguments.emplace_back(key, initializer_name(f, value, field));
            continue;
        }
        arguments.emplace_back(key, layer_value(f, value, key, field, ints[key]));
    }
    try {
        return make_layer(nn::layer_kind(kind).type, arguments, name);
    } catch (const LayerArgumentError& e) {
        throw f.error(e.argument.empty() ? where : where + "." + e.argument, e.what());
    }
}

// keras_history's layer name of a __keras_tensor__ in a node's args.
// A tensor as Keras names it, [layer name, node index, tensor index], as "name" for a layer's
// first call (node 0) and "name@k" for its call k (a shared layer's; onefit's name of that call).
std::string history_call(const json& history) {
    const std::string name = history[0].get<std::string>();
    const uint64_t node = history[1].get<uint64_t>();  // (a node past a layer's calls names no call)
    return node == 0 ? name : name + "@" + std::to_string(node);
}

std::string history_layer(const JsonFile& f, const json& tensor, const std::string& at) {
    const json& config = f.get(tensor, "config", at + ".config");
    const json& history = f.get(config, "keras_history", at + ".config.keras_history");
    if (!history.is_array() || history.size() != 3 || !history[0].is_string() || !history[1].is_number_unsigned())
        throw f.error(at + ".config.keras_history", "must be [layer name, node index, tensor index]");
    if (history[2] != 0)
        throw f.error(at + ".config.keras_history", "names a layer's second output; onefit's layers give one");
    return history_call(history);
}

// The layer names a Functional model's "input_layers"/"output_layers" hold: one [name, 0, 0] or a list of them.
std::vector<std::string> end_layers(const JsonFile& f, const json& config, const char* key) {
    const json& v = f.get(config, key, std::string("config.") + key);
    std::vector<std::string> names;
    const auto one = [](const json& e) { return e.is_array() && e.size() == 3 && e[0].is_string() && e[1].is_number_unsigned(); };
    if (one(v)) names.push_back(history_call(v));
    else if (v.is_array())
        for (const json& e : v) {
            if (!one(e)) throw f.error(std::string("config.") + key, "must list [name, node, 0]");
            names.push_back(history_call(e));
        }
    return names;
}

Shape input_shape_of(const JsonFile& f, const json& batch_shape, const std::string& at) {
    if (!batch_shape.is_array() || batch_shape.size() < 2 || batch_shape.size() > 4)
        throw f.error(at, "must be [None, ...] of 1 to 3 dimensions, got " + printable(batch_shape.dump()));
    Shape s;
    for (size_t i = 1; i < batch_shape.size(); ++i) {
        if (!batch_shape[i].is_number_integer() || batch_shape[i].get<int64_t>() < 1)
            throw f.error(at, "must give every dimension but the batch, got " + printable(batch_shape.dump()));
        s.push_back(batch_shape[i].get<int64_t>());
    }
    return s;
}

}  // namespace

const TrainingProgram* compiled_program(const Sequential& model) {
    try {
        return &model.program();
    } catch (const Error&) {
        return nullptr;
    }
}

std::vector<size_t> keras_layer_order(const std::vector<Layer>& layers) {
    std::vector<size_t> order(layers.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (!nn::is_graph(layers) || layers.empty()) return order;
    // Keras's map_graph (keras/src/ops/function.py), over onefit's calls (a shared layer's later
    // calls are nodes of its first): a depth-first walk from the output, inputs in order, numbers
    // each layer at its first visit and lists the calls after their inputs; then from the output
    // back, each call's depth is the larger of its own and its layer's so far, and its inputs' calls
    // are at least one deeper. Layers go deepest first, ties by their first visit. (A shallow call
    // of a shared layer so makes its inputs deeper: the weight groups dense, dense_1, ... follow.)
    const size_t n = layers.size();
    const auto layer_of = [&](size_t call) {
        const int32_t first = layers[call].shares;
        return first >= 0 && static_cast<size_t>(first) < call ? static_cast<size_t>(first) : call;
    };
    const auto sources = [&](size_t call) {  // earlier calls it reads (hand-made indices checked later)
        std::vector<size_t> calls;
        for (const int32_t s : nn::layer_sources(layers, call))
            if (s >= 0 && static_cast<size_t>(s) < call) calls.push_back(static_cast<size_t>(s));
        return calls;
    };
    std::vector<int64_t> first_visit(n, std::numeric_limits<int64_t>::max());
    std::vector<uint8_t> visited(n, 0);
    std::vector<size_t> after_inputs;
    int64_t next = 0;
    const std::function<void(size_t)> visit = [&](size_t call) {
        if (visited[call]) return;
        visited[call] = 1;
        const size_t layer = layer_of(call);
        if (first_visit[layer] == std::numeric_limits<int64_t>::max()) first_visit[layer] = next++;
        for (const size_t s : sources(call)) visit(s);
        after_inputs.push_back(call);
    };
    visit(n - 1);
    std::vector<int64_t> call_depth(n, 0), layer_depth(n, 0);
    for (auto it = after_inputs.rbegin(); it != after_inputs.rend(); ++it) {
        const size_t call = *it, layer = layer_of(call);
        const int64_t depth = std::max(call_depth[call], layer_depth[layer]);
        layer_depth[layer] = call_depth[call] = depth;
        for (const size_t s : sources(call)) call_depth[s] = std::max(call_depth[s], depth + 1);
    }
    std::erase_if(order, [&](size_t i) { return layer_of(i) != i; });
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (layer_depth[a] != layer_depth[b]) return layer_depth[a] > layer_depth[b];
        return first_visit[a] < first_visit[b];
    });
    return order;
}

std::vector<std::string> keras_weight_groups(const std::vector<Layer>& ordered, size_t input_layers) {
    std::map<std::string, int> used;
    if (input_layers > 0) used["input_layer"] = static_cast<int>(input_layers) - 1;
    std::vector<std::string> groups;
    for (const Layer& layer : ordered) {
        const std::string base = snake_case(nn::layer_kind(layer.kind).keras_class);
        const auto it = used.find(base);
        if (it == used.end()) {
            used[base] = 0;
            groups.push_back("layers/" + base);
        } else {
            groups.push_back("layers/" + base + "_" + std::to_string(++it->second));
        }
    }
    return groups;
}

ordered_json keras_model_json(const Sequential& model, const std::vector<size_t>& order) {
    const std::vector<Layer>& layers = model.layers();
    const std::vector<std::string> names = model.layer_names();
    const bool functional = nn::is_graph(layers);
    const std::vector<nn::LayerSpec> specs = nn::layer_specs(model.input_shapes(), layers, names);
    const std::vector<Shape>& inputs = model.input_shapes();
    // The InputLayers' names: the model's input names (Keras's defaults input_layer, input_layer_1, ...).
    const std::vector<std::string> input_names = model.all_input_names();
    const auto input_name = [&](int32_t source) { return input_names[static_cast<size_t>(-1 - source)]; };
    for (size_t k = 0; k < inputs.size(); ++k) {  // (Keras finds every tensor's layer by name)
        const std::string& name = input_names[k];
        bool taken = std::find(names.begin(), names.end(), name) != names.end();
        for (size_t j = 0; j < k; ++j) taken = taken || input_names[j] == name;
        if (taken) throw Error("input " + std::to_string(k) + " is named '" + name + "', as another input or a layer is; "
                               "Keras needs unique names");
    }
    // Keras names a tensor by [layer, node, 0]: a shared layer's call k is its node k.
    std::vector<int> node_of(layers.size(), 0);
    for (size_t i = 0, calls = 0; i < layers.size(); ++i, calls = 0)
        for (size_t j = i + 1; j < layers.size(); ++j)
            if (layers[j].shares == static_cast<int32_t>(i)) node_of[j] = static_cast<int>(++calls);
    const auto history = [&](int32_t s) -> ordered_json {
        if (s < 0) return {input_name(s), 0, 0};
        const size_t layer = layers[static_cast<size_t>(s)].shares >= 0 ? static_cast<size_t>(layers[static_cast<size_t>(s)].shares)
                                                                        : static_cast<size_t>(s);
        return {names[layer], node_of[static_cast<size_t>(s)], 0};
    };
    ordered_json list = ordered_json::array(), input_layers = ordered_json::array();
    for (size_t k = 0; k < inputs.size(); ++k) {
        const std::string name = input_name(-1 - static_cast<int32_t>(k));
        ordered_json in = {
            {"module", "keras.layers"},
            {"class_name", "InputLayer"},
            {"config", {{"batch_shape", shape_json(inputs[k])}, {"dtype", "float32"}, {"sparse", false}, {"name", name}}},
            {"registered_name", nullptr}};
        if (functional) {
            in["name"] = name;
            in["inbound_nodes"] = ordered_json::array();
        }
        list.push_back(in);
        input_layers.push_back({name, 0, 0});
    }
    for (size_t i : order) {
        ordered_json entry = keras_object("keras.layers", nn::layer_kind(layers[i].kind).keras_class,
                                          layer_config_json(layers[i], names[i]));
        if (specs[i].inputs.size() > 1) {
            ordered_json shapes = ordered_json::array();
            for (const Shape& s : specs[i].inputs) shapes.push_back(shape_json(s));
            entry["build_config"] = {{"input_shape", shapes}};
        } else {
            entry["build_config"] = {{"input_shape", shape_json(specs[i].input)}};
        }
        if (functional) {
            entry["name"] = names[i];
            entry["inbound_nodes"] = ordered_json::array();
            for (size_t call = i; call < layers.size(); ++call) {  // (a shared layer: a node per call)
                if (call != i && layers[call].shares != static_cast<int32_t>(i)) continue;
                ordered_json args = ordered_json::array();
                const std::vector<int32_t> sources = nn::layer_sources(layers, call);
                for (const int32_t s : sources) {
                    const Shape& shape = s < 0 ? inputs[static_cast<size_t>(-1 - s)] : specs[static_cast<size_t>(s)].output;
                    args.push_back({{"class_name", "__keras_tensor__"},
                                    {"config", {{"shape", shape_json(shape)}, {"dtype", "float32"}, {"keras_history", history(s)}}}});
                }
                entry["inbound_nodes"].push_back(
                    {{"args", sources.size() > 1 ? ordered_json::array({args}) : args}, {"kwargs", ordered_json::object()}});
            }
        }
        list.push_back(entry);
    }
    ordered_json config = {{"name", model.display_name()}, {"trainable", true}, {"layers", list}};
    if (functional) {
        config["input_layers"] = inputs.size() == 1 ? input_layers[0] : input_layers;
        config["output_layers"] = history(static_cast<int32_t>(layers.size()) - 1);
    }
    ordered_json j = {{"module", functional ? "keras.src.models.functional" : "keras"},
                      {"class_name", functional ? "Functional" : "Sequential"},
                      {"config", config},
                      {"registered_name", nullptr},
                      {"build_config", {{"input_shape", inputs.size() == 1 ? shape_json(inputs[0]) : ordered_json()}}}};
    if (const TrainingProgram* program = compiled_program(model)) {
        j["compile_config"] = keras_compile_json(*program);
    }
    return j;
}

KerasModelConfig read_keras_model_json(const JsonFile& f, bool with_compile) {
    const json& root = f.root();
    const std::string cls = f.string(root, "class_name", "class_name");
    if (cls != "Sequential" && cls != "Functional" && cls != "Model")
        throw f.error("class_name", "is " + printable(cls) + "; onefit reads Sequential and Functional models (not subclassed ones)");
    KerasModelConfig out;
    out.functional = cls != "Sequential";
    const json& config = f.get(root, "config", "config");
    if (config.contains("name") && !config["name"].is_null()) out.name = f.string(config, "name", "config.name");
    const json& layers = f.get(config, "layers", "config.layers");
    if (!layers.is_array()) throw f.error("config.layers", "must be a list");
    // A Functional model's inputs in its call order (config.input_layers): input k is source -1 - k.
    std::vector<std::string> input_names;
    if (out.functional) input_names = end_layers(f, config, "input_layers");
    if (out.functional && input_names.empty()) throw f.error("config.input_layers", "names no input");
    std::map<std::string, int32_t> index;  // call name -> its index in out.layers (-1 - k: input k)
    struct PendingCall {  // a Functional layer's call (node) and the calls it reads, by name
        Layer layer;
        int node;
        std::string at;
        std::vector<std::string> sources;
    };
    std::vector<PendingCall> pending;
    std::vector<std::optional<Shape>> input_shapes(std::max<size_t>(input_names.size(), 1));
    for (size_t i = 0; i < layers.size(); ++i) {
        const std::string at = "config.layers[" + std::to_string(i) + "]";
        const json& entry = layers[i];
        if (f.string(entry, "class_name", at + ".class_name") == "InputLayer") {
            const json& c = f.get(entry, "config", at + ".config");
            const char* key = c.contains("batch_shape") ? "batch_shape" : "batch_input_shape";
            const std::string name = c.contains("name") && c["name"].is_string() ? c["name"].get<std::string>() : "input_layer";
            size_t k = 0;
            if (out.functional) {
                const auto it = std::find(input_names.begin(), input_names.end(), name);
                if (it == input_names.end())
                    throw f.error(at, "is the InputLayer " + printable(name) + ", which config.input_layers does not name");
                k = static_cast<size_t>(it - input_names.begin());
            }
            if (input_shapes[k]) throw f.error(at, "is a second InputLayer " + printable(name) + "; a Sequential model takes one input");
            input_shapes[k] = input_shape_of(f, f.get(c, key, at + ".config." + key), at + ".config." + key);
            index[name] = -1 - static_cast<int32_t>(k);
            continue;
        }
        Layer layer = read_layer_config(f, entry, at);
        if (!out.functional) {
            index[layer.name] = static_cast<int32_t>(out.layers.size());
            out.layers.push_back(std::move(layer));
            continue;
        }
        const json& nodes = f.get(entry, "inbound_nodes", at + ".inbound_nodes");
        if (!nodes.is_array() || nodes.empty() || nodes.size() > kMaxLayerCalls)
            throw f.error(at + ".inbound_nodes", "must list the layer's calls (1 to " + std::to_string(kMaxLayerCalls) + ")");
        for (size_t node = 0; node < nodes.size(); ++node) {
            const std::string node_at = at + ".inbound_nodes[" + std::to_string(node) + "]";
            const json& args = f.get(nodes[node], "args", node_at + ".args");
            if (!args.is_array() || args.size() != 1) throw f.error(node_at + ".args", "must hold one input (a tensor or a list)");
            const json tensors = args[0].is_array() ? args[0] : json::array({args[0]});
            PendingCall call{layer, static_cast<int>(node), node_at, {}};
            for (size_t k = 0; k < tensors.size(); ++k)
                call.sources.push_back(history_layer(f, tensors[k], node_at + ".args[" + std::to_string(k) + "]"));
            pending.push_back(std::move(call));
        }
    }
    // A Functional model's calls, each once its inputs are placed (a shared layer's later call may
    // read a layer that Keras lists after it): the first ready call in the file's order each time,
    // so a file in Keras's order keeps it, and a hostile one costs n log n, not n^2.
    const auto call_name = [](const std::string& layer, int node) {
        return node == 0 ? layer : layer + "@" + std::to_string(node);
    };
    std::vector<int> missing(pending.size(), 0);
    std::map<std::string, std::vector<size_t>> waiting;  // a call's name -> the calls that read it
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t p = 0; p < pending.size(); ++p) {
        std::vector<std::string> needs = pending[p].sources;
        if (pending[p].node > 0) needs.push_back(call_name(pending[p].layer.name, pending[p].node - 1));
        for (const std::string& need : needs)
            if (!index.count(need)) ++missing[p], waiting[need].push_back(p);
        if (missing[p] == 0) ready.push(p);
    }
    size_t placed = 0;
    for (; !ready.empty(); ++placed) {
        const PendingCall& call = pending[ready.top()];
        ready.pop();
        Layer layer = call.node == 0 ? call.layer : shared_call(out.layers, static_cast<size_t>(index.at(call.layer.name)));
        for (const std::string& s : call.sources) layer.inputs.push_back(index.at(s));
        const std::string name = call_name(call.layer.name, call.node);
        if (index.count(name)) throw f.error(call.at, "is a second layer named " + printable(call.layer.name));
        index[name] = static_cast<int32_t>(out.layers.size());
        out.layers.push_back(std::move(layer));
        if (const auto it = waiting.find(name); it != waiting.end())
            for (const size_t p : it->second)
                if (--missing[p] == 0) ready.push(p);
    }
    if (placed < pending.size()) {
        const size_t stuck = static_cast<size_t>(std::find_if(missing.begin(), missing.end(), [](int m) { return m > 0; }) -
                                                 missing.begin());
        std::string absent = pending[stuck].layer.name;
        for (const std::string& s : pending[stuck].sources)
            if (!index.count(s)) absent = s;
        throw f.error(pending[stuck].at, "takes the output of " + printable(absent) + ", which no layer of the model gives");
    }
    for (size_t k = 0; k < input_names.size(); ++k)
        if (!input_shapes[k]) throw f.error("config.input_layers", "names " + printable(input_names[k]) + ", which is no InputLayer");
    if (!input_shapes[0]) {  // a Sequential saved without keras.Input: its build shape
        const json* shape = nullptr;
        if (config.contains("build_input_shape") && !config["build_input_shape"].is_null()) shape = &config["build_input_shape"];
        else if (root.contains("build_config") && root["build_config"].is_object() && root["build_config"].contains("input_shape"))
            shape = &root["build_config"]["input_shape"];
        if (!shape || shape->is_null()) throw f.error("config", "has no input shape (the model was saved before it was built)");
        input_shapes[0] = input_shape_of(f, *shape, "build_config.input_shape");
    }
    for (const std::optional<Shape>& shape : input_shapes) out.input_shapes.push_back(*shape);
    out.input_names = input_names;
    if (out.layers.empty()) throw f.error("config.layers", "has no layers");
    if (out.functional) {
        const std::vector<std::string> outputs = end_layers(f, config, "output_layers");
        if (outputs.size() != 1) throw f.error("config.output_layers", "must name one output; onefit's models give one");
        const auto last = index.find(outputs[0]);
        if (last == index.end() || last->second != static_cast<int32_t>(out.layers.size()) - 1)
            throw f.error("config.output_layers", "names " + printable(outputs[0]) + ", not the last layer " + printable(out.layers.back().name));
        // A chain written as a Functional model is still a graph's list: keep its edges explicit.
        for (size_t i = 0; i < out.layers.size(); ++i)
            if (out.layers[i].inputs == std::vector<int32_t>{static_cast<int32_t>(i) - 1}) out.layers[i].inputs.clear();
    }
    // (An uncompiled Keras model writes an empty compile_config.)
    if (with_compile && root.contains("compile_config") && !root["compile_config"].is_null() && !root["compile_config"].empty())
        out.compile = read_keras_compile(f, root["compile_config"]);
    return out;
}

}  // namespace onefit::io
