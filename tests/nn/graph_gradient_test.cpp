// Functional graphs in the CPU step loop: finite differences through the merge layers and through
// outputs that several layers read (whose gradients the executor sums), and the graph's checks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/layer_kinds.hpp"
#include "onefit/functional.hpp"
#include "onefit/io.hpp"
#include "support/gradient_check.hpp"
#include "support/make_loss.hpp"

namespace onefit {
namespace {

using namespace gradient_check;
using testing_support::make_loss;

Layer with_inputs(Layer layer, std::vector<int32_t> inputs) {
    layer.inputs = std::move(inputs);
    return layer;
}
Layer merge(const char* type, std::vector<int32_t> inputs) { return with_inputs(make_layer(type, {}), std::move(inputs)); }

TEST(GraphGradients, AResidualAddWhoseFirstLayerTwoLayersRead) {
    expect_gradients_match({.in = 4,
                            .layers = {Dense(6, "tanh"), Dense(6, "sigmoid"), merge("add", {0, 1}), Dense(3)},
                            .loss = make_loss(LossKind::mean_squared_error)});
}

TEST(GraphGradients, ConcatenateWithTheModelsInputAndASoftmaxOutput) {
    expect_gradients_match({.in = 4,
                            .layers = {Dense(5, "tanh"), merge("concatenate", {-1, 0}), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy),
                            .labels = Labels::one_hot});
}

TEST(GraphGradients, SubtractMultiplyAverageAndAnInputReadTwiceByOneMerge) {
    expect_gradients_match({.in = 4,
                            .layers = {Dense(4, "tanh"), with_inputs(Dense(4, "sigmoid"), {-1}), merge("multiply", {0, 1}),
                                       merge("subtract", {2, 0}), merge("average", {3, 1, 0}), merge("add", {4, 4}),
                                       Dense(2)},
                            .loss = make_loss(LossKind::log_cosh),
                            .rows = 6});
}

TEST(GraphGradients, MaximumAndMinimumSendEachGradientToTheInputThatWon) {
    expect_gradients_match({.in = 4,
                            .layers = {Dense(4, "tanh"), with_inputs(Dense(4), {-1}), with_inputs(Dense(4, "sigmoid"), {-1}),
                                       merge("maximum", {0, 1, 2}), merge("minimum", {3, 1}), Dense(2)},
                            .loss = make_loss(LossKind::mean_squared_error),
                            .rows = 6});
}

Layer dot(std::vector<int32_t> inputs, std::vector<int64_t> axes, bool normalize) {
    return with_inputs(make_layer("dot", {{"axes", axes}, {"normalize", normalize}}), std::move(inputs));
}

TEST(GraphGradients, DotOfVectorsPlainAndNormalisedAndOfAnInputWithAnother) {
    for (const bool normalize : {false, true}) {
        SCOPED_TRACE(normalize ? "normalize" : "plain");
        expect_gradients_match({.in = 4,
                                .layers = {Dense(5, "tanh"), with_inputs(Dense(5, "sigmoid"), {-1}), dot({0, 1}, {-1, -1}, normalize),
                                           with_inputs(Dense(4), {-1}), dot({3, -1}, {1, 1}, normalize),
                                           merge("concatenate", {2, 4}), Dense(2)},
                                .loss = make_loss(LossKind::mean_squared_error),
                                .rows = 5});
    }
}

TEST(GraphGradients, DotOfMatricesAlongEitherAxisOfEach) {
    // (3, 4) . (4, 2) over the 4s -> (3, 2); (3, 4) . (3, 4) over the 3s -> (4, 4), normalised.
    expect_gradients_match({.in = 6,
                            .layers = {Dense(12, "tanh"), Reshape({3, 4}), with_inputs(Dense(8, "sigmoid"), {-1}), Reshape({4, 2}),
                                       dot({1, 3}, {2, 1}, false), with_inputs(Dense(12), {-1}), Reshape({3, 4}),
                                       dot({1, 6}, {1, -2}, true), Flatten(), with_inputs(Flatten(), {4}),
                                       merge("concatenate", {8, 9}), Dense(2)},
                            .loss = make_loss(LossKind::log_cosh),
                            .rows = 4});
}

TEST(GraphGradients, DotChecksItsInputsAndAxes) {
    const auto error_of = [](std::vector<Layer> layers, Shape in) {
        try {
            nn::layer_specs(in, layers, nn::default_layer_names(layers));
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(error_of({Dense(3), dot({-1, 0}, {1, 1}, false)}, {4}).find("contracted axes differ"), std::string::npos);
    EXPECT_NE(error_of({Reshape({2, 2}), dot({-1, 0}, {1, 1}, false)}, {4}).find("equal ranks"), std::string::npos);
    EXPECT_NE(error_of({Dense(4), dot({-1, 0}, {2, 2}, false)}, {4}).find("outside"), std::string::npos);
    EXPECT_NE(error_of({Dense(4), Dense(4), dot({-1, 0, 1}, {1, 1}, false)}, {4}).find("exactly 2 inputs"), std::string::npos);
    EXPECT_THROW(make_layer("dot", {{"axes", std::vector<int64_t>{0, 1}}}), Error);
    EXPECT_THROW(make_layer("dot", {}), Error);  // axes is required, as Keras's
}

TEST(GraphGradients, ImageBranchesConcatenatedAlongChannels) {
    expect_gradients_match({.layers = {make_layer("conv2d", {{"filters", int64_t{3}}, {"kernel_size", int64_t{2}},
                                                             {"padding", std::string("same")}, {"activation", std::string("tanh")}}),
                                       make_layer("conv2d", {{"filters", int64_t{3}}, {"kernel_size", int64_t{2}},
                                                             {"padding", std::string("same")}}),
                                       merge("add", {0, 1}), merge("concatenate", {2, -1}), Flatten(), Dense(2)},
                            .loss = make_loss(LossKind::mean_squared_error),
                            .rows = 3,
                            .image = {3, 3, 2}});
}

TEST(GraphGradients, BlasSizedProductsInAGraphRunWholeBatches) {
    // A chain this size would run its tail in two halves; a graph does not (a chain's plan only).
    expect_gradients_match({.in = 32,
                            .layers = {Dense(64, "tanh"), Dense(64, "sigmoid"), merge("add", {0, 1}), Dense(5, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy),
                            .labels = Labels::one_hot,
                            .rows = 40});
}

// (Here beside the graphs: an activity penalty's gradient joins an output's gradient after every
// reader of that output has written it.)
TEST(ActivityRegularizers, AddTheirPenaltyAndItsGradientInChainsAndGraphs) {
    Layer hidden = Dense(6, "tanh");
    hidden.activity_regularizer = {0.05f, 0.2f};
    Layer conv = make_layer("conv1d", {{"filters", int64_t{3}}, {"kernel_size", int64_t{2}},
                                       {"activity_regularizer", std::string("l2(0.3)")}});
    expect_gradients_match({.in = 4, .layers = {hidden, Dense(3)}, .loss = make_loss(LossKind::mean_squared_error)});
    expect_gradients_match({.in = 4, .layers = {hidden, Dense(6, "sigmoid"), merge("add", {0, 1}), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy),
                            .labels = Labels::one_hot});
    expect_gradients_match({.layers = {conv, Flatten(), Dense(2)}, .loss = make_loss(LossKind::log_cosh), .rows = 4,
                            .image = {6, 2}});
}

TEST(ActivityRegularizers, AddItsPenaltyDividedByTheBatchsRowsToTheLoss) {
    // The same model with and without a penalty on its hidden layer: the summed loss differs by
    // exactly l2 sum a^2 over the batch (Keras 3 divides the penalty by the rows, the mean loss by
    // them too, so the sum over rows gets it once).
    Layer plain = Dense(5, "relu"), penalized = plain;
    penalized.activity_regularizer = {0.0f, 0.25f};
    const Loss loss = make_loss(LossKind::mean_squared_error);
    const TrainingProgram a = lower_sequential({3}, {plain, Dense(2)}, loss, Adam(), {}, 4),
                          b = lower_sequential({3}, {penalized, Dense(2)}, loss, Adam(), {}, 4);
    const std::vector<double> x = {0.5, -1, 2, 1, 0.3, -0.2, -1, 1, 1, 0.1, 0.2, 0.3}, y(8, 0.5);
    cpu::CpuExecutor<double> ea(a, 4, {}, 2, 1), eb(b, 4, {}, 2, 1);
    const double la = ea.loss_and_gradients(x.data(), y.data(), 4), lb = eb.loss_and_gradients(x.data(), y.data(), 4);
    double squares = 0;
    ea.forward(x.data(), 4, false);
    const std::vector<double> params(a.params.begin(), a.params.end());
    for (int64_t r = 0; r < 4; ++r)
        for (int64_t j = 0; j < 5; ++j) {
            double z = params[static_cast<size_t>(a.ops[0].dense.bias + j)];
            for (int64_t k = 0; k < 3; ++k)
                z += x[static_cast<size_t>(r * 3 + k)] * params[static_cast<size_t>(a.ops[0].dense.weight + k * 5 + j)];
            squares += z > 0 ? z * z : 0;
        }
    EXPECT_GT(squares, 0.1);
    EXPECT_NEAR(lb - la, 0.25 * squares, 1e-9);
}

std::string lowering_error(const std::vector<Layer>& layers, Shape input = {4}) {
    try {
        lower_sequential(input, layers, make_loss(LossKind::mean_squared_error), Adam(), {}, 1);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(GraphChecks, EachMistakeIsNamed) {
    EXPECT_EQ(lowering_error({Dense(3), make_layer("add", {})}),
              "layer 'add' (Add): merges 2 to 32 inputs, got 1");
    EXPECT_EQ(lowering_error({Dense(3), merge("add", {0, -1})}),
              "layer 'add' (Add): its inputs must have the same shape, got (3,) and (4,)");
    EXPECT_EQ(lowering_error({Dense(3), with_inputs(Dense(2), {0, -1})}),
              "layer 'dense_1' (Dense): takes one input, got 2 (merge them first, e.g. Concatenate)");
    EXPECT_EQ(lowering_error({Dense(3), with_inputs(Dense(2), {1})}),
              "layer 'dense_1' (Dense): its input 1 is not an earlier layer's index (or -1, the model's input)");
    EXPECT_EQ(lowering_error({Dense(3), with_inputs(Dense(2), {-1})}),
              "layer 'dense' (Dense): its output is used by no later layer; a model has one output, its last layer's");
    EXPECT_EQ(lowering_error({Dense(3), Dense(3), merge("subtract", {0, 1, 1})}),
              "layer 'subtract' (Subtract): takes exactly 2 inputs, as Keras's, got 3");
    EXPECT_EQ(lowering_error({Dense(3), with_inputs(make_layer("concatenate", {{"axis", int64_t{0}}}), {-1, 0})}),
              "layer 'concatenate' (Concatenate): axis 0 is not supported: onefit concatenates along the last axis "
              "(axis=-1)");
    EXPECT_EQ(lowering_error({Reshape({2, 2}), Flatten(), merge("concatenate", {0, 1})}),
              "layer 'concatenate' (Concatenate): its inputs must match on every axis but the last, got (2, 2) and (4,)");
}

TEST(GraphChecks, AChainIsNotAGraphAndAGraphIsOne) {
    EXPECT_FALSE(lower_sequential({4}, {Dense(3), with_inputs(Dense(2), {0})}, make_loss(LossKind::mean_squared_error),
                                  Adam(), {}, 1)
                     .graph);
    EXPECT_TRUE(lower_sequential({4}, {Dense(3), merge("add", {0, 0})}, make_loss(LossKind::mean_squared_error), Adam(),
                                 {}, 1)
                    .graph);
}

TEST(FunctionalApi, ModelPlacesEachLayerAfterItsInputs) {
    const Node x = Input({4});
    const Node h = Dense(8, "relu")(x);
    const Node a = Dense(8)(h), b = Dense(8, "tanh")(h);
    const Node sum = make_layer("add", {})({a, b});
    const Node joined = make_layer("concatenate", {})({sum, x});
    Sequential model = Model(x, Dense(3, "softmax")(joined), 5);
    ASSERT_EQ(model.layers().size(), 6u);
    const std::vector<std::vector<int32_t>> expected = {{}, {}, {0}, {1, 2}, {3, -1}, {}};
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(model.layers()[i].inputs, expected[i]) << i;
    EXPECT_EQ(model.output_shape(), (Shape{3}));
    EXPECT_EQ(model.count_params(), 4 * 8 + 8 + 2 * (8 * 8 + 8) + 12 * 3 + 3);
    // It fits as one program: the loss falls.
    model.compile(Adam(0.05f), make_loss(LossKind::categorical_crossentropy));
    Tensor features({60, 4}), labels({60, 3});
    for (int64_t r = 0; r < 60; ++r) {
        for (int64_t j = 0; j < 4; ++j) features.at(r, j) = static_cast<float>((r * 7 + j * 3) % 11) / 11.0f - 0.5f;
        labels.at(r, (features.at(r, 0) > 0) + (features.at(r, 1) > 0.2f)) = 1.0f;
    }
    FitOptions options;
    options.epochs = 30, options.verbose = 0, options.batch_size = 16;
    const History history = model.fit(features, labels, options);
    EXPECT_LT(history["loss"].back(), 0.6 * history["loss"].front());
}

TEST(FunctionalApi, AChainMadeByCallsIsASequentialModel) {
    const Node x = Input({4});
    Sequential model = Model(x, Dense(2)(Dense(3, "relu")(x)));
    for (const Layer& l : model.layers()) EXPECT_TRUE(l.inputs.empty());
}

TEST(FunctionalApi, MistakesAreNamed) {
    const Node x = Input({4}), other = Input({4});
    EXPECT_THROW(Model(x, x), Error);
    const Node y = make_layer("add", {})({Dense(2)(x), Dense(2)(other)});
    try {
        Model(x, y);
        ADD_FAILURE() << "a second Input was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not among the model's inputs"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Model(Dense(2)(x), y), Error);
    EXPECT_THROW(call(Dense(2), {}), Error);
}

TEST(FunctionalApi, SavedAndLoadedWithItsInputsAndWeights) {
    const Node x = Input({3});
    const Node h = Dense(4, "tanh")(x);
    Sequential model = Model(x, Dense(2)(make_layer("concatenate")({Dense(4)(h), h, x})), 3);
    model.compile(Adam(0.01f), make_loss(LossKind::mean_squared_error));
    const std::string dir = testing::TempDir() + "/functional_model";
    model.save(dir);
    Sequential loaded = load_model(dir);
    ASSERT_EQ(loaded.layers().size(), model.layers().size());
    for (size_t i = 0; i < model.layers().size(); ++i) EXPECT_EQ(loaded.layers()[i].inputs, model.layers()[i].inputs) << i;
    Tensor features({5, 3});
    for (int64_t i = 0; i < features.size(); ++i) features[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    const Tensor a = model.predict(features), b = loaded.predict(features);
    for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
    EXPECT_NE(model.summary().find("Connected to"), std::string::npos);
    EXPECT_NE(model.summary().find("dense_1, dense, input"), std::string::npos) << model.summary();
}

}  // namespace
}  // namespace onefit
