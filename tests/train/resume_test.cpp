// initial_epoch: a fit of 20 epochs equals 10 epochs then 10 more started at initial_epoch 10,
// bit for bit, with shuffling and dropout on (the batch schedule and the masks resume exactly).
#include <gtest/gtest.h>

#include <cstring>

#include "support/resumable_fit.hpp"
#include "support/weights.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

using testing_support::shuffled_dropout_model;
FitOptions options(int64_t epochs, int64_t initial_epoch) { return testing_support::shuffled_fit_options(epochs, initial_epoch); }


TEST(Resume, TenEpochsThenTenFromInitialEpochTenEqualTwentyStraight) {
    const LabeledData iris = load_iris();
    Sequential straight = shuffled_dropout_model();
    straight.fit(iris.x, iris.y, options(20, 0));

    Sequential resumed = shuffled_dropout_model();
    resumed.fit(iris.x, iris.y, options(10, 0));
    const History second = resumed.fit(iris.x, iris.y, options(20, 10));

    EXPECT_TRUE(testing_support::same_bits(straight.get_weights(), resumed.get_weights()));
    ASSERT_EQ(second.epoch.size(), 10u);
    EXPECT_EQ(second.epoch.front(), 10);
}

TEST(Resume, ResumingFromTheWrongEpochGivesDifferentWeights) {
    const LabeledData iris = load_iris();
    Sequential straight = shuffled_dropout_model();
    straight.fit(iris.x, iris.y, options(20, 0));
    Sequential restarted = shuffled_dropout_model();
    restarted.fit(iris.x, iris.y, options(10, 0));
    restarted.fit(iris.x, iris.y, options(10, 0));  // replays epochs 0..9's batches instead of 10..19
    EXPECT_FALSE(testing_support::same_bits(straight.get_weights(), restarted.get_weights()));
}

TEST(Resume, InitialEpochOutsideTheEpochsIsAnError) {
    const LabeledData iris = load_iris();
    Sequential model = shuffled_dropout_model();
    EXPECT_THROW(model.fit(iris.x, iris.y, options(5, 5)), Error);
    EXPECT_THROW(model.fit(iris.x, iris.y, options(5, -1)), Error);
}

TEST(FitProfile, AccountsForTheFitInOneProgramCallWhenNothingLooks) {
    const LabeledData iris = load_iris();
    Sequential model = shuffled_dropout_model();
    FitProfile profile;
    FitOptions o = options(4, 0);
    o.validation_split = 0.2;
    o.profile = &profile;
    model.fit(iris.x, iris.y, o);
    EXPECT_EQ(profile.program_calls, 1);
    EXPECT_EQ(profile.steps, 4 * 8);  // 120 training rows in batches of 16
    EXPECT_GT(profile.program_seconds, 0.0);
    EXPECT_GT(profile.validation_seconds, 0.0);
    EXPECT_LE(profile.validation_seconds, profile.program_seconds);
    EXPECT_EQ(profile.device, "cpu");
}

}  // namespace
}  // namespace onefit
