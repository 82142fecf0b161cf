// Loss values against Keras's formulas (keras.losses, Keras 3), written out by hand here in
// double precision: per-sample losses (a mean over the last axis where Keras takes one), then
// Keras's default reduction "sum over batch size". The loss kernel runs in double; the model
// path (evaluate) runs it in float through an identity layer, so predictions are the inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "support/make_loss.hpp"
#include "nn/losses.hpp"
#include "onefit/error.hpp"
#include "onefit/model.hpp"

namespace onefit {
namespace {

using Rows = std::vector<std::vector<double>>;
constexpr double kEps = 1e-7;  // keras.backend.epsilon()

using testing_support::make_loss;

std::vector<double> flat(const Rows& rows) {
    std::vector<double> v;
    for (const auto& r : rows) v.insert(v.end(), r.begin(), r.end());
    return v;
}

// The library's reduced loss: the kernel's sum over rows divided by the batch size.
double library_loss(const Loss& loss, bool logits_input, const Rows& pred, const Rows& y) {
    const std::vector<double> p = flat(pred), t = flat(y);
    const int64_t rows = static_cast<int64_t>(pred.size());
    return nn::loss_forward_backward<false>(loss, logits_input, p.data(), t.data(), rows,
                                            static_cast<int64_t>(pred[0].size()), static_cast<int64_t>(y[0].size()),
                                            static_cast<double*>(nullptr), 1.0) /
           static_cast<double>(rows);
}

// Keras's reduction: the per-sample losses summed, divided by the number of samples.
template <class PerSample>
double sum_over_batch_size(const Rows& pred, const Rows& y, PerSample per_sample) {
    double total = 0;
    for (size_t r = 0; r < pred.size(); ++r) total += per_sample(pred[r], y[r]);
    return total / static_cast<double>(pred.size());
}

// Mean over the last axis of f(p_j, y_j), with y broadcast when it has one column.
template <class F>
auto elementwise_mean(F f) {
    return [f](const std::vector<double>& p, const std::vector<double>& y) {
        double s = 0;
        for (size_t j = 0; j < p.size(); ++j) s += f(p[j], y.size() == 1 ? y[0] : y[j]);
        return s / static_cast<double>(p.size());
    };
}

double clip(double v) { return std::min(std::max(v, kEps), 1.0 - kEps); }

const Rows kPred = {{0.2, 1.5, -0.3}, {-1.2, 0.4, 2.0}, {0.9, -0.7, 0.05}, {3.0, -2.5, 0.6}};
const Rows kTarget = {{0.0, 1.0, 0.5}, {1.5, -0.5, 2.2}, {1.0, 0.0, -0.4}, {0.0, 0.2, 0.6001}};
const Rows kProbs = {{0.2, 0.5, 0.3}, {0.7, 0.1, 0.2}, {0.05, 0.15, 0.8}, {0.33, 0.33, 0.34}};
const Rows kBinary = {{0.0, 1.0, 1.0}, {1.0, 0.0, 0.0}, {0.0, 0.0, 1.0}, {1.0, 1.0, 0.0}};
const Rows kOneHot = {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}, {0, 1, 0}};
const Rows kIndices = {{1}, {0}, {2}, {1}};

TEST(Losses, LogCoshIsTheMeanOfLogCoshOfTheError) {
    const double expected = sum_over_batch_size(
        kPred, kTarget, elementwise_mean([](double p, double y) { return std::log(std::cosh(p - y)); }));
    EXPECT_NEAR(library_loss(make_loss(LossKind::log_cosh), false, kPred, kTarget), expected, 1e-14);
}

TEST(Losses, LogCoshStaysFiniteForLargeErrors) {
    // cosh(400) overflows double; log cosh(x) = |x| - log 2 + log(1 + e^-2|x|).
    const double got = library_loss(make_loss(LossKind::log_cosh), false, {{400.0, -400.0}}, {{0.0, 0.0}});
    EXPECT_NEAR(got, 400.0 - std::log(2.0), 1e-9);
}

TEST(Losses, MeanSquaredError) {
    const double expected =
        sum_over_batch_size(kPred, kTarget, elementwise_mean([](double p, double y) { return (p - y) * (p - y); }));
    EXPECT_NEAR(library_loss(make_loss(LossKind::mean_squared_error), false, kPred, kTarget), expected, 1e-14);
}

TEST(Losses, MeanAbsoluteError) {
    const double expected =
        sum_over_batch_size(kPred, kTarget, elementwise_mean([](double p, double y) { return std::fabs(p - y); }));
    EXPECT_NEAR(library_loss(make_loss(LossKind::mean_absolute_error), false, kPred, kTarget), expected, 1e-14);
}

TEST(Losses, HuberIsQuadraticWithinDeltaAndLinearBeyond) {
    for (double delta : {1.0, 0.5}) {
        SCOPED_TRACE(delta);
        const double expected = sum_over_batch_size(kPred, kTarget, elementwise_mean([delta](double p, double y) {
            const double e = std::fabs(p - y);
            return e <= delta ? 0.5 * e * e : delta * e - 0.5 * delta * delta;
        }));
        const double got =
            library_loss(make_loss(LossKind::huber, false, static_cast<float>(delta)), false, kPred, kTarget);
        EXPECT_NEAR(got, expected, 1e-14);
    }
}

TEST(Losses, BinaryCrossentropyOnProbabilities) {
    const double expected = sum_over_batch_size(kProbs, kBinary, elementwise_mean([](double p, double y) {
        return -(y * std::log(clip(p)) + (1 - y) * std::log(1 - clip(p)));
    }));
    EXPECT_NEAR(library_loss(make_loss(LossKind::binary_crossentropy), false, kProbs, kBinary), expected, 1e-14);
}

TEST(Losses, BinaryCrossentropyClipsProbabilitiesAtEpsilon) {
    // p = 0 with y = 1 and p = 1 with y = 0 both cost -log(1e-7) = 7 ln 10, not infinity.
    const double got = library_loss(make_loss(LossKind::binary_crossentropy), false, {{0.0, 1.0}}, {{1.0, 0.0}});
    EXPECT_NEAR(got, 7 * std::numbers::ln10, 1e-8);
    // Just outside [eps, 1 - eps] the cost is the clip's; just inside, the probability's own:
    // -log(5e-8) would be 7 ln 10 + ln 2, -log(2e-7) is 7 ln 10 - ln 2.
    const Loss bce = make_loss(LossKind::binary_crossentropy);
    const double outside = library_loss(bce, false, {{5e-8, 1 - 5e-8}}, {{1.0, 0.0}});
    EXPECT_NEAR(outside, 7 * std::numbers::ln10, 1e-8);
    const double inside = library_loss(bce, false, {{2e-7, 1 - 2e-7}}, {{1.0, 0.0}});
    EXPECT_NEAR(inside, 7 * std::numbers::ln10 - std::numbers::ln2, 1e-8);
}

TEST(Losses, BinaryCrossentropyFromLogitsIsTheCrossentropyOfTheSigmoid) {
    const double expected = sum_over_batch_size(kPred, kBinary, elementwise_mean([](double z, double y) {
        const double s = 1 / (1 + std::exp(-z));
        return -(y * std::log(s) + (1 - y) * std::log(1 - s));
    }));
    EXPECT_NEAR(library_loss(make_loss(LossKind::binary_crossentropy, true), true, kPred, kBinary), expected, 1e-13);
}

TEST(Losses, CategoricalCrossentropyNormalisesPredictionsThatDoNotSumToOne) {
    const Rows scaled = {{0.4, 1.0, 0.6}, {2.1, 0.3, 0.6}, {0.01, 0.03, 0.16}, {1, 1, 1}};
    const double expected = sum_over_batch_size(scaled, kProbs, [](const auto& p, const auto& y) {
        const double s = p[0] + p[1] + p[2];
        double v = 0;
        for (int j = 0; j < 3; ++j) v -= y[j] * std::log(clip(p[j] / s));
        return v;
    });
    EXPECT_NEAR(library_loss(make_loss(LossKind::categorical_crossentropy), false, scaled, kProbs), expected, 1e-14);
}

TEST(Losses, CategoricalCrossentropyClipsAZeroProbability) {
    const double got = library_loss(make_loss(LossKind::categorical_crossentropy), false, {{0.0, 0.5, 0.5}},
                                    {{1.0, 0.0, 0.0}});
    EXPECT_NEAR(got, -std::log(kEps), 1e-9);
}

// -sum_j y_j log softmax(z)_j, from the definition of softmax.
double softmax_crossentropy(const std::vector<double>& z, const std::vector<double>& y) {
    double s = 0;
    for (double v : z) s += std::exp(v);
    double loss = 0;
    for (size_t j = 0; j < z.size(); ++j) loss -= y[j] * std::log(std::exp(z[j]) / s);
    return loss;
}

TEST(Losses, CategoricalCrossentropyFromLogits) {
    const double expected = sum_over_batch_size(kPred, kProbs, softmax_crossentropy);
    EXPECT_NEAR(library_loss(make_loss(LossKind::categorical_crossentropy, true), true, kPred, kProbs), expected,
                1e-13);
}

// Keras's label_smoothing: y (1 - s) + s / K for categorical labels, y (1 - s) + s / 2 for binary ones.
Rows smoothed(const Rows& y, double s, double toward) {
    Rows out = y;
    for (auto& row : out)
        for (double& v : row) v = v * (1 - s) + s * toward;
    return out;
}

TEST(Losses, LabelSmoothingIsTheLossOfTheMovedLabels) {
    Loss categorical = make_loss(LossKind::categorical_crossentropy, true);
    categorical.label_smoothing = 0.2f;
    const double smoothing = static_cast<double>(categorical.label_smoothing);
    EXPECT_NEAR(library_loss(categorical, true, kPred, kOneHot),
                sum_over_batch_size(kPred, smoothed(kOneHot, smoothing, 1.0 / 3), softmax_crossentropy), 1e-13);
    Loss binary = make_loss(LossKind::binary_crossentropy);
    binary.label_smoothing = 0.2f;
    const auto bce = elementwise_mean([](double p, double y) {
        return -(y * std::log(clip(p)) + (1 - y) * std::log(1 - clip(p)));
    });
    EXPECT_NEAR(library_loss(binary, false, kProbs, kBinary),
                sum_over_batch_size(kProbs, smoothed(kBinary, smoothing, 0.5), bce), 1e-13);
    binary.from_logits = true;
    const auto bce_logits = elementwise_mean([](double z, double y) {
        const double sg = 1 / (1 + std::exp(-z));
        return -(y * std::log(sg) + (1 - y) * std::log(1 - sg));
    });
    EXPECT_NEAR(library_loss(binary, true, kPred, kBinary),
                sum_over_batch_size(kPred, smoothed(kBinary, smoothing, 0.5), bce_logits), 1e-13);
    // And it changes the value: the check is not vacuous.
    EXPECT_GT(std::fabs(library_loss(binary, true, kPred, kBinary) -
                        library_loss(make_loss(LossKind::binary_crossentropy, true), true, kPred, kBinary)),
              1e-3);
}

TEST(Losses, SparseCategoricalCrossentropyIsMinusLogTheLabelsProbability) {
    const double expected = sum_over_batch_size(kProbs, kIndices, [](const auto& p, const auto& y) {
        return -std::log(p[static_cast<size_t>(y[0])]);
    });
    EXPECT_NEAR(library_loss(make_loss(LossKind::sparse_categorical_crossentropy), false, kProbs, kIndices), expected,
                1e-14);
}

TEST(Losses, SparseCategoricalCrossentropyFromLogits) {
    const double expected = sum_over_batch_size(kPred, kIndices, [](const auto& z, const auto& y) {
        std::vector<double> one_hot(z.size(), 0.0);
        one_hot[static_cast<size_t>(y[0])] = 1;
        return softmax_crossentropy(z, one_hot);
    });
    EXPECT_NEAR(library_loss(make_loss(LossKind::sparse_categorical_crossentropy, true), true, kPred, kIndices),
                expected, 1e-13);
}

TEST(Losses, SparseAndOneHotCategoricalCrossentropyAgree) {
    EXPECT_NEAR(library_loss(make_loss(LossKind::sparse_categorical_crossentropy), false, kProbs, kIndices),
                library_loss(make_loss(LossKind::categorical_crossentropy), false, kProbs, kOneHot), 1e-14);
}

TEST(Losses, OneLabelColumnIsBroadcastAgainstEveryOutputAsTfKeras2Does) {
    // tf.keras 2 expands labels (N,) to (N, 1); (p - y) then broadcasts over the K outputs.
    const double expected = sum_over_batch_size(
        kProbs, kIndices, elementwise_mean([](double p, double y) { return std::log(std::cosh(p - y)); }));
    EXPECT_NEAR(library_loss(make_loss(LossKind::log_cosh), false, kProbs, kIndices), expected, 1e-14);
}

// A model whose predictions are its inputs: one linear Dense with an identity kernel.
Sequential identity_model(int64_t width, const Loss& loss) {
    Sequential model({width});
    model.add(Dense(width, "linear", false));
    model.compile(Adam(), loss);
    Tensor kernel({width, width});
    for (int64_t i = 0; i < width; ++i) kernel.at(i, i) = 1.0f;
    model.set_weights({kernel});
    return model;
}

Tensor to_tensor(const Rows& rows) {
    Tensor t({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())});
    for (size_t r = 0; r < rows.size(); ++r)
        for (size_t j = 0; j < rows[r].size(); ++j) t.at(static_cast<int64_t>(r), static_cast<int64_t>(j)) = float(rows[r][j]);
    return t;
}

