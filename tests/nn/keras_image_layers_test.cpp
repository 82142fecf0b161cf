// onefit's image layers against Keras 3 itself: two small models given Keras's initial weights
// predict what Keras predicted, and one SGD(0.1) step on the whole batch leaves the weights Keras's
// step left (so every layer's gradient matches Keras's). The numbers come from
// tests/nn/keras_image_layers.py (Keras and TensorFlow are peers, not test dependencies).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "onefit/onefit.hpp"

namespace onefit {
namespace {

Tensor reference(const std::string& file) {
    return read_npy(std::string(ONEFIT_SOURCE_DIR) + "/tests/nn/keras_image_layers/" + file + ".npy");
}

void expect_close(const Tensor& got, const Tensor& want, double tolerance, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    double worst = 0;
    for (int64_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - double(want[i])));
    EXPECT_LT(worst, tolerance) << what;
}

void expect_keras(const std::string& name, const Shape& input, const std::vector<Layer>& layers, const char* loss) {
    Sequential model(input, 0);
    for (const Layer& l : layers) model.add(l);
    model.compile(SGD(0.1f), loss_from_name(loss));
    const size_t arrays = model.get_weights().size();
    std::vector<Tensor> initial;
    for (size_t i = 0; i < arrays; ++i) initial.push_back(reference(name + "_w" + std::to_string(i)));
    model.set_weights(initial);
    const Tensor x = reference(name + "_x"), y = reference(name + "_y");
    expect_close(model.predict(x), reference(name + "_pred"), 1e-5, name + " predictions");

    FitOptions o;
    o.batch_size = x.rows(), o.epochs = 1, o.shuffle = false, o.verbose = 0;
    model.fit(x, y, o);
    const std::vector<Tensor> after = model.get_weights();
    for (size_t i = 0; i < arrays; ++i) {
        const Tensor want = reference(name + "_after" + std::to_string(i));
        EXPECT_EQ(after[i].shape(), want.shape()) << name << " array " << i;
        expect_close(after[i], want, 1e-5, name + " array " + std::to_string(i) + " after one step");
        double moved = 0;  // the step must have changed what it is compared on
        for (int64_t k = 0; k < want.size(); ++k) moved = std::max(moved, std::fabs(double(want[k]) - double(initial[i][k])));
        EXPECT_GT(moved, 1e-4) << name << " array " << i << " did not move in Keras's step";
    }
}

TEST(KerasImageLayers, SamePaddingStridesAndOverhangingPoolsPredictAndStepAsKeras) {
    expect_keras("m1", {7, 6, 2},
                 {Conv2D(4, {3, 2}, {2, 1}, "same", "tanh"), MaxPooling2D(2, 1, "same"), AveragePooling2D(2, 0, "same"),
                  Flatten(), Dense(3, "softmax")},
                 "sparse_categorical_crossentropy");
}

TEST(KerasImageLayers, ValidOneByOneAndGlobalAveragePredictAndStepAsKeras) {
    expect_keras("m2", {6, 6, 3}, {Conv2D(3, 3, 1, "valid", "relu"), Conv2D(5, 1, 1, "valid", "elu"),
                                   GlobalAveragePooling2D(), Dense(2)},
                 "mse");
}

}  // namespace
}  // namespace onefit
