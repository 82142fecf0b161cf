// ONNX export: the model's predict as an ONNX graph (opset 17), built with ONNX's own protobuf
// classes (Debian's libonnx-dev) and checked with its checker before it is written. Tensors keep
// Keras's channels-last layout; the ops ONNX defines channels-first (Conv, the pools) are wrapped
// in a Transpose each way, which onnxruntime's optimiser folds between neighbours.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nn/dot_axes.hpp"
#include "nn/layer_kinds.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"
#include "onefit/model.hpp"
#if ONEFIT_HAVE_ONNX
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#endif

namespace onefit {

#if ONEFIT_HAVE_ONNX
namespace {

constexpr int64_t kOpset = 17;  // LayerNormalization's first; what Debian's ONNX 1.12 checks

// A graph being built: nodes and initialisers, each output named after its layer.
class OnnxGraph {
public:
    explicit OnnxGraph(onnx::GraphProto& graph) : graph_(graph) {}

    std::string floats(const std::string& name, const Shape& shape, const float* data) {
        onnx::TensorProto& t = *graph_.add_initializer();
        t.set_name(name);
        t.set_data_type(onnx::TensorProto::FLOAT);
        int64_t n = 1;
        for (int64_t d : shape) t.add_dims(d), n *= d;
        t.set_raw_data(std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(n) * sizeof(float)));
        return name;
    }
    std::string scalar(const std::string& name, float value) { return floats(name, {}, &value); }
    std::string ints(const std::string& name, const std::vector<int64_t>& values) {
        onnx::TensorProto& t = *graph_.add_initializer();
        t.set_name(name);
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_dims(static_cast<int64_t>(values.size()));
        for (int64_t v : values) t.add_int64_data(v);
        return name;
    }
    // A node of `type` over `inputs`, its one output named `output`.
    onnx::NodeProto& node(const std::string& type, const std::vector<std::string>& inputs, const std::string& output) {
        onnx::NodeProto& n = *graph_.add_node();
        n.set_op_type(type);
        n.set_name(output);
        for (const std::string& i : inputs) n.add_input(i);
        n.add_output(output);
        return n;
    }
    std::string op(const std::string& type, const std::vector<std::string>& inputs, const std::string& output) {
        node(type, inputs, output);
        return output;
    }

private:
    onnx::GraphProto& graph_;
};

void attribute(onnx::NodeProto& n, const char* name, int64_t value) {
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name), a.set_type(onnx::AttributeProto::INT), a.set_i(value);
}
void attribute(onnx::NodeProto& n, const char* name, float value) {
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name), a.set_type(onnx::AttributeProto::FLOAT), a.set_f(value);
}
void attribute(onnx::NodeProto& n, const char* name, const std::vector<int64_t>& values) {
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name), a.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a.add_ints(v);
}

std::string activation(OnnxGraph& g, Activation kind, const std::string& x, const std::string& at) {
    switch (kind) {
        case Activation::linear: return x;
        case Activation::relu: return g.op("Relu", {x}, at + "/relu");
        case Activation::leaky_relu: attribute(g.node("LeakyRelu", {x}, at + "/leaky_relu"), "alpha", 0.2f); return at + "/leaky_relu";
        case Activation::elu: attribute(g.node("Elu", {x}, at + "/elu"), "alpha", 1.0f); return at + "/elu";
        case Activation::sigmoid: return g.op("Sigmoid", {x}, at + "/sigmoid");
        case Activation::tanh: return g.op("Tanh", {x}, at + "/tanh");
        case Activation::softmax: attribute(g.node("Softmax", {x}, at + "/softmax"), "axis", int64_t{-1}); return at + "/softmax";
        case Activation::gelu: {  // exact: x/2 (1 + erf(x / sqrt 2)); opset 17 has no Gelu
            const std::string e = g.op("Erf", {g.op("Mul", {x, g.scalar(at + "/gelu_c", float(M_SQRT1_2))}, at + "/gelu_s")}, at + "/gelu_erf");
            const std::string one_plus = g.op("Add", {e, g.scalar(at + "/gelu_one", 1.0f)}, at + "/gelu_p");
            return g.op("Mul", {g.op("Mul", {x, g.scalar(at + "/gelu_half", 0.5f)}, at + "/gelu_h"), one_plus}, at + "/gelu");
        }
        case Activation::swish: return g.op("Mul", {x, g.op("Sigmoid", {x}, at + "/swish_s")}, at + "/swish");
    }
    throw Error("export_onnx: an activation ONNX export does not know");
}

