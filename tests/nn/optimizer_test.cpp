// Optimizer updates against Keras's published rules (keras.optimizers, Keras >= 2.11 / 3),
// written out again here in double, one parameter at a time, over several steps with
// gradients that change sign and size. The library's update runs in double too
// (optimizer_step<double>), so they must agree to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/optimizer_math.hpp"
#include "onefit/error.hpp"
#include "onefit/model.hpp"
#include "onefit/optimizers.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

const std::vector<double> kStart = {0.5, -1.25, 2.0, 0.0, -0.03};
// Gradients per step (rows) for each parameter (columns): sign flips, a zero, a spike.
const std::vector<std::vector<double>> kGrads = {
    {0.10, -0.40, 1.50, 0.00, 0.020},
    {-0.30, -0.10, 0.70, 0.50, -0.010},
    {0.05, 0.90, -2.00, 0.00, 0.030},
    {0.20, 0.00, 0.10, -0.25, 3.000},
    {-0.70, 0.30, 0.40, 0.10, -0.005},
};

// The library's parameters after each step, starting from kStart.
std::vector<std::vector<double>> library_trajectory(const Optimizer& o) {
    std::vector<double> w = kStart;
    const int64_t n = static_cast<int64_t>(w.size());
    std::vector<double> slots(static_cast<size_t>(n * nn::optimizer_slot_count(o)));
    nn::optimizer_init_slots(o, slots.data(), n);
    std::vector<std::vector<double>> out;
    for (size_t t = 0; t < kGrads.size(); ++t) {
        nn::optimizer_step(o, w.data(), kGrads[t].data(), slots.data(), n, static_cast<int64_t>(t + 1));
        out.push_back(w);
    }
    return out;
}

// A reference rule: (weight, gradient, 1-based step) -> new weight, with its own per-parameter state.
template <class Rule>
std::vector<std::vector<double>> reference_trajectory(Rule make_rule) {
    std::vector<Rule> rules(kStart.size(), make_rule);
    std::vector<double> w = kStart;
    std::vector<std::vector<double>> out;
    for (size_t t = 0; t < kGrads.size(); ++t) {
        for (size_t i = 0; i < w.size(); ++i) w[i] = rules[i](w[i], kGrads[t][i], static_cast<int>(t + 1));
        out.push_back(w);
    }
    return out;
}

void expect_same_trajectory(const std::vector<std::vector<double>>& got,
                            const std::vector<std::vector<double>>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (size_t t = 0; t < got.size(); ++t)
        for (size_t i = 0; i < got[t].size(); ++i)
            EXPECT_NEAR(got[t][i], expected[t][i], 1e-12 * (1 + std::fabs(expected[t][i])))
                << "step " << t + 1 << ", parameter " << i;
    // The steps moved the weights: a rule that does nothing cannot pass.
    EXPECT_NE(expected.back(), kStart);
}

// Hyperparameters are float in Optimizer; the reference reads the same values.
double d(float v) { return static_cast<double>(v); }

TEST(Optimizers, SgdSubtractsTheLearningRateTimesTheGradient) {
    const Optimizer o = SGD(0.1f);
    const double lr = d(o.learning_rate);
    expect_same_trajectory(library_trajectory(o), reference_trajectory([lr](double w, double g, int) { return w - lr * g; }));
}

struct SgdMomentum {
    double lr, momentum;
    bool nesterov;
    double m = 0;
    double operator()(double w, double g, int) {
        m = momentum * m - lr * g;
        return nesterov ? w + momentum * m - lr * g : w + m;
    }
};

TEST(Optimizers, SgdWithMomentumFollowsTheVelocity) {
    const Optimizer o = SGD(0.05f, 0.9f);
    expect_same_trajectory(library_trajectory(o), reference_trajectory(SgdMomentum{d(o.learning_rate), d(o.momentum), false}));
}

TEST(Optimizers, SgdWithNesterovMomentumLooksAhead) {
    const Optimizer o = SGD(0.05f, 0.9f, true);
    expect_same_trajectory(library_trajectory(o), reference_trajectory(SgdMomentum{d(o.learning_rate), d(o.momentum), true}));
}

