// The seed program, computed by hand from tf.keras 2's formulas: Iris split 70/30 without
// shuffling, Dense(32, relu) -> Dense(3, softmax), log_cosh against labels of shape (N,),
// Adam(0.1). The reference is a second implementation of the forward pass in double, with
// gradients by central differences, so nothing here reuses the library's math.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "onefit/onefit.hpp"

namespace onefit {
namespace {

constexpr int kIn = 4, kHidden = 32, kOut = 3;
constexpr int kParams = kIn * kHidden + kHidden + kHidden * kOut + kOut;  // 259, Keras's order

// Known weights (not the seed's initialisation): smooth, varied, both signs, in Keras layout.
std::vector<double> known_params() {
    std::vector<double> w(kParams);
    for (int i = 0; i < kParams; ++i) w[static_cast<size_t>(i)] = 0.45 * std::sin(1.7 * i + 0.3) + 0.05 * std::cos(0.37 * i);
    return w;
}

std::vector<Tensor> as_keras_weights(const std::vector<double>& w) {
    std::vector<Tensor> out = {Tensor({kIn, kHidden}), Tensor({kHidden}), Tensor({kHidden, kOut}), Tensor({kOut})};
    size_t next = 0;
    for (Tensor& t : out)
        for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(w[next++]);
    return out;
}

std::vector<double> from_keras_weights(const std::vector<Tensor>& weights) {
    std::vector<double> w;
    for (const Tensor& t : weights)
        for (float v : t.values()) w.push_back(v);
    return w;
}

// tf.keras 2: labels (N,) become (N, 1) and broadcast against (N, 3); log_cosh is the mean over
// the last axis; the batch loss is the sum over samples divided by their number.
double seed_loss(const std::vector<double>& w, const Tensor& x, const Tensor& y, int64_t begin, int64_t end) {
    const double* k1 = w.data();
    const double* b1 = k1 + kIn * kHidden;
    const double* k2 = b1 + kHidden;
    const double* b2 = k2 + kHidden * kOut;
    double total = 0;
    for (int64_t r = begin; r < end; ++r) {
        double h[kHidden], z[kOut];
        for (int j = 0; j < kHidden; ++j) {
            double s = b1[j];
            for (int i = 0; i < kIn; ++i) s += x.at(r, i) * k1[i * kHidden + j];
            h[j] = s > 0 ? s : 0;
        }
        double norm = 0;
        for (int k = 0; k < kOut; ++k) {
            z[k] = b2[k];
            for (int j = 0; j < kHidden; ++j) z[k] += h[j] * k2[j * kOut + k];
            norm += std::exp(z[k]);
        }
        double sample = 0;
        for (int k = 0; k < kOut; ++k) sample += std::log(std::cosh(std::exp(z[k]) / norm - y[r])) / kOut;
        total += sample;
    }
    return total / static_cast<double>(end - begin);
}

std::vector<double> seed_gradient(const std::vector<double>& w, const Tensor& x, const Tensor& y, int64_t begin,
                                  int64_t end) {
    const double h = 1e-6;
    std::vector<double> g(w.size()), moved = w;
    for (size_t i = 0; i < w.size(); ++i) {
        moved[i] = w[i] + h;
        const double up = seed_loss(moved, x, y, begin, end);
        moved[i] = w[i] - h;
        const double down = seed_loss(moved, x, y, begin, end);
        moved[i] = w[i];
        g[i] = (up - down) / (2 * h);
    }
    return g;
}

// Keras's Adam (>= 2.11), state per parameter, t counted from 1.
struct AdamReference {
    double lr, b1 = double(0.9f), b2 = double(0.999f), eps = double(1e-7f);
    std::vector<double> m = std::vector<double>(kParams, 0.0), v = std::vector<double>(kParams, 0.0);
    int t = 0;
    void step(std::vector<double>& w, const std::vector<double>& g) {
        ++t;
        const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
        for (size_t i = 0; i < w.size(); ++i) {
            m[i] = b1 * m[i] + (1 - b1) * g[i];
            v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
            w[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
        }
    }
};

struct SeedSetup {
    TrainTestSplit data;
    SeedSetup() {
        const LabeledData iris = load_iris();
        data = train_test_split(iris.x, iris.y, 0.30, false);
    }
};

Sequential seed_model(const std::string& loss = "logcosh", const Optimizer& optimizer = Adam(0.1f)) {
    Sequential model({kIn});
    model.add(Dense(kHidden, "relu", true, "relu"));
    model.add(Dense(kOut, "softmax", true, "softmax"));
    model.compile(optimizer, loss_from_name(loss));
    model.set_weights(as_keras_weights(known_params()));
    return model;
}

FitOptions quiet(int64_t batch_size) {
    FitOptions o;
    o.batch_size = batch_size;
    o.epochs = 1;
    o.verbose = 0;
    o.shuffle = false;
    return o;
}

TEST(SeedSemantics, TheSplitIsTheFirst105RowsAndTheLast45) {
    const SeedSetup s;
    ASSERT_EQ(s.data.x_train.rows(), 105);
    ASSERT_EQ(s.data.x_test.rows(), 45);
    for (int64_t i = 0; i < 45; ++i) EXPECT_EQ(s.data.y_test[i], 2.0f);  // all virginica
}

TEST(SeedSemantics, EvaluateIsTheMeanOverSamplesOfTheMeanLogCoshAgainstTheBroadcastLabel) {
    const SeedSetup s;
    Sequential model = seed_model();
    const double expected = seed_loss(known_params(), s.data.x_train, s.data.y_train, 0, 105);
    EXPECT_NEAR(model.evaluate(s.data.x_train, s.data.y_train, 20).at("loss"), expected, 1e-6 * expected);
    EXPECT_NEAR(model.evaluate(s.data.x_test, s.data.y_test, 7).at("loss"),
                seed_loss(known_params(), s.data.x_test, s.data.y_test, 0, 45), 1e-6 * expected);
}

TEST(SeedSemantics, OneAdamStepOnTheWholeBatchMovesWeightsByKerasAdam) {
    const SeedSetup s;
    Sequential model = seed_model();
    model.fit(s.data.x_train, s.data.y_train, quiet(105));

    std::vector<double> expected = from_keras_weights(as_keras_weights(known_params()));  // float-rounded start
    const std::vector<double> start = expected;
    AdamReference adam{.lr = double(0.1f)};
    adam.step(expected, seed_gradient(start, s.data.x_train, s.data.y_train, 0, 105));
    const std::vector<double> got = from_keras_weights(model.get_weights());
    ASSERT_EQ(got.size(), expected.size());
    int moved = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], expected[i], 2e-6) << "parameter " << i;
        moved += std::fabs(expected[i] - start[i]) > 1e-3;
    }
    EXPECT_GT(moved, kParams / 2) << "Adam's first step moves each live parameter by about lr";
}

