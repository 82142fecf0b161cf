// Layers, described as plain values: Dense(32, "relu"), Dropout(0.5).
// compile() lowers them into the training program; they carry no buffers themselves.
#pragma once
#include <cstdint>
#include <string>

namespace onefit {

// Keras's activation names. leaky_relu uses Keras's default negative slope 0.2,
// elu alpha 1.0, gelu the exact erf form (approximate=False), swish x*sigmoid(x).
enum class Activation { linear, relu, leaky_relu, elu, sigmoid, tanh, softmax, gelu, swish };

Activation activation_from_name(const std::string& name);  // throws Error listing the known names
std::string activation_name(Activation activation);

struct Layer {
    enum class Kind { Dense, Dropout };
    Kind kind = Kind::Dense;
    std::string name;  // Keras-style default ("dense", "dense_1", ...) when empty
    // Dense
    int64_t units = 0;
    Activation activation = Activation::linear;
    bool use_bias = true;
    std::string kernel_initializer = "glorot_uniform";
    std::string bias_initializer = "zeros";
    // Dropout: fraction of inputs zeroed during training (inverted dropout, scale 1/(1-rate)).
    float rate = 0.0f;
};

Layer Dense(int64_t units, const std::string& activation = "linear", bool use_bias = true,
            const std::string& name = "");
Layer Dense(int64_t units, Activation activation, bool use_bias = true, const std::string& name = "");
Layer Dropout(float rate, const std::string& name = "");

}  // namespace onefit
