// Metrics as Keras computes them: "accuracy" resolves to sparse, categorical or binary
// accuracy from the shapes (tf.keras 2 compile_utils), and each value is counted by hand here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/metrics.hpp"
#include "onefit/error.hpp"
#include "onefit/model.hpp"

namespace onefit {
namespace {

using nn::MetricKind;

// The per-sample mean of a metric over rows, as fit and evaluate log it.
double metric_mean(MetricKind kind, const std::vector<double>& p, const std::vector<double>& y, int64_t rows,
                   int64_t width, int64_t y_width, int64_t k = nn::kTopK) {
    return nn::metric_sum(kind, p.data(), y.data(), rows, width, y_width, k) / static_cast<double>(rows);
}

TEST(MetricResolution, AccuracyWithClassIndicesAndSeveralOutputsIsSparseCategorical) {
    EXPECT_EQ(nn::resolve_metric("accuracy", 3, 1).kind, MetricKind::sparse_categorical_accuracy);
    EXPECT_EQ(nn::resolve_metric("acc", 3, 1).kind, MetricKind::sparse_categorical_accuracy);
}

TEST(MetricResolution, AccuracyWithOneHotLabelsIsCategorical) {
    EXPECT_EQ(nn::resolve_metric("accuracy", 3, 3).kind, MetricKind::categorical_accuracy);
}

TEST(MetricResolution, AccuracyWithOneOutputIsBinary) {
    EXPECT_EQ(nn::resolve_metric("accuracy", 1, 1).kind, MetricKind::binary_accuracy);
}

TEST(MetricResolution, TheLogKeyIsTheNameTheUserGave) {
    EXPECT_EQ(nn::resolve_metric("acc", 3, 1).name, "acc");
    EXPECT_EQ(nn::resolve_metric("mean_absolute_error", 3, 3).name, "mean_absolute_error");
}

TEST(MetricResolution, ExplicitNamesAndAliases) {
    EXPECT_EQ(nn::resolve_metric("sparse_categorical_accuracy", 3, 1).kind, MetricKind::sparse_categorical_accuracy);
    EXPECT_EQ(nn::resolve_metric("categorical_accuracy", 3, 3).kind, MetricKind::categorical_accuracy);
    EXPECT_EQ(nn::resolve_metric("binary_accuracy", 2, 2).kind, MetricKind::binary_accuracy);
    EXPECT_EQ(nn::resolve_metric("mae", 2, 2).kind, MetricKind::mae);
    EXPECT_EQ(nn::resolve_metric("mean_absolute_error", 2, 2).kind, MetricKind::mae);
    EXPECT_EQ(nn::resolve_metric("mse", 2, 2).kind, MetricKind::mse);
    EXPECT_EQ(nn::resolve_metric("mean_squared_error", 2, 2).kind, MetricKind::mse);
}

TEST(MetricResolution, UnknownNameIsAnError) {
    EXPECT_THROW(nn::resolve_metric("f1", 3, 1), Error);
    Sequential model({2});
    model.add(Dense(2));
    EXPECT_THROW(model.compile(Adam(), loss_from_name("mse"), {{"f1_score"}}), Error);
}

TEST(MetricValues, SparseCategoricalAccuracyComparesTheArgmaxWithTheLabel) {
    const std::vector<double> p = {0.1, 0.7, 0.2,   // argmax 1
                                   0.5, 0.3, 0.2,   // argmax 0
                                   0.2, 0.3, 0.5,   // argmax 2
                                   0.6, 0.3, 0.1};  // argmax 0
    const std::vector<double> y = {1, 2, 2, 1};     // hits: rows 0 and 2
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::sparse_categorical_accuracy, p, y, 4, 3, 1), 2.0 / 4.0);
}

TEST(MetricValues, CategoricalAccuracyComparesTheArgmaxOfBoth) {
    const std::vector<double> p = {0.1, 0.7, 0.2, 0.5, 0.3, 0.2, 0.2, 0.3, 0.5};
    const std::vector<double> y = {0, 1, 0, 0, 0, 1, 0, 0, 1};  // hits: rows 0 and 2
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::categorical_accuracy, p, y, 3, 3, 3), 2.0 / 3.0);
}

