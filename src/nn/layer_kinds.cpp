// The layer kinds' table: the product layers declared here, every other kind in its op file.
#include "nn/layer_kinds.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "nn/initializers.hpp"
#include "nn/ops/all_ops.hpp"
#include "onefit/error.hpp"

namespace onefit::nn {
namespace {

void require_flat(const Shape& input) {
    if (input.size() != 1)
        throw Error("needs a flat input (features), got " + shape_to_string(input) + "; add Flatten() before it");
}

// The fields a product layer (Dense, Conv2D) keeps after its own.
void add_product_attributes(std::vector<LayerAttribute>& a) {
    a.push_back({"activation", &Layer::activation});
    a.push_back({"use_bias", &Layer::use_bias});
    a.push_back({"kernel_initializer", &Layer::kernel_initializer});
    a.push_back({"bias_initializer", &Layer::bias_initializer});
    a.push_back({"kernel_regularizer", &Layer::kernel_regularizer});
    a.push_back({"bias_regularizer", &Layer::bias_regularizer});
    a.push_back({"activity_regularizer", &Layer::activity_regularizer});
}

// A product layer's penalties: the kernel's (params[0]) and the bias's.
LayerSpec regularized(LayerSpec s, const Layer& l) {
    s.params[0].regularizer = l.kernel_regularizer;
    if (l.use_bias) s.params[1].regularizer = l.bias_regularizer;
    return s;
}

void check_product_initializers(const Layer& l) {
    check_initializer(l.kernel_initializer, "kernel_initializer");
    check_initializer(l.bias_initializer, "bias_initializer");
}

struct DenseLayer {
    static constexpr const char* type = "dense";
    static constexpr const char* keras_class = "Dense";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        require_flat(in);
        LayerSpec s;
        s.output = {l.units};
        s.params.push_back({"kernel", {in[0], l.units}, l.kernel_initializer, in[0], l.units});
        if (l.use_bias) s.params.push_back({"bias", {l.units}, l.bias_initializer, in[0], l.units});
        s.macs_per_sample = in[0] * l.units;
        return regularized(s, l);
    }
    static std::vector<LayerAttribute> attributes() {
        std::vector<LayerAttribute> a = {{"units", &Layer::units, 1, true}};
        add_product_attributes(a);
        return a;
    }
    static void check(const Layer& l) {
        if (l.units < 1) throw Error("units must be at least 1, got " + std::to_string(l.units));
        check_product_initializers(l);
    }
};

// A Conv2D's kernel is Keras's (kh, kw, in, filters), initialised with Keras's receptive-field fans.
struct Conv2DLayer {
    static constexpr const char* type = "conv2d";
    static constexpr const char* keras_class = "Conv2D";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        require_image(in);
        const Window2D w = window_2d(in, l.kernel_size, l.strides, l.padding);
        const int64_t receptive = w.k_h * w.k_w;
        LayerSpec s;
        s.output = {w.out_h, w.out_w, l.filters};
        s.params.push_back({"kernel", {w.k_h, w.k_w, w.channels, l.filters}, l.kernel_initializer,
                            receptive * w.channels, receptive * l.filters});
        if (l.use_bias)
            s.params.push_back({"bias", {l.filters}, l.bias_initializer, receptive * w.channels, receptive * l.filters});
        s.macs_per_sample = w.out_h * w.out_w * l.filters * receptive * w.channels;
        s.window = w;
        return regularized(s, l);
    }
    static std::vector<LayerAttribute> attributes() {
        std::vector<LayerAttribute> a = {{"filters", &Layer::filters, 1, true},
                                         {"kernel_size", &Layer::kernel_size, 1, true},
                                         {"strides", &Layer::strides},
                                         {"padding", &Layer::padding}};
        add_product_attributes(a);
        return a;
    }
    static void check(const Layer& l) {
        if (l.filters < 1) throw Error("filters must be at least 1, got " + std::to_string(l.filters));
        check_positive_pair(l.kernel_size, "kernel_size");
        check_positive_pair(l.strides, "strides");
        check_product_initializers(l);
    }
};

