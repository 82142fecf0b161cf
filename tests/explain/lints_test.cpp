// Each lint fires on a set-up built to have the problem and stays quiet on a clean one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "onefit/explain.hpp"

namespace onefit {
namespace {

bool has(const std::vector<Lint>& lints, const std::string& id) {
    return std::any_of(lints.begin(), lints.end(), [&](const Lint& l) { return l.id == id && !l.fix.empty(); });
}

struct Clean {  // a well set-up classification fit: 100 rows, batch 20, three classes everywhere
    Tensor x{{100, 2}}, y{{100}}, y_val{{30}};
    History history;
    LintInput input;
    Clean() {
        for (int64_t i = 0; i < 100; ++i) x.at(i, 0) = static_cast<float>(i % 7), x.at(i, 1) = static_cast<float>(i % 5) * 2, y[i] = static_cast<float>(i % 3);
        for (int64_t i = 0; i < 30; ++i) y_val[i] = static_cast<float>(i % 3);
        history.history["loss"] = {1.0, 0.6, 0.4};
        input.x_train = &x;
        input.y_train = &y;
        input.y_validation = &y_val;
        input.history = &history;
        input.output_width = 3;
        input.loss = LossKind::sparse_categorical_crossentropy;
        input.batch_size = 20;
        input.train_rows = 100;
        input.step_compute_seconds = 1e-5;
        input.step_overhead_seconds = 1e-7;
    }
};

TEST(ExplainLints, CleanFitHasNoLints) {
    Clean c;
    EXPECT_TRUE(lint_fit(c.input).empty());
}

TEST(ExplainLints, LabelBroadcastAndClassCoverageComeFromFitWarnings) {
    Clean c;
    c.input.warnings = {
        "labels y have shape (105,) but predictions are (None, 3): loss 'log_cosh' compares every output with the "
        "label value (broadcast, as tf.keras 2 does); these look like class indices, so use ...",
        "training labels {0: 50} and validation labels {2: 45} do not share classes (...)"};
    const std::vector<Lint> lints = lint_fit(c.input);
    EXPECT_TRUE(has(lints, "label_broadcast"));
    EXPECT_TRUE(has(lints, "class_coverage"));
}

TEST(ExplainLints, SingleClassValidationFiresOnlyWhenEveryLabelIsOneClass) {
    Clean c;
    for (int64_t i = 0; i < 30; ++i) c.y_val[i] = 2;
    EXPECT_TRUE(has(lint_fit(c.input), "single_class_validation"));
    c.y_val[29] = 0;  // one row of another class is enough
    EXPECT_FALSE(has(lint_fit(c.input), "single_class_validation"));
}

TEST(ExplainLints, SingleClassValidationNeedsAClassifier) {
    Clean c;
    for (int64_t i = 0; i < 30; ++i) c.y_val[i] = 1;
    c.input.output_width = 1;
    c.input.loss = LossKind::mean_squared_error;  // one regression output: a constant target is fine
    EXPECT_FALSE(has(lint_fit(c.input), "single_class_validation"));
    c.input.loss = LossKind::binary_crossentropy;  // one sigmoid output is a classifier
    EXPECT_TRUE(has(lint_fit(c.input), "single_class_validation"));
}

// Column 0 alternates -1, 1 (std exactly 1); column 1 alternates -s, s (std s): the ratio is s.
bool feature_scales_fire_at_ratio(float s) {
    Clean c;
    for (int64_t i = 0; i < 100; ++i) {
        c.x.at(i, 0) = i % 2 ? 1.0f : -1.0f;
        c.x.at(i, 1) = i % 2 ? s : -s;
    }
    return has(lint_fit(c.input), "feature_scales");
}

TEST(ExplainLints, FeatureScalesFireAboveA100xStdRatioAndNotAtIt) {
    EXPECT_TRUE(feature_scales_fire_at_ratio(1000.0f));
    EXPECT_TRUE(feature_scales_fire_at_ratio(100.01f));
    EXPECT_FALSE(feature_scales_fire_at_ratio(100.0f));
    EXPECT_FALSE(feature_scales_fire_at_ratio(99.99f));
    EXPECT_TRUE(feature_scales_fire_at_ratio(1.0f / 100.01f));  // either column may be the wide one
    EXPECT_FALSE(feature_scales_fire_at_ratio(1.0f / 99.99f));
}

TEST(ExplainLints, FeatureScalesIgnoreConstantColumns) {
    Clean c;
    for (int64_t i = 0; i < 100; ++i) c.x.at(i, 0) = 5.0f;  // std 0: no scale to compare with column 1's
    EXPECT_FALSE(has(lint_fit(c.input), "feature_scales"));
}

bool loss_rising(std::vector<double> loss) {
    Clean c;
    c.history.history["loss"] = std::move(loss);
    return has(lint_fit(c.input), "loss_rising");
}

TEST(ExplainLints, RisingLossFiresWhenTheLastLossExceedsTheFirst) {
    EXPECT_TRUE(loss_rising({0.5, 0.7, 0.9}));
    EXPECT_TRUE(loss_rising({0.5, 0.5 + 1e-9}));
    EXPECT_FALSE(loss_rising({0.5, 0.5}));
    EXPECT_FALSE(loss_rising({0.5, 0.4999}));
    EXPECT_FALSE(loss_rising({0.5}));  // one epoch has no trend
}

TEST(ExplainLints, RisingLossFiresWhenTheLastLossExceedsOneAndAHalfTimesTheLowest) {
    EXPECT_TRUE(loss_rising({1.0, 0.5, 0.75 + 1e-6}));
    EXPECT_FALSE(loss_rising({1.0, 0.5, 0.75}));  // exactly 1.5 x the lowest
    EXPECT_FALSE(loss_rising({1.0, 0.5, 0.7499}));
    // Losses near zero: 1.5 x a tiny lowest is still tiny; a rise under 1e-6 is noise.
    EXPECT_FALSE(loss_rising({1.0, 1e-7, 9e-7}));
    EXPECT_TRUE(loss_rising({1.0, 1e-7, 1.2e-6}));
}

TEST(ExplainLints, NanOrInfiniteLossFiresDivergedAtItsEpoch) {
    for (double bad : {double(NAN), double(INFINITY), -double(INFINITY)}) {
        SCOPED_TRACE(bad);
        Clean c;
        c.history.history["loss"] = {0.5, 0.4, bad, 0.3};
        const std::vector<Lint> lints = lint_fit(c.input);
        ASSERT_TRUE(has(lints, "loss_diverged"));
        EXPECT_FALSE(has(lints, "loss_rising"));
        for (const Lint& l : lints) {
            if (l.id == "loss_diverged") {
                EXPECT_NE(l.message.find("at epoch 3"), std::string::npos) << l.message;
            }
        }
    }
}

bool overhead_bound(double compute, double overhead) {
    Clean c;
    c.input.step_compute_seconds = compute;
    c.input.step_overhead_seconds = overhead;
    return has(lint_fit(c.input), "overhead_bound");
}

TEST(ExplainLints, OverheadBoundFiresWhenComputeIsBelowDispatch) {
    EXPECT_TRUE(overhead_bound(1e-7, 5e-6));
    EXPECT_TRUE(overhead_bound(4.999e-6, 5e-6));
    EXPECT_FALSE(overhead_bound(5e-6, 5e-6));
    EXPECT_FALSE(overhead_bound(5.001e-6, 5e-6));
    EXPECT_FALSE(overhead_bound(0, 0));  // no overhead measured: nothing to compare
}

bool tiny_last_batch(int64_t rows, int64_t batch, int64_t steps_per_epoch = -1) {
    Clean c;
    c.input.train_rows = rows;
    c.input.batch_size = batch;
    c.input.steps_per_epoch = steps_per_epoch;
    return has(lint_fit(c.input), "tiny_last_batch");
}

TEST(ExplainLints, TinyLastBatchFiresBelowTenPercentOfTheBatch) {
    EXPECT_TRUE(tiny_last_batch(101, 20));   // 1 row of 20: 5%
    EXPECT_TRUE(tiny_last_batch(62, 30));    // 2 of 30: 6.7%
    EXPECT_FALSE(tiny_last_batch(63, 30));   // 3 of 30: exactly 10%
    EXPECT_FALSE(tiny_last_batch(64, 30));   // 4 of 30
    EXPECT_FALSE(tiny_last_batch(105, 20));  // 5 of 20: 25%
    EXPECT_FALSE(tiny_last_batch(100, 20));  // no short batch
}

TEST(ExplainLints, TinyLastBatchNeedsMoreThanOneBatchAndOnePassPerEpoch) {
    EXPECT_FALSE(tiny_last_batch(1, 20));      // the only batch is the whole data
    EXPECT_TRUE(tiny_last_batch(21, 20));
    EXPECT_FALSE(tiny_last_batch(21, 20, 5));  // steps_per_epoch: batches continue across passes
}

}  // namespace
}  // namespace onefit

namespace onefit {
namespace {

// A fix is said in the words of whoever explains: the command line's flags, or the arguments of
// fit and compile for a program's call (Python, C++).
TEST(ExplainLints, FixesNameTheCommandLinesFlagsOrTheCallsArguments) {
    Clean c;
    c.history.history["loss"] = {1.0, 2.0, 3.0};  // rising
    c.input.step_compute_seconds = 1e-7, c.input.step_overhead_seconds = 1e-5;  // overhead bound
    const auto fixes = [&](bool command_line) {
        c.input.command_line = command_line;
        std::string all;
        for (const Lint& l : lint_fit(c.input)) all += l.fix + "\n";
        return all;
    };
    const std::string cli = fixes(true), call = fixes(false);
    EXPECT_NE(cli.find("--lr 0.01"), std::string::npos) << cli;
    EXPECT_NE(cli.find("--batch-size"), std::string::npos) << cli;
    EXPECT_EQ(call.find("--"), std::string::npos) << call;
    EXPECT_NE(call.find("learning_rate=0.01"), std::string::npos) << call;
    EXPECT_NE(call.find("batch_size="), std::string::npos) << call;
}

}  // namespace
}  // namespace onefit
