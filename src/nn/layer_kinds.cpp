// The layer kinds' table: each kind's shapes and parameters, side by side.
#include "nn/layer_kinds.hpp"

#include <algorithm>
#include <map>

#include "onefit/error.hpp"

namespace onefit::nn {
namespace {

bool is_image(const Shape& s) { return s.size() == 3 && s[0] > 0 && s[1] > 0 && s[2] > 0; }

void require_image(const Shape& input) {
    if (!is_image(input))
        throw Error("needs an image input (height, width, channels), got " + shape_to_string(input) +
                    "; grayscale images are (height, width, 1)");
}

void require_flat(const Shape& input) {
    if (input.size() != 1)
        throw Error("needs a flat input (features), got " + shape_to_string(input) + "; add Flatten() before it");
}

LayerSpec dense(const Layer& l, const Shape& in) {
    require_flat(in);
    if (l.units < 1) throw Error("units must be at least 1, got " + std::to_string(l.units));
    LayerSpec s;
    s.output = {l.units};
    s.params.push_back({"kernel", {in[0], l.units}, l.kernel_initializer, in[0], l.units});
    if (l.use_bias) s.params.push_back({"bias", {l.units}, l.bias_initializer, in[0], l.units});
    s.macs_per_sample = in[0] * l.units;
    return s;
}

LayerSpec same_shape(const Layer&, const Shape& in) { return {in, {}, 0, {}}; }

LayerSpec flatten(const Layer&, const Shape& in) { return {{shape_elements(in)}, {}, 0, {}}; }

LayerSpec reshape(const Layer& l, const Shape& in) {
    Shape out = l.target_shape;
    const int64_t elements = shape_elements(in);
    int64_t known = 1;
    for (int64_t d : out)
        if (d != -1) known *= d;
    for (int64_t& d : out)
        if (d == -1) d = known > 0 && elements % known == 0 ? elements / known : 0;
    if (shape_elements(out) != elements || known == 0)
        throw Error("cannot reshape " + shape_to_string(in) + " (" + std::to_string(elements) + " values) to " +
                    shape_to_string(l.target_shape));
    return {out, {}, 0, {}};
}

LayerSpec conv2d(const Layer& l, const Shape& in) {
    require_image(in);
    if (l.filters < 1) throw Error("filters must be at least 1, got " + std::to_string(l.filters));
    const Window2D w = window_2d(in, l.kernel_size, l.strides, l.padding);
    const int64_t receptive = w.k_h * w.k_w;
    LayerSpec s;
    s.output = {w.out_h, w.out_w, l.filters};
    s.params.push_back({"kernel", {w.k_h, w.k_w, w.channels, l.filters}, l.kernel_initializer, receptive * w.channels,
                        receptive * l.filters});
    if (l.use_bias)
        s.params.push_back({"bias", {l.filters}, l.bias_initializer, receptive * w.channels, receptive * l.filters});
    s.macs_per_sample = w.out_h * w.out_w * l.filters * receptive * w.channels;
    s.window = w;
    return s;
}

LayerSpec pooling2d(const Layer& l, const Shape& in) {
    require_image(in);
    const Window2D w = window_2d(in, l.pool_size, l.strides, l.padding);
    return {{w.out_h, w.out_w, w.channels}, {}, w.out_h * w.out_w * w.channels * w.k_h * w.k_w, w};
}

LayerSpec global_pooling2d(const Layer&, const Shape& in) {
    require_image(in);
    return {{in[2]}, {}, shape_elements(in), {}};
}

struct Entry {
    Layer::Kind kind;
    LayerKindInfo info;
};

// The registration of every kind: adding a layer adds its line here.
const Entry kEntries[] = {
    {Layer::Kind::Dense, {"dense", "Dense", "dense", dense}},
    {Layer::Kind::Dropout, {"dropout", "Dropout", "dropout", same_shape}},
    {Layer::Kind::Flatten, {"flatten", "Flatten", "flatten", flatten}},
    {Layer::Kind::Reshape, {"reshape", "Reshape", "reshape", reshape}},
    {Layer::Kind::Conv2D, {"conv2d", "Conv2D", "conv2d", conv2d}},
    {Layer::Kind::MaxPooling2D, {"max_pooling2d", "MaxPooling2D", "max_pooling2d", pooling2d}},
    {Layer::Kind::AveragePooling2D, {"average_pooling2d", "AveragePooling2D", "average_pooling2d", pooling2d}},
    {Layer::Kind::GlobalAveragePooling2D,
     {"global_average_pooling2d", "GlobalAveragePooling2D", "global_average_pooling2d", global_pooling2d}},
};

}  // namespace

const LayerKindInfo& layer_kind(Layer::Kind kind) {
    for (const Entry& e : kEntries)
        if (e.kind == kind) return e.info;
    throw Error("unknown layer kind " + std::to_string(static_cast<int>(kind)));
}

bool layer_kind_from_type(const std::string& type, Layer::Kind& kind) {
    for (const Entry& e : kEntries)
        if (type == e.info.type) {
            kind = e.kind;
            return true;
        }
    return false;
}

std::string known_layer_types() {
    std::string list;
    for (const Entry& e : kEntries) list += (list.empty() ? "" : ", ") + std::string(e.info.type);
    return list;
}

Window2D window_2d(const Shape& input, std::array<int64_t, 2> size, std::array<int64_t, 2> strides, Padding padding) {
    Window2D w;
    w.in_h = input[0], w.in_w = input[1], w.channels = input[2];
    w.k_h = size[0], w.k_w = size[1], w.stride_h = strides[0], w.stride_w = strides[1];
    const auto axis = [&](int64_t in, int64_t k, int64_t stride, int64_t& out, int64_t& pad_before) {
        if (padding == Padding::same) {
            out = (in + stride - 1) / stride;
            pad_before = std::max<int64_t>((out - 1) * stride + k - in, 0) / 2;
        } else {
            if (in < k)
                throw Error("the window " + std::to_string(size[0]) + "x" + std::to_string(size[1]) +
                            " does not fit the input " + shape_to_string(input) + " with padding 'valid'");
            out = (in - k) / stride + 1;
            pad_before = 0;
        }
    };
    axis(w.in_h, w.k_h, w.stride_h, w.out_h, w.pad_top);
    axis(w.in_w, w.k_w, w.stride_w, w.out_w, w.pad_left);
    return w;
}

std::vector<LayerSpec> layer_specs(const Shape& input, const std::vector<Layer>& layers,
                                   const std::vector<std::string>& names) {
    std::vector<LayerSpec> specs;
    Shape shape = input;
    for (size_t i = 0; i < layers.size(); ++i) {
        try {
            specs.push_back(layer_kind(layers[i].kind).spec(layers[i], shape));
        } catch (const Error& e) {
            throw Error("layer '" + names[i] + "' (" + layer_kind(layers[i].kind).keras_class + "): " + e.what());
        }
        shape = specs.back().output;
    }
    return specs;
}

std::vector<std::string> default_layer_names(const std::vector<Layer>& layers) {
    std::map<std::string, int> seen;
    std::vector<std::string> names;
    for (const Layer& layer : layers) {
        if (!layer.name.empty()) {
            names.push_back(layer.name);
            continue;
        }
        const std::string base = layer_kind(layer.kind).default_name;
        const int n = seen[base]++;
        names.push_back(n == 0 ? base : base + "_" + std::to_string(n));
    }
    return names;
}

}  // namespace onefit::nn

namespace onefit {

std::string layer_class_name(Layer::Kind kind) { return nn::layer_kind(kind).keras_class; }

}  // namespace onefit
