// Layers, described as plain values: Dense(32, "relu"), Conv2D(32, 3), Dropout(0.5), and every
// kind by its word and Keras's argument names: make_layer("conv1d", {{"filters", 8}, ...}) (the
// kinds added since BatchNormalization have no constructor of their own). compile() lowers them
// into the training program; they carry no buffers themselves. Each kind's shapes, parameters and
// arguments are declared in one place (its op file, src/nn/ops/*.hpp); images are channels last
// (height, width, channels) and sequences (steps, channels), as in Keras.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "onefit/error.hpp"

namespace onefit {

class Node;  // a symbolic tensor of the Functional API (onefit/functional.hpp)

// Keras's activation names. leaky_relu uses Keras's default negative slope 0.2,
// elu alpha 1.0, gelu the exact erf form (approximate=False), swish x*sigmoid(x).
enum class Activation { linear, relu, leaky_relu, elu, sigmoid, tanh, softmax, gelu, swish };

Activation activation_from_name(const std::string& name);  // throws Error listing the known names
std::string activation_name(Activation activation);

// Keras's padding: "valid" (no padding) or "same" (output size ceil(input / stride), the padding
// split with the extra row or column after, as TensorFlow does).
enum class Padding { valid, same };
Padding padding_from_name(const std::string& name);  // throws Error naming the known ones
std::string padding_name(Padding padding);

// Keras's weight regularizers (keras.regularizers L1, L2, L1L2): l1 * sum(|w|) + l2 * sum(w^2) added
// to the loss (as Keras shows it: loss and val_loss include it) and its gradient to the weights'.
// Written "l2(0.0001)", "l1(0.01)", "l1_l2(l1=0.01, l2=0.001)" or "" (none); "l1", "l2" and "l1_l2"
// alone are Keras's defaults, 0.01 each.
struct Regularizer {
    float l1 = 0.0f, l2 = 0.0f;
    bool active() const { return l1 != 0.0f || l2 != 0.0f; }
    bool operator==(const Regularizer&) const = default;
};
Regularizer regularizer_from_text(const std::string& text);  // throws Error saying what it takes
std::string regularizer_text(const Regularizer& regularizer);

struct Layer {
    enum class Kind { Dense, Dropout, Flatten, Reshape, Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D,
                      BatchNormalization, Activation, ReLU, LeakyReLU, Softmax, LayerNormalization, Embedding, Conv1D,
                      MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D, GlobalMaxPooling2D,
                      Add, Subtract, Multiply, Average, Concatenate, Maximum, Minimum, Dot };
    Kind kind = Kind::Dense;
    std::string name;  // Keras-style default ("dense", "conv2d_1", ...) when empty
    // A Functional model's edges: the layers whose outputs this one takes, as indices into the
    // model's layer list (earlier layers; -1 is the model's input, and in a model of several
    // inputs -1 - k is its input k). Empty: the previous layer's
    // output (the first layer's: the model's input), as in a Sequential model. Merge layers (Add,
    // Concatenate, ...) take two or more.
    std::vector<int32_t> inputs;
    // Keras's layer called a second time (a shared layer): the index of the earlier layer whose
    // weights this call uses (-1: its own). It holds a copy of that layer's arguments, takes its
    // own inputs, and has no weights of its own (get_weights, saved files and summary list them
    // once, with the first call); its default name is "<first>@1", "@2", ... per call.
    int32_t shares = -1;
    // Dense
    int64_t units = 0;
    Activation activation = Activation::linear;
    bool use_bias = true;
    std::string kernel_initializer = "glorot_uniform";
    std::string bias_initializer = "zeros";
    // Dense, Conv2D, Conv1D (Embedding: kernel_regularizer is its embeddings_regularizer).
    Regularizer kernel_regularizer, bias_regularizer;
    // Dense, Conv2D, Conv1D: Keras's activity_regularizer, a penalty on the layer's output (after
    // its activation) added to the loss, divided by the batch's rows as Keras 3 does.
    Regularizer activity_regularizer;
    // Dropout: fraction of inputs zeroed during training (inverted dropout, scale 1/(1-rate)).
    float rate = 0.0f;
    // Conv2D (also uses activation, use_bias and the initializers): kernel (kh, kw, in, filters).
    int64_t filters = 0;
    std::array<int64_t, 2> kernel_size{1, 1};
    // Conv2D and pooling; a pooling layer's strides default to its pool_size.
    std::array<int64_t, 2> strides{1, 1};
    Padding padding = Padding::valid;
    std::array<int64_t, 2> pool_size{2, 2};
    // Reshape: the per-sample shape, one entry may be -1 (inferred).
    std::vector<int64_t> target_shape;
    // BatchNormalization: the moving statistics' momentum, the variance's epsilon, and whether
    // it has beta (center) and gamma (scale).
    // (LayerNormalization: epsilon, center and scale too.)
    float momentum = 0.99f;
    float epsilon = 1e-3f;
    bool center = true;
    bool scale = true;
    // ReLU (LeakyReLU: negative_slope, default 0.3): max_value (infinite: None), negative_slope below
    // threshold, as keras.activations.relu.
    float max_value = std::numeric_limits<float>::infinity();
    float negative_slope = 0.0f;
    float threshold = 0.0f;
    // Softmax, LayerNormalization and Concatenate: the axis (the last: -1, or its index).
    int64_t axis = -1;
    // Embedding: the vocabulary's size, each index's vector length, their initializer.
    int64_t input_dim = 0, output_dim = 0;
    std::string embeddings_initializer = "uniform";
    bool mask_zero = false;
    // Conv1D and the 1-D poolings over (steps, channels): Keras's kernel_size, strides, pool_size
    // (a pooling layer's strides default to its pool_size).
    int64_t kernel_size_1d = 1, strides_1d = 1, pool_size_1d = 2;
    // Dot: the axis of each input to contract (Keras's numbering: the batch is 0, -1 the last), and
    // whether each input is scaled to unit length along it first (cosine proximity).
    std::array<int64_t, 2> axes{-1, -1};
    bool normalize = false;

