// One layer of every kind, shared by the tests that must cover each kind (arguments, config files).
#pragma once
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.hpp"
#include "nn/layer_kinds.hpp"
#include "onefit/model.hpp"
#include "onefit/error.hpp"
#include "onefit/layers.hpp"

namespace onefit::layer_examples {

// One layer of every kind, each argument away from its default where it has one.
inline std::vector<Layer> one_of_each_kind() {
    Layer dense = Dense(5, "relu", false, "d");
    dense.kernel_initializer = "he_normal";
    dense.kernel_regularizer = {0.001f, 0.5f};
    return {dense,
            Dropout(0.3f),
            Flatten(),
            Reshape({2, -1}),
            Conv2D(4, {3, 2}, {2, 1}, "same", "tanh", false),
            MaxPooling2D({3, 3}, {2, 1}, "same"),
            AveragePooling2D(2, 1),
            GlobalAveragePooling2D(),
            BatchNormalization(0.9f, 1e-2f, false, true),
            make_layer("activation", {{"activation", std::string("tanh")}}),
            make_layer("relu", {{"max_value", 6.0}, {"negative_slope", 0.1}, {"threshold", 0.5}}),
            make_layer("leaky_relu", {{"negative_slope", 0.2}}),
            make_layer("softmax", {{"axis", int64_t{2}}}),
            make_layer("layer_normalization", {{"epsilon", 0.01}, {"center", false}}),
            make_layer("embedding", {{"input_dim", int64_t{10}}, {"output_dim", int64_t{4}},
                                     {"embeddings_initializer", std::string("glorot_uniform")}}),
            make_layer("conv1d", {{"filters", int64_t{3}}, {"kernel_size", int64_t{5}}, {"strides", int64_t{2}},
                                  {"padding", std::string("same")}, {"use_bias", false}}),
            make_layer("max_pooling1d", {{"pool_size", int64_t{3}}, {"strides", int64_t{1}}}),
            make_layer("average_pooling1d", {{"padding", std::string("same")}}),
            make_layer("global_average_pooling1d", {}),
            make_layer("global_max_pooling1d", {}),
            make_layer("global_max_pooling2d", {}),
            make_layer("add"),
            make_layer("subtract"),
            make_layer("multiply"),
            make_layer("average"),
            make_layer("maximum"),
            make_layer("minimum"),
            make_layer("dot", {{"axes", int64_t{-1}}, {"normalize", true}}),
            make_layer("concatenate", {{"axis", int64_t{3}}})};
}

// The first of a few input shapes the layer takes (a vector, an image, a sequence).
inline Shape input_shape_for(const Layer& layer) {
    for (const Shape& shape : {Shape{4}, Shape{6, 6, 2}, Shape{8, 3}}) {
        try {
            nn::layer_specs(shape, {layer}, {"probe"});
            return shape;
        } catch (const Error&) {
        }
    }
    ADD_FAILURE() << layer_type(layer.kind) << " takes none of the probe shapes";
    return {4};
}

// Weights drawn away from their initial values (a BatchNormalization's moving statistics too,
// its variances kept positive), small enough that no softmax saturates and hides a difference.
inline void randomise_weights(Sequential& model, uint64_t seed) {
    Rng rng(seed);
    std::vector<Tensor> weights = model.get_weights();
    size_t next = 0;
    for (const nn::LayerSpec& spec : nn::layer_specs(model.input_shape(), model.layers(), model.layer_names()))
        for (const nn::ParamSpec& param : spec.params) {
            Tensor& w = weights[next++];
            const bool positive = std::string(param.name) == "moving_variance";
            for (int64_t i = 0; i < w.size(); ++i) w.data()[i] = positive ? 0.5f + rng.uniform_float() : rng.uniform_float() - 0.5f;
        }
    model.set_weights(weights);
}

// `rows` inputs for `model`: values in [-1, 1), or an Embedding's indices 0..9.
inline Tensor test_inputs(const Sequential& model, int64_t rows, bool indices, uint64_t seed) {
    Tensor x({rows, shape_elements(model.input_shape())});
    Rng rng(seed);
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = indices ? static_cast<float>(i % 10) : 2.0f * rng.uniform_float() - 1.0f;
    return x;
}

}  // namespace onefit::layer_examples
