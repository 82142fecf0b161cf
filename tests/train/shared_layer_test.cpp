// Shared layers (a Keras layer called on several tensors): one set of weights whose gradient is
// the sum over its calls, listed once, saved and loaded in every format, and their mistakes named.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "onefit/functional.hpp"
#include "onefit/io.hpp"
#include "support/gradient_check.hpp"
#include "support/graph_models.hpp"
#include "support/make_loss.hpp"

namespace onefit {
namespace {

using testing_support::error_of;
using testing_support::make_loss;
using testing_support::ramp;
using testing_support::reading;

TEST(SharedLayerGradients, ASiameseDenseOnTwoInputsSumsBothCallsGradients) {
    // Layer 0 on input 0, its second call (layer 1) on input 1, then both merged.
    std::vector<Layer> layers = {reading(Dense(3, "tanh"), {-1})};
    layers.push_back(shared_call(layers, 0, {-2}));
    layers.push_back(reading(make_layer("concatenate", {}), {0, 1}));
    layers.push_back(Dense(2));
    gradient_check::expect_gradients_match(
        {.layers = layers, .loss = make_loss(LossKind::mean_squared_error), .rows = 5, .inputs = {{4}, {4}}});
}

TEST(SharedLayerGradients, ALayerCalledThreeTimesInAChainAndOnABranch) {
    // dense(dense(dense(x))) + dense(x): four calls of one 3 -> 3 layer (the parts' sums), a
    // LayerNormalization shared too.
    std::vector<Layer> layers = {Dense(3, "tanh")};
    layers.push_back(shared_call(layers, 0));       // 1: on 0
    layers.push_back(shared_call(layers, 0));       // 2: on 1
    layers.push_back(shared_call(layers, 0, {-1}));  // 3: on the input
    layers.push_back(reading(make_layer("add", {}), {2, 3}));
    layers.push_back(make_layer("layer_normalization", {}));
    layers.push_back(shared_call(layers, 5));
    layers.push_back(Dense(2, "sigmoid"));
    gradient_check::expect_gradients_match(
        {.layers = layers, .loss = make_loss(LossKind::binary_crossentropy), .rows = 4, .inputs = {{3}}});
}

TEST(SharedLayerModel, ALayerCalledAgainByItsNameIsOneLayer) {
    const Layer encoder = Dense(3, "relu", true, "encoder");
    const Node a = Input({4}), b = Input({4});
    Sequential model = Model({a, b}, Dense(1, "sigmoid")(make_layer("concatenate", {})({encoder(a), encoder(b)})), 3);
    ASSERT_EQ(model.layers().size(), 4u);
    EXPECT_EQ(model.layers()[1].shares, 0);
    EXPECT_EQ(model.layer_names(), (std::vector<std::string>{"encoder", "encoder@1", "concatenate", "dense"}));
    EXPECT_EQ(model.get_weights().size(), 4u);  // the encoder's kernel and bias once, the head's
    EXPECT_EQ(model.count_params(), 4 * 3 + 3 + 6 + 1);
    const std::string summary = model.summary();
    // One row for the layer, connected to both inputs; the merge reads its two calls.
    EXPECT_NE(summary.find("encoder (Dense)              (None, 3)                 15         input, input_1"),
              std::string::npos) << summary;
    EXPECT_NE(summary.find("encoder, encoder@1"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("encoder@1 (Dense)"), std::string::npos) << summary;

    // Both calls use one kernel: swapping the two inputs swaps the halves the head reads.
    const Tensor x = ramp(6, 8, 2);
    Tensor swapped({6, 8});
    for (int64_t r = 0; r < 6; ++r)
        for (int64_t c = 0; c < 8; ++c) swapped.at(r, c) = x.at(r, (c + 4) % 8);
    std::vector<Tensor> w = model.get_weights();
    Tensor head = w[2];  // the head's (6, 1) kernel, halves swapped: the same predictions on swapped inputs
    for (int64_t k = 0; k < 3; ++k) std::swap(head.at(k, 0), head.at(k + 3, 0));
    const Tensor p = model.predict(x);
    w[2] = head;
    model.set_weights(w);
    const Tensor q = model.predict(swapped);
    for (int64_t r = 0; r < 6; ++r) EXPECT_NEAR(p.at(r, 0), q.at(r, 0), 1e-6f) << r;
}

TEST(SharedLayerModel, TrainsAndIsSavedAndLoadedInEveryFormat) {
    const Layer encoder = Dense(3, "tanh", true, "encoder");
    const Node a = Input({4}), b = Input({4});
    Sequential model = Model({a, b}, Dense(2, "softmax")(make_layer("add", {})({encoder(a), encoder(b)})), 5);
    model.compile(Adam(0.05f), make_loss(LossKind::categorical_crossentropy));
    const Tensor x = ramp(32, 8, 1);
    Tensor y({32, 2});
    for (int64_t r = 0; r < 32; ++r) y.at(r, x.at(r, 0) > x.at(r, 4) ? 1 : 0) = 1.0f;
    FitOptions options;
    options.epochs = 4, options.batch_size = 8, options.verbose = 0;
    const History h = model.fit(x, y, options);
    EXPECT_LT(h["loss"].back(), h["loss"].front());
    const Tensor p = model.predict(x);
    const std::string dir = testing::TempDir() + "/shared_layer_model", keras = testing::TempDir() + "/shared_layer.keras";
    model.save(dir);
    std::vector<std::string> paths = {dir};
#if ONEFIT_HAVE_KERAS_FILES
    save_model(model, keras);
    paths.push_back(keras);
#endif
    for (const std::string& path : paths) {
        Sequential loaded = load_model(path);
        ASSERT_EQ(loaded.layers().size(), 4u) << path;
        EXPECT_EQ(loaded.layers()[1].shares, 0) << path;
        const Tensor q = loaded.predict(x);
        for (int64_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], q[i], 1e-6f) << path;
        const History more = loaded.fit(x, y, options);  // its optimizer state came back too
        EXPECT_TRUE(std::isfinite(more["loss"].back())) << path;
    }
}

TEST(SharedLayerModel, MistakesAreNamed) {
    // Called on an input its weights do not fit.
    const Layer encoder = Dense(3, "relu", true, "encoder");
    const Node a = Input({4}), b = Input({5});
    EXPECT_NE(error_of([&] { Model({a, b}, make_layer("add", {})({encoder(a), encoder(b)})); })
                  .find("a layer called again takes inputs of the same shape"),
              std::string::npos);
    // Two different layers of one name.
    const Node c = Input({4});
    EXPECT_NE(error_of([&] { Model(c, Dense(3, "tanh", true, "encoder")(encoder(c))); }).find("has other arguments"),
              std::string::npos);
    // An activity regularizer (Keras 3 counts only the last call's penalty: refused, not guessed).
    Layer penalized = Dense(3, "relu", true, "penalized");
    penalized.activity_regularizer.l2 = 0.01f;
    const Node d = Input({3});
    EXPECT_NE(error_of([&] { Model(d, penalized(penalized(d))); }).find("activity_regularizer on a layer called more"),
              std::string::npos);
    // A call of a later layer, or of a later call.
    std::vector<Layer> layers = {Dense(3), Dense(3)};
    EXPECT_NE(error_of([&] { shared_call(layers, 5); }).find("has no layer 5"), std::string::npos);
    layers.push_back(shared_call(layers, 1));
    EXPECT_NE(error_of([&] { shared_call(layers, 2); }).find("itself a later call of layer 1"), std::string::npos);
}

}  // namespace
}  // namespace onefit
