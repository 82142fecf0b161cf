// save_model / load_model: a model as a folder of four files (layout in onefit/io.hpp).
// The folder is replaced as a whole: the files go into a temporary sibling folder that is then
// swapped with the target by renameat2(RENAME_EXCHANGE), so a crash at any moment leaves one
// complete save (tests/io/crash_safety_test.cpp kills a saving process at random to check it).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/overloaded.hpp"
#include "io/binary.hpp"
#include "io/json_file.hpp"
#include "io/keras_config.hpp"
#include "io/layer_json.hpp"
#include "io/parse.hpp"
#include "io/schedule_json.hpp"
#include "nn/layer_kinds.hpp"
#include "nn/optimizer_math.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"
#include "onefit/model.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using io::JsonFile;
using io::read_text;

constexpr const char* kFormat = "onefit-model";
constexpr int kFormatVersion = 1;
constexpr const char* kSlotOrderKeras = "keras";  // optimizer.safetensors: how slots are ordered
// The files in the order they are written: weights first, state.json (the commit record) last.
constexpr const char* kWeightsFile = "model.safetensors";
constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kStateFile = "state.json";

using io::shortest;

std::string join(const std::string& dir, const char* file) { return dir + "/" + file; }

// ---- Writing ----

ordered_json optimizer_fields_json(const Optimizer& o);

ordered_json optimizer_json(const Optimizer& o) {
    ordered_json j = optimizer_fields_json(o);
    if (o.learning_rate_schedule.kind != ScheduleKind::constant)
        j["learning_rate_schedule"] = io::schedule_json(o.learning_rate_schedule);
    return j;
}

ordered_json optimizer_fields_json(const Optimizer& o) {
    return {{"name", optimizer_name(o.kind)},
            {"learning_rate", shortest(o.learning_rate)},
            {"beta_1", shortest(o.beta_1)},
            {"beta_2", shortest(o.beta_2)},
            {"epsilon", shortest(o.epsilon)},
            {"amsgrad", o.amsgrad},
            {"weight_decay", shortest(o.weight_decay)},
            {"momentum", shortest(o.momentum)},
            {"nesterov", o.nesterov},
            {"rho", shortest(o.rho)},
            {"centered", o.centered},
            {"initial_accumulator_value", shortest(o.initial_accumulator_value)},
            {"clipnorm", shortest(o.clipnorm)},
            {"global_clipnorm", shortest(o.global_clipnorm)},
            {"clipvalue", shortest(o.clipvalue)}};
}

std::string config_text(const Sequential& model, const TrainingProgram* program, const std::string& save_id) {
    ordered_json config;
    config["format"] = kFormat;
    config["format_version"] = kFormatVersion;
    config["save_id"] = save_id;
    config["input_shape"] = model.input_shape();
    if (model.input_shapes().size() > 1) config["input_shapes"] = model.input_shapes();  // (each input's)
    if (!model.input_names.empty()) config["input_names"] = model.all_input_names();
    config["seed"] = model.seed();
    if (!model.name.empty()) config["name"] = model.name;
    if (!model.class_names.empty()) config["class_names"] = model.class_names;
    const std::vector<std::string> names = default_layer_names(model.layers());
    config["layers"] = ordered_json::array();
    for (size_t i = 0; i < model.layers().size(); ++i) config["layers"].push_back(io::layer_json(model.layers()[i], names, i));
    if (program) {
        config["loss"] = {{"name", loss_name(program->loss.kind)},
                          {"from_logits", program->loss.from_logits},
                          {"delta", shortest(program->loss.delta)},
                          {"label_smoothing", shortest(program->loss.label_smoothing)}};
        config["optimizer"] = optimizer_json(program->optimizer);
        config["metrics"] = program->metric_names;
    } else {  // saved before compile(): architecture and weights only, as Keras allows
        config["loss"] = nullptr;
        config["optimizer"] = nullptr;
        config["metrics"] = ordered_json::array();
    }
    return config.dump(2) + "\n";
}

// The temporary sibling folder's name: hidden, and unique per process and call.
std::atomic<unsigned> folder_counter{0};

void fsync_folder(const std::string& folder) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// Removes `folder` and the plain files in it (all a save folder holds).
void remove_folder(const std::string& folder) {
    if (DIR* d = ::opendir(folder.c_str())) {
        while (const dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name != "." && name != "..") ::unlink((folder + "/" + name).c_str());
        }
        ::closedir(d);
    }
    ::rmdir(folder.c_str());
}