// Keras's Adam: alpha = lr sqrt(1 - b2^t) / (1 - b1^t); w -= alpha m / (sqrt(v) + eps), with v
// replaced by its running maximum for amsgrad. AdamW first decays w by lr * weight_decay * w.
struct KerasAdam {
    double lr, b1, b2, eps, weight_decay;
    bool amsgrad;
    double m = 0, v = 0, v_max = 0;
    double operator()(double w, double g, int t) {
        w -= w * lr * weight_decay;
        m = b1 * m + (1 - b1) * g;
        v = b2 * v + (1 - b2) * g * g;
        v_max = std::max(v_max, v);
        const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
        return w - alpha * m / (std::sqrt(amsgrad ? v_max : v) + eps);
    }
};

KerasAdam adam_rule(const Optimizer& o) {
    return {d(o.learning_rate), d(o.beta_1), d(o.beta_2), d(o.epsilon), d(o.weight_decay), o.amsgrad};
}

TEST(Optimizers, AdamWithBiasCorrectionInTheLearningRate) {
    const Optimizer o = Adam(0.01f);
    expect_same_trajectory(library_trajectory(o), reference_trajectory(adam_rule(o)));
}

TEST(Optimizers, AdamAmsgradUsesTheLargestSecondMomentSoFar) {
    const Optimizer o = Adam(0.01f, 0.8f, 0.95f, 1e-6f, true);
    const auto got = library_trajectory(o);
    expect_same_trajectory(got, reference_trajectory(adam_rule(o)));
    // And it is a different rule: with these gradients v shrinks at some step.
    KerasAdam plain = adam_rule(o);
    plain.amsgrad = false;
    EXPECT_NE(got.back(), reference_trajectory(plain).back());
}

TEST(Optimizers, AdamWDecaysWeightsDecoupledFromTheGradient) {
    const Optimizer o = AdamW(0.01f, 0.1f);
    const auto got = library_trajectory(o);
    expect_same_trajectory(got, reference_trajectory(adam_rule(o)));
    EXPECT_NE(got.back(), library_trajectory(Adam(0.01f)).back());
}

// Keras's RMSprop: v = rho v + (1 - rho) g^2; centered subtracts the squared running mean of g;
// increment = lr g / sqrt(v + eps); momentum accumulates increments.
struct KerasRmsprop {
    double lr, rho, momentum, eps;
    bool centered;
    double v = 0, mean_g = 0, velocity = 0;
    double operator()(double w, double g, int) {
        v = rho * v + (1 - rho) * g * g;
        mean_g = rho * mean_g + (1 - rho) * g;
        const double denominator = (centered ? v - mean_g * mean_g : v) + eps;
        const double increment = lr * g / std::sqrt(denominator);
        if (momentum > 0) {
            velocity = momentum * velocity + increment;
            return w - velocity;
        }
        return w - increment;
    }
};

KerasRmsprop rmsprop_rule(const Optimizer& o) {
    return {d(o.learning_rate), d(o.rho), d(o.momentum), d(o.epsilon), o.centered};
}

TEST(Optimizers, RmspropDividesByTheRootMeanSquareOfGradients) {
    const Optimizer o = RMSprop(0.01f);
    expect_same_trajectory(library_trajectory(o), reference_trajectory(rmsprop_rule(o)));
}

TEST(Optimizers, RmspropWithMomentum) {
    const Optimizer o = RMSprop(0.01f, 0.9f, 0.8f);
    expect_same_trajectory(library_trajectory(o), reference_trajectory(rmsprop_rule(o)));
}

TEST(Optimizers, RmspropCenteredSubtractsTheSquaredMeanGradient) {
    const Optimizer o = RMSprop(0.01f, 0.9f, 0.0f, 1e-7f, true);
    expect_same_trajectory(library_trajectory(o), reference_trajectory(rmsprop_rule(o)));
}

TEST(Optimizers, RmspropCenteredWithMomentum) {
    const Optimizer o = RMSprop(0.01f, 0.8f, 0.5f, 1e-7f, true);
    expect_same_trajectory(library_trajectory(o), reference_trajectory(rmsprop_rule(o)));
}

// Keras's Adagrad: acc starts at initial_accumulator_value; acc += g^2; w -= lr g / sqrt(acc + eps).
struct KerasAdagrad {
    double lr, acc, eps;
    double operator()(double w, double g, int) {
        acc += g * g;
        return w - lr * g / std::sqrt(acc + eps);
    }
};

TEST(Optimizers, AdagradAccumulatesSquaredGradientsFromTheInitialValue) {
    const Optimizer o = Adagrad(0.1f, 0.25f);
    expect_same_trajectory(library_trajectory(o),
                           reference_trajectory(KerasAdagrad{d(o.learning_rate), d(o.initial_accumulator_value), d(o.epsilon)}));
}

