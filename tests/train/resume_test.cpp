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

// A new learning rate between fits keeps the optimizer's state. SGD without momentum has none,
// so it must equal recompiling with the new rate (no dropout: its masks follow the step count,
// which recompiling restarts); Adam's state (moments, step count) must
// survive: recompiling, which starts it afresh, gives other weights.
TEST(Resume, ANewLearningRateBetweenFitsKeepsTheOptimizerState) {
    const LabeledData iris = load_iris();
    auto fitted = [&](const Optimizer& first) {
        Sequential m({4}, 11);
        m.add(Dense(16, "relu")).add(Dense(3, "softmax"));
        m.compile(first, loss_from_name("sparse_categorical_crossentropy"));
        m.fit(iris.x, iris.y, options(3, 0));
        return m;
    };
    Sequential changed = fitted(SGD(0.1f)), recompiled = fitted(SGD(0.1f));
    changed.set_learning_rate(0.02f);
    EXPECT_FLOAT_EQ(changed.optimizer().learning_rate, 0.02f);
    recompiled.compile(SGD(0.02f), loss_from_name("sparse_categorical_crossentropy"));
    changed.fit(iris.x, iris.y, options(6, 3));
    recompiled.fit(iris.x, iris.y, options(6, 3));
    EXPECT_TRUE(testing_support::same_bits(changed.get_weights(), recompiled.get_weights()));

    Sequential adam_changed = fitted(Adam(0.01f)), adam_recompiled = fitted(Adam(0.01f));
    adam_changed.set_learning_rate(0.002f);
    adam_recompiled.compile(Adam(0.002f), loss_from_name("sparse_categorical_crossentropy"));
    adam_changed.fit(iris.x, iris.y, options(6, 3));
    adam_recompiled.fit(iris.x, iris.y, options(6, 3));
    EXPECT_FALSE(testing_support::same_bits(adam_changed.get_weights(), adam_recompiled.get_weights()));
    EXPECT_THROW(adam_changed.set_learning_rate(0.0f), Error);
    Sequential uncompiled({4});
    uncompiled.add(Dense(3));
    EXPECT_THROW(uncompiled.set_learning_rate(0.1f), Error);
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