// Channels-last x through a channels-first op: Transpose in, the op, Transpose out.
std::string channels_first(OnnxGraph& g, const std::string& x, size_t spatial, const std::string& at,
                           const std::function<std::string(const std::string&)>& op) {
    std::vector<int64_t> in{0, static_cast<int64_t>(spatial) + 1}, out{0};
    for (size_t d = 0; d < spatial; ++d) in.push_back(static_cast<int64_t>(d) + 1), out.push_back(static_cast<int64_t>(d) + 2);
    out.push_back(1);
    attribute(g.node("Transpose", {x}, at + "/to_nchw"), "perm", in);
    const std::string y = op(at + "/to_nchw");
    attribute(g.node("Transpose", {y}, at + "/to_nhwc"), "perm", out);
    return at + "/to_nhwc";
}

// A kernel transposed from Keras's (spatial..., in, filters) to ONNX's (filters, in, spatial...).
std::vector<float> onnx_kernel(const Tensor& w) {
    const Shape& s = w.shape();
    const size_t rank = s.size();
    const int64_t f = s[rank - 1], c = s[rank - 2], area = w.size() / (f * c);
    std::vector<float> out(static_cast<size_t>(w.size()));
    for (int64_t p = 0; p < area; ++p)
        for (int64_t i = 0; i < c; ++i)
            for (int64_t o = 0; o < f; ++o) out[static_cast<size_t>((o * c + i) * area + p)] = w.data()[(p * c + i) * f + o];
    return out;
}

struct LayerInOut {
    const Layer& layer;
    const nn::LayerSpec& spec;
    std::vector<std::string> inputs;
    const Tensor* params;  // the layer's arrays, spec.params.size() of them
    std::string at;        // its name, the prefix of its nodes' names
};

// A windowed op (Conv, MaxPool, AveragePool) over the spec's window: 2-D, or 1-D (a window of
// height 1). ONNX's pads are the begins then the ends; "same" pads the smaller half first, as Keras.
std::string window_op(OnnxGraph& g, const LayerInOut& l, const std::string& type, size_t spatial,
                      const std::vector<std::string>& extra) {
    const nn::Window2D& w = l.spec.window;
    const auto end = [](int64_t in, int64_t out, int64_t k, int64_t s, int64_t begin) {
        return std::max<int64_t>((out - 1) * s + k - in - begin, 0);
    };
    std::vector<int64_t> k{w.k_w}, s{w.stride_w},
        pads{w.pad_left, end(w.in_w, w.out_w, w.k_w, w.stride_w, w.pad_left)};
    if (spatial == 2)
        k = {w.k_h, w.k_w}, s = {w.stride_h, w.stride_w},
        pads = {w.pad_top, w.pad_left, end(w.in_h, w.out_h, w.k_h, w.stride_h, w.pad_top), pads[1]};
    return channels_first(g, l.inputs[0], spatial, l.at, [&](const std::string& x) {
        std::vector<std::string> inputs{x};
        inputs.insert(inputs.end(), extra.begin(), extra.end());
        onnx::NodeProto& n = g.node(type, inputs, l.at + "/" + type);
        attribute(n, "kernel_shape", k), attribute(n, "strides", s), attribute(n, "pads", pads);
        return l.at + "/" + type;
    });
}

std::string convolution(OnnxGraph& g, const LayerInOut& l, size_t spatial) {
    const Tensor& kernel = l.params[0];
    Shape shape{kernel.shape().back(), kernel.shape()[kernel.shape().size() - 2]};
    shape.insert(shape.end(), kernel.shape().begin(), kernel.shape().end() - 2);
    std::vector<std::string> extra{g.floats(l.at + "/kernel", shape, onnx_kernel(kernel).data())};
    if (l.layer.use_bias) extra.push_back(g.floats(l.at + "/bias", l.params[1].shape(), l.params[1].data()));
    return activation(g, l.layer.activation, window_op(g, l, "Conv", spatial, extra), l.at);
}

