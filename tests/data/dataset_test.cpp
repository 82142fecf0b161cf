// Dataset: tf.data semantics of batch, repeat, take and the buffered shuffle, checked on
// the row indices plan() yields.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

using Rows = std::vector<int64_t>;

Dataset rows_dataset(int64_t n) {
    Tensor x({n, 3});
    Tensor y({n});
    return Dataset::from_tensor_slices(x, y);
}

Rows iota_rows(int64_t begin, int64_t end) {
    Rows rows(static_cast<size_t>(end - begin));
    std::iota(rows.begin(), rows.end(), begin);
    return rows;
}

Rows concat(Rows a, const Rows& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

DatasetPass plan(const Dataset& dataset, int64_t iteration = 0, int64_t max_batches = -1) {
    DatasetPass pass;
    dataset.plan(iteration, max_batches, pass);
    return pass;
}

bool is_permutation_of_first(const Rows& rows, int64_t n) {
    Rows sorted = rows;
    std::sort(sorted.begin(), sorted.end());
    return sorted == iota_rows(0, n);
}

// ---- batch, repeat, take ----

TEST(Dataset, UnbatchedDatasetComesOutAsBatchesOfOneRowInOrder) {
    const DatasetPass pass = plan(rows_dataset(5));
    EXPECT_EQ(pass.rows, iota_rows(0, 5));
    EXPECT_EQ(pass.batch_sizes, Rows(5, 1));
}

TEST(Dataset, BatchCutsRowsIntoFullBatchesAndAShortLastOne) {
    const DatasetPass pass = plan(rows_dataset(105).batch(20));
    EXPECT_EQ(pass.rows, iota_rows(0, 105));
    EXPECT_EQ(pass.batch_sizes, (Rows{20, 20, 20, 20, 20, 5}));
}

TEST(Dataset, DropRemainderDropsTheShortLastBatch) {
    const DatasetPass pass = plan(rows_dataset(105).batch(20, true));
    EXPECT_EQ(pass.rows, iota_rows(0, 100));
    EXPECT_EQ(pass.batch_sizes, (Rows{20, 20, 20, 20, 20}));
}

TEST(Dataset, RepeatThenBatchMakesBatchesAcrossTheRepetitionBoundary) {
    const DatasetPass pass = plan(rows_dataset(105).repeat(2).batch(20));
    EXPECT_EQ(pass.rows, concat(iota_rows(0, 105), iota_rows(0, 105)));
    EXPECT_EQ(pass.batch_sizes, (Rows{20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 10}));
    // The sixth batch is rows 100..104 followed by 0..14.
    EXPECT_EQ(Rows(pass.rows.begin() + 100, pass.rows.begin() + 120), concat(iota_rows(100, 105), iota_rows(0, 15)));
}

TEST(Dataset, BatchThenRepeatRepeatsTheShortBatchEveryTime) {
    const DatasetPass pass = plan(rows_dataset(105).batch(20).repeat(2));
    EXPECT_EQ(pass.rows, concat(iota_rows(0, 105), iota_rows(0, 105)));
    EXPECT_EQ(pass.batch_sizes, (Rows{20, 20, 20, 20, 20, 5, 20, 20, 20, 20, 20, 5}));
}

TEST(Dataset, TakeKeepsTheFirstElementsRowsOrBatches) {
    EXPECT_EQ(plan(rows_dataset(10).take(3)).rows, iota_rows(0, 3));
    const DatasetPass pass = plan(rows_dataset(105).batch(20).take(2));
    EXPECT_EQ(pass.rows, iota_rows(0, 40));
    EXPECT_EQ(pass.batch_sizes, (Rows{20, 20}));
}

TEST(Dataset, TakeMoreThanThereIsKeepsEverythingAndMinusOneMeansAll) {
    EXPECT_EQ(plan(rows_dataset(4).take(10)).rows, iota_rows(0, 4));
    EXPECT_EQ(plan(rows_dataset(4).take(-1)).rows, iota_rows(0, 4));
}

TEST(Dataset, RepeatZeroTimesIsEmpty) {
    EXPECT_TRUE(plan(rows_dataset(4).repeat(0)).rows.empty());
}

TEST(Dataset, MaxBatchesStopsThePassEarly) {
    const DatasetPass pass = plan(rows_dataset(105).batch(20), 0, 2);
    EXPECT_EQ(pass.batch_sizes, (Rows{20, 20}));
    EXPECT_EQ(pass.rows, iota_rows(0, 40));
}

TEST(Dataset, EndlessRepeatNeedsMaxBatches) {
    const Dataset endless = rows_dataset(5).repeat().batch(2);
    DatasetPass pass;
    try {
        endless.plan(0, -1, pass);
        ADD_FAILURE() << "an endless dataset planned without a limit";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("steps_per_epoch"), std::string::npos) << e.what();
    }
    endless.plan(0, 4, pass);
    EXPECT_EQ(pass.rows, (Rows{0, 1, 2, 3, 4, 0, 1, 2}));
}