std::vector<std::string> folder_entries(const std::string& folder) {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(folder.c_str())) {
        while (const dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name != "." && name != "..") names.push_back(name);
        }
        ::closedir(d);
    }
    return names;
}

// Removes what saves of `base` killed mid-way left in `parent`: ".BASE.saving.PID.N" folders
// whose process is gone. A live PID (a save running now, or a reused number) is left alone.
void remove_stale_saves(const std::string& parent, const std::string& base) {
    const std::string prefix = "." + base + ".saving.";
    for (const std::string& name : folder_entries(parent)) {
        if (name.rfind(prefix, 0) != 0) continue;
        long pid = 0;
        const char* first = name.data() + prefix.size();
        const auto [end, ec] = std::from_chars(first, name.data() + name.size(), pid);
        if (ec != std::errc{} || end == first || *end != '.' || pid <= 0) continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        remove_folder(parent + "/" + name);
    }
}

bool is_model_file(const std::string& name) {
    return name == kWeightsFile || name == kOptimizerFile || name == kConfigFile || name == kStateFile;
}

using Files = std::vector<std::pair<const char*, std::string>>;

// The fallback where folders cannot be swapped: one file at a time, weights first.
void write_in_place(const std::string& dir, const Files& files) {
    for (const auto& [name, bytes] : files) write_file_atomically(join(dir, name), bytes);
}

void write_folder(const std::string& dir_argument, const Files& files) {
    check_model_folder(dir_argument);
    std::string dir = dir_argument;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.empty()) throw Error("save_model: the folder name is empty");
    struct stat st {};
    const bool exists = ::stat(dir.c_str(), &st) == 0;
    if (exists && !S_ISDIR(st.st_mode))
        throw file_error(dir, 0, 0, "cannot save the model: it is a file, not a folder; choose a folder name");
    if (exists) {  // a symbolic link to a folder: save into the folder it names
        char* real = ::realpath(dir.c_str(), nullptr);
        if (real) dir = real, std::free(real);
    }
    const size_t slash = dir.find_last_of('/');
    const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
    const std::string base = slash == std::string::npos ? dir : dir.substr(slash + 1);
    remove_stale_saves(parent, base);
    const std::string temp = (slash == std::string::npos ? "" : parent + "/") + "." + base + ".saving." +
                             std::to_string(::getpid()) + "." + std::to_string(folder_counter++);
    if (::mkdir(temp.c_str(), 0777) != 0) {
        if (errno == ENOENT)
            throw file_error(dir, 0, 0, "cannot save the model: the folder " + parent + " does not exist");
        throw file_error(dir, 0, 0, std::string("cannot save the model: creating ") + temp + " failed (" +
                                        std::strerror(errno) + ")");
    }
    try {
        if (exists) ::chmod(temp.c_str(), st.st_mode & 07777);  // the folder keeps its permissions
        for (const auto& [name, bytes] : files) write_file_atomically(join(temp, name), bytes);
        if (!exists) {
            if (::rename(temp.c_str(), dir.c_str()) != 0)
                throw file_error(dir, 0, 0, std::string("cannot save the model: renaming ") + temp + " failed (" +
                                                std::strerror(errno) + ")");
            fsync_folder(parent);
            return;
        }
        // Other files in the folder (a CSV log, notes, dotfiles) move into the new folder by hard
        // link; the swapped-out folder's own links are then removed with it.
        for (const std::string& name : folder_entries(dir)) {
            if (is_model_file(name)) continue;
            if (::link(join(dir, name.c_str()).c_str(), join(temp, name.c_str()).c_str()) != 0) {
                remove_folder(temp);  // e.g. a subfolder (.git): keep everything, replace file by file
                return write_in_place(dir, files);
            }
        }
        if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
            const int error = errno;
            remove_folder(temp);
            if (error == EINVAL || error == ENOSYS || error == ENOTSUP) return write_in_place(dir, files);
            throw file_error(dir, 0, 0, std::string("cannot save the model: swapping in the new folder failed (") +
                                            std::strerror(error) + "); the previous save is unchanged");
        }
    } catch (...) {
        remove_folder(temp);
        throw;
    }
    fsync_folder(parent);
    remove_folder(temp);  // now holds the previous save
}

