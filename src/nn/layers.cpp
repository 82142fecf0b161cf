// Layer constructors: Keras's names and defaults, arguments checked where the user wrote them.
#include "onefit/error.hpp"
#include "onefit/layers.hpp"

namespace onefit {
namespace {

std::string pair_text(std::array<int64_t, 2> v) { return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")"; }

void check_positive_pair(std::array<int64_t, 2> v, const char* layer, const char* what) {
    if (v[0] < 1 || v[1] < 1)
        throw Error(std::string(layer) + ": " + what + " must be positive, got " + pair_text(v));
}

Layer pooling(Layer::Kind kind, const char* what, std::array<int64_t, 2> pool_size, std::array<int64_t, 2> strides,
              const std::string& padding, const std::string& name) {
    check_positive_pair(pool_size, what, "pool_size");
    if (strides[0] == 0 && strides[1] == 0) strides = pool_size;  // Keras: strides=None
    check_positive_pair(strides, what, "strides");
    Layer layer;
    layer.kind = kind;
    layer.pool_size = pool_size;
    layer.strides = strides;
    layer.padding = padding_from_name(padding);
    layer.name = name;
    return layer;
}

}  // namespace

Padding padding_from_name(const std::string& name) {
    if (name == "valid") return Padding::valid;
    if (name == "same") return Padding::same;
    throw Error("unknown padding '" + name + "'; known: valid, same");
}

std::string padding_name(Padding padding) { return padding == Padding::same ? "same" : "valid"; }

Layer Dense(int64_t units, Activation activation, bool use_bias, const std::string& name) {
    if (units < 1) throw Error("Dense: units must be at least 1, got " + std::to_string(units));
    Layer layer;
    layer.kind = Layer::Kind::Dense;
    layer.units = units;
    layer.activation = activation;
    layer.use_bias = use_bias;
    layer.name = name;
    return layer;
}

Layer Dense(int64_t units, const std::string& activation, bool use_bias, const std::string& name) {
    return Dense(units, activation_from_name(activation), use_bias, name);
}

Layer Dropout(float rate, const std::string& name) {
    if (!(rate >= 0.0f && rate < 1.0f)) throw Error("Dropout: rate must be in [0, 1), got " + std::to_string(rate));
    Layer layer;
    layer.kind = Layer::Kind::Dropout;
    layer.rate = rate;
    layer.name = name;
    return layer;
}

Layer Flatten(const std::string& name) {
    Layer layer;
    layer.kind = Layer::Kind::Flatten;
    layer.name = name;
    return layer;
}

Layer Reshape(std::vector<int64_t> target_shape, const std::string& name) {
    if (target_shape.empty()) throw Error("Reshape: target_shape is empty");
    int inferred = 0;
    for (int64_t d : target_shape) {
        if (d == -1) ++inferred;
        else if (d < 1) throw Error("Reshape: target_shape entries must be positive or -1, got " + std::to_string(d));
    }
    if (inferred > 1) throw Error("Reshape: at most one target_shape entry may be -1");
    Layer layer;
    layer.kind = Layer::Kind::Reshape;
    layer.target_shape = std::move(target_shape);
    layer.name = name;
    return layer;
}

Layer Conv2D(int64_t filters, std::array<int64_t, 2> kernel_size, std::array<int64_t, 2> strides,
             const std::string& padding, const std::string& activation, bool use_bias, const std::string& name) {
    if (filters < 1) throw Error("Conv2D: filters must be at least 1, got " + std::to_string(filters));
    check_positive_pair(kernel_size, "Conv2D", "kernel_size");
    check_positive_pair(strides, "Conv2D", "strides");
    Layer layer;
    layer.kind = Layer::Kind::Conv2D;
    layer.filters = filters;
    layer.kernel_size = kernel_size;
    layer.strides = strides;
    layer.padding = padding_from_name(padding);
    layer.activation = activation_from_name(activation);
    layer.use_bias = use_bias;
    layer.name = name;
    return layer;
}

Layer Conv2D(int64_t filters, int64_t kernel_size, int64_t strides, const std::string& padding,
             const std::string& activation, bool use_bias, const std::string& name) {
    return Conv2D(filters, {kernel_size, kernel_size}, {strides, strides}, padding, activation, use_bias, name);
}

Layer MaxPooling2D(std::array<int64_t, 2> pool_size, std::array<int64_t, 2> strides, const std::string& padding,
                   const std::string& name) {
    return pooling(Layer::Kind::MaxPooling2D, "MaxPooling2D", pool_size, strides, padding, name);
}

Layer MaxPooling2D(int64_t pool_size, int64_t strides, const std::string& padding, const std::string& name) {
    return MaxPooling2D({pool_size, pool_size}, {strides, strides}, padding, name);
}

Layer AveragePooling2D(std::array<int64_t, 2> pool_size, std::array<int64_t, 2> strides, const std::string& padding,
                       const std::string& name) {
    return pooling(Layer::Kind::AveragePooling2D, "AveragePooling2D", pool_size, strides, padding, name);
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

}  // namespace onefit