std::string reduce(OnnxGraph& g, const LayerInOut& l, const char* type, std::vector<int64_t> axes) {
    onnx::NodeProto& n = g.node(type, {l.inputs[0]}, l.at + "/" + type);
    attribute(n, "axes", axes), attribute(n, "keepdims", int64_t{0});
    return l.at + "/" + type;
}

// Dot: each input as (batch, rows, k) with k the contracted axis (a vector is one row), scaled to
// unit length along k as Keras's normalize (x * min(1 / sqrt(sum x^2), 1e7)), then one MatMul.
std::string dot(OnnxGraph& g, const Layer& layer, const LayerInOut& l) {
    std::string side[2];
    for (int s = 0; s < 2; ++s) {
        const Shape& shape = l.spec.inputs[static_cast<size_t>(s)];
        const std::string at = l.at + "/in" + std::to_string(s);
        std::string x = l.inputs[static_cast<size_t>(s)];
        if (shape.size() == 1) {
            x = g.op("Unsqueeze", {x, g.ints(at + "/row_axis", {1})}, at + "/row");
        } else {
            if (nn::dot_axis(layer, shape.size(), s) == 1) {
                attribute(g.node("Transpose", {x}, at + "/k_last"), "perm", std::vector<int64_t>{0, 2, 1});
                x = at + "/k_last";
            }
        }
        if (layer.normalize) {
            onnx::NodeProto& squares = g.node("ReduceSumSquare", {x}, at + "/squares");
            attribute(squares, "axes", std::vector<int64_t>{-1});
            attribute(squares, "keepdims", int64_t{1});
            const std::string inv = g.op("Reciprocal", {g.op("Sqrt", {at + "/squares"}, at + "/norm")}, at + "/inv_norm");
            x = g.op("Mul", {x, g.op("Min", {inv, g.scalar(at + "/max_inv", 1e7f)}, at + "/inv_clamped")}, at + "/unit");
        }
        side[s] = x;
    }
    attribute(g.node("Transpose", {side[1]}, l.at + "/in1_t"), "perm", std::vector<int64_t>{0, 2, 1});
    const std::string product = g.op("MatMul", {side[0], l.at + "/in1_t"}, l.at + "/matmul");  // (batch, r0, r1)
    if (l.spec.inputs[0].size() == 1) return g.op("Reshape", {product, g.ints(l.at + "/shape", {-1, 1})}, l.at + "/dot");
    return product;
}

std::string variadic(OnnxGraph& g, const LayerInOut& l, const char* type) {  // Add, Mul over 2+ inputs
    std::string y = l.inputs[0];
    for (size_t i = 1; i < l.inputs.size(); ++i) y = g.op(type, {y, l.inputs[i]}, l.at + "/" + type + std::to_string(i));
    return y;
}

