// Lowering a Sequential model into its TrainingProgram: weight layouts, parameter offsets,
// Keras-layout weights in and out, Keras's initializers, which losses take logits, and errors
// that name the layer at fault.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/test_files.hpp"
#include "onefit/onefit.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

TrainingProgram lower(const std::vector<Layer>& layers, int64_t in = 4, const Loss& loss = loss_from_name("mse"),
                      const Optimizer& optimizer = Adam(), uint64_t seed = 0) {
    return lower_sequential({in}, layers, loss, optimizer, {}, seed);
}

using test_files::error_of;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

TEST(Lowering, WeightsAreOutMajorExactlyWhenTheLayerNarrows) {
    const TrainingProgram p = lower({Dense(32, "relu"), Dense(3), Dense(3), Dense(5)}, 4);
    EXPECT_FALSE(p.ops[0].dense.out_major);  // 4 -> 32
    EXPECT_TRUE(p.ops[1].dense.out_major);   // 32 -> 3
    EXPECT_FALSE(p.ops[2].dense.out_major);  // 3 -> 3
    EXPECT_FALSE(p.ops[3].dense.out_major);  // 3 -> 5
}

TEST(Lowering, AFirstLayerOnTheBlasPathKeepsKerasLayoutBecauseItNeedsNoInputGradient) {
    const TrainingProgram p = lower({Dense(256, "relu"), Dense(100), Dense(10)}, 784);
    EXPECT_TRUE(p.ops[0].dense.use_blas);
    EXPECT_FALSE(p.ops[0].dense.out_major);  // 784 -> 256, first: (in, out)
    EXPECT_TRUE(p.ops[1].dense.use_blas);
    EXPECT_TRUE(p.ops[1].dense.out_major);  // 256 -> 100, not first: (out, in) as usual
}

TEST(Weights, ParameterOrdersConvertBothWays) {
    // Keras order is get_weights's arrays back to back; the legacy order is (out, in) exactly when
    // in > out. A BLAS first layer and a narrowing tiny one make the three orders all differ.
    TrainingProgram p = lower({Dense(256), Dense(3)}, 40);
    ASSERT_FALSE(p.ops[0].dense.out_major);
    ASSERT_TRUE(p.ops[1].dense.out_major);
    for (size_t i = 0; i < p.params.size(); ++i) p.params[i] = static_cast<float>(i);
    std::vector<float> keras(p.params.size()), legacy(p.params.size()), back(p.params.size());
    reorder_params(p, ParamOrder::program, p.params.data(), ParamOrder::keras, keras.data());
    std::vector<float> expected;
    for (const Tensor& t : program_weights(p)) expected.insert(expected.end(), t.values().begin(), t.values().end());
    EXPECT_EQ(keras, expected);
    reorder_params(p, ParamOrder::keras, keras.data(), ParamOrder::legacy_program, legacy.data());
    const DenseOp& first = p.ops[0].dense;  // 40 > 256 is false: (in, out) in 0.1.0 too
    EXPECT_EQ(legacy[size_t(first.weight + 3 * 256 + 7)], keras[size_t(first.weight + 3 * 256 + 7)]);
    const DenseOp& second = p.ops[1].dense;  // 256 > 3: (out, in), element (k 5, j 2) at j * in + k
    EXPECT_EQ(legacy[size_t(second.weight + 2 * 256 + 5)], keras[size_t(second.weight + 5 * 3 + 2)]);
    reorder_params(p, ParamOrder::legacy_program, legacy.data(), ParamOrder::program, back.data());
    EXPECT_EQ(back, p.params);
}

TEST(Lowering, BlasIsChosenFromFiveHundredTwelveWeights) {
    const TrainingProgram p = lower({Dense(64), Dense(7), Dense(73), Dense(3)}, 8);
    EXPECT_TRUE(p.ops[0].dense.use_blas);   // 8 x 64 = 512
    EXPECT_FALSE(p.ops[1].dense.use_blas);  // 64 x 7 = 448
    EXPECT_FALSE(p.ops[2].dense.use_blas);  // 7 x 73 = 511
    EXPECT_FALSE(p.ops[3].dense.use_blas);  // the seed's layers are far below: 4 x 32, 32 x 3
    EXPECT_FALSE(lower({Dense(32), Dense(3)}, 4).ops[0].dense.use_blas);
}

