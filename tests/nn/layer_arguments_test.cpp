// Layers from their kind's declaration: make_layer with Keras's argument names gives the layer the
// public constructors give, layer_arguments gives those arguments back, and a wrong argument is an
// error naming the kind and the argument.
#include <gtest/gtest.h>

#include <cmath>

#include <set>
#include <string>
#include <vector>

#include "nn/layer_kinds.hpp"
#include "support/layer_examples.hpp"
#include "onefit/error.hpp"
#include "onefit/layers.hpp"

namespace onefit {
namespace {

std::string error_of(const std::string& type, const LayerArguments& arguments) {
    try {
        make_layer(type, arguments);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(LayerArguments, EveryKindComesBackFromItsArgumentsAsItWasMade) {
    std::set<std::string> covered;
    for (const Layer& layer : layer_examples::one_of_each_kind()) {
        const std::string type = layer_type(layer.kind);
        covered.insert(type);
        const Layer again = make_layer(type, layer_arguments(layer), layer.name);
        EXPECT_EQ(again.kind, layer.kind) << type;
        EXPECT_EQ(again.name, layer.name) << type;
        EXPECT_EQ(layer_arguments(again), layer_arguments(layer)) << type;
    }
    // A kind added to the table without a line here fails this test rather than going untested.
    for (const LayerKindDescription& kind : layer_kinds()) EXPECT_EQ(covered.count(kind.type), 1u) << kind.type;
    EXPECT_EQ(covered.size(), layer_kinds().size());
}

TEST(LayerArguments, MakeLayerGivesWhatTheConstructorsGive) {
    EXPECT_EQ(layer_arguments(make_layer("dense", {{"units", int64_t{5}}, {"activation", std::string("relu")},
                                                   {"use_bias", false}})),
              layer_arguments(Dense(5, "relu", false)));
    // Keras's defaults for what is not given; activation=None is linear; an int pair is a square.
    EXPECT_EQ(layer_arguments(make_layer("conv2d", {{"filters", int64_t{4}}, {"kernel_size", int64_t{3}},
                                                    {"activation", std::monostate{}}})),
              layer_arguments(Conv2D(4, 3)));
    // A number where Keras takes a float, an integer too.
    EXPECT_FLOAT_EQ(make_layer("dropout", {{"rate", 0.25}}).rate, 0.25f);
    EXPECT_FLOAT_EQ(make_layer("batch_normalization", {{"epsilon", int64_t{1}}}).epsilon, 1.0f);
}

TEST(LayerArguments, APoolingLayersStridesAreItsPoolSizeUnlessGiven) {
    EXPECT_EQ(make_layer("max_pooling2d", {{"pool_size", int64_t{3}}}).strides, (std::array<int64_t, 2>{3, 3}));
    EXPECT_EQ(make_layer("average_pooling2d", {{"pool_size", std::vector<int64_t>{3, 2}}, {"strides", std::monostate{}}})
                  .strides,
              (std::array<int64_t, 2>{3, 2}));
    EXPECT_EQ(make_layer("max_pooling2d", {{"strides", int64_t{1}}}).strides, (std::array<int64_t, 2>{1, 1}));
    EXPECT_EQ(make_layer("max_pooling2d", {}).strides, (std::array<int64_t, 2>{2, 2}));  // Keras's pool_size (2, 2)
}

TEST(LayerArguments, RegularizersAreWrittenAsKerasNamesThem) {
    EXPECT_EQ(regularizer_from_text("l2"), (Regularizer{0.0f, 0.01f}));  // Keras's defaults
    EXPECT_EQ(regularizer_from_text("l1_l2"), (Regularizer{0.01f, 0.01f}));
    EXPECT_EQ(regularizer_from_text("l2(1e-4)"), (Regularizer{0.0f, 1e-4f}));
    EXPECT_EQ(regularizer_from_text("l1_l2(l1=0.5, l2=0.25)"), (Regularizer{0.5f, 0.25f}));
    EXPECT_EQ(regularizer_from_text("l1_l2(l2=0.25)"), (Regularizer{0.0f, 0.25f}));
    EXPECT_EQ(regularizer_text({0.0f, 1e-4f}), "l2(1e-04)");  // (the shortest form that reads back)
    EXPECT_EQ(regularizer_text({0.001f, 0.5f}), "l1_l2(l1=0.001, l2=0.5)");
    for (const char* bad : {"l2(-1)", "l2(x)", "l4", "l1_l2(l3=1)", "l2(1"}) EXPECT_THROW(regularizer_from_text(bad), Error) << bad;
    // None (and no regularizer) come back as None.
    const Layer plain = make_layer("dense", {{"units", int64_t{2}}, {"kernel_regularizer", std::monostate{}}});
    EXPECT_FALSE(plain.kernel_regularizer.active());
    for (const auto& [key, value] : layer_arguments(plain)) {
        if (key == "kernel_regularizer") {
            EXPECT_TRUE(std::holds_alternative<std::monostate>(value));
        }
    }
}

TEST(LayerArguments, KindsOwnDefaultsNoneAndKerasOneTuples) {
    EXPECT_FLOAT_EQ(make_layer("leaky_relu", {}).negative_slope, 0.3f);  // Keras's LeakyReLU; ReLU's is 0
    EXPECT_FLOAT_EQ(make_layer("relu", {}).negative_slope, 0.0f);
    // ReLU's max_value=None is no ceiling, and comes back as None.
    const Layer relu = make_layer("relu", {{"max_value", std::monostate{}}});
    EXPECT_TRUE(std::isinf(relu.max_value));
    EXPECT_EQ(layer_arguments(relu)[0], (std::pair<std::string, LayerValue>{"max_value", std::monostate{}}));
    // Keras's configs keep a 1-D layer's sizes as 1-tuples.
    const Layer conv = make_layer("conv1d", {{"filters", int64_t{2}}, {"kernel_size", std::vector<int64_t>{3}},
                                             {"strides", std::vector<int64_t>{2}}});
    EXPECT_EQ(conv.kernel_size_1d, 3);
    EXPECT_EQ(conv.strides_1d, 2);
    EXPECT_EQ(make_layer("max_pooling1d", {{"pool_size", int64_t{3}}}).strides_1d, 3);  // strides=None
    EXPECT_EQ(make_layer("average_pooling1d", {}).strides_1d, 2);
}

TEST(LayerArguments, AWrongArgumentNamesTheKindAndTheArgument) {
    EXPECT_EQ(error_of("dense", {}), "Dense: units is required");
    EXPECT_EQ(error_of("dense", {{"units", std::monostate{}}}), "Dense: units is required; None is not a value for it");
    EXPECT_EQ(error_of("dense", {{"units", int64_t{3}}, {"unit", int64_t{3}}}),
              "Dense: unknown argument 'unit' (Dense takes units, activation, use_bias, kernel_initializer, "
              "bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer)");
    EXPECT_EQ(error_of("dense", {{"units", int64_t{3}}, {"kernel_regularizer", std::string("l3(0.1)")}}),
              "Dense: kernel_regularizer: 'l3(0.1)' is not a regularizer; give l1(F), l2(F), l1_l2(l1=F, l2=F), l1, l2 "
              "or l1_l2 (Keras's defaults, 0.01), or None");
    EXPECT_EQ(error_of("flatten", {{"units", int64_t{3}}}),
              "Flatten: unknown argument 'units' (Flatten takes no arguments but name)");
    EXPECT_EQ(error_of("dense", {{"units", std::string("32")}}), "Dense: units must be an integer, not a string '32'");
    EXPECT_EQ(error_of("dense", {{"units", int64_t{0}}}), "Dense: units must be at least 1, got 0");
    EXPECT_EQ(error_of("dense", {{"units", int64_t{3}}, {"units", int64_t{4}}}), "Dense: units is given twice");
    EXPECT_EQ(error_of("dense", {{"units", int64_t{3}}, {"kernel_initializer", std::string("orthogonal")}}),
              "Dense: kernel_initializer is 'orthogonal'; onefit knows glorot_uniform, glorot_normal, he_uniform, "
              "he_normal, lecun_uniform, uniform, random_uniform, zeros, ones");
    EXPECT_EQ(error_of("relu", {{"max_value", -1.0}}), "ReLU: max_value cannot be negative, got -1");
    EXPECT_EQ(error_of("leaky_relu", {{"negative_slope", -0.5}}), "LeakyReLU: negative_slope cannot be negative, got -0.5");
    EXPECT_EQ(error_of("embedding", {{"input_dim", int64_t{5}}}), "Embedding: output_dim is required");
    EXPECT_EQ(error_of("embedding", {{"input_dim", int64_t{5}}, {"output_dim", int64_t{2}}, {"mask_zero", true}})
                  .rfind("Embedding: mask_zero=True is not supported", 0),
              0u);
    EXPECT_EQ(error_of("conv1d", {{"filters", int64_t{2}}, {"kernel_size", std::vector<int64_t>{3, 3}}}),
              "Conv1D: kernel_size must be an integer, not a list");
    EXPECT_EQ(error_of("max_pooling1d", {{"pool_size", int64_t{0}}}), "MaxPooling1D: pool_size must be at least 1, got 0");
    EXPECT_EQ(error_of("conv2d", {{"filters", int64_t{4}}, {"kernel_size", std::vector<int64_t>{3, 0}}}),
              "Conv2D: kernel_size[1] must be at least 1, got 0");
    EXPECT_EQ(error_of("conv2d", {{"filters", int64_t{4}}, {"kernel_size", std::vector<int64_t>{3, 3, 3}}}),
              "Conv2D: kernel_size must be a pair of integers, got 3 of them");
    EXPECT_EQ(error_of("max_pooling2d", {{"padding", std::string("full")}}).rfind("MaxPooling2D: padding: ", 0), 0u);
    EXPECT_EQ(error_of("dropout", {{"rate", 1.5}}), "Dropout: rate must be in [0, 1), got 1.5");
    EXPECT_EQ(error_of("dropout", {{"rate", true}}), "Dropout: rate must be a number, not a boolean");
    EXPECT_EQ(error_of("reshape", {{"target_shape", std::vector<int64_t>{-1, -1}}}),
              "Reshape: at most one target_shape entry may be -1");
    EXPECT_EQ(error_of("conv3d", {}).rfind("unknown layer type 'conv3d' (known: dense, ", 0), 0u);
}

TEST(LayerArguments, TheKindsListTheirKerasNamesAndWhichAreRequired) {
    for (const LayerKindDescription& kind : layer_kinds()) {
        if (kind.type != "conv2d") continue;
        EXPECT_EQ(kind.keras_class, "Conv2D");
        EXPECT_EQ(kind.arguments, (std::vector<std::string>{"filters", "kernel_size", "strides", "padding", "activation",
                                                            "use_bias", "kernel_initializer", "bias_initializer",
                                                            "kernel_regularizer", "bias_regularizer",
                                                            "activity_regularizer"}));
        EXPECT_EQ(kind.required, (std::vector<std::string>{"filters", "kernel_size"}));
        return;
    }
    FAIL() << "no conv2d kind";
}

}  // namespace
}  // namespace onefit