// Keras 3 gives every optimizer weight_decay (BaseOptimizer._apply_weight_decay): w -= w lr wd,
// before the optimizer's own rule, which then sees the gradient of the undecayed weights.
template <class Rule>
struct Decayed {
    Rule rule;
    double lr, weight_decay;
    double operator()(double w, double g, int t) { return rule(w - w * lr * weight_decay, g, t); }
};

template <class Rule>
void expect_decayed_rule(Optimizer o, Rule rule) {
    const auto undecayed = library_trajectory(o);
    o.weight_decay = 0.2f;
    const auto got = library_trajectory(o);
    expect_same_trajectory(got, reference_trajectory(Decayed<Rule>{rule, d(o.learning_rate), d(o.weight_decay)}));
    EXPECT_NE(got.back(), undecayed.back()) << optimizer_name(o.kind);
}

TEST(Optimizers, EveryOptimizersWeightDecayComesFirstDecoupledFromTheGradient) {
    const double lr = d(0.05f);
    expect_decayed_rule(SGD(0.05f), [lr](double w, double g, int) { return w - lr * g; });
    expect_decayed_rule(SGD(0.05f, 0.9f, true), SgdMomentum{d(0.05f), d(0.9f), true});
    expect_decayed_rule(Adam(0.01f), adam_rule(Adam(0.01f)));
    expect_decayed_rule(RMSprop(0.01f, 0.9f, 0.5f), rmsprop_rule(RMSprop(0.01f, 0.9f, 0.5f)));
    expect_decayed_rule(Adagrad(0.1f), KerasAdagrad{d(0.1f), d(0.1f), d(1e-7f)});
}

TEST(OptimizerDefaults, ConstructorsUseKerasDefaults) {
    const Optimizer sgd = SGD();
    EXPECT_EQ(sgd.kind, OptimizerKind::sgd);
    EXPECT_FLOAT_EQ(sgd.learning_rate, 0.01f);
    EXPECT_EQ(sgd.momentum, 0.0f);
    EXPECT_FALSE(sgd.nesterov);

    const Optimizer adam = Adam();
    EXPECT_EQ(adam.kind, OptimizerKind::adam);
    EXPECT_FLOAT_EQ(adam.learning_rate, 0.001f);
    EXPECT_FLOAT_EQ(adam.beta_1, 0.9f);
    EXPECT_FLOAT_EQ(adam.beta_2, 0.999f);
    EXPECT_FLOAT_EQ(adam.epsilon, 1e-7f);
    EXPECT_FALSE(adam.amsgrad);

    const Optimizer adamw = AdamW();
    EXPECT_EQ(adamw.kind, OptimizerKind::adamw);
    EXPECT_FLOAT_EQ(adamw.learning_rate, 0.001f);
    EXPECT_FLOAT_EQ(adamw.weight_decay, 0.004f);
    EXPECT_FLOAT_EQ(adamw.beta_1, 0.9f);
    EXPECT_FLOAT_EQ(adamw.beta_2, 0.999f);
    EXPECT_FLOAT_EQ(adamw.epsilon, 1e-7f);

    const Optimizer rmsprop = RMSprop();
    EXPECT_EQ(rmsprop.kind, OptimizerKind::rmsprop);
    EXPECT_FLOAT_EQ(rmsprop.learning_rate, 0.001f);
    EXPECT_FLOAT_EQ(rmsprop.rho, 0.9f);
    EXPECT_EQ(rmsprop.momentum, 0.0f);
    EXPECT_FLOAT_EQ(rmsprop.epsilon, 1e-7f);
    EXPECT_FALSE(rmsprop.centered);

    const Optimizer adagrad = Adagrad();
    EXPECT_EQ(adagrad.kind, OptimizerKind::adagrad);
    EXPECT_FLOAT_EQ(adagrad.learning_rate, 0.001f);
    EXPECT_FLOAT_EQ(adagrad.initial_accumulator_value, 0.1f);
    EXPECT_FLOAT_EQ(adagrad.epsilon, 1e-7f);
}

