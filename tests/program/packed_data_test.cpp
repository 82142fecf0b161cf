// pack_fit_data: features and labels reach the step loop as the caller's arrays themselves
// (no copy of a million rows), and are copied only where a device needs another layout.
#include <gtest/gtest.h>

#include <vector>

#include "onefit/onefit.hpp"
#include "program/packed_data.hpp"

namespace onefit {
namespace {

TrainingProgram lower(const std::vector<Layer>& layers, const Loss& loss) {
    return lower_sequential({3}, layers, loss, Adam(), {}, 0);
}

FitPlan plan_over(const Tensor& x, const Tensor& y) {
    FitPlan plan;
    plan.x = FeatureView(x);
    plan.y = &y;
    plan.y_width = label_width(y);
    return plan;
}

TEST(PackedData, FloatFeaturesAndClassLabelsAreTheCallersArrays) {
    const Tensor x({4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    const Tensor y({4}, {0, 2, 1, 2});
    const TrainingProgram program = lower({Dense(3, "softmax")}, loss_from_name("sparse_categorical_crossentropy"));
    const PackedData<float> d = pack_fit_data<float>(program, plan_over(x, y), 4);
    EXPECT_EQ(d.x.data(), x.data());
    EXPECT_EQ(d.y.data(), y.data());
    EXPECT_EQ(d.y.size(), 4u);
}

TEST(PackedData, OneLabelUnderAWiderElementwiseLossIsRepeatedAcrossTheRow) {
    const Tensor x({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor y({2}, {5, 7});
    const TrainingProgram program = lower({Dense(3)}, loss_from_name("log_cosh"));
    const PackedData<float> d = pack_fit_data<float>(program, plan_over(x, y), 2);
    ASSERT_EQ(d.y.size(), 6u);
    EXPECT_NE(d.y.data(), y.data());
    const std::vector<float> packed(d.y.data(), d.y.data() + d.y.size());
    EXPECT_EQ(packed, (std::vector<float>{5, 5, 5, 7, 7, 7}));
}

TEST(PackedData, TheDoubleExecutorGetsItsOwnWidenedCopy) {
    const Tensor x({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor y({2}, std::vector<float>{0, 1});
    const TrainingProgram program = lower({Dense(2, "softmax")}, loss_from_name("sparse_categorical_crossentropy"));
    const PackedData<double> d = pack_fit_data<double>(program, plan_over(x, y), 2);
    ASSERT_EQ(d.x.size(), 6u);
    EXPECT_EQ(d.x.data()[4], 5.0);
    EXPECT_EQ(d.y.data()[1], 1.0);
}

}  // namespace
}  // namespace onefit