TEST(MetricValues, BinaryAccuracyThresholdsPredictionsAtOneHalf) {
    const std::vector<double> p = {0.9, 0.4, 0.51, 0.2, 0.6};
    const std::vector<double> y = {1, 1, 1, 0, 0};  // hits: 0.9->1, 0.51->1, 0.2->0
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::binary_accuracy, p, y, 5, 1, 1), 3.0 / 5.0);
}

TEST(MetricValues, BinaryAccuracyOverSeveralOutputsIsTheMeanPerSample) {
    const std::vector<double> p = {0.9, 0.1, 0.8, 0.7, 0.2, 0.3};
    const std::vector<double> y = {1, 1, 1, 0, 0, 0};  // row 0: 2 of 3; row 1: 2 of 3
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::binary_accuracy, p, y, 2, 3, 3), 2.0 / 3.0);
}

TEST(MetricValues, MaeAndMseAreMeansOverOutputsThenSamples) {
    const std::vector<double> p = {0.5, -1.0, 2.0, 0.0};
    const std::vector<double> y = {1.0, 1.0, 0.5, -0.5};
    // Row 0 errors (-0.5, -2): mae 1.25, mse 2.125; row 1 errors (1.5, 0.5): mae 1.0, mse 1.25.
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::mae, p, y, 2, 2, 2), (1.25 + 1.0) / 2);
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::mse, p, y, 2, 2, 2), (2.125 + 1.25) / 2);
}

TEST(MetricValues, MaeBroadcastsOneLabelColumnAgainstEveryOutput) {
    const std::vector<double> p = {0.2, 0.3, 0.5};
    const std::vector<double> y = {1.0};
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::mae, p, y, 1, 3, 1), (0.8 + 0.7 + 0.5) / 3);
}

// A three-class "model" whose softmax outputs follow the inputs: identity kernel, so the
// argmax of each prediction is the argmax of its input row.
Sequential argmax_model(const std::string& loss, const std::vector<std::string>& metrics) {
    Sequential model({3});
    model.add(Dense(3, "softmax", false));
    model.compile(Adam(), loss_from_name(loss), CompileOptions{metrics});
    Tensor kernel({3, 3});
    for (int64_t i = 0; i < 3; ++i) kernel.at(i, i) = 1.0f;
    model.set_weights({kernel});
    return model;
}

const Tensor kInputs({5, 3}, {3, 0, 0,  0, 3, 0,  0, 0, 3,  3, 0, 0,  0, 3, 0});  // argmax 0 1 2 0 1

TEST(MetricValues, EvaluateResolvesAccuracyFromSparseLabels) {
    Sequential model = argmax_model("sparse_categorical_crossentropy", {"accuracy"});
    const Logs logs = model.evaluate(kInputs, Tensor({5}, {0, 1, 1, 0, 2}), 2);  // 3 of 5 right
    EXPECT_NEAR(logs.at("accuracy"), 0.6, 1e-12);
}

TEST(MetricValues, EvaluateResolvesAccuracyFromOneHotLabels) {
    Sequential model = argmax_model("categorical_crossentropy", {"acc"});
    const Tensor one_hot({5, 3}, {1, 0, 0,  0, 0, 1,  0, 0, 1,  0, 1, 0,  0, 1, 0});  // rows 0, 2, 4 right
    const Logs logs = model.evaluate(kInputs, one_hot, 2);
    EXPECT_NEAR(logs.at("acc"), 0.6, 1e-12);
}

