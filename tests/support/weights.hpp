// Test helpers shared by the suites that compare trained weights.
#pragma once
#include <cmath>
#include <cstring>
#include <vector>

#include "onefit/tensor.hpp"

namespace onefit::testing_support {

// Bitwise equality of every weight array (same seed must mean the same bits). With
// any_nan_equal, a NaN equals any NaN: a fit that diverged holds NaN weights whose sign and
// payload depend on which NaN operand an fma propagates (ARM picks by operand position), which
// carries no meaning.
inline bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b, bool any_nan_equal = false) {
    if (a.size() != b.size()) return false;
    for (size_t t = 0; t < a.size(); ++t) {
        if (a[t].shape() != b[t].shape()) return false;
        for (int64_t i = 0; i < a[t].size(); ++i) {
            const float x = a[t].data()[i], y = b[t].data()[i];
            if (any_nan_equal && std::isnan(x) && std::isnan(y)) continue;
            if (std::memcmp(&x, &y, sizeof x) != 0) return false;
        }
    }
    return true;
}

}  // namespace onefit::testing_support