TEST(Dataset, EndlessRepeatOfAnEmptyDatasetEndsInsteadOfHanging) {
    const Dataset empty = rows_dataset(5).take(0).repeat();
    EXPECT_EQ(empty.cardinality(), 0);
    EXPECT_TRUE(plan(empty).rows.empty());
    EXPECT_TRUE(plan(rows_dataset(3).batch(5, true).repeat(), 0, 10).rows.empty());
}

TEST(Dataset, CardinalityCountsElementsAfterEachOp) {
    EXPECT_EQ(rows_dataset(105).cardinality(), 105);
    EXPECT_EQ(rows_dataset(105).batch(20).cardinality(), 6);
    EXPECT_EQ(rows_dataset(105).batch(20, true).cardinality(), 5);
    EXPECT_EQ(rows_dataset(105).shuffle(10).repeat(3).cardinality(), 315);
    EXPECT_EQ(rows_dataset(105).repeat().cardinality(), -1);
    EXPECT_EQ(rows_dataset(105).repeat().take(7).cardinality(), 7);
    EXPECT_EQ(rows_dataset(105).take(200).cardinality(), 105);
}

TEST(Dataset, CardinalityAgreesWithPlan) {
    const Dataset datasets[] = {rows_dataset(23).batch(5), rows_dataset(23).batch(5, true).repeat(3),
                                rows_dataset(23).repeat(2).batch(4).take(9), rows_dataset(23).shuffle(7).take(30)};
    for (const Dataset& dataset : datasets)
        EXPECT_EQ(static_cast<int64_t>(plan(dataset).batch_sizes.size()), dataset.cardinality());
}

// ---- shuffle ----

TEST(DatasetShuffle, FullBufferShuffleIsAPermutationThatMovesRows) {
    const DatasetPass pass = plan(rows_dataset(105).shuffle(105, 3));
    EXPECT_TRUE(is_permutation_of_first(pass.rows, 105));
    EXPECT_NE(pass.rows, iota_rows(0, 105));
}

TEST(DatasetShuffle, SmallBufferIsStillAPermutation) {
    EXPECT_TRUE(is_permutation_of_first(plan(rows_dataset(105).shuffle(8, 3)).rows, 105));
}

TEST(DatasetShuffle, BufferOfOneKeepsTheOrder) {
    EXPECT_EQ(plan(rows_dataset(20).shuffle(1, 3)).rows, iota_rows(0, 20));
}

// With a sliding buffer of b elements, output i can only be one of the first i + b inputs.
TEST(DatasetShuffle, RowsCanOnlyComeFromWithinTheBufferWindow) {
    const int64_t buffer = 4;
    for (int64_t iteration = 0; iteration < 20; ++iteration) {
        const Rows rows = plan(rows_dataset(50).shuffle(buffer, 9), iteration).rows;
        for (size_t i = 0; i < rows.size(); ++i) EXPECT_LT(rows[i], static_cast<int64_t>(i) + buffer);
    }
}

TEST(DatasetShuffle, SameSeedAndIterationGiveTheSameOrder) {
    const Dataset dataset = rows_dataset(50).shuffle(50, 11);
    EXPECT_EQ(plan(dataset, 4).rows, plan(dataset, 4).rows);
    EXPECT_EQ(plan(dataset, 4).rows, plan(rows_dataset(50).shuffle(50, 11), 4).rows);
}

TEST(DatasetShuffle, DifferentSeedsGiveDifferentOrders) {
    EXPECT_NE(plan(rows_dataset(50).shuffle(50, 1)).rows, plan(rows_dataset(50).shuffle(50, 2)).rows);
}

TEST(DatasetShuffle, ReshufflesOnEveryIteration) {
    const Dataset dataset = rows_dataset(50).shuffle(50, 11);
    EXPECT_NE(plan(dataset, 0).rows, plan(dataset, 1).rows);
}

TEST(DatasetShuffle, WithoutReshuffleEveryIterationHasTheSameOrder) {
    const Dataset dataset = rows_dataset(50).shuffle(50, 11, false);
    EXPECT_EQ(plan(dataset, 0).rows, plan(dataset, 1).rows);
}

TEST(DatasetShuffle, RepeatReshufflesEachRepetition) {
    const Rows rows = plan(rows_dataset(30).shuffle(30, 5).repeat(2)).rows;
    const Rows first(rows.begin(), rows.begin() + 30), second(rows.begin() + 30, rows.end());
    EXPECT_TRUE(is_permutation_of_first(first, 30));
    EXPECT_TRUE(is_permutation_of_first(second, 30));
    EXPECT_NE(first, second);
}

TEST(DatasetShuffle, RepeatWithoutReshuffleRepeatsTheSameOrder) {
    const Rows rows = plan(rows_dataset(30).shuffle(30, 5, false).repeat(2)).rows;
    EXPECT_EQ(Rows(rows.begin(), rows.begin() + 30), Rows(rows.begin() + 30, rows.end()));
}