    // The Functional API (onefit/functional.hpp): this layer's output on tensors, as Keras's layer(x).
    Node operator()(const Node& input) const;
    Node operator()(const std::vector<Node>& inputs) const;
};

// Keras's class name of a kind: "Dense", "Conv2D", "MaxPooling2D", ...
std::string layer_class_name(Layer::Kind kind);

Layer Dense(int64_t units, const std::string& activation = "linear", bool use_bias = true,
            const std::string& name = "");
Layer Dense(int64_t units, Activation activation, bool use_bias = true, const std::string& name = "");
Layer Dropout(float rate, const std::string& name = "");
Layer Flatten(const std::string& name = "");
Layer Reshape(std::vector<int64_t> target_shape, const std::string& name = "");
Layer Conv2D(int64_t filters, std::array<int64_t, 2> kernel_size, std::array<int64_t, 2> strides = {1, 1},
             const std::string& padding = "valid", const std::string& activation = "linear", bool use_bias = true,
             const std::string& name = "");
Layer Conv2D(int64_t filters, int64_t kernel_size, int64_t strides = 1, const std::string& padding = "valid",
             const std::string& activation = "linear", bool use_bias = true, const std::string& name = "");
// strides {0, 0} (or 0): the pool size, as Keras's strides=None.
Layer MaxPooling2D(std::array<int64_t, 2> pool_size = {2, 2}, std::array<int64_t, 2> strides = {0, 0},
                   const std::string& padding = "valid", const std::string& name = "");
Layer MaxPooling2D(int64_t pool_size, int64_t strides = 0, const std::string& padding = "valid",
                   const std::string& name = "");
Layer AveragePooling2D(std::array<int64_t, 2> pool_size = {2, 2}, std::array<int64_t, 2> strides = {0, 0},
                       const std::string& padding = "valid", const std::string& name = "");
Layer AveragePooling2D(int64_t pool_size, int64_t strides = 0, const std::string& padding = "valid",
                       const std::string& name = "");
Layer GlobalAveragePooling2D(const std::string& name = "");
// Normalises the last axis (features, or an image's channels) by the batch's statistics in
// training and by their moving averages in evaluate/predict, as Keras's BatchNormalization().
Layer BatchNormalization(float momentum = 0.99f, float epsilon = 1e-3f, bool center = true, bool scale = true,
                         const std::string& name = "");

// Every kind by its declaration, as config.json, the CLI and the Python classes see it: a layer
// argument's value as Keras's config holds it (None is std::monostate: the argument's default),
// make_layer(type, arguments) from a kind's word and its Keras argument names, and back.
using LayerValue = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>>;
using LayerArguments = std::vector<std::pair<std::string, LayerValue>>;

struct LayerKindDescription {
    std::string type;         // config.json's "type", the CLI's word: "max_pooling2d"
    std::string keras_class;  // "MaxPooling2D"
    std::vector<std::string> arguments;  // Keras's names, in Keras's order
    std::vector<std::string> required;   // those without a default
};
std::vector<LayerKindDescription> layer_kinds();

// make_layer's error: what() is the whole message; `argument` is the given argument it is about
// ("units", or "kernel_size[1]" for an entry of a list), "type" for an unknown type word, and
// empty when it is about no one given argument (a required one missing, a rule over several).
class LayerArgumentError : public Error {
public:
    LayerArgumentError(const std::string& message, std::string about) : Error(message), argument(std::move(about)) {}
    std::string argument;
};

// The layer of kind `type` ("dense", "conv2d", ...) with these arguments, the others at Keras's
// defaults (None is the default too); an int where Keras takes a pair means a square. Throws
// LayerArgumentError naming the kind and the argument: "Dense: units is required",
// "Conv2D: unknown argument 'filter' (Conv2D takes ...)".
Layer make_layer(const std::string& type, const LayerArguments& arguments = {}, const std::string& name = "");
// Every argument of the layer's kind with its value (pairs and shapes as integer lists).
// (A None-valued float argument, ReLU's max_value, comes back as None.)
LayerArguments layer_arguments(const Layer& layer);
std::string layer_type(Layer::Kind kind);  // "dense"

// Keras's shared layer called again: layers[first]'s arguments (a copy), using its weights
// (Layer::shares), on `inputs` (empty: the previous layer's output). Throws Error unless
// layers[first] is a first call.
Layer shared_call(const std::vector<Layer>& layers, size_t first, std::vector<int32_t> inputs = {});

// Each layer's name: the one given, else Keras's default (dense, dense_1, ...; a default skips the
// names given to other layers).
std::vector<std::string> default_layer_names(const std::vector<Layer>& layers);

// A Functional layer's inputs as config files name them: earlier layers' names (`names`: every
// layer's, Keras's defaults included), "input" for the model's input (of several: "input",
// "input_1", ... for inputs 0, 1, ...). Throws Error naming the one that is no earlier layer's name.
std::vector<int32_t> layer_inputs_from_names(const std::vector<std::string>& inputs,
                                             const std::vector<std::string>& names, size_t layer);
std::vector<std::string> layer_input_names(const Layer& layer, const std::vector<std::string>& names);
std::string model_input_name(int32_t source);  // source -1 - k: "input", "input_1", ...

}  // namespace onefit