// ---- Reading ----

Optimizer read_optimizer(const JsonFile& f, const json& spec) {
    Optimizer o = f.named("optimizer.name", [&] { return optimizer_from_name(f.string(spec, "name", "optimizer.name")); });
    o.learning_rate = f.number(spec, "learning_rate", "optimizer.learning_rate");
    o.beta_1 = f.number(spec, "beta_1", "optimizer.beta_1");
    o.beta_2 = f.number(spec, "beta_2", "optimizer.beta_2");
    o.epsilon = f.number(spec, "epsilon", "optimizer.epsilon");
    o.amsgrad = f.boolean(spec, "amsgrad", "optimizer.amsgrad");
    o.weight_decay = f.number(spec, "weight_decay", "optimizer.weight_decay");
    o.momentum = f.number(spec, "momentum", "optimizer.momentum");
    o.nesterov = f.boolean(spec, "nesterov", "optimizer.nesterov");
    o.rho = f.number(spec, "rho", "optimizer.rho");
    o.centered = f.boolean(spec, "centered", "optimizer.centered");
    o.initial_accumulator_value = f.number(spec, "initial_accumulator_value", "optimizer.initial_accumulator_value");
    // Clipping came later: a model saved before has none.
    for (auto [key, field] : {std::pair{"clipnorm", &Optimizer::clipnorm}, std::pair{"global_clipnorm", &Optimizer::global_clipnorm},
                              std::pair{"clipvalue", &Optimizer::clipvalue}})
        if (spec.contains(key)) o.*field = f.number(spec, key, std::string("optimizer.") + key);
    if (spec.contains("learning_rate_schedule")) {  // (came later too)
        const std::string at = "optimizer.learning_rate_schedule";
        const json& schedule = f.get(spec, "learning_rate_schedule", at);
        o.learning_rate_schedule = io::read_schedule(f, schedule, at);
    }
    return o;
}

std::string metadata_value(const std::map<std::string, std::string>& metadata, const std::string& key,
                           const std::string& path) {
    const auto it = metadata.find(key);
    if (it == metadata.end()) throw file_error(path, 0, 0, "the safetensors metadata has no '" + key + "'");
    return it->second;
}

// Files of an interrupted in-place save disagree on the save id: say so instead of mixing them.
void check_save_id(const std::string& expected, const std::string& got, const std::string& path) {
    if (got != expected)
        throw file_error(path, 0, 0,
                         "belongs to another save than config.json (save_id " + printable(got) + ", not " +
                             printable(expected) + "); a save into this folder was interrupted: save again");
}

TrainingState read_state(const std::string& dir, std::string* save_id) {
    const JsonFile f(join(dir, kStateFile));
    TrainingState state;
    const json& epoch = f.get(f.root(), "epoch", "epoch");
    state.epoch = epoch.is_null() ? -1 : f.integer(f.root(), "epoch", "epoch", 0);
    state.optimizer_step = f.integer(f.root(), "optimizer_step", "optimizer_step", 0);
    state.fit_seed = f.unsigned_integer(f.root(), "fit_seed", "fit_seed");
    if (save_id) *save_id = f.string(f.root(), "save_id", "save_id");
    return state;
}

std::string new_save_id() {
    std::random_device device;
    char text[17];
    std::snprintf(text, sizeof text, "%08x%08x", device(), device());
    return text;
}

}  // namespace

