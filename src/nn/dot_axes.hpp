// Dot's contracted axes, as every surface reads them (the op, its ONNX lowering): plain, not per
// SIMD target, so the exporter shares the op's rule instead of writing it again.
#pragma once
#include <cstdint>

#include "onefit/layers.hpp"

namespace onefit::nn {

// The axis of Dot input `which` (0 or 1) of `rank` dimensions per sample that is contracted,
// 1-based per sample (Keras's numbering, the batch 0; a negative axis counts from the last).
inline int64_t dot_axis(const Layer& layer, size_t rank, int which) {
    const int64_t axis = layer.axes[static_cast<size_t>(which)];
    return axis < 0 ? axis + static_cast<int64_t>(rank) + 1 : axis;
}

}  // namespace onefit::nn
