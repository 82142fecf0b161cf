// Test helpers shared by the suites that compare trained weights.
#pragma once
#include <cstring>
#include <vector>

#include "onefit/tensor.hpp"

namespace onefit::testing_support {

// Bitwise equality of every weight array (same seed must mean the same bits).
inline bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].shape() != b[i].shape() ||
            std::memcmp(a[i].data(), b[i].data(), sizeof(float) * static_cast<size_t>(a[i].size())) != 0)
            return false;
    return true;
}

}  // namespace onefit::testing_support
