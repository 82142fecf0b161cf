// One layer of every kind, shared by the tests that must cover each kind (arguments, config files).
#pragma once
#include <string>
#include <vector>

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
            make_layer("concatenate", {{"axis", int64_t{3}}})};
}

}  // namespace onefit::layer_examples