void save_model(const Sequential& model, const std::string& dir, int64_t epoch, std::optional<uint64_t> fit_seed) {
    if (is_keras_file(dir)) return save_keras(model, dir);
    const TrainingProgram* program = io::compiled_program(model);  // null: no loss, optimizer or state to save
    const std::string save_id = new_save_id();
    // Everything is serialised before the disk is touched, so a bad name fails with nothing written.
    const std::vector<std::string> names = default_layer_names(model.layers());
    const std::vector<Tensor> weights = model.get_weights();
    std::vector<std::pair<std::string, Tensor>> named;
    size_t next = 0;
    const std::vector<nn::LayerSpec> specs = nn::layer_specs(model.input_shapes(), model.layers(), names);
    for (size_t i = 0; i < specs.size(); ++i)
        for (const nn::ParamSpec& p : specs[i].params) named.emplace_back(names[i] + "/" + p.name, weights.at(next++));
    const std::map<std::string, std::string> weights_meta = {{"format", "pt"}, {"onefit_save_id", save_id}};
    Files files;
    files.emplace_back(kWeightsFile, serialize_safetensors(named, weights_meta, join(dir, kWeightsFile)));
    if (program) {
        const int64_t n = program->param_count();
        const int slots = nn::optimizer_slot_count(program->optimizer);
        std::vector<std::pair<std::string, Tensor>> state;
        for (int k = 0; k < slots; ++k) {  // in Keras order: independent of the program's layouts
            Tensor slot({n});
            reorder_params(*program, ParamOrder::program, program->optimizer_slots.data() + k * n, ParamOrder::keras,
                           slot.data());
            state.emplace_back("slot_" + std::to_string(k), std::move(slot));
        }
        const std::map<std::string, std::string> meta = {{"optimizer", optimizer_name(program->optimizer.kind)},
                                                         {"slot_order", kSlotOrderKeras},
                                                         {"optimizer_step", std::to_string(program->optimizer_step)},
                                                         {"param_count", std::to_string(n)},
                                                         {"onefit_save_id", save_id}};
        files.emplace_back(kOptimizerFile, serialize_safetensors(state, meta, join(dir, kOptimizerFile)));
    }
    files.emplace_back(kConfigFile, config_text(model, program, save_id));
    ordered_json state;
    state["epoch"] = epoch >= 0 ? json(epoch) : json(nullptr);
    state["optimizer_step"] = program ? program->optimizer_step : 0;
    state["fit_seed"] = fit_seed.value_or(model.seed());
    state["save_id"] = save_id;
    files.emplace_back(kStateFile, state.dump(2) + "\n");
    write_folder(dir, files);
}

void Sequential::save(const std::string& dir) const { save_model(*this, dir); }

void check_model_folder(const std::string& dir) {
    struct stat st {};
    if (is_keras_file(dir)) {  // a file: not a folder, in a folder that exists
        if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            throw file_error(dir, 0, 0, "is a folder; a .keras model is one file");
        const size_t slash = dir.rfind('/');
        const std::string parent = slash == std::string::npos ? "." : dir.substr(0, slash + 1);
        if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            throw file_error(dir, 0, 0, "cannot be saved: its folder does not exist");
        return;
    }
    if (::stat(dir.c_str(), &st) != 0) return;  // new
    if (!S_ISDIR(st.st_mode))
        throw file_error(dir, 0, 0, "cannot save the model: it is a file, not a folder; choose a folder name");
    if (is_ensemble(dir))
        throw file_error(dir, 0, 0, "holds an ensemble (ensemble.json): saving one model there would leave the "
                                    "ensemble in charge; save it to another folder, or remove this one first");
    const std::string config = join(dir, kConfigFile);
    if (::stat(config.c_str(), &st) != 0) return;
    bool ours = false;
    try {
        const json c = json::parse(read_text(config));
        ours = c.is_object() && c.contains("format") && c["format"] == kFormat;
    } catch (const std::exception&) {
    }
    if (!ours)
        throw file_error(config, 0, 0, "is not a onefit model's config.json, and saving a model into " + dir +
                                           " would replace it; choose another folder");
}

TrainingState load_training_state(const std::string& dir) { return read_state(dir, nullptr); }