std::string lower(OnnxGraph& g, const LayerInOut& l) {
    using K = Layer::Kind;
    const Layer& layer = l.layer;
    const std::string& x = l.inputs[0];
    switch (layer.kind) {
        case K::Dense: {
            std::string y = g.op("MatMul", {x, g.floats(l.at + "/kernel", l.params[0].shape(), l.params[0].data())}, l.at + "/matmul");
            if (layer.use_bias) y = g.op("Add", {y, g.floats(l.at + "/bias", l.params[1].shape(), l.params[1].data())}, l.at + "/bias_add");
            return activation(g, layer.activation, y, l.at);
        }
        case K::Dropout: return g.op("Identity", {x}, l.at + "/identity");
        case K::Flatten: attribute(g.node("Flatten", {x}, l.at + "/flatten"), "axis", int64_t{1}); return l.at + "/flatten";
        case K::Reshape: {
            std::vector<int64_t> shape{-1};
            shape.insert(shape.end(), l.spec.output.begin(), l.spec.output.end());
            return g.op("Reshape", {x, g.ints(l.at + "/shape", shape)}, l.at + "/reshape");
        }
        case K::Conv2D: return convolution(g, l, 2);
        case K::Conv1D: return convolution(g, l, 1);
        case K::MaxPooling2D: return window_op(g, l, "MaxPool", 2, {});
        case K::AveragePooling2D: return window_op(g, l, "AveragePool", 2, {});
        case K::MaxPooling1D: return window_op(g, l, "MaxPool", 1, {});
        case K::AveragePooling1D: return window_op(g, l, "AveragePool", 1, {});
        case K::GlobalAveragePooling2D: return reduce(g, l, "ReduceMean", {1, 2});
        case K::GlobalMaxPooling2D: return reduce(g, l, "ReduceMax", {1, 2});
        case K::GlobalAveragePooling1D: return reduce(g, l, "ReduceMean", {1});
        case K::GlobalMaxPooling1D: return reduce(g, l, "ReduceMax", {1});
        case K::BatchNormalization: {  // predict's: (x - moving_mean) / sqrt(moving_variance + eps) * gamma + beta
            const int64_t c = l.spec.input.back();
            const Tensor* p = l.params;
            const float* gamma = layer.scale ? (p++)->data() : nullptr;
            const float* beta = layer.center ? (p++)->data() : nullptr;
            const float *mean = p[0].data(), *variance = p[1].data();
            std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
            for (int64_t i = 0; i < c; ++i) {
                scale[i] = (gamma ? gamma[i] : 1.0f) / std::sqrt(variance[i] + layer.epsilon);
                shift[i] = (beta ? beta[i] : 0.0f) - mean[i] * scale[i];
            }
            const std::string y = g.op("Mul", {x, g.floats(l.at + "/scale", {c}, scale.data())}, l.at + "/mul");
            return g.op("Add", {y, g.floats(l.at + "/shift", {c}, shift.data())}, l.at + "/add");
        }
        case K::LayerNormalization: {
            const int64_t c = l.spec.input.back();
            const std::vector<float> ones(static_cast<size_t>(c), 1.0f), zeros(static_cast<size_t>(c), 0.0f);
            const Tensor* p = l.params;
            const float* gamma = layer.scale ? (p++)->data() : ones.data();
            const float* beta = layer.center ? p->data() : zeros.data();
            onnx::NodeProto& n = g.node("LayerNormalization", {x, g.floats(l.at + "/gamma", {c}, gamma), g.floats(l.at + "/beta", {c}, beta)},
                                        l.at + "/layer_norm");
            attribute(n, "axis", int64_t{-1}), attribute(n, "epsilon", layer.epsilon);
            return l.at + "/layer_norm";
        }
        case K::Embedding: {  // indices arrive as floats, as onefit's inputs are
            attribute(g.node("Cast", {x}, l.at + "/indices"), "to", int64_t{onnx::TensorProto::INT64});
            attribute(g.node("Gather", {g.floats(l.at + "/embeddings", l.params[0].shape(), l.params[0].data()), l.at + "/indices"},
                             l.at + "/gather"),
                      "axis", int64_t{0});
            return l.at + "/gather";
        }
        case K::Activation: return activation(g, layer.activation, x, l.at);
        case K::ReLU: {  // x above the threshold (at most max_value), negative_slope * (x - threshold) at or below
            const std::string t = g.scalar(l.at + "/threshold", layer.threshold);
            std::string above = x;
            if (std::isfinite(layer.max_value)) above = g.op("Min", {x, g.scalar(l.at + "/max_value", layer.max_value)}, l.at + "/min");
            const std::string below = g.op("Mul", {g.op("Sub", {x, t}, l.at + "/sub"), g.scalar(l.at + "/slope", layer.negative_slope)}, l.at + "/below");
            return g.op("Where", {g.op("Greater", {x, t}, l.at + "/above"), above, below}, l.at + "/where");
        }
        case K::LeakyReLU: attribute(g.node("LeakyRelu", {x}, l.at + "/leaky_relu"), "alpha", layer.negative_slope); return l.at + "/leaky_relu";
        case K::Softmax: attribute(g.node("Softmax", {x}, l.at + "/softmax"), "axis", layer.axis); return l.at + "/softmax";
        case K::Add: return variadic(g, l, "Add");
        case K::Multiply: return variadic(g, l, "Mul");
        case K::Subtract: return g.op("Sub", {l.inputs[0], l.inputs[1]}, l.at + "/sub");
        case K::Average: return g.op("Mean", l.inputs, l.at + "/mean");
        case K::Maximum: return g.op("Max", l.inputs, l.at + "/max");
        case K::Minimum: return g.op("Min", l.inputs, l.at + "/min");
        case K::Dot: return dot(g, layer, l);
        case K::Concatenate: attribute(g.node("Concat", l.inputs, l.at + "/concat"), "axis", layer.axis); return l.at + "/concat";
    }
    throw Error("export_onnx: layer '" + l.at + "' is a kind ONNX export does not know");
}