TEST(DatasetShuffle, RepetitionsDifferBetweenIterations) {
    const Dataset dataset = rows_dataset(30).shuffle(30, 5).repeat(2);
    EXPECT_NE(plan(dataset, 0).rows, plan(dataset, 1).rows);
}

TEST(DatasetShuffle, ShuffleAfterBatchMovesWholeBatches) {
    const DatasetPass pass = plan(rows_dataset(100).batch(10).shuffle(10, 2));
    EXPECT_TRUE(is_permutation_of_first(pass.rows, 100));
    EXPECT_NE(pass.rows, iota_rows(0, 100));
    for (int64_t b = 0; b < 10; ++b) {
        const auto batch = pass.rows.begin() + b * 10;
        EXPECT_EQ(*batch % 10, 0);
        EXPECT_EQ(Rows(batch, batch + 10), iota_rows(*batch, *batch + 10));
    }
}

// Over many iterations each row should lead the pass about equally often (1000 of 10000;
// the standard deviation is 30, so 150 is a generous bound for a fixed-seed test).
TEST(DatasetShuffle, EveryRowIsEquallyLikelyToComeFirst) {
    const Dataset dataset = rows_dataset(10).shuffle(10, 123);
    std::vector<int> firsts(10, 0);
    DatasetPass pass;
    for (int64_t iteration = 0; iteration < 10000; ++iteration) {
        dataset.plan(iteration, 1, pass);
        ++firsts[static_cast<size_t>(pass.rows[0])];
    }
    for (int count : firsts) EXPECT_NEAR(count, 1000, 150);
}

// ---- buffers and arguments ----

TEST(Dataset, SecondPlanIntoTheSamePassReusesItsMemory) {
    const Dataset dataset = rows_dataset(105).shuffle(105, 1).batch(20);
    DatasetPass pass;
    dataset.plan(0, -1, pass);
    const size_t rows_capacity = pass.rows.capacity(), sizes_capacity = pass.batch_sizes.capacity();
    const int64_t* rows_data = pass.rows.data();
    dataset.plan(1, -1, pass);
    EXPECT_EQ(pass.rows.capacity(), rows_capacity);
    EXPECT_EQ(pass.batch_sizes.capacity(), sizes_capacity);
    EXPECT_EQ(pass.rows.data(), rows_data);
    EXPECT_EQ(pass.rows.size(), 105u);
}

TEST(Dataset, CopiesShareTheArrays) {
    const Dataset base = rows_dataset(10);
    const Dataset derived = base.shuffle(4).batch(2).repeat(3).take(5);
    EXPECT_EQ(derived.x().data(), base.x().data());
    EXPECT_EQ(derived.y().data(), base.y().data());
    EXPECT_TRUE(derived.is_batched());
    EXPECT_FALSE(base.is_batched());
}

TEST(Dataset, RefusesXAndYWithDifferentRowCounts) {
    EXPECT_THROW(Dataset::from_tensor_slices(Tensor({10, 2}), Tensor({9})), Error);
}

TEST(Dataset, SampleWeightsAreOnePerRowFiniteAndKeptThroughItsOps) {
    Tensor x({4, 2}), y({4}), w({4}), column({4, 1}), short_w({3}), nan_w({4});
    for (int64_t i = 0; i < 4; ++i) w[i] = static_cast<float>(i + 1), nan_w[i] = i == 2 ? NAN : 1.0f;
    const Dataset d = Dataset::from_tensor_slices(x, y, w).shuffle(4, 1).batch(2);
    ASSERT_NE(d.sample_weight(), nullptr);
    EXPECT_EQ(d.sample_weight()->data()[3], 4.0f);
    EXPECT_EQ(Dataset::from_tensor_slices(x, y).sample_weight(), nullptr);
    EXPECT_NO_THROW(Dataset::from_tensor_slices(x, y, column));
    const auto message = [&](const Tensor& weights) {
        try {
            Dataset::from_tensor_slices(x, y, weights);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message(short_w).find("sample_weight has 3 rows but x has 4"), std::string::npos);
    EXPECT_NE(message(nan_w).find("non-finite value at row 2"), std::string::npos);
    EXPECT_NE(message(Tensor({4, 2})).find("one weight per row"), std::string::npos);
}

TEST(Dataset, RefusesInvalidArguments) {
    const Dataset dataset = rows_dataset(10);
    EXPECT_THROW(dataset.batch(0), Error);
    EXPECT_THROW(dataset.shuffle(0), Error);
    EXPECT_THROW(dataset.repeat(-2), Error);
    EXPECT_THROW(dataset.take(-2), Error);
    EXPECT_THROW(dataset.batch(2).batch(2), Error);
    DatasetPass pass;
    EXPECT_THROW(dataset.plan(0, -2, pass), Error);
}

TEST(Dataset, RefusesARepeatCountThatOverflows) {
    EXPECT_THROW(rows_dataset(10).repeat(int64_t{1} << 62), Error);
}

}  // namespace
}  // namespace onefit
