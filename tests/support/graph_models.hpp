// What the Functional-model suites share: a layer given its inputs, a call's Error message, and
// features from a small formula.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "onefit/error.hpp"
#include "onefit/layers.hpp"
#include "onefit/tensor.hpp"

namespace onefit::testing_support {

inline Layer reading(Layer layer, std::vector<int32_t> inputs) {
    layer.inputs = std::move(inputs);
    return layer;
}

// The Error message `f` throws ("" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// rows x width values in [-0.4, 0.6), varied by salt.
inline Tensor ramp(int64_t rows, int64_t width, int salt) {
    Tensor t({rows, width});
    for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>((i * 7 + salt * 5) % 13) / 13.0f - 0.4f;
    return t;
}

}  // namespace onefit::testing_support
