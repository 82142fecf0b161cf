// Layer constructors: Keras's names and defaults, arguments checked where the user wrote them.
#include "onefit/error.hpp"
#include "onefit/layers.hpp"

namespace onefit {

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

}  // namespace onefit