TEST(LossReduction, EvaluateIsTheMeanOverSamplesWhateverTheBatching) {
    const Rows pred = {{0.2, 1.5}, {-1.2, 0.4}, {0.9, -0.7}, {3.0, -2.5}, {0.1, 0.1}};
    const Rows target = {{0.0, 1.0}, {1.5, -0.5}, {1.0, 0.0}, {0.0, 0.2}, {-0.3, 0.3}};
    const double expected =
        sum_over_batch_size(pred, target, elementwise_mean([](double p, double y) { return (p - y) * (p - y); }));
    Sequential model = identity_model(2, make_loss(LossKind::mean_squared_error));
    for (int64_t batch : {1, 2, 3, 5, 64}) {
        SCOPED_TRACE(batch);
        EXPECT_NEAR(model.evaluate(to_tensor(pred), to_tensor(target), batch).at("loss"), expected, 1e-5);
    }
}

TEST(LossReduction, FusedSoftmaxCrossentropyIsComputedFromLogitsWithoutClipping) {
    // Keras takes the softmax's logits: logits (30, 0, 0) with label 1 cost 30 + log(1 + 2e-30),
    // where crossentropy of the clipped probabilities would stop at -log(1e-7) = 16.1.
    Sequential model({3});
    model.add(Dense(3, "softmax", false));
    model.compile(Adam(), make_loss(LossKind::sparse_categorical_crossentropy));
    Tensor kernel({3, 3});
    for (int64_t i = 0; i < 3; ++i) kernel.at(i, i) = 1.0f;
    model.set_weights({kernel});
    const double got = model.evaluate(Tensor({1, 3}, {30.0f, 0.0f, 0.0f}), Tensor({1}, {1.0f})).at("loss");
    EXPECT_NEAR(got, softmax_crossentropy({30, 0, 0}, {0, 1, 0}), 1e-4);
}