TEST(Lowering, ParametersAreEachLayersKernelThenBiasBackToBack) {
    const TrainingProgram p = lower({Dense(32), Dropout(0.5f), Dense(3, "linear", false), Dense(2)}, 4);
    ASSERT_EQ(p.ops.size(), 4u);
    EXPECT_EQ(p.ops[0].dense.weight, 0);
    EXPECT_EQ(p.ops[0].dense.bias, 4 * 32);
    EXPECT_EQ(p.ops[2].dense.weight, 4 * 32 + 32);
    EXPECT_EQ(p.ops[3].dense.weight, 4 * 32 + 32 + 32 * 3);
    EXPECT_EQ(p.ops[3].dense.bias, 4 * 32 + 32 + 32 * 3 + 3 * 2);
    EXPECT_EQ(p.param_count(), 4 * 32 + 32 + 32 * 3 + 3 * 2 + 2);
    EXPECT_EQ(p.forward_macs_per_sample(), 4 * 32 + 32 * 3 + 3 * 2);
}

TEST(Lowering, ForwardMultiplyAddsAreTheProductsOnly) {
    // A 3x3 convolution of 6x6x2 images into 4 filters ("valid": 4x4 pixels), pooled 2x2, then
    // Dense(3): the pooling's window reads are moved values for explain, not multiply-adds.
    const TrainingProgram p =
        lower_sequential({6, 6, 2}, {Conv2D(4, 3), MaxPooling2D(2), BatchNormalization(), Flatten(), Dense(3)},
                         loss_from_name("mse"), Adam(), {}, 0);
    EXPECT_EQ(p.forward_macs_per_sample(), 4 * 4 * 4 * (3 * 3 * 2) + (2 * 2 * 4) * 3);
    EXPECT_GT(p.ops[1].spec.macs_per_sample, 0);  // (what the pooling op declares for its reads)
}

TEST(Lowering, WidthsFlowThroughDropout) {
    const TrainingProgram p = lower({Dense(32), Dropout(0.5f), Dense(3)}, 4);
    EXPECT_EQ(p.input_width, 4);
    EXPECT_EQ(p.ops[1].in_width, 32);
    EXPECT_EQ(p.ops[1].out_width, 32);
    EXPECT_FLOAT_EQ(p.ops[1].layer.rate, 0.5f);
    EXPECT_EQ(p.output_width, 3);
}

TEST(Lowering, DefaultLayerNamesCountPerKindLikeKeras) {
    const std::vector<Layer> layers = {Dense(4), Dropout(0.1f), Dense(4, "linear", true, "out"), Dense(4), Dropout(0.2f)};
    EXPECT_EQ(default_layer_names(layers),
              (std::vector<std::string>{"dense", "dropout", "out", "dense_1", "dropout_1"}));
    EXPECT_EQ(lower({Dense(4), Dropout(0.1f), Dense(4, "linear", true, "out")}).ops[2].layer_name, "out");
    // A default name passes over the names given to other layers; a name given twice is an error.
    EXPECT_EQ(default_layer_names({Dense(4, "linear", true, "dense_1"), Dense(4), Dense(4)}),
              (std::vector<std::string>{"dense_1", "dense", "dense_2"}));
    EXPECT_EQ(error_of([] { lower({Dense(4, "relu", true, "a"), Dense(2, "linear", true, "a")}); }),
              "layer names must be unique, as Keras requires: 'a' names layers 0 and 1");
    EXPECT_NE(error_of([] { lower({Dense(2)}, 4, loss_from_name("mse"), SGD(0.01f, 2.0f)); }).find("momentum must be in [0, 1]"),
              std::string::npos);
    Loss huber = loss_from_name("huber");
    huber.delta = -1.0f;
    EXPECT_NE(error_of([&] { lower({Dense(2)}, 4, huber); }).find("delta must be positive"), std::string::npos);
}

