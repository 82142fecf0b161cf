// Keras 3's files: the .keras archive (metadata.json, config.json, model.weights.h5, stored in a
// zip) and the .weights.h5 file alone. The weights file holds, per layer, a group
// layers/<class in snake case, numbered>/vars with its arrays "0", "1", ... in get_weights order,
// and optimizer/vars with the iteration count, the learning rate (unless a schedule gives it) and
// the slots, in the order Keras's optimizers make them (Adam: each variable's momentum and
// velocity, then every velocity_hat; RMSprop: every velocity, then every momentum, then every
// average gradient), over the trainable variables in Keras's layer order.
#include <ctime>
#include <map>

#include <nlohmann/json.hpp>

#include "io/binary.hpp"
#include "io/keras_compile.hpp"
#include "io/keras_config.hpp"
#include "nn/layer_kinds.hpp"
#include "nn/optimizer_math.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"
#include "onefit/model.hpp"
#include "program/training_program.hpp"
#if ONEFIT_HAVE_KERAS_FILES
#include "io/h5_file.hpp"
#include "io/zip_archive.hpp"
#endif

namespace onefit {

bool is_keras_file(const std::string& path) { return path.size() > 6 && path.ends_with(".keras"); }

#if ONEFIT_HAVE_KERAS_FILES
namespace {

using io::H5Reader;
using io::H5Writer;
using io::compiled_program;
using io::keras_slot_groups;
using nlohmann::ordered_json;

constexpr size_t kMaxEntryBytes = size_t{1} << 36;  // 64 GiB: larger than any model onefit trains

// Each trainable array of the model in Keras's order (the layers in `order`): where it starts in a
// slot vector of ParamOrder::keras, and its size.
std::vector<std::pair<int64_t, Shape>> trainable_arrays(const TrainingProgram& program, const std::vector<std::string>& names,
                                                        const std::vector<size_t>& order) {
    std::map<std::string, std::vector<const ProgramOp*>> ops_of;  // a layer's ops, by its name (one pass)
    for (const ProgramOp& op : program.ops) ops_of[op.layer_name].push_back(&op);
    std::vector<std::pair<int64_t, Shape>> arrays;
    for (size_t i : order) {
        const auto it = ops_of.find(names[i]);
        if (it == ops_of.end()) continue;
        for (const ProgramOp* op : it->second)
            for (const ParamRef& ref : op->params)
                if (ref.trainable) arrays.emplace_back(ref.offset, ref.shape);
    }
    return arrays;
}

// Where each layer's arrays go in model.weights.h5: the model's layers in Keras's order (`order`),
// each with its group ("layers/dense_1") and its arrays' specs.
struct KerasLayout {
    std::vector<std::string> names;   // by model layer
    std::vector<nn::LayerSpec> specs;  // by model layer
    std::vector<std::string> groups;   // by position in order
    bool functional = false;

