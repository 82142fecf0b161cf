// Keras 3's config.json of a model (keras.saving.serialize_keras_object): a Sequential or a
// Functional model of onefit's layer kinds, each layer's Keras class and config, and the compile
// config (loss, optimizer, metrics), both ways. The layer arguments come from each kind's
// declared attributes (their names are Keras's), so a new kind needs nothing here.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_file.hpp"
#include "io/keras_compile.hpp"
#include "onefit/layers.hpp"
#include "onefit/losses.hpp"
#include "onefit/optimizers.hpp"
#include "onefit/tensor.hpp"

namespace onefit {
class Sequential;
struct TrainingProgram;
}

namespace onefit::io {

// The model's compiled program, or null before compile() (what a save then leaves out).
const TrainingProgram* compiled_program(const Sequential& model);

// The order Keras keeps a model's layers in (model.layers, config.json, the weights file and the
// optimizer's variables follow it): a chain's own; a Functional model's by depth from the output,
// deepest first, ties in the order a depth-first walk from the output meets them (Keras's
// map_graph). Indices into `layers`.
std::vector<size_t> keras_layer_order(const std::vector<Layer>& layers);

// Each layer's group in model.weights.h5 ("layers/dense", "layers/dense_1", ...): its class in
// snake case, numbered in Keras's order; a Functional model's InputLayers (input_layers of them)
// take "input_layer", "input_layer_1", ... first.
// In the order of `ordered` (the layers already in Keras's order).
std::vector<std::string> keras_weight_groups(const std::vector<Layer>& ordered, size_t input_layers);

// config.json for `model`, its layers in `order` (keras_layer_order).
nlohmann::ordered_json keras_model_json(const Sequential& model, const std::vector<size_t>& order);

struct KerasModelConfig {
    std::string name;  // the model's (config.name)
    std::vector<Shape> input_shapes;  // one, or a Functional model's several (in its call order)
    std::vector<std::string> input_names;  // a Functional model's InputLayers' names, in that order
    std::vector<Layer> layers;  // in the file's (Keras's) order, named, with their inputs
    bool functional = false;
    std::optional<KerasCompile> compile;  // when the file has a compile_config
};

// The model config.json describes; Error naming the file and the field for anything onefit cannot
// hold (a layer class it lacks, an argument away from the value onefit supports, a shared layer,
// several outputs, a metric object it cannot read). with_compile false: the compile config is not
// read (Keras's load_model(compile=False) ignores it too).
KerasModelConfig read_keras_model_json(const JsonFile& f, bool with_compile = true);

}  // namespace onefit::io