// A Conv1D over (steps, channels) is a Conv2D of height 1: its kernel, Keras's (k, in, filters),
// is the same values as (1, k, in, filters), and every device runs it as that Conv2D.
struct Conv1DLayer {
    static constexpr const char* type = "conv1d";
    static constexpr const char* keras_class = "Conv1D";
    static LayerSpec spec(const Layer& l, const Shape& in) {
        const Window2D w = window_1d(in, l.kernel_size_1d, l.strides_1d, l.padding);
        LayerSpec s;
        s.output = {w.out_w, l.filters};
        s.params.push_back({"kernel", {w.k_w, w.channels, l.filters}, l.kernel_initializer, w.k_w * w.channels,
                            w.k_w * l.filters});
        if (l.use_bias) s.params.push_back({"bias", {l.filters}, l.bias_initializer, w.k_w * w.channels, w.k_w * l.filters});
        s.macs_per_sample = w.out_w * l.filters * w.k_w * w.channels;
        s.window = w;
        return regularized(s, l);
    }
    static std::vector<LayerAttribute> attributes() {
        std::vector<LayerAttribute> a = {{"filters", &Layer::filters, 1, true},
                                         {"kernel_size", &Layer::kernel_size_1d, 1, true},
                                         {"strides", &Layer::strides_1d},
                                         {"padding", &Layer::padding}};
        add_product_attributes(a);
        return a;
    }
    static void check(const Layer& l) {
        if (l.filters < 1) throw Error("filters must be at least 1, got " + std::to_string(l.filters));
        check_positive_size(l.kernel_size_1d, "kernel_size");
        check_positive_size(l.strides_1d, "strides");
        check_product_initializers(l);
    }
};

struct Entry {
    Layer::Kind kind;
    LayerKindInfo info;
};

template <class Op>
constexpr LayerKindInfo info_of() {
    LayerKindInfo info{Op::type, Op::keras_class, Op::type, Op::spec, Op::attributes, Op::check};
    if constexpr (requires { Op::defaults; }) info.defaults = Op::defaults;
    if constexpr (requires { Op::check_input; }) info.check_input = Op::check_input;
    if constexpr (requires { Op::merge_spec; }) info.merge_spec = Op::merge_spec;
    return info;
}

// Every kind: the product layers, then the ops registered in nn/ops/all_ops.hpp.
#define ONEFIT_KIND_ENTRY(kind, Op) {Layer::Kind::kind, info_of<Op>()},
const Entry kEntries[] = {
    {Layer::Kind::Dense, info_of<DenseLayer>()},
    {Layer::Kind::Conv2D, info_of<Conv2DLayer>()},
    {Layer::Kind::Conv1D, info_of<Conv1DLayer>()},
    ONEFIT_FOR_EACH_OP(ONEFIT_KIND_ENTRY)
};
#undef ONEFIT_KIND_ENTRY

}  // namespace

const LayerKindInfo& layer_kind(Layer::Kind kind) {
    for (const Entry& e : kEntries)
        if (e.kind == kind) return e.info;
    throw Error("unknown layer kind " + std::to_string(static_cast<int>(kind)));
}

std::vector<Layer::Kind> all_layer_kinds() {
    std::vector<Layer::Kind> kinds;
    for (const Entry& e : kEntries) kinds.push_back(e.kind);
    return kinds;
}

bool layer_kind_from_type(const std::string& type, Layer::Kind& kind) {
    for (const Entry& e : kEntries)
        if (type == e.info.type) {
            kind = e.kind;
            return true;
        }
    return false;
}

Layer default_layer(Layer::Kind kind) {
    Layer layer;
    layer.kind = kind;
    if (const auto defaults = layer_kind(kind).defaults) defaults(layer);
    return layer;
}

