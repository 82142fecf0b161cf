// The Functional API: tensors as graph nodes, and the model of the layers between an input and an output.
#include "onefit/functional.hpp"

#include <functional>
#include <limits>
#include <map>

#include "onefit/error.hpp"
#include "nn/layer_kinds.hpp"
#include "program/training_program.hpp"

namespace onefit {

const Node::Data& Node::data() const {
    if (!data_) throw Error("Functional API: an empty tensor (make one with Input(shape) or a layer call)");
    return *data_;
}

Node Input(Shape shape) {
    check_input_shape(shape);
    Node node;
    auto data = std::make_shared<Node::Data>();
    data->is_input = true;
    data->shape = std::move(shape);
    node.data_ = std::move(data);
    return node;
}

Node call(const Layer& layer, const std::vector<Node>& inputs) {
    const std::string what = layer_class_name(layer.kind) + (layer.name.empty() ? "" : " '" + layer.name + "'");
    if (inputs.empty()) throw Error(what + ": called on no tensors");
    if (!layer.inputs.empty())
        throw Error(what + ": its inputs are set already (Layer::inputs); call it on tensors or set them, not both");
    for (const Node& input : inputs) input.data();  // (an empty one is refused)
    Node node;
    auto data = std::make_shared<Node::Data>();
    data->layer = layer;
    data->inputs = inputs;
    node.data_ = std::move(data);
    return node;
}

Node Layer::operator()(const Node& input) const { return call(*this, {input}); }
Node Layer::operator()(const std::vector<Node>& inputs) const { return call(*this, inputs); }

Sequential Model(const Node& input, const Node& output, uint64_t seed) {
    return Model(std::vector<Node>{input}, output, seed);
}

Sequential Model(const std::vector<Node>& inputs, const Node& output, uint64_t seed) {
    if (inputs.empty()) throw Error("Model: it has no inputs");
    std::vector<Shape> shapes;
    // Depth first from the output, each layer after its inputs: the list order and every index
    // (input k: -1 - k).
    std::map<const Node::Data*, int32_t> index;
    for (size_t k = 0; k < inputs.size(); ++k) {
        const Node::Data& d = inputs[k].data();
        if (!d.is_input)
            throw Error("Model: input " + std::to_string(k) + " must be an Input(shape) tensor, not a layer's output");
        if (!index.emplace(&d, -1 - static_cast<int32_t>(k)).second)
            throw Error("Model: input " + std::to_string(k) + " is given twice");
        shapes.push_back(d.shape);
    }
    if (output.data().is_input) throw Error("Model: its output is an input; call a layer on it first");
    constexpr int32_t kPlacing = std::numeric_limits<int32_t>::min();
    std::vector<Layer> layers;
    const std::function<int32_t(const Node&)> place = [&](const Node& node) -> int32_t {
        const Node::Data& d = node.data();
        if (const auto it = index.find(&d); it != index.end()) {
            if (it->second == kPlacing)
                throw Error("Model: the graph has a cycle at layer " + layer_class_name(d.layer.kind));
            return it->second;
        }
        if (d.is_input)
            throw Error("Model: the output depends on an Input " + shape_to_string(d.shape) +
                        " that is not among the model's inputs; add it to them");
        index[&d] = kPlacing;
        Layer layer = d.layer;
        for (const Node& source : d.inputs) layer.inputs.push_back(place(source));
        // A name given to an earlier call: the same layer called again, on its weights (Keras's
        // shared layer; layer_specs checks that its arguments are that layer's).
        for (size_t j = 0; j < layers.size() && !layer.name.empty(); ++j)
            if (layers[j].shares < 0 && layers[j].name == layer.name) {
                layer.shares = static_cast<int32_t>(j);
                layer.name.clear();
            }
        index[&d] = static_cast<int32_t>(layers.size());
        layers.push_back(std::move(layer));
        return index[&d];
    };
    place(output);
    Sequential model = Sequential::with_inputs(std::move(shapes), seed);
    for (size_t i = 0; i < layers.size(); ++i) {
        // A chain link is left implicit, so a chain made this way is a Sequential model.
        if (layers[i].inputs == std::vector<int32_t>{static_cast<int32_t>(i) - 1}) layers[i].inputs.clear();
        model.add(std::move(layers[i]));
    }
    nn::layer_specs(model.input_shapes(), model.layers(), model.layer_names());  // every input is read
    return model;
}

}  // namespace onefit
