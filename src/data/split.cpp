// train_test_split with scikit-learn's sizes and row layout (sklearn.model_selection).
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

std::string format_double(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

}  // namespace

TrainTestSplit train_test_split(const Tensor& x, const Tensor& y, double test_size, bool shuffle, uint64_t seed) {
    if (x.rank() < 1 || y.rank() < 1)
        throw Error("train_test_split needs x and y with a row dimension, got shapes " + shape_to_string(x.shape()) +
                    " and " + shape_to_string(y.shape()));
    if (x.rows() != y.rows())
        throw Error("train_test_split: x has " + std::to_string(x.rows()) + " rows but y has " +
                    std::to_string(y.rows()) + "; give one label per row");
    if (!(test_size > 0.0 && test_size < 1.0))
        throw Error("train_test_split: test_size must be between 0 and 1 (exclusive), got " +
                    format_double(test_size) + "; e.g. 0.2 keeps 20% of the rows for testing");
    const int64_t n = x.rows();
    // Exactly sklearn's arithmetic, floating-point rounding included: ceil(0.07 * 100) is 8.
    const int64_t n_test = static_cast<int64_t>(std::ceil(test_size * static_cast<double>(n)));
    const int64_t n_train = n - n_test;
    if (n_train <= 0 || n_test <= 0)
        throw Error("train_test_split: with " + std::to_string(n) + " rows and test_size=" + format_double(test_size) +
                    " the " + (n_train <= 0 ? "train" : "test") +
                    " set would be empty; use more rows or another test_size");

    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::vector<int64_t> train_rows, test_rows;
    if (shuffle) {
        // sklearn's ShuffleSplit takes the test rows from the front of the permutation.
        Rng rng(seed);
        rng.shuffle(order.data(), n);
        test_rows.assign(order.begin(), order.begin() + n_test);
        train_rows.assign(order.begin() + n_test, order.end());
    } else {
        train_rows.assign(order.begin(), order.begin() + n_train);
        test_rows.assign(order.begin() + n_train, order.end());
    }
    TrainTestSplit split;
    split.x_train = x.gather_rows(train_rows);
    split.x_test = x.gather_rows(test_rows);
    split.y_train = y.gather_rows(train_rows);
    split.y_test = y.gather_rows(test_rows);
    return split;
}

}  // namespace onefit
