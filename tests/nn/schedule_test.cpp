// Keras's learning-rate schedules against their published formulas (Keras 3's
// learning_rate_schedule.py docstrings), worked here in double at chosen steps, and their checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "onefit/error.hpp"
#include "onefit/optimizers.hpp"
#include "onefit/schedules.hpp"

namespace onefit {
namespace {

LearningRateSchedule made(const std::string& name, const ScheduleArguments& arguments) {
    return make_schedule(name, arguments);
}

double at(const LearningRateSchedule& s, int64_t step) { return scheduled_learning_rate(s, step); }

std::string error_of(const std::string& name, const ScheduleArguments& arguments) {
    try {
        make_schedule(name, arguments);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(Schedules, ExponentialAndInverseTimeDecay) {
    const auto exponential = made("ExponentialDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{10}},
                                                       {"decay_rate", 0.5}});
    EXPECT_DOUBLE_EQ(at(exponential, 0), 0.1);
    EXPECT_DOUBLE_EQ(at(exponential, 5), 0.1 * std::pow(0.5, 0.5));
    EXPECT_DOUBLE_EQ(at(exponential, 25), 0.1 * std::pow(0.5, 2.5));
    const auto stairs = made("ExponentialDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{10}},
                                                  {"decay_rate", 0.5}, {"staircase", true}});
    EXPECT_DOUBLE_EQ(at(stairs, 9), 0.1);
    EXPECT_DOUBLE_EQ(at(stairs, 25), 0.1 * 0.25);
    const auto inverse = made("InverseTimeDecay", {{"initial_learning_rate", 0.2}, {"decay_steps", int64_t{4}},
                                                   {"decay_rate", 0.5}});
    EXPECT_DOUBLE_EQ(at(inverse, 6), 0.2 / (1 + 0.5 * 1.5));
}

TEST(Schedules, PiecewiseConstantDecayChangesAfterEachBoundary) {
    const auto s = made("PiecewiseConstantDecay", {{"boundaries", std::vector<double>{3, 7}},
                                                   {"values", std::vector<double>{1.0, 0.5, 0.1}}});
    for (int64_t step : {0, 3}) EXPECT_DOUBLE_EQ(at(s, step), 1.0) << step;  // up to and at the boundary
    for (int64_t step : {4, 7}) EXPECT_DOUBLE_EQ(at(s, step), 0.5) << step;
    EXPECT_DOUBLE_EQ(at(s, 8), 0.1);
    EXPECT_DOUBLE_EQ(at(s, 1000), 0.1);
}

TEST(Schedules, PolynomialDecayHoldsOrCycles) {
    const auto s = made("PolynomialDecay", {{"initial_learning_rate", 1.0}, {"decay_steps", int64_t{10}},
                                            {"end_learning_rate", 0.1}, {"power", 2.0}});
    EXPECT_DOUBLE_EQ(at(s, 4), 0.9 * 0.36 + 0.1);
    EXPECT_DOUBLE_EQ(at(s, 30), 0.1);  // held at the end
    const auto cycle = made("PolynomialDecay", {{"initial_learning_rate", 1.0}, {"decay_steps", int64_t{10}},
                                                {"end_learning_rate", 0.1}, {"cycle", true}});
    EXPECT_DOUBLE_EQ(at(cycle, 15), 0.9 * (1 - 15.0 / 20) + 0.1);  // decay_steps stretched to 20
    EXPECT_DOUBLE_EQ(at(cycle, 0), 1.0);
}

TEST(Schedules, CosineDecayWithAndWithoutWarmup) {
    const auto s = made("CosineDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{20}}, {"alpha", 0.1}});
    EXPECT_DOUBLE_EQ(at(s, 5), 0.1 * (0.9 * 0.5 * (1 + std::cos(M_PI * 0.25)) + 0.1));
    EXPECT_DOUBLE_EQ(at(s, 40), 0.1 * 0.1);  // alpha of the rate, after decay_steps
    const auto warm = made("CosineDecay", {{"initial_learning_rate", 0.0}, {"decay_steps", int64_t{10}},
                                           {"warmup_target", 0.2}, {"warmup_steps", int64_t{4}}});
    EXPECT_DOUBLE_EQ(at(warm, 1), 0.2 * 0.25);  // linear warmup
    EXPECT_DOUBLE_EQ(at(warm, 4), 0.2);         // then the cosine from the target
    EXPECT_DOUBLE_EQ(at(warm, 9), 0.2 * 0.5 * (1 + std::cos(M_PI * 0.5)));
}

TEST(Schedules, CosineDecayRestartsLengthensAndScalesEachPeriod) {
    const auto s = made("CosineDecayRestarts", {{"initial_learning_rate", 1.0}, {"first_decay_steps", int64_t{10}},
                                                {"t_mul", 2.0}, {"m_mul", 0.5}});
    EXPECT_DOUBLE_EQ(at(s, 5), 0.5 * (1 + std::cos(M_PI * 0.5)));
    EXPECT_NEAR(at(s, 10), 0.5, 1e-12);  // the second period starts at m_mul of the rate
    EXPECT_NEAR(at(s, 20), 0.5 * 0.5 * (1 + std::cos(M_PI * 0.5)), 1e-12);  // halfway through its 20 steps
    const auto even = made("CosineDecayRestarts", {{"initial_learning_rate", 1.0}, {"first_decay_steps", int64_t{4}},
                                                   {"t_mul", 1.0}});
    EXPECT_DOUBLE_EQ(at(even, 6), at(even, 2));
}

TEST(Schedules, ArgumentsComeBackAsTheyWereGiven) {
    const auto s = made("CosineDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{20}}});
    const ScheduleArguments arguments = schedule_arguments(s);
    EXPECT_EQ(arguments[3], (std::pair<std::string, ScheduleValue>{"warmup_target", std::monostate{}}));  // None
    const auto again = make_schedule("CosineDecay", arguments);
    EXPECT_EQ(schedule_arguments(again), arguments);
}

TEST(Schedules, AnOptimizersRateFollowsItsScheduleFromItsFirstUpdate) {
    Optimizer o = SGD(0.5f);
    EXPECT_FLOAT_EQ(current_learning_rate(o, 1), 0.5f);
    o.learning_rate_schedule = made("ExponentialDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{1}},
                                                         {"decay_rate", 0.5}});
    EXPECT_FLOAT_EQ(current_learning_rate(o, 1), 0.1f);  // update 1 is Keras's iteration 0
    EXPECT_FLOAT_EQ(current_learning_rate(o, 3), 0.025f);
}

TEST(Schedules, KerassChecksAndOnefitsLimits) {
    EXPECT_EQ(error_of("ExponentialDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{0}},
                                            {"decay_rate", 0.5}}),
              "ExponentialDecay: Argument `decay_steps` must be > 0. Received: decay_steps=0");
    EXPECT_EQ(error_of("ExponentialDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{3}}}),
              "ExponentialDecay: decay_rate is required");
    EXPECT_EQ(error_of("ExponentialDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", int64_t{3}},
                                            {"decay_rate", 0.5}, {"decay", 0.5}}),
              "ExponentialDecay: unknown argument 'decay' (ExponentialDecay takes initial_learning_rate, decay_steps, "
              "decay_rate, staircase)");
    EXPECT_EQ(error_of("PiecewiseConstantDecay", {{"boundaries", std::vector<double>{3}},
                                                  {"values", std::vector<double>{1.0}}})
                  .rfind("PiecewiseConstantDecay: The length of boundaries should be 1 less", 0),
              0u);
    EXPECT_EQ(error_of("PiecewiseConstantDecay", {{"boundaries", std::vector<double>(17, 1.0)},
                                                  {"values", std::vector<double>(18, 1.0)}}),
              "PiecewiseConstantDecay: at most 16 boundaries are supported, got 17 boundaries");
    EXPECT_EQ(error_of("PiecewiseConstantDecay", {{"boundaries", std::vector<double>{5, 2}},
                                                  {"values", std::vector<double>{1, 2, 3}}}),
              "PiecewiseConstantDecay: boundaries must increase, got 5 then 2");
    EXPECT_EQ(error_of("StepDecay", {}).rfind("unknown learning-rate schedule 'StepDecay' (known: ExponentialDecay, ", 0),
              0u);
}

}  // namespace
}  // namespace onefit
