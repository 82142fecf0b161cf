// BatchNormalization against Keras's definition, worked out here in double: a training step
// normalises by the batch's mean and biased variance over every axis but the last and moves the
// moving statistics by momentum; evaluate and predict normalise by the moving statistics; the
// weights are Keras's (gamma, beta, moving_mean, moving_variance), saved and resumed bit for bit.
// (Its gradients: tests/nn/gradient_test.cpp; Keras 3 itself: python/tests/test_keras_batch_normalization.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "onefit/onefit.hpp"
#include "support/resumable_fit.hpp"
#include "support/test_files.hpp"
#include "support/weights.hpp"

namespace onefit {
namespace {

Tensor random_tensor(const Shape& shape, Rng& rng, double lo = -1, double hi = 1) {
    Tensor t(shape);
    for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(lo + (hi - lo) * rng.uniform_double());
    return t;
}

// Per channel (the last axis) of x: the mean and the biased variance over every other axis.
void moments(const Tensor& x, int64_t channels, std::vector<double>& mean, std::vector<double>& variance) {
    const int64_t groups = x.size() / channels;
    mean.assign(static_cast<size_t>(channels), 0.0), variance.assign(static_cast<size_t>(channels), 0.0);
    for (int64_t g = 0; g < groups; ++g)
        for (int64_t k = 0; k < channels; ++k) mean[k] += x[g * channels + k] / double(groups);
    for (int64_t g = 0; g < groups; ++g)
        for (int64_t k = 0; k < channels; ++k) variance[k] += std::pow(x[g * channels + k] - mean[k], 2) / double(groups);
}

// BatchNormalization(momentum 0.9) then a linear Dense holding the identity, so the loss and
// predictions show the normalised values themselves.
Sequential normalised_features(int64_t features) {
    Sequential model(Shape{features}, 3);
    model.add(BatchNormalization(0.9f));
    model.add(Dense(features, "linear"));
    Tensor identity({features, features});
    for (int64_t i = 0; i < features; ++i) identity.at(i, i) = 1.0f;
    std::vector<Tensor> w = model.get_weights();
    w[4] = identity;
    model.set_weights(w);
    model.compile(SGD(0.5f), loss_from_name("mean_squared_error"));
    return model;
}

FitOptions one_step(int64_t rows) {
    FitOptions o;
    o.batch_size = rows, o.epochs = 1, o.verbose = 0, o.shuffle = false;
    return o;
}

TEST(BatchNormalization, ATrainingStepUsesTheBatchsStatisticsAndMovesTheMovingOnes) {
    const int64_t rows = 6, c = 3;
    Rng rng(4);
    const Tensor x = random_tensor({rows, c}, rng, -2, 3), y = random_tensor({rows, c}, rng);
    Sequential model = normalised_features(c);
    const std::vector<Tensor> before = model.get_weights();
    ASSERT_EQ(before.size(), 6u);  // gamma, beta, moving_mean, moving_variance; the Dense's kernel, bias
    const History h = model.fit(x, y, one_step(rows));

    std::vector<double> mean, variance;
    moments(x, c, mean, variance);
    // The step's loss: the batch normalised by its own statistics (gamma 1, beta 0), against y.
    double loss = 0;
    std::vector<double> dgamma(c, 0.0), dbeta(c, 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < c; ++k) {
            const double xhat = (x.at(r, k) - mean[k]) / std::sqrt(variance[k] + 1e-3);
            const double err = xhat - y.at(r, k);
            loss += err * err / double(rows * c);
            dgamma[k] += 2 * err / double(rows * c) * xhat;
            dbeta[k] += 2 * err / double(rows * c);
        }
    EXPECT_NEAR(h.history.at("loss")[0], loss, 1e-6 * loss);

    const std::vector<Tensor> after = model.get_weights();
    for (int64_t k = 0; k < c; ++k) {
        EXPECT_NEAR(after[0][k], 1.0 - 0.5 * dgamma[k], 1e-5) << "gamma " << k;
        EXPECT_NEAR(after[1][k], 0.0 - 0.5 * dbeta[k], 1e-5) << "beta " << k;
        EXPECT_NEAR(after[2][k], 0.1 * mean[k], 1e-6) << "moving_mean " << k;
        EXPECT_NEAR(after[3][k], 0.9 + 0.1 * variance[k], 1e-6) << "moving_variance " << k;
    }
}

TEST(BatchNormalization, PredictAndEvaluateUseTheMovingStatistics) {
    const int64_t rows = 5, c = 4;
    Rng rng(8);
    const Tensor x = random_tensor({rows, c}, rng, -1, 2);
    Sequential model = normalised_features(c);
    std::vector<Tensor> w = model.get_weights();
    for (int64_t k = 0; k < c; ++k) w[0][k] = 0.5f + k, w[1][k] = 0.1f * k, w[2][k] = 0.3f - k, w[3][k] = 2.0f + k;
    model.set_weights(w);
    const Tensor p = model.predict(x);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < c; ++k) {
            const double expected = (x.at(r, k) - w[2][k]) / std::sqrt(w[3][k] + 1e-3) * w[0][k] + w[1][k];
            EXPECT_NEAR(p.at(r, k), expected, 1e-5) << r << "," << k;
        }
    double mse = 0;
    for (int64_t i = 0; i < p.size(); ++i) mse += double(p[i]) * p[i] / double(p.size());
    EXPECT_NEAR(model.evaluate(x, Tensor({rows, c})).at("loss"), mse, 1e-5 * mse);
    // Predicting does not move the statistics (only training does).
    EXPECT_TRUE(testing_support::same_bits(model.get_weights(), w));
}

TEST(BatchNormalization, OnImagesEachChannelIsNormalisedOverTheBatchAndEveryPixel) {
    const int64_t rows = 3, h = 4, wd = 5, c = 2;
    Rng rng(6);
    const Tensor x = random_tensor({rows, h, wd, c}, rng, 0, 4), y = random_tensor({rows}, rng);
    Sequential model(Shape{h, wd, c}, 1);
    model.add(BatchNormalization());
    model.add(Flatten());
    model.add(Dense(1));
    model.compile(SGD(0.1f), loss_from_name("mean_squared_error"));
    model.fit(x, y, one_step(rows));
    std::vector<double> mean, variance;
    moments(x, c, mean, variance);
    const std::vector<Tensor> w = model.get_weights();
    for (int64_t k = 0; k < c; ++k) {
        EXPECT_NEAR(w[2][k], 0.01 * mean[k], 1e-6);  // default momentum 0.99
        EXPECT_NEAR(w[3][k], 0.99 + 0.01 * variance[k], 1e-6);
    }
}

TEST(BatchNormalization, WeightsAndSummaryAreKerassAndWithoutCenterOrScaleOnlyTheStatisticsRemain) {
    Sequential model(Shape{5});
    model.add(Dense(8, "relu"));
    model.add(BatchNormalization());
    model.add(BatchNormalization(0.99f, 1e-3f, false, false));
    model.add(Dense(2));
    const std::vector<Tensor> w = model.get_weights();
    ASSERT_EQ(w.size(), 10u);
    for (size_t i = 2; i < 8; ++i) EXPECT_EQ(w[i].shape(), (Shape{8}));
    for (int64_t k = 0; k < 8; ++k) {
        EXPECT_EQ(w[2][k], 1.0f);  // gamma: ones
        EXPECT_EQ(w[3][k], 0.0f);  // beta: zeros
        EXPECT_EQ(w[4][k], 0.0f);  // moving_mean
        EXPECT_EQ(w[5][k], 1.0f);  // moving_variance
    }
    EXPECT_EQ(model.count_params(), 48 + 32 + 16 + 18);
    const std::string s = model.summary();
    EXPECT_NE(s.find("batch_normalization (BatchNormalization)"), std::string::npos) << s;
    EXPECT_NE(s.find("batch_normalization_1 (BatchNormalization)"), std::string::npos) << s;
    EXPECT_NE(s.find("Total params: 114\nTrainable params: 82\nNon-trainable params: 32"), std::string::npos) << s;
}

TEST(BatchNormalization, ArgumentsOutsideKerassRangesAreErrorsNamingThem) {
    EXPECT_EQ(test_files::error_of([] { BatchNormalization(1.5f); }),
              "BatchNormalization: momentum must be in [0, 1], got 1.5");
    EXPECT_EQ(test_files::error_of([] { BatchNormalization(0.9f, 0.0f); }),
              "BatchNormalization: epsilon must be positive (as a float32), got 0");
}

TEST(BatchNormalization, SavedWithItsMovingStatisticsAndResumedBitForBit) {
    Rng rng(2);
    const Tensor x = random_tensor({24, 4, 4, 2}, rng), y = random_tensor({24}, rng);
    const auto model = [] {
        Sequential m(Shape{4, 4, 2}, 5);
        m.add(Conv2D(3, 3, 1, "same", "relu"));
        m.add(BatchNormalization(0.8f, 1e-2f));
        m.add(Flatten());
        m.add(Dense(1));
        m.compile(Adam(0.01f), loss_from_name("mean_squared_error"));
        return m;
    };
    FitOptions o;
    o.batch_size = 8, o.epochs = 4, o.verbose = 0, o.seed = 3;
    const std::string dir = test_files::temp_path("_model");
    std::filesystem::remove_all(dir);
    testing_support::expect_saved_and_resumed_bit_for_bit(model, x, y, o, dir, [](const std::string& dir) {
        const std::string config = test_files::read_bytes(dir + "/config.json");
        for (const char* key : {"\"batch_normalization\"", "\"momentum\": 0.8", "\"epsilon\": 0.01", "\"center\": true"})
            EXPECT_NE(config.find(key), std::string::npos) << key << "\n" << config;
        std::map<std::string, std::string> meta;
        const auto tensors = read_safetensors(dir + "/model.safetensors", &meta);
        ASSERT_EQ(tensors.size(), 8u);
        EXPECT_EQ(tensors[4].first, "batch_normalization/moving_mean");
        EXPECT_EQ(tensors[5].first, "batch_normalization/moving_variance");

        // A value the kind refuses, edited into config.json, is an error naming its key.
        std::string edited = config;
        edited.replace(edited.find("\"momentum\": 0.8"), 15, "\"momentum\": 1.5");
        const std::string edited_dir = test_files::temp_path("_edited");
        std::filesystem::remove_all(edited_dir);
        std::filesystem::copy(dir, edited_dir);
        std::ofstream(edited_dir + "/config.json", std::ios::trunc) << edited;
        const std::string error = test_files::error_of([&] { load_model(edited_dir); });
        EXPECT_NE(error.find("'layers[1].momentum' momentum must be in [0, 1], got 1.5"), std::string::npos) << error;
    });
}

}  // namespace
}  // namespace onefit