// Plain SGD moves each weight by -lr * gradient, so unlike Adam (which divides the scale out)
// it shows the gradient's size: a gradient off by any factor moves the weights by that factor.
TEST(SeedSemantics, SgdStepsMoveWeightsByLearningRateTimesTheFiniteDifferenceGradient) {
    const SeedSetup s;
    const double lr = double(0.5f);
    Sequential model = seed_model("logcosh", SGD(0.5f));
    // Batches of 100 rows and then 5: each gradient is the mean over its own batch's rows.
    model.fit(s.data.x_train, s.data.y_train, quiet(100));

    std::vector<double> w = from_keras_weights(as_keras_weights(known_params()));  // float-rounded start
    const std::vector<double> start = w;
    for (int64_t begin : {0, 100}) {
        const int64_t end = std::min<int64_t>(begin + 100, 105);
        const std::vector<double> g = seed_gradient(w, s.data.x_train, s.data.y_train, begin, end);
        for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * g[i];
    }
    const std::vector<double> got = from_keras_weights(model.get_weights());
    ASSERT_EQ(got.size(), w.size());
    int moved = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double step = w[i] - start[i];
        EXPECT_NEAR(got[i] - start[i], step, 1e-6 + 1e-3 * std::fabs(step)) << "parameter " << i;
        moved += std::fabs(step) > 1e-4;
    }
    EXPECT_GT(moved, kParams / 4) << "too few parameters move for the check to see the gradient's scale";
}

