// What passes between the host and the running program: a loss that stops being finite ends the
// fit with History, the step count and the weights telling the same story; weights a callback
// sets between epochs are the ones the next epoch trains.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "onefit/onefit.hpp"
#include "program/training_program.hpp"
#include "support/weights.hpp"

namespace onefit {
namespace {

using testing_support::same_bits;

// 40 rows, 2 features; y = x0 - 2 x1 (a regression that SGD with a huge rate blows up).
Tensor features() {
    Tensor x({40, 2});
    for (int64_t i = 0; i < 40; ++i) {
        x.at(i, 0) = static_cast<float>(std::sin(0.7 * double(i)));
        x.at(i, 1) = static_cast<float>(std::cos(1.3 * double(i)));
    }
    return x;
}
Tensor targets() {
    const Tensor x = features();
    Tensor y({40});
    for (int64_t i = 0; i < 40; ++i) y[i] = x.at(i, 0) - 2 * x.at(i, 1);
    return y;
}

// SGD at this rate makes the loss overflow a few epochs in (not in the first).
constexpr float kDivergingRate = 1.5f;

Sequential regressor(float learning_rate, bool dropout = false) {
    Sequential model({2}, 7);
    model.add(Dense(16, "relu"));
    if (dropout) model.add(Dropout(0.25f));
    model.add(Dense(1));
    model.compile(SGD(learning_rate), loss_from_name("mse"));
    return model;
}

FitOptions options(int64_t epochs, int verbose) {
    FitOptions o;
    o.batch_size = 8;  // 5 steps per epoch
    o.epochs = epochs;
    o.verbose = verbose;
    static std::ostringstream sink;  // progress lines are not what these tests check
    o.out = &sink;
    return o;
}

// The epochs History holds, checked: every loss finite but the last.
size_t epochs_until_non_finite(const History& h) {
    const std::vector<double>& loss = h["loss"];
    for (size_t e = 0; e + 1 < loss.size(); ++e) EXPECT_TRUE(std::isfinite(loss[e])) << "epoch " << e;
    EXPECT_FALSE(loss.empty());
    EXPECT_FALSE(std::isfinite(loss.back()));
    return loss.size();
}

TEST(FitNonFiniteLoss, OneProgramCallStopsAfterTheFirstNonFiniteEpoch) {
    Sequential model = regressor(kDivergingRate);
    const History h = model.fit(features(), targets(), options(10, 0));
    const size_t epochs = epochs_until_non_finite(h);
    ASSERT_GT(epochs, 1u);
    ASSERT_LT(epochs, 10u);
    // The optimizer ran exactly the epochs History describes (it used to run all 50 steps).
    EXPECT_EQ(model.program().optimizer_step, static_cast<int64_t>(epochs) * 5);
    // And the weights are that epoch's: the same as a fit asked for exactly those epochs.
    Sequential exact = regressor(kDivergingRate);
    exact.fit(features(), targets(), options(static_cast<int64_t>(epochs), 0));
    EXPECT_TRUE(same_bits(model.get_weights(), exact.get_weights()));
    ASSERT_FALSE(model.warnings().empty());
    EXPECT_NE(model.warnings().back().find("at epoch " + std::to_string(epochs)), std::string::npos)
        << model.warnings().back();
}

TEST(FitNonFiniteLoss, EpochByEpochRunsStopAtTheSameEpoch) {
    Sequential silent = regressor(kDivergingRate), verbose = regressor(kDivergingRate);
    const History a = silent.fit(features(), targets(), options(10, 0));
    const History b = verbose.fit(features(), targets(), options(10, 2));
    EXPECT_EQ(epochs_until_non_finite(a), epochs_until_non_finite(b));
    EXPECT_EQ(silent.program().optimizer_step, verbose.program().optimizer_step);
}

void scale_weights(Sequential& model, float factor) {
    std::vector<Tensor> w = model.get_weights();
    for (Tensor& t : w)
        for (int64_t i = 0; i < t.size(); ++i) t[i] *= factor;
    model.set_weights(w);
}

// Scales every weight by `factor` at chosen points of the fit.
struct WeightScaler : Callback {
    float factor = 0.5f;
    bool at_train_begin = false;
    int64_t at_epoch_end = -1, at_epoch_begin = -1;
    void scale() { scale_weights(*model, factor); }
    void on_train_begin() override {
        if (at_train_begin) scale();
    }
    void on_epoch_begin(int64_t epoch) override {
        if (epoch == at_epoch_begin) scale();
    }
    void on_epoch_end(int64_t epoch, const Logs&) override {
        if (epoch == at_epoch_end) scale();
    }
};

TEST(FitCallbackWeights, SetWeightsAtAnEpochEndIsWhatTheNextEpochTrains) {
    // With the callback: three epochs, weights halved after the first.
    Sequential model = regressor(0.01f, /*dropout=*/true);
    WeightScaler halve;
    halve.at_epoch_end = 0;
    FitOptions o = options(3, 0);
    o.callbacks = {&halve};
    model.fit(features(), targets(), o);
    // The same by hand: one epoch, halve, then epochs 1 and 2 (shuffling and dropout continue).
    Sequential by_hand = regressor(0.01f, true);
    by_hand.fit(features(), targets(), options(1, 0));
    scale_weights(by_hand, 0.5f);
    FitOptions rest = options(3, 0);
    rest.initial_epoch = 1;
    by_hand.fit(features(), targets(), rest);
    EXPECT_TRUE(same_bits(model.get_weights(), by_hand.get_weights()));
    // And the change mattered: without it the weights differ.
    Sequential untouched = regressor(0.01f, true);
    untouched.fit(features(), targets(), options(3, 0));
    EXPECT_FALSE(same_bits(model.get_weights(), untouched.get_weights()));
}

TEST(FitCallbackWeights, SetWeightsAtTrainBeginAndEpochBeginTakeEffect) {
    Sequential model = regressor(0.01f);
    WeightScaler scaler;
    scaler.at_train_begin = true;
    scaler.at_epoch_begin = 1;
    FitOptions o = options(2, 2);
    o.callbacks = {&scaler};
    model.fit(features(), targets(), o);

    Sequential by_hand = regressor(0.01f);
    scale_weights(by_hand, 0.5f);
    by_hand.fit(features(), targets(), options(1, 0));
    scale_weights(by_hand, 0.5f);
    FitOptions rest = options(2, 0);
    rest.initial_epoch = 1;
    by_hand.fit(features(), targets(), rest);
    EXPECT_TRUE(same_bits(model.get_weights(), by_hand.get_weights()));
}

TEST(FitCallbackWeights, ABadSetWeightsLeavesTheWeightsUnchanged) {
    Sequential model = regressor(0.01f);
    const std::vector<Tensor> before = model.get_weights();
    std::vector<Tensor> wrong = before;
    wrong.back() = Tensor({2});  // the last bias has 1 value
    EXPECT_THROW(model.set_weights(wrong), Error);
    EXPECT_TRUE(same_bits(model.get_weights(), before));
}

}  // namespace
}  // namespace onefit