// Kernel (in, out) with K[k][j] = 100 k + j + 0.5 and bias b[j] = -j - 0.25: every value unique.
Tensor numbered_kernel(int64_t in, int64_t out) {
    Tensor k({in, out});
    for (int64_t a = 0; a < in; ++a)
        for (int64_t j = 0; j < out; ++j) k.at(a, j) = static_cast<float>(100 * a + j) + 0.5f;
    return k;
}
Tensor numbered_bias(int64_t out) {
    Tensor b({out});
    for (int64_t j = 0; j < out; ++j) b[j] = -static_cast<float>(j) - 0.25f;
    return b;
}

TEST(Weights, KerasLayoutRoundTripsThroughTheProgram) {
    TrainingProgram p = lower({Dense(7, "relu"), Dense(3, "linear", false), Dense(5)}, 4);
    const std::vector<Tensor> weights = {numbered_kernel(4, 7), numbered_bias(7), numbered_kernel(7, 3),
                                         numbered_kernel(3, 5), numbered_bias(5)};
    set_program_weights(p, weights);
    const std::vector<Tensor> back = program_weights(p);
    ASSERT_EQ(back.size(), weights.size());
    for (size_t i = 0; i < weights.size(); ++i) {
        EXPECT_EQ(back[i].shape(), weights[i].shape()) << "array " << i;
        EXPECT_EQ(back[i].values(), weights[i].values()) << "array " << i;
    }
}

TEST(Weights, ProgramLayoutIsInOutOrOutInAsDeclared) {
    TrainingProgram p = lower({Dense(7), Dense(3)}, 4);
    set_program_weights(p, {numbered_kernel(4, 7), numbered_bias(7), numbered_kernel(7, 3), numbered_bias(3)});
    const DenseOp& wide = p.ops[0].dense;  // (in, out): W[k * out + j]
    for (int64_t k = 0; k < 4; ++k)
        for (int64_t j = 0; j < 7; ++j) EXPECT_EQ(p.params[size_t(wide.weight + k * 7 + j)], 100 * k + j + 0.5f);
    const DenseOp& narrow = p.ops[1].dense;  // (out, in): W[j * in + k]
    for (int64_t k = 0; k < 7; ++k)
        for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(p.params[size_t(narrow.weight + j * 7 + k)], 100 * k + j + 0.5f);
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(p.params[size_t(narrow.bias + j)], -j - 0.25f);
}

TEST(Weights, PredictComputesXTimesKernelPlusBiasInKerasLayout) {
    Sequential model({3});
    model.add(Dense(5, "tanh")).add(Dense(2));  // 3 -> 5 (in, out), 5 -> 2 (out, in)
    std::vector<Tensor> w = {Tensor({3, 5}), Tensor({5}), Tensor({5, 2}), Tensor({2})};
    for (size_t a = 0; a < w.size(); ++a)
        for (int64_t i = 0; i < w[a].size(); ++i) w[a][i] = static_cast<float>(std::sin(3.0 * double(a) + 0.7 * double(i)));
    model.set_weights(w);
    const Tensor x({2, 3}, {0.5f, -1.0f, 2.0f, 0.1f, 0.2f, -0.3f});
    const Tensor p = model.predict(x);
    for (int64_t r = 0; r < 2; ++r) {
        double h[5];
        for (int64_t j = 0; j < 5; ++j) {
            double s = w[1][j];
            for (int64_t k = 0; k < 3; ++k) s += double(x.at(r, k)) * w[0].at(k, j);
            h[j] = std::tanh(s);
        }
        for (int64_t j = 0; j < 2; ++j) {
            double s = w[3][j];
            for (int64_t k = 0; k < 5; ++k) s += h[k] * w[2].at(k, j);
            EXPECT_NEAR(p.at(r, j), s, 1e-5) << "row " << r << " output " << j;
        }
    }
}