Sequential load_model(const std::string& dir) {
    if (is_keras_file(dir)) return load_keras(dir);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw file_error(dir, 0, 0, "cannot load a model: no such folder (save_model writes one)");
    const JsonFile f(join(dir, kConfigFile));
    const json& c = f.root();
    const std::string format = f.string(c, "format", "format");
    if (format != kFormat) throw f.error("format", "is '" + printable(format) + "', not 'onefit-model'");
    const int64_t version = f.integer(c, "format_version", "format_version", 0);
    if (version != kFormatVersion)
        throw f.error("format_version", "is " + std::to_string(version) + "; this onefit reads version 1 (a newer onefit wrote it?)");
    const std::string save_id = f.string(c, "save_id", "save_id");
    const Shape input_shape = f.integers(c, "input_shape", "input_shape", 0, 1);
    if (input_shape.size() > 3)
        throw f.error("input_shape", "must be [FEATURES] or [HEIGHT, WIDTH, CHANNELS], got " + shape_to_string(input_shape));
    std::vector<Shape> input_shapes{input_shape};
    if (c.contains("input_shapes")) {  // (optional: a model of several inputs)
        const json& shapes = c["input_shapes"];
        if (!shapes.is_array() || shapes.size() < 2) throw f.error("input_shapes", "must list two or more input shapes");
        input_shapes.clear();
        for (size_t k = 0; k < shapes.size(); ++k) {
            const std::string key = "input_shapes[" + std::to_string(k) + "]";
            Shape shape;
            for (const json& d : shapes[k].is_array() ? shapes[k] : json::array())
                shape.push_back(d.is_number_integer() ? d.get<int64_t>() : 0);
            if (!shapes[k].is_array() || shape.empty() || shape.size() > 3 ||
                std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 1; }))
                throw f.error(key, "must be 1 to 3 positive integers, got " + printable(shapes[k].dump()));
            input_shapes.push_back(shape);
        }
        if (joined_input_shape(input_shapes) != input_shape)
            throw f.error("input_shapes", "do not add up to input_shape " + shape_to_string(input_shape));
    }
    Sequential model = Sequential::with_inputs(input_shapes, f.unsigned_integer(c, "seed", "seed"));
    if (c.contains("name")) model.name = f.string(c, "name", "name");  // (optional: the default name is not written)
    if (c.contains("input_names")) {  // (optional: written when the inputs were named)
        const json& names = c["input_names"];
        if (!names.is_array() || names.size() != input_shapes.size())
            throw f.error("input_names", "must list one name per input (" + std::to_string(input_shapes.size()) + ")");
        for (size_t k = 0; k < names.size(); ++k) {
            if (!names[k].is_string() || names[k].get<std::string>().empty())
                throw f.error("input_names[" + std::to_string(k) + "]", "must be a non-empty name");
            model.input_names.push_back(names[k].get<std::string>());
        }
    }
    if (c.contains("class_names")) {  // (optional: models of numbered labels have none)
        const json& names = c["class_names"];
        if (!names.is_array() || names.empty()) throw f.error("class_names", "must be a non-empty array of names");
        for (size_t i = 0; i < names.size(); ++i)
        {
            const std::string key = "class_names[" + std::to_string(i) + "]";
            if (!names[i].is_string()) throw f.error(key, "must be a string");
            model.class_names.push_back(names[i].get<std::string>());
        }
    }
    const json& layers = f.get(c, "layers", "layers");
    if (!layers.is_array() || layers.empty()) throw f.error("layers", "must be a non-empty array");
    std::vector<Layer> read;
    for (size_t i = 0; i < layers.size(); ++i) read.push_back(io::read_layer(f, layers[i], "layers[" + std::to_string(i) + "]", read));
    const std::vector<std::string> layer_names = default_layer_names(read);
    for (size_t i = 0; i < layers.size(); ++i) {
        io::read_layer_inputs(f, layers[i], "layers[" + std::to_string(i) + "]", layer_names, i, read[i]);
        model.add(std::move(read[i]));
    }

    // Weights: by name, each checked against the layer that needs it.
    const std::string weights_path = join(dir, kWeightsFile);
    std::map<std::string, std::string> weights_meta;
    const auto tensors = read_safetensors(weights_path, &weights_meta);
    check_save_id(save_id, metadata_value(weights_meta, "onefit_save_id", weights_path), weights_path);
    std::map<std::string, const Tensor*> by_name;
    for (const auto& [name, tensor] : tensors) by_name[name] = &tensor;
    std::vector<Tensor> weights;
    const std::vector<nn::LayerSpec> specs = f.named("layers", [&] {
        return nn::layer_specs(model.input_shapes(), model.layers(), default_layer_names(model.layers()));
    });
    for (size_t i = 0; i < specs.size(); ++i) {
        const std::string& layer = model.layers()[i].name;
        for (const nn::ParamSpec& p : specs[i].params) {
            const std::string name = layer + "/" + p.name;
            const auto it = by_name.find(name);
            if (it == by_name.end()) throw file_error(weights_path, 0, 0, "has no tensor '" + name + "' (layer '" + layer + "')");
            if (it->second->shape() != p.shape)
                throw file_error(weights_path, 0, 0,
                                 "tensor '" + name + "' has shape " + shape_to_string(it->second->shape()) + ", layer '" +
                                     layer + "' needs " + shape_to_string(p.shape));
            weights.push_back(*it->second);
            by_name.erase(it);
        }
    }
    if (!by_name.empty())
        throw file_error(weights_path, 0, 0, "has tensor '" + by_name.begin()->first + "', which no layer in config.json uses");

    const json& loss_spec = f.get(c, "loss", "loss");
    if (loss_spec.is_null()) {  // saved before compile()
        model.set_weights(weights);
        return model;
    }
    Loss loss = f.named("loss.name", [&] { return loss_from_name(f.string(loss_spec, "name", "loss.name")); });
    loss.from_logits = f.boolean(loss_spec, "from_logits", "loss.from_logits");
    loss.delta = f.number(loss_spec, "delta", "loss.delta");
    if (loss_spec.contains("label_smoothing"))  // (came later: older models have none)
        loss.label_smoothing = f.number(loss_spec, "label_smoothing", "loss.label_smoothing");
    const Optimizer optimizer = read_optimizer(f, f.get(c, "optimizer", "optimizer"));
    const json& metrics_spec = f.get(c, "metrics", "metrics");
    if (!metrics_spec.is_array()) throw f.error("metrics", "must be an array of names");
    std::vector<std::string> metrics;
    for (size_t i = 0; i < metrics_spec.size(); ++i) {
        if (!metrics_spec[i].is_string()) throw f.error("metrics[" + std::to_string(i) + "]", "must be a string");
        metrics.push_back(metrics_spec[i].get<std::string>());
    }
    f.named("metrics", [&] { model.compile(optimizer, loss, CompileOptions{metrics}); return 0; });
    model.set_weights(weights);

    // Optimizer state, in Keras order; saves without "slot_order" (onefit 0.1.0) hold it in
    // that version's program layout.
    TrainingProgram& program = model.program_state();
    const std::string optimizer_path = join(dir, kOptimizerFile);
    std::map<std::string, std::string> optimizer_meta;
    const auto slots = read_safetensors(optimizer_path, &optimizer_meta);
    check_save_id(save_id, metadata_value(optimizer_meta, "onefit_save_id", optimizer_path), optimizer_path);
    const auto order_entry = optimizer_meta.find("slot_order");
    if (order_entry != optimizer_meta.end() && order_entry->second != kSlotOrderKeras)
        throw file_error(optimizer_path, 0, 0,
                         "has slot_order " + printable(order_entry->second) + "; this onefit reads \"" +
                             kSlotOrderKeras + "\" (a newer onefit wrote it?)");
    const ParamOrder saved_order = order_entry == optimizer_meta.end() ? ParamOrder::legacy_program : ParamOrder::keras;
    const int64_t n = program.param_count();
    const size_t want = static_cast<size_t>(nn::optimizer_slot_count(optimizer));
    if (slots.size() != want)
        throw file_error(optimizer_path, 0, 0,
                         "holds " + std::to_string(slots.size()) + " slots, optimizer '" + optimizer_name(optimizer.kind) +
                             "' in config.json keeps " + std::to_string(want));
    for (size_t k = 0; k < want; ++k) {
        const std::string name = "slot_" + std::to_string(k);
        const auto it = std::find_if(slots.begin(), slots.end(), [&](const auto& s) { return s.first == name; });
        if (it == slots.end()) throw file_error(optimizer_path, 0, 0, "has no tensor '" + name + "'");
        if (it->second.shape() != Shape{n})
            throw file_error(optimizer_path, 0, 0,
                             "tensor '" + name + "' has shape " + shape_to_string(it->second.shape()) + ", the model's " +
                                 std::to_string(n) + " parameters need (" + std::to_string(n) + ")");
        reorder_params(program, saved_order, it->second.data(), ParamOrder::program,
                       program.optimizer_slots.data() + static_cast<int64_t>(k) * n);
    }
    std::string state_id;
    const TrainingState state = read_state(dir, &state_id);
    check_save_id(save_id, state_id, join(dir, kStateFile));
    const std::string step_text = metadata_value(optimizer_meta, "optimizer_step", optimizer_path);
    if (step_text != std::to_string(state.optimizer_step))
        throw file_error(optimizer_path, 0, 0,
                         "metadata optimizer_step " + printable(step_text) + " disagrees with state.json's " +
                             std::to_string(state.optimizer_step));
    program.optimizer_step = state.optimizer_step;
    return model;
}

}  // namespace onefit