TEST(OptimizerDefaults, NamesGiveTheSameDefaultsAsTheConstructors) {
    EXPECT_FLOAT_EQ(optimizer_from_name("sgd").learning_rate, 0.01f);
    EXPECT_FLOAT_EQ(optimizer_from_name("adam").learning_rate, 0.001f);
    EXPECT_FLOAT_EQ(optimizer_from_name("adamw").weight_decay, 0.004f);
    EXPECT_FLOAT_EQ(optimizer_from_name("rmsprop").rho, 0.9f);
    EXPECT_FLOAT_EQ(optimizer_from_name("adagrad").initial_accumulator_value, 0.1f);
    EXPECT_EQ(optimizer_from_name("rmsprop").kind, OptimizerKind::rmsprop);
    EXPECT_FLOAT_EQ(optimizer_from_name("adam", 0.1f).learning_rate, 0.1f);
    EXPECT_THROW(optimizer_from_name("adadelta"), Error);
}

TEST(OptimizerState, AdamStepCountContinuesAcrossFits) {
    // Keras keeps optimizer.iterations between fit() calls: two one-step fits equal one two-step fit.
    const Tensor x({4, 2}, {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.8f});
    const Tensor y({4, 1}, {1.0f, -1.0f, 0.5f, 0.0f});
    FitOptions once;
    once.batch_size = 4;
    once.verbose = 0;
    once.shuffle = false;
    FitOptions twice = once;
    twice.epochs = 2;
    auto model = [] {
        Sequential m({2}, 5);
        m.add(Dense(3, "tanh")).add(Dense(1));
        m.compile(Adam(0.05f), loss_from_name("mse"));
        return m;
    };
    Sequential a = model(), b = model();
    a.fit(x, y, once);
    a.fit(x, y, once);
    b.fit(x, y, twice);
    const auto wa = a.get_weights(), wb = b.get_weights();
    for (size_t i = 0; i < wa.size(); ++i) EXPECT_EQ(wa[i].values(), wb[i].values()) << "array " << i;
    EXPECT_EQ(a.program().optimizer_step, 2);
}

}  // namespace
}  // namespace onefit

namespace onefit {
namespace {

// Keras's gradient clipping (BaseOptimizer._clip_gradients), written out: two arrays with norms
// 5 (3, 4) and 13 (5, 12), so every rule has a known answer.
std::vector<double> clipped(const Optimizer& o) {
    std::vector<double> g = {3, 4, 5, -12};
    const nn::GradientArray arrays[] = {{0, 2}, {2, 4}};
    nn::clip_gradients(o, g.data(), arrays, 2);
    return g;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(Optimizers, ClipnormScalesEachArrayToItsOwnNormAtMost) {
    Optimizer o = SGD();
    o.clipnorm = 10;  // the first array (norm 5) is left alone, the second scaled by 10/13
    expect_near(clipped(o), {3, 4, 5 * 10.0 / 13, -12 * 10.0 / 13});
    EXPECT_TRUE(nn::clips_gradients(o));
    EXPECT_FALSE(nn::clips_gradients(SGD()));
}

TEST(Optimizers, GlobalClipnormScalesAllArraysByTheirJointNorm) {
    Optimizer o = Adam();
    o.global_clipnorm = 7;  // joint norm sqrt(25 + 169)
    const double s = 7 / std::sqrt(194.0);
    expect_near(clipped(o), {3 * s, 4 * s, 5 * s, -12 * s});
    o.global_clipnorm = 20;  // above the joint norm: unchanged
    expect_near(clipped(o), {3, 4, 5, -12});
    std::vector<double> g = {1, INFINITY};  // a non-finite norm makes every gradient NaN, as Keras's
    const nn::GradientArray all[] = {{0, 2}};
    nn::clip_gradients(o, g.data(), all, 1);
    EXPECT_TRUE(std::isnan(g[0]) && std::isnan(g[1]));
}

TEST(Optimizers, ClipvalueClampsEachValue) {
    Optimizer o = RMSprop();
    o.clipvalue = 4.5;
    expect_near(clipped(o), {3, 4, 4.5, -4.5});
}

TEST(Optimizers, ClippingIsCheckedAsKerasChecksIt) {
    const auto compile_error = [](Optimizer o) {
        Sequential model({2});
        model.add(Dense(1));
        try {
            model.compile(o, Loss{});
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    Optimizer two = Adam();
    two.clipnorm = 1, two.clipvalue = 1;
    EXPECT_NE(compile_error(two).find("only one of clipnorm, clipvalue and global_clipnorm"), std::string::npos);
    Optimizer negative = Adam();
    negative.global_clipnorm = -1;
    EXPECT_NE(compile_error(negative).find("global_clipnorm must be positive"), std::string::npos);
    Optimizer one = Adam();
    one.clipvalue = 0.5;
    EXPECT_EQ(compile_error(one), "(no error)");
}

}  // namespace
}  // namespace onefit