TEST(MetricValues, SeedCaseAccuracyIsSparseEvenWithAnElementwiseLoss) {
    // log_cosh with labels (N,) and 3 outputs: tf.keras 2 still picks sparse_categorical_accuracy.
    Sequential model = argmax_model("log_cosh", {"accuracy", "mae"});
    const Tensor labels({5}, {0, 1, 2, 2, 2});  // rows 0, 1, 2 right
    const Logs logs = model.evaluate(kInputs, labels, 3);
    EXPECT_NEAR(logs.at("accuracy"), 0.6, 1e-12);
    // mae compares every output with the label value, like the loss.
    const Tensor p = model.predict(kInputs);
    double mae = 0;
    for (int64_t r = 0; r < 5; ++r)
        for (int64_t j = 0; j < 3; ++j) mae += std::fabs(double(p.at(r, j)) - double(labels[r])) / 3.0;
    EXPECT_NEAR(logs.at("mae"), mae / 5.0, 1e-6);
}

TEST(MetricValues, TopKAccuracyCountsALabelAmongTheFiveLargestTiesIncluded) {
    // 7 classes; the label's prediction ranks 5th (a hit), 6th (a miss), and ties the 5th (a hit, as
    // Keras's in_top_k: at least the k-th largest value).
    const std::vector<double> p = {0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3,
                                   0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3,
                                   0.9, 0.8, 0.7, 0.6, 0.5, 0.5, 0.3};
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::sparse_top_k_categorical_accuracy, p, {4, 5, 5}, 3, 7, 1), 2.0 / 3);
    std::vector<double> one_hot(21, 0.0);
    one_hot[4] = one_hot[7 + 5] = one_hot[14 + 5] = 1;
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::top_k_categorical_accuracy, p, one_hot, 3, 7, 7), 2.0 / 3);
    EXPECT_EQ(nn::resolve_metric("top_k_categorical_accuracy", 7, 7).kind, MetricKind::top_k_categorical_accuracy);
    // Another k: the label ranks 5th, 6th and ties the 5th, so k=6 hits all three, k=4 none, k=1 none.
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::sparse_top_k_categorical_accuracy, p, {4, 5, 5}, 3, 7, 1, 6), 1.0);
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::sparse_top_k_categorical_accuracy, p, {4, 5, 5}, 3, 7, 1, 4), 0.0);
    EXPECT_DOUBLE_EQ(metric_mean(MetricKind::top_k_categorical_accuracy, p, one_hot, 3, 7, 7, 1), 0.0);
    const nn::Metric three = nn::resolve_metric("sparse_top_k_categorical_accuracy(3)", 7, 1);
    EXPECT_EQ(three.kind, MetricKind::sparse_top_k_categorical_accuracy);
    EXPECT_EQ(three.k, 3);
    EXPECT_EQ(nn::resolve_metric("top3=top_k_categorical_accuracy(3)", 7, 7).name, "top3");
    for (const char* bad : {"top_k_categorical_accuracy(0)", "top_k_categorical_accuracy(x)", "top_k_categorical_accuracy()"})
        EXPECT_THROW(nn::resolve_metric(bad, 7, 7), Error) << bad;
}

TEST(MetricValues, MapeAndMsleAreKerassFormulas) {
    const std::vector<double> p = {1.5, 0.0, -2.0, 4.0}, y = {1.0, 0.0, 2.0, 3.0};
    const double mape = 100.0 * (0.5 / 1.0 + 0.0 / 1e-7 + 4.0 / 2.0 + 1.0 / 3.0) / 4.0;
    EXPECT_NEAR(metric_mean(MetricKind::mape, p, y, 1, 4, 4), mape, 1e-9);
    const auto l = [](double v) { return std::log(std::max(v, 1e-7) + 1.0); };
    const double msle = (std::pow(l(1.5) - l(1.0), 2) + std::pow(l(0.0) - l(0.0), 2) + std::pow(l(-2.0) - l(2.0), 2) +
                         std::pow(l(4.0) - l(3.0), 2)) / 4.0;
    EXPECT_NEAR(metric_mean(MetricKind::msle, p, y, 1, 4, 4), msle, 1e-12);
    EXPECT_EQ(nn::resolve_metric("mape", 4, 4).kind, MetricKind::mape);
    EXPECT_EQ(nn::resolve_metric("mean_squared_logarithmic_error", 4, 4).kind, MetricKind::msle);
}

