#include "data/row_checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "onefit/error.hpp"

namespace onefit {

// Every fit scans all of x and y (MNIST: 47 M floats); a loop that stops at the first bad value
// cannot vectorise, so each chunk is checked whole and searched only if it failed.
int64_t first_non_finite(const float* v, int64_t n) {
    constexpr int64_t kChunk = 4096;
    for (int64_t start = 0; start < n; start += kChunk) {
        const int64_t end = std::min(n, start + kChunk);
        int bad = 0;
        for (int64_t i = start; i < end; ++i) bad |= !(std::fabs(v[i]) <= std::numeric_limits<float>::max());
        if (bad)
            for (int64_t i = start; i < end; ++i)
                if (!std::isfinite(v[i])) return i;
    }
    return n;
}

void check_sample_weight(const Tensor& weights, int64_t rows, const std::string& what, const std::string& rows_owner) {
    if (weights.rank() < 1 || weights.rank() > 2 || (weights.rank() == 2 && weights.row_width() != 1))
        throw Error(what + " has shape " + shape_to_string(weights.shape()) + "; it takes one weight per row, (N,)");
    if (weights.rows() != rows)
        throw Error(what + " has " + std::to_string(weights.rows()) + " rows but " + rows_owner + " " + std::to_string(rows));
    if (const int64_t i = first_non_finite(weights.data(), weights.size()); i < weights.size())
        throw Error(what + " holds a non-finite value at row " + std::to_string(i));
}

}  // namespace onefit