void check_layer(const Layer& layer) {
    const LayerKindInfo& info = layer_kind(layer.kind);
    try {
        info.check(layer);
    } catch (const Error& e) {
        throw Error(std::string(info.keras_class) + ": " + e.what());
    }
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

Window2D window_1d(const Shape& input, int64_t size, int64_t stride, Padding padding) {
    if (input.size() != 2)
        throw Error("needs a sequence input (steps, channels), got " + shape_to_string(input) +
                    "; a sequence of single values is (steps, 1)");
    try {
        return window_2d({1, input[0], input[1]}, {1, size}, {1, stride}, padding);
    } catch (const Error&) {
        throw Error("the window " + std::to_string(size) + " does not fit the input " + shape_to_string(input) +
                    " with padding 'valid'");
    }
}

std::vector<int32_t> layer_sources(const std::vector<Layer>& layers, size_t i) {
    if (!layers[i].inputs.empty()) return layers[i].inputs;
    return {static_cast<int32_t>(i) - 1};
}

bool is_graph(const std::vector<Layer>& layers) {
    for (size_t i = 0; i < layers.size(); ++i)
        if (layer_sources(layers, i) != std::vector<int32_t>{static_cast<int32_t>(i) - 1} || layers[i].shares >= 0)
            return true;
    return false;
}

std::vector<LayerSpec> layer_specs(const Shape& input, const std::vector<Layer>& layers,
                                   const std::vector<std::string>& names) {
    return layer_specs(std::vector<Shape>{input}, layers, names);
}

namespace {

// A shared layer's call i: the same layer as its first call (kind and every argument), on inputs
// its weights fit. Its spec then declares no arrays: the first call's are its weights.
void check_shared_call(const std::vector<Layer>& layers, std::vector<LayerSpec>& specs, size_t i) {
    const int32_t first = layers[i].shares;
    if (first >= static_cast<int32_t>(i))
        throw Error("it shares the weights of layer " + std::to_string(first) + ", which is not an earlier layer");
    const Layer& owner = layers[static_cast<size_t>(first)];
    if (owner.shares >= 0)
        throw Error("it shares the weights of layer " + std::to_string(first) +
                    ", itself a second call; name the first call (layer " + std::to_string(owner.shares) + ")");
    if (owner.kind != layers[i].kind || layer_arguments(owner) != layer_arguments(layers[i]))
        throw Error("it shares the weights of layer " + std::to_string(first) + " (" + layer_kind(owner.kind).keras_class +
                    ") but has other arguments; a shared layer's calls are one layer");
    if (layers[i].activity_regularizer.active())  // (Keras 3 counts its last call's penalty only)
        throw Error("an activity_regularizer on a layer called more than once is not supported; put it on a layer "
                    "called once");
    std::vector<ParamSpec>& mine = specs[i].params;
    const std::vector<ParamSpec>& theirs = specs[static_cast<size_t>(first)].params;
    for (size_t a = 0; a < mine.size() && a < theirs.size(); ++a)
        if (mine[a].shape != theirs[a].shape)
            throw Error("this call's input " + shape_to_string(specs[i].input) + " needs a " + mine[a].name + " of shape " +
                        shape_to_string(mine[a].shape) + ", but the layer's first call built it as " +
                        shape_to_string(theirs[a].shape) + " (on " + shape_to_string(specs[static_cast<size_t>(first)].input) +
                        "); a layer called again takes inputs of the same shape");
    mine.clear();
}

}  // namespace

std::vector<LayerSpec> layer_specs(const std::vector<Shape>& inputs, const std::vector<Layer>& layers,
                                   const std::vector<std::string>& names) {
    const int32_t n_inputs = static_cast<int32_t>(inputs.size());
    std::vector<LayerSpec> specs;
    for (size_t i = 0; i < names.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (names[i] == names[j])  // (saved weights are found by layer name)
                throw Error("layer names must be unique, as Keras requires: '" + names[i] + "' names layers " +
                            std::to_string(j) + " and " + std::to_string(i));
    std::vector<bool> used(layers.size(), false), input_used(inputs.size(), false);
    for (size_t i = 0; i < layers.size(); ++i) {
        const LayerKindInfo& kind = layer_kind(layers[i].kind);
        try {
            std::vector<Shape> shapes;
            for (const int32_t source : layer_sources(layers, i)) {
                if (source < -n_inputs || source >= static_cast<int32_t>(i))
                    throw Error("its input " + std::to_string(source) + " is not an earlier layer's index (or " +
                                (n_inputs == 1 ? std::string("-1, the model's input)")
                                               : "-1 to -" + std::to_string(n_inputs) + ", the model's inputs)"));
                shapes.push_back(source < 0 ? inputs[static_cast<size_t>(-1 - source)]
                                            : specs[static_cast<size_t>(source)].output);
                (source < 0 ? input_used[static_cast<size_t>(-1 - source)] : used[static_cast<size_t>(source)]) = true;
            }
            if (!kind.merge_spec && shapes.size() != 1)
                throw Error("takes one input, got " + std::to_string(shapes.size()) + " (merge them first, e.g. Concatenate)");
            if (kind.merge_spec && (shapes.size() < 2 || shapes.size() > kMaxLayerInputs))
                throw Error("merges 2 to " + std::to_string(kMaxLayerInputs) + " inputs, got " +
                            std::to_string(shapes.size()));
            kind.check(layers[i]);  // a Layer built by hand, not by its constructor
            specs.push_back(kind.merge_spec ? kind.merge_spec(layers[i], shapes) : kind.spec(layers[i], shapes[0]));
            specs.back().input = shapes[0];
            specs.back().inputs = std::move(shapes);
            if (layers[i].shares >= 0) check_shared_call(layers, specs, i);
        } catch (const Error& e) {
            throw Error("layer '" + names[i] + "' (" + kind.keras_class + "): " + e.what());
        }
    }
    for (size_t i = 0; i + 1 < layers.size(); ++i)
        if (!used[i])
            throw Error("layer '" + names[i] + "' (" + layer_kind(layers[i].kind).keras_class +
                        "): its output is used by no later layer; a model has one output, its last layer's");
    for (size_t k = 0; k < inputs.size(); ++k)
        if (!input_used[k])
            throw Error("the model's input " + std::to_string(k) + " " + shape_to_string(inputs[k]) +
                        " is read by no layer; leave it out of the model's inputs");
    return specs;
}

std::vector<std::string> default_layer_names(const std::vector<Layer>& layers) {
    std::map<std::string, int> seen;
    std::set<std::string> given;  // a default name skips the names given to other layers, as Keras's do
    for (const Layer& layer : layers)
        if (!layer.name.empty()) given.insert(layer.name);
    std::vector<std::string> names;
    std::map<int32_t, int> calls;  // a shared layer's calls so far
    for (const Layer& layer : layers) {
        if (layer.shares >= 0 && layer.shares < static_cast<int32_t>(names.size()) && layer.name.empty()) {
            names.push_back(names[static_cast<size_t>(layer.shares)] + "@" + std::to_string(++calls[layer.shares]));
            continue;
        }
        if (!layer.name.empty()) {
            names.push_back(layer.name);
            continue;
        }
        const std::string base = layer_kind(layer.kind).default_name;
        std::string name;
        do {
            const int n = seen[base]++;
            name = n == 0 ? base : base + "_" + std::to_string(n);
        } while (given.count(name));
        names.push_back(name);
    }
    return names;
}

}  // namespace onefit::nn

namespace onefit {

std::string layer_class_name(Layer::Kind kind) { return nn::layer_kind(kind).keras_class; }

std::vector<std::string> default_layer_names(const std::vector<Layer>& layers) { return nn::default_layer_names(layers); }

Layer shared_call(const std::vector<Layer>& layers, size_t first, std::vector<int32_t> inputs) {
    if (first >= layers.size())
        throw Error("a shared layer's call: the model has no layer " + std::to_string(first));
    if (layers[first].shares >= 0)
        throw Error("a shared layer's call: layer " + std::to_string(first) + " is itself a later call of layer " +
                    std::to_string(layers[first].shares));
    Layer layer = layers[first];
    layer.name.clear();
    layer.shares = static_cast<int32_t>(first);
    layer.inputs = std::move(inputs);
    return layer;
}

std::vector<int32_t> layer_inputs_from_names(const std::vector<std::string>& inputs,
                                             const std::vector<std::string>& names, size_t layer) {
    std::vector<int32_t> indices;
    for (const std::string& input : inputs) {
        const auto it = std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(layer), input);
        if (it != names.begin() + static_cast<std::ptrdiff_t>(layer)) {
            indices.push_back(static_cast<int32_t>(it - names.begin()));
        } else if (input == "input") {
            indices.push_back(-1);
        } else if (input.rfind("input_", 0) == 0 && input.size() > 6 && input.size() < 10 &&
                   input.find_first_not_of("0123456789", 6) == std::string::npos) {
            indices.push_back(-1 - std::stoi(input.substr(6)));
        } else {
            throw Error("input '" + input + "' is no earlier layer's name (nor \"input\", the model's input, or "
                        "\"input_1\", ... of several)");
        }
    }
    return indices;
}

std::vector<std::string> layer_input_names(const Layer& layer, const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const int32_t i : layer.inputs) out.push_back(i < 0 ? model_input_name(i) : names.at(static_cast<size_t>(i)));
    return out;
}

std::string model_input_name(int32_t source) {
    return source == -1 ? std::string("input") : "input_" + std::to_string(-1 - source);
}

}  // namespace onefit