TEST(LossReduction, FusedSigmoidBinaryCrossentropyIsComputedFromLogitsWithoutClipping) {
    Sequential model({1});
    model.add(Dense(1, "sigmoid", false));
    model.compile(Adam(), make_loss(LossKind::binary_crossentropy));
    model.set_weights({Tensor({1, 1}, {1.0f})});
    // Logit 25 against label 0: softplus(25) = 25 + log(1 + e^-25).
    const double got = model.evaluate(Tensor({1, 1}, {25.0f}), Tensor({1}, {0.0f})).at("loss");
    EXPECT_NEAR(got, 25.0 + std::log1p(std::exp(-25.0)), 1e-4);
}

TEST(LossReduction, UnfusedProbabilitiesAreClippedThroughTheModelToo) {
    Sequential model = identity_model(2, make_loss(LossKind::binary_crossentropy));
    const double got = model.evaluate(Tensor({1, 2}, {0.0f, 1.0f}), Tensor({1, 2}, {1.0f, 0.0f})).at("loss");
    // The model runs in float, as Keras does in float32: p is clipped to [1e-7f, 1 - 1e-7f].
    const float eps = 1e-7f, high = 1.0f - eps;
    EXPECT_NEAR(got, 0.5 * (-std::log(double(eps)) - std::log(double(1.0f - high))), 1e-4);
    EXPECT_TRUE(std::isfinite(got));
}

