// explain_fit runs one profiled fit of the model it is given, but leaves that model as it was:
// a fitted model's weights, moving statistics, optimizer state and step count are put back, so
// what the model does next does not depend on whether it was explained.
#include <gtest/gtest.h>

#include <vector>

#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

Sequential fitted_model(const LabeledData& iris) {
    Sequential model({4}, 7);
    model.add(Dense(16, "relu")).add(BatchNormalization()).add(Dense(3, "softmax"));
    model.compile(Adam(0.05f), loss_from_name("sparse_categorical_crossentropy"));
    FitOptions options;
    options.epochs = 2, options.batch_size = 30, options.verbose = 0;
    model.fit(iris.x, iris.y, options);
    return model;
}

std::vector<std::vector<float>> values(const std::vector<Tensor>& tensors) {
    std::vector<std::vector<float>> v;
    for (const Tensor& t : tensors) v.emplace_back(t.data(), t.data() + t.size());
    return v;
}

TEST(ExplainFit, LeavesTheModelItExplainsAsItWas) {
    const LabeledData iris = load_iris();
    Sequential explained = fitted_model(iris), untouched = fitted_model(iris);
    const auto before = values(explained.get_weights());
    const int64_t step_before = explained.program().optimizer_step;

    FitOptions options;
    options.epochs = 3, options.batch_size = 30;
    const ExplainReport report = explain_fit(explained, iris.x, iris.y, nullptr, nullptr, options);
    ASSERT_EQ(report.history.epoch.size(), 3u);  // the explained fit did run

    EXPECT_EQ(values(explained.get_weights()), before);
    EXPECT_EQ(explained.program().optimizer_step, step_before);
    EXPECT_EQ(explained.program().optimizer_slots, untouched.program().optimizer_slots);
    // And it trains on exactly as the model that was never explained.
    FitOptions more;
    more.epochs = 2, more.batch_size = 30, more.verbose = 0;
    explained.fit(iris.x, iris.y, more);
    untouched.fit(iris.x, iris.y, more);
    EXPECT_EQ(values(explained.get_weights()), values(untouched.get_weights()));
}

}  // namespace
}  // namespace onefit