// The ratio metrics from their counts over a batch, worked by hand.
double ratio_metric(const std::string& name, const std::vector<double>& p, const std::vector<double>& y, int64_t width) {
    const nn::Metric m = nn::resolve_metric(name, width, width);
    std::vector<double> counts(static_cast<size_t>(m.counts), 0.0);
    const int64_t rows = static_cast<int64_t>(p.size()) / width;
    nn::metric_count(m, p.data(), y.data(), rows, width, width, counts.data());
    return nn::metric_result(m, counts.data(), width, rows);
}

TEST(RatioMetrics, PrecisionRecallAndRocAucByHand) {
    // Above 0.5: 0.9 and 0.6 are true positives, 0.8 a false one; 0.3 is a missed positive.
    const std::vector<double> p = {0.9, 0.8, 0.3, 0.6, 0.1}, y = {1, 0, 1, 1, 0};
    EXPECT_DOUBLE_EQ(ratio_metric("precision", p, y, 1), 2.0 / 3.0);
    EXPECT_DOUBLE_EQ(ratio_metric("recall", p, y, 1), 2.0 / 3.0);
    // Of the 3 x 2 (positive, negative) pairs, 4 rank the positive higher; scores lie between
    // thresholds, so the interpolated curve is exact.
    EXPECT_NEAR(ratio_metric("auc", p, y, 1), 4.0 / 6.0, 1e-12);
    // Perfectly separated: both areas are 1; no positive predicted: precision 0 (Keras's divide_no_nan).
    EXPECT_NEAR(ratio_metric("auc", {0.9, 0.2}, {1, 0}, 1), 1.0, 1e-12);
    EXPECT_NEAR(ratio_metric("pr_auc", {0.9, 0.7, 0.2}, {1, 1, 0}, 1), 1.0, 1e-12);
    EXPECT_EQ(ratio_metric("precision", {0.1, 0.2}, {1, 0}, 1), 0.0);
}

TEST(RatioMetrics, AucCountsEqualEveryThresholdComparedOneByOne) {
    // Values on and beside the thresholds (float32's t/199), at the ends, beyond them, and NaN.
    std::vector<double> p, y;
    for (int64_t t = 0; t < nn::kAucThresholds; t += 7)
        for (double nudge : {-1e-9, 0.0, 1e-9}) p.push_back(double(nn::auc_threshold(t)) + nudge), y.push_back(double((t + p.size()) % 3 == 0));
    for (double v : {-1.0, 0.0, 1.0, 2.0, std::nan("")}) p.push_back(v), y.push_back(1.0), p.push_back(v), y.push_back(0.0);
    const nn::Metric m = nn::resolve_metric("auc", 1, 1);
    std::vector<double> counts(static_cast<size_t>(m.counts), 0.0), want(counts.size(), 0.0);
    nn::metric_count(m, p.data(), y.data(), static_cast<int64_t>(p.size()), 1, 1, counts.data());
    for (size_t i = 0; i < p.size(); ++i)
        for (int64_t t = 0; t < nn::kAucThresholds; ++t) {
            const bool predicted = static_cast<float>(p[i]) > nn::auc_threshold(t), positive = y[i] != 0.0;
            want[static_cast<size_t>(4 * t + (predicted ? (positive ? 0 : 1) : (positive ? 2 : 3)))] += 1;
        }
    EXPECT_EQ(counts, want);
}

TEST(RatioMetrics, R2ScoreAveragesEachOutputs) {
    // Output 0 predicts its labels exactly (1); output 1 predicts their mean (0).
    const std::vector<double> p = {1, 2, 2, 2, 3, 2}, y = {1, 1, 2, 2, 3, 3};
    EXPECT_NEAR(ratio_metric("r2_score", p, y, 2), 0.5, 1e-12);
}

