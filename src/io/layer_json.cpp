#include "io/layer_json.hpp"

#include <charconv>
#include <cstdlib>

#include "nn/layer_kinds.hpp"

namespace onefit::io {

using nlohmann::ordered_json;

double shortest(float v) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;
    return std::strtod(std::string(text, end).c_str(), nullptr);
}

namespace {

ordered_json pair_json(std::array<int64_t, 2> v) { return ordered_json::array({v[0], v[1]}); }

std::array<int64_t, 2> read_pair(const JsonFile& f, const json& spec, const char* name, const std::string& key) {
    const std::vector<int64_t> v = f.integers(spec, name, key + "." + name, 2, 1);
    return {v[0], v[1]};
}

}  // namespace

ordered_json layer_json(const Layer& layer, const std::string& name) {
    ordered_json j = {{"type", nn::layer_kind(layer.kind).type}, {"name", name}};
    switch (layer.kind) {
        case Layer::Kind::Dropout:
            j["rate"] = shortest(layer.rate);
            break;
        case Layer::Kind::Reshape:
            j["target_shape"] = layer.target_shape;
            break;
        case Layer::Kind::MaxPooling2D:
        case Layer::Kind::AveragePooling2D:
            j["pool_size"] = pair_json(layer.pool_size);
            j["strides"] = pair_json(layer.strides);
            j["padding"] = padding_name(layer.padding);
            break;
        case Layer::Kind::Conv2D:
            j["filters"] = layer.filters;
            j["kernel_size"] = pair_json(layer.kernel_size);
            j["strides"] = pair_json(layer.strides);
            j["padding"] = padding_name(layer.padding);
            [[fallthrough]];
        case Layer::Kind::Dense:
            if (layer.kind == Layer::Kind::Dense) j["units"] = layer.units;
            j["activation"] = activation_name(layer.activation);
            j["use_bias"] = layer.use_bias;
            j["kernel_initializer"] = layer.kernel_initializer;
            j["bias_initializer"] = layer.bias_initializer;
            break;
        default:
            break;
    }
    return j;
}

Layer read_layer(const JsonFile& f, const json& spec, const std::string& key) {
    const std::string type = f.string(spec, "type", key + ".type");
    const std::string name = f.string(spec, "name", key + ".name");
    Layer::Kind kind;
    if (!nn::layer_kind_from_type(type, kind))
        throw f.error(key + ".type", "is '" + printable(type) + "'; known: " + nn::known_layer_types());
    // Fields are read (and type-checked) first; the constructor then checks their values.
    const bool window = kind == Layer::Kind::Conv2D || kind == Layer::Kind::MaxPooling2D ||
                        kind == Layer::Kind::AveragePooling2D;
    const bool product = kind == Layer::Kind::Dense || kind == Layer::Kind::Conv2D;
    const std::array<int64_t, 2> strides = window ? read_pair(f, spec, "strides", key) : std::array<int64_t, 2>{};
    const std::string padding = window ? f.string(spec, "padding", key + ".padding") : "";
    const std::string activation = product ? f.string(spec, "activation", key + ".activation") : "";
    const bool use_bias = product ? f.boolean(spec, "use_bias", key + ".use_bias") : true;
    const bool pools = kind == Layer::Kind::MaxPooling2D || kind == Layer::Kind::AveragePooling2D;
    const std::array<int64_t, 2> pool_size = pools ? read_pair(f, spec, "pool_size", key) : std::array<int64_t, 2>{};
    const float rate = kind == Layer::Kind::Dropout ? f.number(spec, "rate", key + ".rate") : 0.0f;
    if (kind == Layer::Kind::Dropout && !(rate >= 0.0f && rate < 1.0f)) throw f.error(key + ".rate", "must be in [0, 1)");
    const int64_t units = kind == Layer::Kind::Dense ? f.integer(spec, "units", key + ".units", 1) : 0;
    const int64_t filters = kind == Layer::Kind::Conv2D ? f.integer(spec, "filters", key + ".filters", 1) : 0;
    const std::array<int64_t, 2> kernel_size =
        kind == Layer::Kind::Conv2D ? read_pair(f, spec, "kernel_size", key) : std::array<int64_t, 2>{};
    const std::vector<int64_t> target_shape =
        kind == Layer::Kind::Reshape ? f.integers(spec, "target_shape", key + ".target_shape", 0, -1)
                                                            : std::vector<int64_t>{};
    Layer layer = f.named(key, [&]() -> Layer {
        switch (kind) {
            case Layer::Kind::Dropout: return Dropout(rate, name);
            case Layer::Kind::Flatten: return Flatten(name);
            case Layer::Kind::GlobalAveragePooling2D: return GlobalAveragePooling2D(name);
            case Layer::Kind::Reshape: return Reshape(target_shape, name);
            case Layer::Kind::MaxPooling2D: return MaxPooling2D(pool_size, strides, padding, name);
            case Layer::Kind::AveragePooling2D: return AveragePooling2D(pool_size, strides, padding, name);
            case Layer::Kind::Conv2D:
                return Conv2D(filters, kernel_size, strides, padding, activation, use_bias, name);
            case Layer::Kind::Dense: break;
        }
        return Dense(units, activation, use_bias, name);
    });
    if (kind == Layer::Kind::Dense || kind == Layer::Kind::Conv2D) {
        layer.kernel_initializer = f.string(spec, "kernel_initializer", key + ".kernel_initializer");
        layer.bias_initializer = f.string(spec, "bias_initializer", key + ".bias_initializer");
    }
    return layer;
}

}  // namespace onefit::io
