// k-fold assignment as scikit-learn's KFold and StratifiedKFold (shuffle=False) assign rows:
// the expected folds below are worked out by hand from sklearn's rules (and agree with
// sklearn 1.x's output for the same inputs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

using Folds = std::vector<int64_t>;

TEST(Folds, KFoldIsContiguousWithTheFirstFoldsOneRowLonger) {
    EXPECT_EQ(kfold_assignment(11, 3), (Folds{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2}));  // 4, 4, 3
    EXPECT_EQ(kfold_assignment(4, 4), (Folds{0, 1, 2, 3}));
}

TEST(Folds, StratifiedGivesEveryFoldItsShareOfEveryClass) {
    // Iris's layout: 50 rows of each class in turn. Five folds: each takes 10 consecutive rows
    // of each class.
    std::vector<int64_t> classes;
    for (int64_t c = 0; c < 3; ++c) classes.insert(classes.end(), 50, c);
    const Folds folds = stratified_kfold_assignment(classes, 5);
    for (int64_t row = 0; row < 150; ++row) EXPECT_EQ(folds[static_cast<size_t>(row)], (row % 50) / 10) << row;
}

TEST(Folds, StratifiedAllocatesUnevenClassesAsScikitLearn) {
    // Classes by first appearance: 7 -> 0 (3 rows), 2 -> 1 (2 rows), 9 -> 2 (5 rows). Sorted codes
    // 0001122222; fold f takes every third from f: f0 {0,1,2,2}, f1 {0,1,2}, f2 {0,2,2}. Each
    // class's rows in order go to fold 0 first: 7s -> 0,1,2; 2s -> 0,1; 9s -> 0,0,1,2,2.
    EXPECT_EQ(stratified_kfold_assignment({7, 7, 7, 2, 2, 9, 9, 9, 9, 9}, 3), (Folds{0, 1, 2, 0, 1, 0, 0, 1, 2, 2}));
    // Interleaved rows: a class's rows are dealt in row order whatever lies between them.
    EXPECT_EQ(stratified_kfold_assignment({1, 0, 1, 0, 1, 0}, 3), (Folds{0, 0, 1, 1, 2, 2}));
}

TEST(Folds, ShuffledFoldsKeepTheirSizesAndEachClassesShareButDrawTheirRows) {
    std::vector<int64_t> classes;
    for (int64_t c = 0; c < 3; ++c) classes.insert(classes.end(), 50, c);
    const Folds plain = stratified_kfold_assignment(classes, 5), shuffled = stratified_kfold_assignment(classes, 5, 9);
    EXPECT_NE(plain, shuffled);
    EXPECT_EQ(shuffled, stratified_kfold_assignment(classes, 5, 9));  // the seed decides
    int count[5][3] = {};
    for (size_t i = 0; i < 150; ++i) ++count[shuffled[i]][classes[i]];
    for (auto& fold : count)
        for (int n : fold) EXPECT_EQ(n, 10);  // every fold still 10 of each class
    const Folds k = kfold_assignment(11, 3, 4);
    EXPECT_NE(k, kfold_assignment(11, 3));
    for (int64_t f = 0; f < 3; ++f) EXPECT_EQ(std::count(k.begin(), k.end(), f), f < 2 ? 4 : 3);
}

TEST(Folds, RefusesFoldsItCannotMake) {
    EXPECT_THROW(kfold_assignment(10, 1), Error);
    EXPECT_THROW(kfold_assignment(3, 4), Error);
    EXPECT_THROW(stratified_kfold_assignment({0, 0, 1, 1}, 3), Error);  // no class has 3 rows
    EXPECT_NO_THROW(stratified_kfold_assignment({0, 0, 0, 1}, 3));      // sklearn too: the largest has
}

TEST(Folds, SplitKeepsTheDataOrderOnBothSides) {
    Tensor x({5, 2}), y({5});
    for (int64_t i = 0; i < 10; ++i) x[i] = static_cast<float>(i);
    for (int64_t i = 0; i < 5; ++i) y[i] = static_cast<float>(10 * i);
    const TrainTestSplit s = fold_split(x, y, {1, 0, 1, 0, 0}, 1);
    ASSERT_EQ(s.x_test.rows(), 2);
    EXPECT_EQ(s.x_test.at(0, 1), 1.0f);
    EXPECT_EQ(s.x_test.at(1, 0), 4.0f);
    EXPECT_EQ(s.y_test[1], 20.0f);
    ASSERT_EQ(s.y_train.rows(), 3);
    EXPECT_EQ(s.y_train[0], 10.0f);
    EXPECT_EQ(s.y_train[2], 40.0f);
    EXPECT_THROW(fold_split(x, y, {0, 0, 0, 0, 0}, 1), Error);  // an empty fold
    EXPECT_THROW(fold_split(x, y, {0, 1}, 1), Error);           // not one fold per row
}

TEST(Folds, ABootstrapSampleDrawsWithReplacementAndValidatesOutOfBag) {
    Tensor x({200, 1}), y({200});
    for (int64_t i = 0; i < 200; ++i) x[i] = static_cast<float>(i), y[i] = static_cast<float>(-i);
    const TrainTestSplit s = bootstrap_split(x, y, 7);
    ASSERT_EQ(s.x_train.rows(), 200);
    std::vector<int> drawn(200, 0);
    for (int64_t r = 0; r < 200; ++r) {
        EXPECT_EQ(s.y_train[r], -s.x_train[r]);  // rows stay whole
        ++drawn[static_cast<size_t>(s.x_train[r])];
    }
    int repeated = 0, missing = 0;
    for (int d : drawn) repeated += d > 1, missing += d == 0;
    EXPECT_GT(repeated, 0);  // with replacement: about 26% of rows twice or more, 37% never
    ASSERT_EQ(s.x_test.rows(), missing);
    for (int64_t r = 0; r < s.x_test.rows(); ++r) {
        EXPECT_EQ(drawn[static_cast<size_t>(s.x_test[r])], 0);  // out of bag
        if (r > 0) {
            EXPECT_LT(s.x_test[r - 1], s.x_test[r]);  // in the data's order
        }
    }
    EXPECT_NEAR(missing, 200 * 0.366, 30);
    const TrainTestSplit again = bootstrap_split(x, y, 7), other = bootstrap_split(x, y, 8);
    EXPECT_EQ(std::memcmp(again.x_train.data(), s.x_train.data(), 200 * sizeof(float)), 0);
    EXPECT_NE(std::memcmp(other.x_train.data(), s.x_train.data(), 200 * sizeof(float)), 0);
    Tensor one({1, 1}), label({1});
    EXPECT_THROW(bootstrap_split(one, label, 0), Error);  // a single row is always drawn: nothing out of bag
}

}  // namespace
}  // namespace onefit