TEST(RatioMetrics, F1ScoreAveragedAsKeras) {
    // Three classes, argmax predictions: rows predict 0, 1, 1, 2 for labels 0, 1, 2, 2.
    const std::vector<double> p = {0.7, 0.2, 0.1, 0.1, 0.8, 0.1, 0.2, 0.5, 0.3, 0.1, 0.2, 0.7};
    const std::vector<double> y = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1};
    // Per class: 0: p 1, r 1 -> 1; 1: p 1/2, r 1 -> 2/3; 2: p 1, r 1/2 -> 2/3 (Keras's epsilons ~1e-7).
    EXPECT_NEAR(ratio_metric("f1_score(macro)", p, y, 3), (1 + 2.0 / 3 + 2.0 / 3) / 3, 1e-6);
    EXPECT_NEAR(ratio_metric("f1_score(weighted)", p, y, 3), (1 * 1 + 1 * 2.0 / 3 + 2 * 2.0 / 3) / 4, 1e-6);
    EXPECT_NEAR(ratio_metric("f1_score(micro)", p, y, 3), 0.75, 1e-6);  // 3 of 4 right: p = r = 3/4
    // A threshold: binary predictions above it.
    EXPECT_NEAR(ratio_metric("f1_score(macro, 0.6)", {0.9, 0.55, 0.2, 0.7}, {1, 1, 0, 0}, 1), 0.5, 1e-6);
    EXPECT_THROW(nn::resolve_metric("f1_score", 3, 3), Error);  // Keras's average=None: one value per class
    EXPECT_THROW(nn::resolve_metric("f1_score(mean)", 3, 3), Error);
    EXPECT_THROW(nn::resolve_metric("f1_score(macro, 2)", 3, 3), Error);
}

TEST(RatioMetrics, FBetaScoreWeighsRecallByBeta) {
    // The rows of F1ScoreAveragedAsKeras: class 1 has p 1/2, r 1; class 2 p 1, r 1/2; class 0 is exact.
    const std::vector<double> p = {0.7, 0.2, 0.1, 0.1, 0.8, 0.1, 0.2, 0.5, 0.3, 0.1, 0.2, 0.7};
    const std::vector<double> y = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1};
    // F_beta = (1 + b^2) p r / (b^2 p + r), Keras's epsilons (~1e-7) aside; beta > 1 favours recall.
    const auto f = [](double b, double pr, double re) { return (1 + b * b) * pr * re / (b * b * pr + re); };
    EXPECT_NEAR(ratio_metric("fbeta_score(macro, 2)", p, y, 3), (1 + f(2, 0.5, 1) + f(2, 1, 0.5)) / 3, 1e-6);
    EXPECT_NEAR(ratio_metric("fbeta_score(macro, 0.5)", p, y, 3), (1 + f(0.5, 0.5, 1) + f(0.5, 1, 0.5)) / 3, 1e-6);
    EXPECT_GT(f(2, 0.5, 1), f(2, 1, 0.5));  // (the case distinguishes beta from 1/beta)
    // Beta 1 is F1.
    EXPECT_NEAR(ratio_metric("fbeta_score(weighted, 1)", p, y, 3), ratio_metric("f1_score(weighted)", p, y, 3), 1e-12);
    EXPECT_NEAR(ratio_metric("fbeta_score(macro, 1, 0.6)", {0.9, 0.55, 0.2, 0.7}, {1, 1, 0, 0}, 1), 0.5, 1e-6);
    for (const char* bad : {"fbeta_score", "fbeta_score(macro)", "fbeta_score(macro, 0)", "fbeta_score(macro, x)",
                            "fbeta_score(macro, 2, 1.5)", "fbeta_score(macro, 2, 0.5, 1)"})
        EXPECT_THROW(nn::resolve_metric(bad, 3, 3), Error) << bad;
}

TEST(RatioMetrics, AKeyBeforeAnEqualsSignIsTheLogKey) {
    const nn::Metric m = nn::resolve_metric("pr=pr_auc", 1, 1);
    EXPECT_EQ(m.kind, MetricKind::auc_pr);
    EXPECT_EQ(m.name, "pr");
    EXPECT_THROW(nn::resolve_metric("=auc", 1, 1), Error);
}

}  // namespace
}  // namespace onefit