TEST(Weights, ModelGetWeightsIsKernelAndBiasPerDenseLayer) {
    Sequential model({4});
    model.add(Dense(32, "relu")).add(Dropout(0.2f)).add(Dense(3, "softmax"));
    const std::vector<Tensor> w = model.get_weights();
    ASSERT_EQ(w.size(), 4u);
    EXPECT_EQ(w[0].shape(), (Shape{4, 32}));
    EXPECT_EQ(w[1].shape(), (Shape{32}));
    EXPECT_EQ(w[2].shape(), (Shape{32, 3}));
    EXPECT_EQ(w[3].shape(), (Shape{3}));
}

// Kernel values of one layer from a fresh program with the given initializer.
Tensor initial_kernel(int64_t in, int64_t out, const std::string& initializer, uint64_t seed = 0) {
    Layer dense = Dense(out);
    dense.kernel_initializer = initializer;
    return program_weights(lower({dense}, in, loss_from_name("mse"), Adam(), seed))[0];
}

void expect_uniform_within(const Tensor& t, double limit) {
    double max_abs = 0, sum = 0, sum_sq = 0;
    for (float v : t.values()) {
        max_abs = std::max(max_abs, std::fabs(double(v)));
        sum += v;
        sum_sq += double(v) * v;
    }
    const double n = static_cast<double>(t.size());
    EXPECT_LE(max_abs, limit);
    EXPECT_GT(max_abs, 0.95 * limit);                  // it reaches the edges
    EXPECT_NEAR(sum / n, 0.0, 0.1 * limit);            // centred
    EXPECT_NEAR(sum_sq / n, limit * limit / 3, 0.1 * limit * limit / 3);  // U(-l, l) variance l^2 / 3
}

TEST(Initializers, GlorotUniformDrawsFromPlusMinusSqrtSixOverFanInPlusFanOut) {
    expect_uniform_within(initial_kernel(64, 32, "glorot_uniform"), std::sqrt(6.0 / (64 + 32)));
    expect_uniform_within(initial_kernel(20, 50, "glorot_uniform"), std::sqrt(6.0 / (20 + 50)));
}

TEST(Initializers, HeAndLecunUniformUseTheFanIn) {
    expect_uniform_within(initial_kernel(64, 32, "he_uniform"), std::sqrt(6.0 / 64));
    expect_uniform_within(initial_kernel(64, 32, "lecun_uniform"), std::sqrt(3.0 / 64));
}

TEST(Initializers, BiasesStartAtZeroByDefault) {
    const std::vector<Tensor> w = program_weights(lower({Dense(32, "relu"), Dense(3)}, 4));
    for (float v : w[1].values()) EXPECT_EQ(v, 0.0f);
    for (float v : w[3].values()) EXPECT_EQ(v, 0.0f);
}

TEST(Initializers, ZerosAndOnes) {
    const Tensor zeros = initial_kernel(3, 4, "zeros"), ones = initial_kernel(3, 4, "ones");
    for (float v : zeros.values()) EXPECT_EQ(v, 0.0f);
    for (float v : ones.values()) EXPECT_EQ(v, 1.0f);
    Layer dense = Dense(4);
    dense.bias_initializer = "ones";
    const Tensor bias = program_weights(lower({dense}, 3))[1];
    for (float v : bias.values()) EXPECT_EQ(v, 1.0f);
}

TEST(Initializers, TheSeedDecidesTheWeights) {
    EXPECT_EQ(initial_kernel(8, 8, "glorot_uniform", 1).values(), initial_kernel(8, 8, "glorot_uniform", 1).values());
    EXPECT_NE(initial_kernel(8, 8, "glorot_uniform", 1).values(), initial_kernel(8, 8, "glorot_uniform", 2).values());
}

TEST(Initializers, OptimizerStateStartsAtKerasValues) {
    const TrainingProgram adagrad = lower({Dense(3)}, 2, loss_from_name("mse"), Adagrad(0.01f, 0.25f));
    ASSERT_EQ(adagrad.optimizer_slots.size(), adagrad.params.size());
    for (float v : adagrad.optimizer_slots) EXPECT_EQ(v, 0.25f);
    const TrainingProgram adam = lower({Dense(3)}, 2, loss_from_name("mse"), Adam());
    ASSERT_EQ(adam.optimizer_slots.size(), 2 * adam.params.size());  // m and v
    for (float v : adam.optimizer_slots) EXPECT_EQ(v, 0.0f);
    EXPECT_EQ(adam.optimizer_step, 0);
}