void value_info(onnx::ValueInfoProto& v, const std::string& name, const Shape& per_sample) {
    v.set_name(name);
    onnx::TypeProto_Tensor& t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx::TensorProto::FLOAT);
    t.mutable_shape()->add_dim()->set_dim_param("batch");
    for (int64_t d : per_sample) t.mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace

void export_onnx(const Sequential& model, const std::string& path) {
    const std::vector<Layer>& layers = model.layers();
    if (layers.empty()) throw Error("export_onnx " + path + ": the model has no layers");
    const std::vector<std::string> names = model.layer_names();
    const std::vector<nn::LayerSpec> specs = nn::layer_specs(model.input_shapes(), layers, names);
    const std::vector<Tensor> weights = model.get_weights();
    onnx::ModelProto proto;
    proto.set_ir_version(8);
    proto.set_producer_name("onefit");
    proto.add_opset_import()->set_version(kOpset);
    onnx::GraphProto& graph = *proto.mutable_graph();
    graph.set_name(nn::is_graph(layers) ? "functional" : "sequential");
    // One graph input per model input: "input", or of several "input", "input_1", ... (model_input_name).
    for (size_t k = 0; k < model.input_shapes().size(); ++k)
        value_info(*graph.add_input(), model_input_name(-1 - static_cast<int32_t>(k)), model.input_shapes()[k]);
    OnnxGraph g(graph);
    std::vector<std::string> outputs;
    std::vector<size_t> first(layers.size(), 0);  // each layer's first array in weights (a shared layer's call: its layer's)
    for (size_t i = 0, next = 0; i < layers.size(); ++i) {
        first[i] = layers[i].shares >= 0 ? first[static_cast<size_t>(layers[i].shares)] : next;
        next += specs[i].params.size();
        std::vector<std::string> inputs;
        if (layers[i].inputs.empty()) inputs.push_back(i == 0 ? "input" : outputs.back());
        for (int32_t from : layers[i].inputs) inputs.push_back(from < 0 ? model_input_name(from) : outputs[static_cast<size_t>(from)]);
        // (A shared layer's later call writes its own copy of the weights, under its call's name.)
        outputs.push_back(lower(g, {layers[i], specs[i], inputs, weights.data() + first[i], names[i]}));
    }
    g.op("Identity", {outputs.back()}, "output");
    value_info(*graph.add_output(), "output", specs.back().output);
    try {
        onnx::checker::check_model(proto);
    } catch (const std::exception& e) {  // a bug in the lowering above, not in the model
        throw Error("export_onnx " + path + ": ONNX's checker refused the exported graph: " + e.what());
    }
    std::string bytes;
    if (!proto.SerializeToString(&bytes)) throw Error("export_onnx " + path + ": the ONNX model could not be serialised");
    write_file_atomically(path, bytes);
}

#else

void export_onnx(const Sequential&, const std::string& path) {
    throw Error(path + ": this onefit was built without ONNX export (configure with -DONEFIT_ONNX=ON and Debian's "
                       "libonnx-dev and libprotobuf-dev)");
}

#endif

}  // namespace onefit