    KerasLayout(const Sequential& model, const std::vector<size_t>& order)
        : names(model.layer_names()), specs(nn::layer_specs(model.input_shapes(), model.layers(), names)),
          functional(nn::is_graph(model.layers())) {
        std::vector<Layer> ordered;
        for (size_t i : order) ordered.push_back(model.layers()[i]);
        groups = io::keras_weight_groups(ordered, functional ? model.input_shapes().size() : 0);
    }
};

// optimizer/vars starts with the iteration count and, unless a schedule gives it, the learning rate.
size_t optimizer_header_vars(const Optimizer& o) { return o.learning_rate_schedule.kind == ScheduleKind::constant ? 2 : 1; }

std::string weights_bytes(const Sequential& model, const std::vector<size_t>& order) {
    const KerasLayout layout(model, order);
    const std::vector<std::string>& names = layout.names;
    const std::vector<nn::LayerSpec>& specs = layout.specs;
    const std::vector<Tensor> weights = model.get_weights();
    std::vector<size_t> first(specs.size() + 1, 0);  // layer i's arrays start at weights[first[i]]
    for (size_t i = 0; i < specs.size(); ++i) first[i + 1] = first[i] + specs[i].params.size();
    H5Writer h5;
    if (layout.functional) h5.group("layers/input_layer/vars", "input_layer");
    for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        h5.group(layout.groups[k] + "/vars", names[i]);
        for (size_t p = 0; p < specs[i].params.size(); ++p) {
            const Tensor& w = weights[first[i] + p];
            h5.floats(layout.groups[k] + "/vars/" + std::to_string(p), w.shape(), w.data());
        }
    }
    if (const TrainingProgram* program = compiled_program(model)) {
        const Optimizer& o = program->optimizer;
        h5.group("optimizer/vars", optimizer_name(o.kind));
        int next = 0;
        h5.int64_scalar("optimizer/vars/" + std::to_string(next++), program->optimizer_step);
        if (optimizer_header_vars(o) == 2)
            h5.floats("optimizer/vars/" + std::to_string(next++), {}, &o.learning_rate);
        const int64_t n = program->param_count();
        std::vector<float> slot(static_cast<size_t>(n));
        const auto arrays = trainable_arrays(*program, names, order);
        for (const std::vector<int>& group : keras_slot_groups(o)) {
            std::vector<std::vector<float>> keras(group.size(), std::vector<float>(static_cast<size_t>(n)));
            for (size_t g = 0; g < group.size(); ++g)
                reorder_params(*program, ParamOrder::program, program->optimizer_slots.data() + group[g] * n, ParamOrder::keras,
                               keras[g].data());
            for (const auto& [offset, shape] : arrays)
                for (size_t g = 0; g < group.size(); ++g)
                    h5.floats("optimizer/vars/" + std::to_string(next++), shape, keras[g].data() + offset);
        }
    }
    h5.group("vars", layout.functional ? "functional" : "sequential");
    return h5.bytes();
}

// The file's arrays into `model` (built from the same layers, in `order`); its optimizer state too
// when the model is compiled and the file holds a built optimizer's variables.
void read_weights(Sequential& model, const H5Reader& h5, const std::vector<size_t>& order) {
    const std::vector<Layer>& layers = model.layers();
    const KerasLayout layout(model, order);
    const std::vector<std::string>& names = layout.names;
    const std::vector<std::string>& groups = layout.groups;
    const std::vector<nn::LayerSpec>& specs = layout.specs;
    std::vector<std::vector<Tensor>> by_layer(layers.size());
    for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        const std::string vars = groups[k] + "/vars";
        const std::string what = "layer '" + names[i] + "' (" + nn::layer_kind(layers[i].kind).keras_class + ")";
        const size_t want = specs[i].params.size();
        const size_t have = h5.has_group(vars) ? h5.members(vars).size() : 0;
        if (have != want)
            throw file_error(h5.file(), 0, 0, "'" + vars + "' holds " + std::to_string(have) + " arrays, " + what + " has " +
                                                  std::to_string(want) + " (a different model's weights?)");
        for (size_t p = 0; p < want; ++p) {
            Tensor t = h5.array(vars + "/" + std::to_string(p));
            if (t.shape() != specs[i].params[p].shape)
                throw file_error(h5.file(), 0, 0, "'" + vars + "/" + std::to_string(p) + "' has shape " + shape_to_string(t.shape()) +
                                                      ", " + what + "'s " + specs[i].params[p].name + " is " +
                                                      shape_to_string(specs[i].params[p].shape));
            by_layer[i].push_back(std::move(t));
        }
    }
    std::vector<Tensor> weights;
    for (auto& arrays : by_layer)
        for (Tensor& t : arrays) weights.push_back(std::move(t));
    model.set_weights(weights);

    const TrainingProgram* compiled = compiled_program(model);
    if (!compiled || !h5.has_group("optimizer/vars")) return;
    TrainingProgram& program = model.program_state();
    const Optimizer& o = program.optimizer;
    const auto arrays = trainable_arrays(program, names, order);
    const auto slot_groups = keras_slot_groups(o);
    size_t slots = 0;
    for (const auto& g : slot_groups) slots += g.size();
    const size_t base = optimizer_header_vars(o);
    const size_t have = h5.members("optimizer/vars").size(), want = base + slots * arrays.size();
    if (have <= base) return;  // an optimizer Keras never built (saved before training): nothing to restore
    if (have != want)
        throw file_error(h5.file(), 0, 0, "'optimizer/vars' holds " + std::to_string(have) + " arrays; onefit's " +
                                              optimizer_name(o.kind) + " over this model keeps " + std::to_string(want));
    const int64_t step = h5.integer("optimizer/vars/0");
    if (step < 0) throw file_error(h5.file(), 0, 0, "'optimizer/vars/0' (the iteration count) is negative");
    const int64_t n = program.param_count();
    size_t next = base;
    for (const std::vector<int>& group : slot_groups) {
        std::vector<std::vector<float>> keras(group.size(), std::vector<float>(static_cast<size_t>(n), 0.0f));
        for (const auto& [offset, shape] : arrays)
            for (size_t g = 0; g < group.size(); ++g) {
                const int64_t size = shape_elements(shape);
                const std::string path = "optimizer/vars/" + std::to_string(next++);
                const Tensor t = h5.array(path);
                if (t.size() != size)
                    throw file_error(h5.file(), 0, 0, "'" + path + "' holds " + std::to_string(t.size()) + " values, its variable " +
                                                          std::to_string(size));
                std::copy(t.data(), t.data() + size, keras[g].data() + offset);
            }
        for (size_t g = 0; g < group.size(); ++g)
            reorder_params(program, ParamOrder::keras, keras[g].data(), ParamOrder::program,
                           program.optimizer_slots.data() + group[g] * n);
    }
    program.optimizer_step = step;
}

