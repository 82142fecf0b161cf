// Each lint fires on a set-up built to have the problem and stays quiet on a clean one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

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

TEST(ExplainLints, SingleClassValidationFires) {
    Clean c;
    for (int64_t i = 0; i < 30; ++i) c.y_val[i] = 2;
    EXPECT_TRUE(has(lint_fit(c.input), "single_class_validation"));
}

TEST(ExplainLints, FeatureScalesFireAboveA100xStdRatio) {
    Clean c;
    for (int64_t i = 0; i < 100; ++i) c.x.at(i, 1) = static_cast<float>(i % 5) * 1000;
    EXPECT_TRUE(has(lint_fit(c.input), "feature_scales"));
}

TEST(ExplainLints, RisingLossFires) {
    Clean c;
    c.history.history["loss"] = {0.5, 0.7, 0.9};
    EXPECT_TRUE(has(lint_fit(c.input), "loss_rising"));
}

TEST(ExplainLints, NanLossFires) {
    Clean c;
    c.history.history["loss"] = {0.5, NAN};
    EXPECT_TRUE(has(lint_fit(c.input), "loss_diverged"));
}

TEST(ExplainLints, OverheadBoundFiresWhenComputeIsBelowDispatch) {
    Clean c;
    c.input.step_compute_seconds = 1e-7;
    c.input.step_overhead_seconds = 5e-6;
    EXPECT_TRUE(has(lint_fit(c.input), "overhead_bound"));
}

TEST(ExplainLints, TinyLastBatchFiresBelowTenPercent) {
    Clean c;
    c.input.train_rows = 101;  // last batch of 1 with batch 20
    EXPECT_TRUE(has(lint_fit(c.input), "tiny_last_batch"));
    c.input.train_rows = 105;  // last batch of 5: 25%, fine
    EXPECT_FALSE(has(lint_fit(c.input), "tiny_last_batch"));
}

}  // namespace
}  // namespace onefit