bool takes_logits(const std::string& last, const std::string& loss, bool from_logits = false) {
    return lower({Dense(4, "relu"), Dense(3, last)}, 4, loss_from_name(loss, from_logits)).loss_takes_logits;
}

TEST(LossFusion, SoftmaxWithCategoricalCrossentropiesTakesLogits) {
    EXPECT_TRUE(takes_logits("softmax", "categorical_crossentropy"));
    EXPECT_TRUE(takes_logits("softmax", "sparse_categorical_crossentropy"));
}

TEST(LossFusion, SigmoidWithBinaryCrossentropyTakesLogits) {
    EXPECT_TRUE(takes_logits("sigmoid", "binary_crossentropy"));
}

TEST(LossFusion, FromLogitsWithALinearOutputTakesLogits) {
    EXPECT_TRUE(takes_logits("linear", "categorical_crossentropy", true));
    EXPECT_TRUE(takes_logits("linear", "sparse_categorical_crossentropy", true));
    EXPECT_TRUE(takes_logits("linear", "binary_crossentropy", true));
}

TEST(LossFusion, OtherPairsWorkOnTheOutputs) {
    EXPECT_FALSE(takes_logits("linear", "categorical_crossentropy"));
    EXPECT_FALSE(takes_logits("sigmoid", "categorical_crossentropy"));
    EXPECT_FALSE(takes_logits("softmax", "binary_crossentropy"));
    EXPECT_FALSE(takes_logits("relu", "sparse_categorical_crossentropy"));
    EXPECT_FALSE(takes_logits("softmax", "log_cosh"));
    EXPECT_FALSE(takes_logits("sigmoid", "mse"));
}

TEST(LoweringErrors, FromLogitsWithANonLinearOutputNamesTheLayer) {
    const std::string e = error_of([] { takes_logits("softmax", "categorical_crossentropy", true); });
    EXPECT_TRUE(contains(e, "dense_1"));
    EXPECT_TRUE(contains(e, "softmax"));
    EXPECT_TRUE(contains(e, "from_logits"));
}

TEST(LoweringErrors, ZeroUnitsNamesTheLayer) {
    Layer broken = Dense(3, "linear", true, "head");
    broken.units = 0;
    EXPECT_TRUE(contains(error_of([&] { lower({Dense(4), broken}); }), "'head'"));
    EXPECT_THROW(Dense(0), Error);
}

TEST(LoweringErrors, UnknownInitializerNamesTheLayer) {
    Layer dense = Dense(3, "linear", true, "classifier");
    dense.kernel_initializer = "orthogonal";
    const std::string e = error_of([&] { lower({dense}); });
    EXPECT_TRUE(contains(e, "orthogonal"));
    // lower_sequential promises errors naming the layer (training_program.hpp).
    EXPECT_TRUE(contains(e, "classifier"));
}

TEST(LoweringErrors, TheModelMustHaveLayersEndingInAFlatOutput) {
    EXPECT_TRUE(contains(error_of([] { lower({Dense(8), Reshape({2, 4})}); }), "the last layer's output must be flat"));
    EXPECT_THROW(lower({}), Error);
}

TEST(LoweringErrors, BadInputShapeOrLearningRate) {
    EXPECT_THROW(lower_sequential({4, 2}, {Dense(3)}, loss_from_name("mse"), Adam(), {}, 0), Error);
    EXPECT_THROW(lower_sequential({0}, {Dense(3)}, loss_from_name("mse"), Adam(), {}, 0), Error);
    EXPECT_THROW(lower({Dense(3)}, 4, loss_from_name("mse"), Adam(0.0f)), Error);
    EXPECT_THROW(Sequential({4, 0}), Error);
    EXPECT_THROW(Sequential({2, 2, 2, 2}), Error);
    // Images are inputs now; a Dense on one asks for a Flatten.
    Sequential image({4, 1});
    image.add(Dense(3));
    EXPECT_TRUE(contains(error_of([&] { image.compile("adam", "mse"); }), "add Flatten()"));
}

