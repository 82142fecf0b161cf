// Layer constructors: Keras's names and defaults, arguments checked where the user wrote them.
#include "nn/layer_kinds.hpp"
#include "onefit/error.hpp"
#include "onefit/layers.hpp"

namespace onefit {
namespace {

// The layer, its fields checked by its kind (nn/layer_kinds.cpp, nn/ops/*.hpp) where the user wrote them.
Layer checked(Layer layer) {
    nn::check_layer(layer);
    return layer;
}

Layer pooling(Layer::Kind kind, std::array<int64_t, 2> pool_size, std::array<int64_t, 2> strides,
              const std::string& padding, const std::string& name) {
    Layer layer;
    layer.kind = kind;
    layer.pool_size = pool_size;
    layer.strides = strides[0] == 0 && strides[1] == 0 ? pool_size : strides;  // Keras: strides=None
    layer.padding = padding_from_name(padding);
    layer.name = name;
    return checked(layer);
}

}  // namespace

Padding padding_from_name(const std::string& name) {
    if (name == "valid") return Padding::valid;
    if (name == "same") return Padding::same;
    throw Error("unknown padding '" + name + "'; known: valid, same");
}

std::string padding_name(Padding padding) { return padding == Padding::same ? "same" : "valid"; }

Layer Dense(int64_t units, Activation activation, bool use_bias, const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::Dense;
    layer.units = units;
    layer.activation = activation;
    layer.use_bias = use_bias;
    layer.name = name;
    return checked(layer);
}

Layer Dense(int64_t units, const std::string& activation, bool use_bias, const std::string& name) {
    return Dense(units, activation_from_name(activation), use_bias, name);
}

Layer Dropout(float rate, const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::Dropout;
    layer.rate = rate;
    layer.name = name;
    return checked(layer);
}

Layer Flatten(const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::Flatten;
    layer.name = name;
    return layer;
}

Layer Reshape(std::vector<int64_t> target_shape, const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::Reshape;
    layer.target_shape = std::move(target_shape);
    layer.name = name;
    return checked(layer);
}

Layer Conv2D(int64_t filters, std::array<int64_t, 2> kernel_size, std::array<int64_t, 2> strides,
             const std::string& padding, const std::string& activation, bool use_bias, const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::Conv2D;
    layer.filters = filters;
    layer.kernel_size = kernel_size;
    layer.strides = strides;
    layer.padding = padding_from_name(padding);
    layer.activation = activation_from_name(activation);
    layer.use_bias = use_bias;
    layer.name = name;
    return checked(layer);
}

Layer Conv2D(int64_t filters, int64_t kernel_size, int64_t strides, const std::string& padding,
             const std::string& activation, bool use_bias, const std::string& name) {
    return Conv2D(filters, {kernel_size, kernel_size}, {strides, strides}, padding, activation, use_bias, name);
}

Layer MaxPooling2D(std::array<int64_t, 2> pool_size, std::array<int64_t, 2> strides, const std::string& padding,
                   const std::string& name) {
    return pooling(Layer::Kind::MaxPooling2D, pool_size, strides, padding, name);
}

Layer MaxPooling2D(int64_t pool_size, int64_t strides, const std::string& padding, const std::string& name) {
    return MaxPooling2D({pool_size, pool_size}, {strides, strides}, padding, name);
}

Layer AveragePooling2D(std::array<int64_t, 2> pool_size, std::array<int64_t, 2> strides, const std::string& padding,
                       const std::string& name) {
    return pooling(Layer::Kind::AveragePooling2D, pool_size, strides, padding, name);
}

Layer AveragePooling2D(int64_t pool_size, int64_t strides, const std::string& padding, const std::string& name) {
    return AveragePooling2D({pool_size, pool_size}, {strides, strides}, padding, name);
}

Layer GlobalAveragePooling2D(const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::GlobalAveragePooling2D;
    layer.name = name;
    return layer;
}

Layer BatchNormalization(float momentum, float epsilon, bool center, bool scale, const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::BatchNormalization;
    layer.momentum = momentum;
    layer.epsilon = epsilon;
    layer.center = center;
    layer.scale = scale;
    layer.name = name;
    return checked(layer);
}

}  // namespace onefit
