// Keras's Functional API: Input(shape) makes a model's input tensor, calling a layer on tensors
// makes its output tensor (Dense(32, "relu")(x), Add()({a, b})), and Model(input, output) makes
// the model of every layer between them. A layer called again under the name of an earlier
// call is that layer, shared (its weights used by both calls, as a Keras layer called twice):
// name a layer to call it more than once. The model is a Sequential whose layers carry their
// inputs (Layer::inputs): compiled, fitted and saved as any other, as one program. A model of
// several inputs takes their values side by side in each row of its data.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "onefit/layers.hpp"
#include "onefit/model.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

// A symbolic tensor: a model's input, or a layer's output given its input tensors. Cheap to
// copy; a tensor read by several layers is one node of the graph (its output is shared).
class Node {
public:
    struct Data {
        bool is_input = false;
        Shape shape;  // an input's per-sample shape
        Layer layer;  // a layer's, with its input tensors
        std::vector<Node> inputs;
    };
    const Data& data() const;
    bool operator==(const Node& other) const { return data_ == other.data_; }

private:
    friend Node Input(Shape shape);
    friend Node call(const Layer& layer, const std::vector<Node>& inputs);
    std::shared_ptr<const Data> data_;
};

// A model's input tensor for samples of this shape (features, (steps, channels) or (h, w, c)).
Node Input(Shape shape);
// The layer's output on these tensors (one, or two or more for a merge layer). Layer::inputs is
// set by Model, not here; a layer given inputs already is refused.
Node call(const Layer& layer, const std::vector<Node>& inputs);

// The model from `input` to `output`: every layer `output` depends on, in an order where each
// comes after its inputs (depth first, inputs in order, as they were called). Throws Error when
// the output does not depend on `input` or depends on another Input.
Sequential Model(const Node& input, const Node& output, uint64_t seed = 0);
// A model of several inputs, as keras.Model([a, b], output): its data's rows hold the inputs'
// values side by side in this order, each flattened (Sequential::with_inputs). Every input must
// be read by some layer; the output must depend on no other Input.
Sequential Model(const std::vector<Node>& inputs, const Node& output, uint64_t seed = 0);

}  // namespace onefit