TEST(SeedSemantics, EpochLossIsTheBatchSizeWeightedMeanOfLossesBeforeEachUpdate) {
    const SeedSetup s;
    Sequential model = seed_model();
    const History history = model.fit(s.data.x_train, s.data.y_train, quiet(20));

    // Batches of 20, 20, 20, 20, 20 and 5 rows, in order; each loss taken before its update.
    std::vector<double> w = from_keras_weights(as_keras_weights(known_params()));
    AdamReference adam{.lr = double(0.1f)};
    double weighted = 0, unweighted = 0;
    for (int64_t begin = 0; begin < 105; begin += 20) {
        const int64_t end = std::min<int64_t>(begin + 20, 105);
        const double loss = seed_loss(w, s.data.x_train, s.data.y_train, begin, end);
        weighted += loss * static_cast<double>(end - begin) / 105.0;
        unweighted += loss / 6.0;
        adam.step(w, seed_gradient(w, s.data.x_train, s.data.y_train, begin, end));
    }
    const double tolerance = 1e-5;
    EXPECT_NEAR(history["loss"][0], weighted, tolerance);
    // The alternatives are far enough apart for the check to tell them from the rule.
    EXPECT_GT(std::fabs(unweighted - weighted), 10 * tolerance);
    EXPECT_GT(std::fabs(seed_loss(w, s.data.x_train, s.data.y_train, 0, 105) - weighted), 10 * tolerance);
    // And the library's end weights agree with the reference's.
    const std::vector<double> got = from_keras_weights(model.get_weights());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], w[i], 1e-4) << "parameter " << i;
}

TEST(SeedSemantics, ValLossIsThePerSampleMeanOverTheValidationSetWithTheEpochsFinalWeights) {
    const SeedSetup s;
    for (int64_t val_batch : {-1, 7, 45}) {
        SCOPED_TRACE(val_batch);
        Sequential model = seed_model();
        FitOptions o = quiet(20);
        o.validation_data = {s.data.x_test, s.data.y_test};
        o.validation_batch_size = val_batch;
        const History history = model.fit(s.data.x_train, s.data.y_train, o);
        const std::vector<double> w = from_keras_weights(model.get_weights());
        const double expected = seed_loss(w, s.data.x_test, s.data.y_test, 0, 45);
        EXPECT_NEAR(history["val_loss"][0], expected, 1e-6 * expected);
    }
}

bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
    for (const std::string& w : warnings)
        if (w.find(text) != std::string::npos) return true;
    return false;
}

TEST(SeedSemantics, FitWarnsThatIntegerLabelsAreBroadcastAgainstTheOutputs) {
    const SeedSetup s;
    Sequential model = seed_model();
    FitOptions o = quiet(20);
    o.validation_data = {s.data.x_test, s.data.y_test};
    model.fit(s.data.x_train, s.data.y_train, o);
    EXPECT_TRUE(mentions(model.warnings(), "broadcast")) << ::testing::PrintToString(model.warnings());
    EXPECT_TRUE(mentions(model.warnings(), "sparse_categorical_crossentropy"))
        << ::testing::PrintToString(model.warnings());
}

TEST(SeedSemantics, FitWarnsThatTheUnshuffledSplitLeavesClassesOutOfValidation) {
    const SeedSetup s;
    Sequential model = seed_model();
    FitOptions o = quiet(20);
    o.validation_data = {s.data.x_test, s.data.y_test};
    model.fit(s.data.x_train, s.data.y_train, o);
    // Training holds {0: 50, 1: 50, 2: 5}; validation only class 2.
    EXPECT_TRUE(mentions(model.warnings(), "validation lacks 0, 1")) << ::testing::PrintToString(model.warnings());
    EXPECT_TRUE(mentions(model.warnings(), "shuffl")) << ::testing::PrintToString(model.warnings());
}

TEST(SeedSemantics, SparseCrossentropyWithAShuffledSplitGivesNoWarnings) {
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.30, true, 42);
    Sequential model = seed_model("sparse_categorical_crossentropy");
    FitOptions o = quiet(20);
    o.validation_data = {d.x_test, d.y_test};
    model.fit(d.x_train, d.y_train, o);
    EXPECT_TRUE(model.warnings().empty()) << ::testing::PrintToString(model.warnings());
}

}  // namespace
}  // namespace onefit
