// What each kind of layer is: its names, the shape it makes of its input, the parameters it owns
// (Keras's layout and initialisers), the fields config.json keeps and the scratch its op needs.
// The model's summary, the lowering, get/set_weights, the saved files and the cost model read
// this table instead of switching on kinds. A kind is declared in its op file (src/nn/ops/*.hpp,
// with its forward and backward) and registered in src/nn/ops/all_ops.hpp; the two product layers
// (Dense, Conv2D), whose products each device runs with its own GEMM, are declared here.
// Shapes here are per sample: (features) or (height, width, channels).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "onefit/layers.hpp"
#include "onefit/tensor.hpp"

namespace onefit::nn {

// One parameter array of a layer, in Keras's layout and in get_weights's order.
struct ParamSpec {
    const char* name = "";  // "kernel", "bias": saved as "<layer name>/<name>"
    Shape shape;
    std::string initializer;
    int64_t fan_in = 0, fan_out = 0;  // what the initialiser scales by (Keras's receptive-field fans)
    // Non-trainable arrays (a BatchNormalization's moving statistics) are state: saved and
    // returned by get_weights after the trainable ones, never touched by the optimizer.
    bool trainable = true;
    Regularizer regularizer{};  // its penalty on the loss (Keras's kernel_regularizer, bias_regularizer)
};

// A 2-D window (convolution or pooling) sliding over a (height, width, channels) input.
struct Window2D {
    int64_t in_h = 0, in_w = 0, channels = 0;
    int64_t out_h = 0, out_w = 0;
    int64_t k_h = 0, k_w = 0, stride_h = 1, stride_w = 1;
    int64_t pad_top = 0, pad_left = 0;  // "same": the smaller half before, as TensorFlow pads
};

struct LayerSpec {
    Shape output;
    std::vector<ParamSpec> params;  // trainable arrays first, then state, in get_weights's order
    int64_t macs_per_sample = 0;    // multiply-adds of one forward pass of one sample
    Window2D window{};              // Conv2D and the pooling layers: where their window slides
    Shape input{};                  // what it was made for (layer_specs sets it): its first input
    std::vector<Shape> inputs{};    // every input's shape (a merge layer's several)
    // What its op needs besides its input and output: values (and int32 indices) kept per sample
    // from forward to backward, and values for the whole batch.
    int64_t scratch_per_sample = 0, indices_per_sample = 0, op_scratch = 0;
    // Whether a sample's output depends on that sample only, so a batch may be split into parts
    // (false for BatchNormalization, whose training statistics are the whole batch's).
    bool rows_independent = true;
    bool draws_random = false;  // needs a random key per step (Dropout's masks)
};

// One argument of a layer kind, by its Keras name: what config.json keeps, what make_layer and
// the Python classes take. Integers (and their arrays) are at least min; a required one has no
// default (Dense's units); one that defaults_to another takes that one's value when not given
// or None (a pooling layer's strides: its pool_size, as Keras's strides=None).
struct LayerAttribute {
    const char* name;
    std::variant<int64_t Layer::*, float Layer::*, bool Layer::*, std::array<int64_t, 2> Layer::*,
                 std::vector<int64_t> Layer::*, Padding Layer::*, Activation Layer::*, std::string Layer::*,
                 Regularizer Layer::*>
        field;
    int64_t min = 1;
    bool required = false;
    const char* defaults_to = nullptr;
};

struct LayerKindInfo {
    const char* type;          // config.json's "type", the CLI's word: "conv2d"
    const char* keras_class;   // summary()'s: "Conv2D"
    const char* default_name;  // Keras's base name: conv2d, conv2d_1, ...
    // The layer on an input of this shape; throws Error saying what is wrong (not which layer).
    LayerSpec (*spec)(const Layer& layer, const Shape& input);  // after check (layer_specs runs both)
    // The fields config.json keeps, in order, and the check of their values (throws Error).
    std::vector<LayerAttribute> (*attributes)();
    void (*check)(const Layer& layer);
    // Optional (null when the kind has none): defaults that differ from Layer's own (LeakyReLU's
    // negative_slope 0.3), set before a layer's arguments are read; and, for a kind that reads the
    // model's input itself (Embedding: integer indices), the check of that input's values (rows of
    // width values, stride apart; throws Error naming the row and column).
    void (*defaults)(Layer& layer) = nullptr;
    void (*check_input)(const Layer& layer, const float* x, int64_t rows, int64_t width, int64_t stride) = nullptr;
    // A merge kind's (Add, Concatenate: two or more inputs) spec from all its inputs' shapes; null
    // for the kinds that take one input.
    LayerSpec (*merge_spec)(const Layer& layer, const std::vector<Shape>& inputs) = nullptr;
};

const LayerKindInfo& layer_kind(Layer::Kind kind);
std::vector<Layer::Kind> all_layer_kinds();  // in the table's order
// The kind whose type is `type`; false when none is.
bool layer_kind_from_type(const std::string& type, Layer::Kind& kind);
std::string known_layer_types();  // "dense, dropout, ..." for error messages
// A layer of this kind at Keras's defaults (its kind's own defaults applied).
Layer default_layer(Layer::Kind kind);
// Throws Error (prefixed with the kind's Keras class) unless the layer's fields are valid.
void check_layer(const Layer& layer);

// The window a Conv2D or pooling layer slides over `input`; throws Error when it does not fit.
Window2D window_2d(const Shape& input, std::array<int64_t, 2> size, std::array<int64_t, 2> strides, Padding padding);
// A 1-D layer's (Conv1D, MaxPooling1D) window over (steps, channels): a 2-D window of height 1.
Window2D window_1d(const Shape& input, int64_t size, int64_t stride, Padding padding);

// The most inputs a merge layer takes.
inline constexpr int kMaxLayerInputs = 32;

// The layers whose outputs layer i takes: Layer::inputs, or the previous layer (the model's input, -1,
// for the first; a model of several inputs: -1 - k is its input k).
std::vector<int32_t> layer_sources(const std::vector<Layer>& layers, size_t i);
// Whether any layer takes another input than the previous layer's output (a Functional graph).
bool is_graph(const std::vector<Layer>& layers);

// Every layer's spec, from the model's input shape on, following each layer's inputs; checks the
// graph (inputs are earlier layers, every output but the last is used). Errors name the layer.
std::vector<LayerSpec> layer_specs(const Shape& input, const std::vector<Layer>& layers,
                                   const std::vector<std::string>& names);
// A model of several inputs: source -1 - k is input k (Layer::inputs).
std::vector<LayerSpec> layer_specs(const std::vector<Shape>& inputs, const std::vector<Layer>& layers,
                                   const std::vector<std::string>& names);

// Keras-style default names: dense, dense_1, conv2d, dropout, ...
std::vector<std::string> default_layer_names(const std::vector<Layer>& layers);

}  // namespace onefit::nn