std::string date_saved() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d@%H:%M:%S", &utc);
    return text;
}

}  // namespace

void save_keras(const Sequential& model, const std::string& path) {
    if (model.layers().empty()) throw Error(path + ": cannot save a model without layers");
    const std::vector<size_t> order = io::keras_layer_order(model.layers());
    ordered_json metadata = {{"keras_version", "3.0.0"}, {"date_saved", date_saved()}};
    if (!model.class_names.empty()) metadata["onefit"] = {{"class_names", model.class_names}};
    const std::string config = io::keras_model_json(model, order).dump();
    const std::string weights = weights_bytes(model, order);
    write_file_atomically(path, io::zip_bytes({{"metadata.json", metadata.dump()}, {"config.json", config}, {"model.weights.h5", weights}}));
}

Sequential load_keras(const std::string& path, bool compile) {
    const std::map<std::string, std::string> files = io::read_zip(path, kMaxEntryBytes);
    for (const char* name : {"config.json", "model.weights.h5"})
        if (!files.count(name)) throw file_error(path, 0, 0, std::string("has no ") + name + " (is it a Keras 3 .keras file?)");
    const io::JsonFile config(path + "/config.json", files.at("config.json"));
    io::KerasModelConfig read = io::read_keras_model_json(config, compile);
    Sequential model = Sequential::with_inputs(read.input_shapes);
    model.name = read.name;
    model.input_names = read.input_names;
    for (Layer& layer : read.layers) model.add(std::move(layer));
    config.named("config.layers", [&] { return nn::layer_specs(model.input_shapes(), model.layers(), model.layer_names()).size(); });
    if (read.compile)
        config.named("compile_config", [&] {
            model.compile(read.compile->optimizer, read.compile->loss, CompileOptions{read.compile->metrics});
            return 0;
        });
    if (files.count("metadata.json")) {
        const io::JsonFile metadata(path + "/metadata.json", files.at("metadata.json"));
        const io::json& root = metadata.root();
        if (root.contains("onefit") && root["onefit"].is_object() && root["onefit"].contains("class_names")) {
            const io::json& names = root["onefit"]["class_names"];
            for (size_t i = 0; names.is_array() && i < names.size(); ++i)
                if (names[i].is_string()) model.class_names.push_back(names[i].get<std::string>());
        }
    }
    const H5Reader h5(files.at("model.weights.h5"), path + "/model.weights.h5");
    read_weights(model, h5, io::keras_layer_order(model.layers()));
    return model;
}

void save_weights_h5(const Sequential& model, const std::string& path) {
    if (model.layers().empty()) throw Error(path + ": cannot save the weights of a model without layers");
    write_file_atomically(path, weights_bytes(model, io::keras_layer_order(model.layers())));
}

void load_weights_h5(Sequential& model, const std::string& path) {
    const H5Reader h5(read_binary_file(path, "the weights file"), path);
    read_weights(model, h5, io::keras_layer_order(model.layers()));
}

#else  // built with ONEFIT_KERAS_FILES=OFF

namespace {
[[noreturn]] void no_keras_files(const std::string& path) {
    throw Error(path + ": this onefit was built without Keras files (ONEFIT_KERAS_FILES=OFF: no libhdf5/libzip); "
                       "save a folder instead, or rebuild with libhdf5-dev and libzip-dev");
}
}  // namespace
void save_keras(const Sequential&, const std::string& path) { no_keras_files(path); }
Sequential load_keras(const std::string& path, bool) { no_keras_files(path); }
void save_weights_h5(const Sequential&, const std::string& path) { no_keras_files(path); }
void load_weights_h5(Sequential&, const std::string& path) { no_keras_files(path); }
#endif

}  // namespace onefit
