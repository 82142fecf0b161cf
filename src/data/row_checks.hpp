// Checks of per-row arrays shared by fit's arrays (src/train) and Datasets.
#pragma once
#include <cstdint>
#include <string>

#include "onefit/tensor.hpp"

namespace onefit {

// The index of the first NaN or infinity in v[0, n), or n.
int64_t first_non_finite(const float* v, int64_t n);

// Throws Error unless `weights` is one finite weight per row of `rows` rows, (N,) or (N, 1).
// Messages start with `what`; `rows_owner` says whose rows they are ("the features have", "x has").
void check_sample_weight(const Tensor& weights, int64_t rows, const std::string& what, const std::string& rows_owner);

}  // namespace onefit