TEST(LoweringErrors, SetWeightsWithAWrongShapeNamesTheLayerAndBothShapes) {
    TrainingProgram p = lower({Dense(32), Dense(3)}, 4);
    const std::string e = error_of([&] {
        set_program_weights(p, {Tensor({4, 32}), Tensor({32}), Tensor({3, 32}), Tensor({3})});
    });
    EXPECT_TRUE(contains(e, "dense_1"));
    EXPECT_TRUE(contains(e, "(32, 3)"));
    EXPECT_TRUE(contains(e, "(3, 32)"));
}

TEST(LoweringErrors, SetWeightsWithTooFewOrTooManyArrays) {
    TrainingProgram p = lower({Dense(32), Dense(3)}, 4);
    EXPECT_TRUE(contains(error_of([&] { set_program_weights(p, {Tensor({4, 32}), Tensor({32})}); }), "dense_1"));
    EXPECT_THROW(set_program_weights(p, {Tensor({4, 32}), Tensor({32}), Tensor({32, 3}), Tensor({3}), Tensor({1})}),
                 Error);
    Sequential model({4});
    model.add(Dense(3));
    EXPECT_THROW(model.set_weights({Tensor({3, 4}), Tensor({3})}), Error);
}

TEST(Lowering, AnyLayerWithAFlatOutputMayEndTheModel) {
    // Keras notebooks end with Dense(3) then Activation("softmax") or Softmax(): the loss then
    // works on that layer's probabilities (not fused with the Dense's logits).
    const TrainingProgram program = lower({Dense(3), make_layer("softmax", {})}, 4,
                                          loss_from_name("categorical_crossentropy"));
    EXPECT_EQ(program.output_width, 3);
    EXPECT_FALSE(program.loss_takes_logits);
    EXPECT_THROW(lower({Dense(3), make_layer("activation", {{"activation", std::string("softmax")}})}, 4,
                       loss_from_name("categorical_crossentropy", true)),
                 Error);  // from_logits=True after a softmax
    try {
        lower_sequential({4, 4, 1}, {Conv2D(2, 3)}, loss_from_name("mse"), Adam(), {}, 0);
        FAIL() << "an image output was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("the last layer's output must be flat"), std::string::npos) << e.what();
    }
}

TEST(Lowering, AnEmbeddingReadsTheModelsInputSoItMustComeFirst) {
    const Layer embedding = make_layer("embedding", {{"input_dim", int64_t{10}}, {"output_dim", int64_t{2}}});
    const TrainingProgram program = lower({embedding, Flatten(), Dense(3)}, 5, loss_from_name("mse"));
    EXPECT_EQ(program.ops[0].out_width, 10);  // 5 indices x 2
    try {
        lower({Dense(5), Reshape({5}), embedding, Flatten(), Dense(3)}, 5, loss_from_name("mse"));
        FAIL() << "an Embedding after another layer was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "layer 'embedding' (Embedding) must read a model input directly (be the first layer, or be called on "
                  "an Input): it takes integer indices");
    }
}

TEST(Lowering, AConv1DRunsAsAConv2DOfHeightOne) {
    const Layer conv = make_layer("conv1d", {{"filters", int64_t{4}}, {"kernel_size", int64_t{3}}, {"strides", int64_t{2}}});
    const TrainingProgram program = lower_sequential({9, 2}, {conv, Flatten(), Dense(1)}, loss_from_name("mse"), Adam(), {}, 0);
    const ProgramOp& op = program.ops[0];
    EXPECT_EQ(op.kind, Layer::Kind::Conv2D);
    EXPECT_EQ(op.layer.kind, Layer::Kind::Conv1D);
    EXPECT_EQ(op.spec.output, (Shape{4, 4}));
    EXPECT_EQ(op.params[0].shape, (Shape{3, 2, 4}));  // Keras's (kernel_size, in, filters)
    EXPECT_EQ(op.conv.patch, 6);
}

}  // namespace
}  // namespace onefit
