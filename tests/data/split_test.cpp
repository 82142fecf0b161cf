// train_test_split: scikit-learn's sizes (n_test = ceil(test_size * n)) and row layout.
// Expected sizes were computed with Python's math.ceil on the same doubles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

// x row i is (i, 100 + i); y row i is 1000 + i, so every row says where it came from.
Tensor numbered_x(int64_t n) {
    Tensor x({n, 2});
    for (int64_t i = 0; i < n; ++i) {
        x.at(i, 0) = static_cast<float>(i);
        x.at(i, 1) = static_cast<float>(100 + i);
    }
    return x;
}

Tensor numbered_y(int64_t n) {
    Tensor y({n});
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(1000 + i);
    return y;
}

int64_t test_rows(int64_t n, double test_size) {
    return train_test_split(numbered_x(n), numbered_y(n), test_size, false).x_test.rows();
}

TEST(TrainTestSplit, TestSizeIsTheCeilingOfTheFraction) {
    EXPECT_EQ(test_rows(150, 0.2), 30);
    EXPECT_EQ(test_rows(150, 0.25), 38);  // 37.5 rounds up
    EXPECT_EQ(test_rows(10, 0.33), 4);    // 3.3 rounds up
}

TEST(TrainTestSplit, RoundsLikeScikitLearnIncludingFloatingPointError) {
    // 0.07 * 100 is 7.000000000000001 in double, so sklearn puts 8 rows in the test set.
    EXPECT_EQ(test_rows(100, 0.07), 8);
}

TEST(TrainTestSplit, WithoutShuffleTrainIsTheFirstRowsAndTestTheRest) {
    const TrainTestSplit split = train_test_split(numbered_x(10), numbered_y(10), 0.3, false);
    EXPECT_EQ(split.x_train.shape(), (Shape{7, 2}));
    EXPECT_EQ(split.x_test.shape(), (Shape{3, 2}));
    EXPECT_EQ(split.y_train.shape(), (Shape{7}));
    for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(split.y_train[i], 1000 + i);
    for (int64_t i = 0; i < 3; ++i) {
        EXPECT_EQ(split.x_test.at(i, 0), 7 + i);
        EXPECT_EQ(split.x_test.at(i, 1), 107 + i);
        EXPECT_EQ(split.y_test[i], 1007 + i);
    }
}

TEST(TrainTestSplit, ShuffledSplitIsAPartitionOfTheRowsWithRowsKeptWhole) {
    const TrainTestSplit split = train_test_split(numbered_x(50), numbered_y(50), 0.2, true, 7);
    ASSERT_EQ(split.x_train.rows(), 40);
    ASSERT_EQ(split.x_test.rows(), 10);
    std::vector<int64_t> seen;
    auto collect = [&](const Tensor& x, const Tensor& y) {
        for (int64_t i = 0; i < x.rows(); ++i) {
            const float row = x.at(i, 0);
            EXPECT_EQ(x.at(i, 1), 100 + row);
            EXPECT_EQ(y[i], 1000 + row);
            seen.push_back(static_cast<int64_t>(row));
        }
    };
    collect(split.x_train, split.y_train);
    collect(split.x_test, split.y_test);
    std::sort(seen.begin(), seen.end());
    for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
}

TEST(TrainTestSplit, ShuffleMovesRows) {
    const TrainTestSplit split = train_test_split(numbered_x(50), numbered_y(50), 0.2, true, 7);
    bool moved = false;
    for (int64_t i = 0; i < 40; ++i) moved |= split.y_train[i] != 1000 + i;
    EXPECT_TRUE(moved);
}

TEST(TrainTestSplit, SameSeedGivesTheSameSplitAndAnotherSeedAnother) {
    const TrainTestSplit a = train_test_split(numbered_x(50), numbered_y(50), 0.2, true, 7);
    const TrainTestSplit b = train_test_split(numbered_x(50), numbered_y(50), 0.2, true, 7);
    const TrainTestSplit c = train_test_split(numbered_x(50), numbered_y(50), 0.2, true, 8);
    EXPECT_EQ(a.y_test.values(), b.y_test.values());
    EXPECT_NE(a.y_test.values(), c.y_test.values());
}

TEST(TrainTestSplit, RefusesTestSizeOutsideZeroToOne) {
    for (double bad : {0.0, 1.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()})
        EXPECT_THROW(train_test_split(numbered_x(10), numbered_y(10), bad), Error) << bad;
}

TEST(TrainTestSplit, RefusesXAndYWithDifferentRowCounts) {
    EXPECT_THROW(train_test_split(numbered_x(10), numbered_y(9), 0.2), Error);
}

TEST(TrainTestSplit, RefusesASplitThatLeavesTheTrainSetEmpty) {
    EXPECT_THROW(train_test_split(numbered_x(1), numbered_y(1), 0.5), Error);
    EXPECT_THROW(train_test_split(numbered_x(0), numbered_y(0), 0.5), Error);
}

}  // namespace
}  // namespace onefit