TEST(LossNames, KerasNamesAndAliases) {
    EXPECT_EQ(loss_from_name("logcosh").kind, LossKind::log_cosh);
    EXPECT_EQ(loss_from_name("log_cosh").kind, LossKind::log_cosh);
    EXPECT_EQ(loss_from_name("mse").kind, LossKind::mean_squared_error);
    EXPECT_EQ(loss_from_name("mean_squared_error").kind, LossKind::mean_squared_error);
    EXPECT_EQ(loss_from_name("mae").kind, LossKind::mean_absolute_error);
    EXPECT_EQ(loss_from_name("huber").kind, LossKind::huber);
    EXPECT_EQ(loss_from_name("huber").delta, 1.0f);
    EXPECT_EQ(loss_from_name("binary_crossentropy").kind, LossKind::binary_crossentropy);
    EXPECT_EQ(loss_from_name("categorical_crossentropy").kind, LossKind::categorical_crossentropy);
    EXPECT_EQ(loss_from_name("sparse_categorical_crossentropy", true).kind,
              LossKind::sparse_categorical_crossentropy);
    EXPECT_TRUE(loss_from_name("sparse_categorical_crossentropy", true).from_logits);
    EXPECT_FALSE(loss_from_name("mse").from_logits);
}

TEST(LossNames, UnknownNameIsAnErrorListingTheKnownOnes) {
    try {
        loss_from_name("cross_entropy");
        FAIL() << "expected onefit::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cross_entropy"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("sparse_categorical_crossentropy"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace onefit
