// Finite-difference checks of every gradient the CPU step loop computes. The executor runs the
// very same templated kernels as training, in double precision (CpuExecutor<double>); each
// analytic gradient is compared with a central difference of the loss the executor reports.
// Parameters and inputs are random, away from the kinks (relu at 0, mae at 0, huber at delta).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/gradient_check.hpp"
#include "support/make_loss.hpp"

namespace onefit {
namespace {

using namespace gradient_check;
using testing_support::make_loss;

const std::vector<Activation> kActivations = {Activation::linear,  Activation::relu, Activation::leaky_relu,
                                              Activation::elu,     Activation::sigmoid, Activation::tanh,
                                              Activation::softmax, Activation::gelu, Activation::swish};

TEST(Gradients, EveryActivationAsAHiddenLayer) {
    for (Activation a : kActivations) {
        SCOPED_TRACE(activation_name(a));
        expect_gradients_match({.in = 4, .layers = {Dense(6, a), Dense(3, "linear")},
                                .loss = make_loss(LossKind::mean_squared_error)});
    }
}

TEST(Gradients, EveryActivationAsTheOutputLayer) {
    for (Activation a : kActivations) {
        SCOPED_TRACE(activation_name(a));
        expect_gradients_match({.in = 4, .layers = {Dense(5, "tanh"), Dense(3, a)},
                                .loss = make_loss(LossKind::mean_squared_error)});
    }
}

TEST(Gradients, ElementwiseLosses) {
    for (LossKind kind : {LossKind::log_cosh, LossKind::mean_squared_error, LossKind::mean_absolute_error}) {
        SCOPED_TRACE(loss_name(kind));
        expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(3, "linear")}, .loss = make_loss(kind)});
    }
}

TEST(Gradients, HuberOnBothSidesOfDelta) {
    // Labels in [-1, 1] against outputs of similar size: with delta 0.3 some errors fall inside
    // the quadratic zone and some in the linear one.
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(3, "linear")},
                            .loss = make_loss(LossKind::huber, false, 0.3f), .rows = 8});
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(3, "linear")}, .loss = make_loss(LossKind::huber)});
}

TEST(Gradients, BinaryCrossentropyFusedWithASigmoidOutput) {
    const Problem p{.layers = {Dense(6, "relu"), Dense(2, "sigmoid")},
                    .loss = make_loss(LossKind::binary_crossentropy), .labels = Labels::binary};
    ASSERT_TRUE(lower_sequential({p.in}, p.layers, p.loss, Adam(), {}, 0).loss_takes_logits);
    expect_gradients_match(p);
}

TEST(Gradients, BinaryCrossentropyFromLogits) {
    expect_gradients_match({.layers = {Dense(6, "relu"), Dense(2, "linear")},
                            .loss = make_loss(LossKind::binary_crossentropy, true), .labels = Labels::binary});
}

TEST(Gradients, BinaryCrossentropyOnProbabilitiesNotFromASigmoid) {
    // softmax + binary_crossentropy is not fused: the clipped elementwise form and softmax's Jacobian.
    const Problem p{.layers = {Dense(6, "relu"), Dense(3, "softmax")},
                    .loss = make_loss(LossKind::binary_crossentropy), .labels = Labels::probabilities};
    ASSERT_FALSE(lower_sequential({p.in}, p.layers, p.loss, Adam(), {}, 0).loss_takes_logits);
    expect_gradients_match(p);
}

TEST(Gradients, CategoricalCrossentropyFusedWithSoftmax) {
    expect_gradients_match({.layers = {Dense(6, "relu"), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::one_hot});
    // Soft labels (not one-hot): the fused gradient is softmax(z) * sum(y) - y.
    expect_gradients_match({.layers = {Dense(6, "relu"), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::probabilities});
}

TEST(Gradients, CategoricalCrossentropyFromLogitsOfALinearLayer) {
    expect_gradients_match({.layers = {Dense(6, "elu"), Dense(4, "linear")},
                            .loss = make_loss(LossKind::categorical_crossentropy, true), .labels = Labels::probabilities});
}

TEST(Gradients, CategoricalCrossentropyNormalisingUnfusedOutputs) {
    // relu outputs kept positive by a bias of 3; they do not sum to one, so the loss normalises them.
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(3, "relu")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::probabilities,
                            .last_bias = 3.0});
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(3, "sigmoid")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::one_hot});
}

TEST(Gradients, SparseCategoricalCrossentropyFusedWithSoftmax) {
    expect_gradients_match({.layers = {Dense(6, "relu"), Dense(4, "softmax")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index});
}

TEST(Gradients, SparseCategoricalCrossentropyFromLogitsOfALinearLayer) {
    expect_gradients_match({.layers = {Dense(6, "relu"), Dense(4, "linear")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy, true),
                            .labels = Labels::class_index});
}

TEST(Gradients, SparseCategoricalCrossentropyNormalisingUnfusedOutputs) {
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(4, "relu")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index, .last_bias = 3.0});
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(4, "sigmoid")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index});
}

TEST(Gradients, SeedCaseLogCoshWithOneLabelBroadcastAgainstThreeSoftmaxOutputs) {
    expect_gradients_match({.layers = {Dense(32, "relu"), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::log_cosh), .labels = Labels::class_index, .rows = 6});
}

TEST(Gradients, BinaryCrossentropyWithOneLabelBroadcastAgainstTwoOutputs) {
    expect_gradients_match({.layers = {Dense(5, "relu"), Dense(2, "linear")},
                            .loss = make_loss(LossKind::binary_crossentropy, true), .labels = Labels::binary,
                            .y_width = 1});
}

TEST(Gradients, LayersWithoutBias) {
    expect_gradients_match({.layers = {Dense(6, "tanh", false), Dense(3, "softmax", false)},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index});
}

TEST(Gradients, BothWeightLayoutsInTheSmallKernels) {
    const Problem p{.in = 9, .layers = {Dense(3, "tanh"), Dense(7, "swish"), Dense(2, "linear")},
                    .loss = make_loss(LossKind::mean_squared_error)};
    const TrainingProgram program = lower_sequential({p.in}, p.layers, p.loss, Adam(), {}, 0);
    ASSERT_TRUE(program.ops[0].dense.out_major);   // 9 -> 3
    ASSERT_FALSE(program.ops[1].dense.out_major);  // 3 -> 7
    ASSERT_FALSE(program.ops[0].dense.use_blas);
    expect_gradients_match(p);
}

TEST(Gradients, BothWeightLayoutsInTheBlasKernels) {
    // Every layer but the last has at least 512 weights: the BLAS path. A narrowing first layer
    // (no input gradient) keeps (in, out); then a widening layer (in, out) and a narrowing one
    // (out, in), both with an input gradient.
    const Problem p{.in = 128,
                    .layers = {Dense(64, "tanh"), Dense(128, "sigmoid"), Dense(64, "tanh"), Dense(3, "linear", false)},
                    .loss = make_loss(LossKind::log_cosh), .rows = 3};
    const TrainingProgram program = lower_sequential({p.in}, p.layers, p.loss, Adam(), {}, 0);
    ASSERT_TRUE(program.ops[0].dense.use_blas && !program.ops[0].dense.out_major);
    ASSERT_TRUE(program.ops[1].dense.use_blas && !program.ops[1].dense.out_major);
    ASSERT_TRUE(program.ops[2].dense.use_blas && program.ops[2].dense.out_major);
    ASSERT_FALSE(program.ops[3].dense.use_blas);
    expect_gradients_match(p);
}

// Steps of at least 32 rows run a model's small trailing layers as two halves of the batch
// (CpuExecutor's tail): the halves' gradients are added, the loss scaled by the whole batch.
// Checks that the tail starts at op `tail` (so the split path is the one checked), then the gradients.
void expect_gradients_through_tail(const Problem& p, size_t tail, int64_t y_width) {
    const TrainingProgram program = lower_sequential({p.in}, p.layers, p.loss, Adam(), {}, 0);
    ASSERT_EQ(cpu::CpuExecutor<double>(program, p.rows, {}, y_width, 0).tail_begin(), tail);
    expect_gradients_match(p);
}

TEST(Gradients, ATailOfSmallLayersSplitIntoHalves) {
    // Every product is small, so the whole model is the tail; 40 rows split 32 + 8, and the
    // dropout mask must be the whole batch's.
    expect_gradients_through_tail(
        {.in = 32,
         .layers = {Dense(64, "tanh"), Dropout(0.25f), Dense(64, "sigmoid"), Dense(5, "softmax")},
         .loss = make_loss(LossKind::categorical_crossentropy),
         .labels = Labels::one_hot,
         .rows = 40},
        0, 5);
}

TEST(Gradients, ASmallHeadAfterALargeLayerSplitIntoHalves) {
    // The first layer's products use the pool (2 x 250 x 64 x 72 flops), the head's do not: the
    // tail is the head, and it also takes the first layer's relu and its gradient (128 + 122 rows).
    expect_gradients_through_tail({.in = 64,
                                   .layers = {Dense(72, "relu"), Dense(10, "softmax")},
                                   .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                                   .labels = Labels::class_index,
                                   .rows = 250},
                                  1, 1);
}

TEST(Gradients, BlasLayerWithoutBias) {
    expect_gradients_match({.in = 100, .layers = {Dense(90, "relu", false), Dense(2, "linear")},
                            .loss = make_loss(LossKind::mean_squared_error), .rows = 3});
}

TEST(Gradients, DropoutWithRateZeroPassesGradientsThrough) {
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dropout(0.0f), Dense(3, "linear")},
                            .loss = make_loss(LossKind::mean_squared_error)});
}

TEST(Gradients, DropoutWithAFixedMaskBackpropagatesThroughTheKeptUnits) {
    // Each evaluation starts a fresh executor with the same seed, so all draw the same mask.
    expect_gradients_match({.layers = {Dense(8, "tanh"), Dropout(0.4f), Dense(3, "linear")},
                            .loss = make_loss(LossKind::mean_squared_error), .rows = 6});
}

// Identity kernels around a Dropout: the output is the input times the mask.
struct DropoutProbe {
    static constexpr int64_t kWidth = 100, kRows = 60;
    TrainingProgram program;
    std::vector<double> ones = std::vector<double>(kWidth * kRows, 1.0);
    explicit DropoutProbe(float rate)
        : program(lower_sequential({kWidth},
                                   {Dense(kWidth, "linear", false), Dropout(rate), Dense(kWidth, "linear", false)},
                                   make_loss(LossKind::mean_squared_error), Adam(), {}, 0)) {
        std::vector<Tensor> identity(2, Tensor({kWidth, kWidth}));
        for (Tensor& t : identity)
            for (int64_t i = 0; i < kWidth; ++i) t.at(i, i) = 1.0f;
        set_program_weights(program, identity);
    }
};

TEST(DropoutMask, TrainingZeroesAboutRateOfTheUnitsAndScalesTheRestByOneOverOneMinusRate) {
    const double rate = 0.3;
    DropoutProbe probe(static_cast<float>(rate));
    cpu::CpuExecutor<double> executor(probe.program, DropoutProbe::kRows, {}, 1, 99);
    executor.forward(probe.ones.data(), DropoutProbe::kRows, true);
    const int64_t n = DropoutProbe::kWidth * DropoutProbe::kRows;
    const double keep_scale = 1.0 / (1.0 - static_cast<double>(static_cast<float>(rate)));
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double v = executor.output()[i];
        if (v == 0.0) ++zeros;
        else ASSERT_NEAR(v, keep_scale, 1e-12) << "unit " << i;
    }
    // Binomial(6000, 0.3): mean 1800, standard deviation 35.5; allow 5 deviations.
    EXPECT_NEAR(static_cast<double>(zeros), rate * n, 5 * std::sqrt(n * rate * (1 - rate)));
}

// Masks are drawn from (seed, optimizer step, op): a new one each training step, the same one
// for every forward pass within a step (so finite differences see a fixed function).
std::vector<bool> dropped_units(const cpu::CpuExecutor<double>& executor, size_t n) {
    std::vector<bool> dropped(n);
    for (size_t i = 0; i < n; ++i) dropped[i] = executor.output()[i] == 0.0;
    return dropped;
}

TEST(DropoutMask, EachTrainingStepDrawsANewMask) {
    DropoutProbe probe(0.5f);
    cpu::CpuExecutor<double> executor(probe.program, DropoutProbe::kRows, {}, DropoutProbe::kWidth, 3);
    LogSums sums;
    // train_step's forward pass leaves its output in place (the update changes only the weights).
    executor.train_step(probe.ones.data(), probe.ones.data(), DropoutProbe::kRows, sums);
    const std::vector<double> first(executor.output(), executor.output() + probe.ones.size());
    executor.train_step(probe.ones.data(), probe.ones.data(), DropoutProbe::kRows, sums);
    const std::vector<double> second(executor.output(), executor.output() + probe.ones.size());
    int64_t changed = 0;
    for (size_t i = 0; i < first.size(); ++i) changed += (first[i] == 0) != (second[i] == 0);
    // Independent masks at rate 0.5 disagree on about half the units.
    EXPECT_GT(changed, static_cast<int64_t>(first.size() / 4));
}

TEST(DropoutMask, ForwardPassesWithinOneStepShareTheMask) {
    DropoutProbe probe(0.5f);
    cpu::CpuExecutor<double> executor(probe.program, DropoutProbe::kRows, {}, 1, 3);
    executor.forward(probe.ones.data(), DropoutProbe::kRows, true);
    const std::vector<bool> first = dropped_units(executor, probe.ones.size());
    executor.forward(probe.ones.data(), DropoutProbe::kRows, true);
    EXPECT_EQ(first, dropped_units(executor, probe.ones.size()));
}

TEST(DropoutMask, InferenceKeepsEveryUnitUnscaled) {
    DropoutProbe probe(0.5f);
    cpu::CpuExecutor<double> executor(probe.program, DropoutProbe::kRows, {}, 1, 3);
    executor.forward(probe.ones.data(), DropoutProbe::kRows, false);
    for (size_t i = 0; i < probe.ones.size(); ++i) ASSERT_EQ(executor.output()[i], 1.0) << "unit " << i;
}

}  // namespace
}  // namespace onefit

namespace onefit {
namespace {

// Image layers: a Conv2D's kernel and bias gradients (im2col, the Dense product, col2im for the
// layer below), pooling's routing of gradients, Flatten and Reshape passing them through.
// Convolutions after another layer check their input gradient through that layer's parameters.
TEST(Gradients, ConvolutionValidThenMaxPoolingFlattenAndDense) {
    expect_gradients_match({.layers = {Conv2D(3, 3, 1, "valid", "relu"), MaxPooling2D(2), Flatten(),
                                       Dense(4, "softmax")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index, .rows = 3, .image = {6, 7, 2}});
}

TEST(Gradients, StackedConvolutionsWithSamePaddingAndStrides) {
    // Even inputs with stride 2 pad one more pixel after than before (TensorFlow's "same").
    expect_gradients_match({.layers = {Conv2D(3, {3, 2}, {2, 1}, "same", "tanh"), Conv2D(2, 3, 2, "same", "swish"),
                                       Flatten(), Dense(3, "linear")},
                            .loss = make_loss(LossKind::mean_squared_error), .rows = 2, .image = {6, 5, 2}});
}

TEST(Gradients, AveragePoolingWithPartialWindowsAndGlobalAveragePooling) {
    expect_gradients_match({.layers = {Conv2D(4, 2, 1, "same", "sigmoid"), AveragePooling2D(2, 2, "same"),
                                       Conv2D(3, 1, 1, "valid", "elu"), GlobalAveragePooling2D(), Dense(2, "linear")},
                            .loss = make_loss(LossKind::log_cosh), .rows = 3, .image = {5, 5, 1}});
}

TEST(Gradients, OverlappingMaxPoolingWindows) {
    expect_gradients_match({.layers = {Conv2D(2, 2, 1, "valid", "linear"), MaxPooling2D({3, 3}, {1, 1}, "same"),
                                       Flatten(), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::one_hot,
                            .rows = 2, .image = {4, 4, 2}});
}

TEST(Gradients, ConvolutionsOnTheBlasPathAndASoftmaxOverChannels) {
    const Problem p{.layers = {Conv2D(8, 3, 1, "same", "softmax"), Conv2D(16, 3, 1, "valid", "relu", false),
                               Flatten(), Dense(2, "linear")},
                    .loss = make_loss(LossKind::mean_squared_error), .rows = 2, .image = {6, 6, 3}};
    const TrainingProgram program = lower_sequential(p.input_shape(), p.layers, p.loss, Adam(), {}, 0);
    ASSERT_TRUE(program.ops[1].conv.use_blas);  // 3 x 3 x 8 x 16 weights
    expect_gradients_match(p);
}

TEST(Gradients, ReshapeFromFeaturesIntoAnImage) {
    expect_gradients_match({.in = 5, .layers = {Dense(12, "tanh"), Reshape({2, -1, 3}), Conv2D(2, 2), Flatten(),
                                                Dropout(0.0f), Dense(3, "linear")},
                            .loss = make_loss(LossKind::mean_squared_error)});
}

TEST(Gradients, BatchNormalizationThroughTheBatchsStatistics) {
    // After a Dense, as the first layer (no input gradient), without beta or gamma, and over an
    // image's channels after a convolution.
    expect_gradients_match({.in = 4, .layers = {Dense(6, "tanh"), BatchNormalization(), Dense(3)},
                            .loss = make_loss(LossKind::mean_squared_error)});
    expect_gradients_match({.in = 5, .layers = {BatchNormalization(0.9f, 1e-3f, false, true), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::one_hot});
    expect_gradients_match({.in = 3, .layers = {Dense(4), BatchNormalization(0.9f, 1e-2f, true, false), Dense(2)},
                            .loss = make_loss(LossKind::log_cosh), .rows = 7});
    expect_gradients_match({.layers = {Conv2D(3, 3, 1, "same"), BatchNormalization(), MaxPooling2D(2), Flatten(),
                                       Dense(3, "softmax")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index, .rows = 3, .image = {4, 5, 2}});
}

// The layers made from their declarations alone (make_layer): activation layers between
// products, LayerNormalization, the 1-D layers and Embedding.
Layer made(const std::string& type, const LayerArguments& arguments = {}) { return make_layer(type, arguments); }

TEST(Gradients, ActivationLayersBetweenProducts) {
    for (const char* activation : {"tanh", "softmax", "gelu", "sigmoid", "linear"})
        expect_gradients_match({.in = 4, .layers = {Dense(5), made("activation", {{"activation", activation}}), Dense(3)},
                                .loss = make_loss(LossKind::mean_squared_error)});
    // ReLU's slope below a threshold and its ceiling, a LeakyReLU, and a Softmax layer as the output.
    // Biases away from the kinks: the inputs are random, so every branch is taken.
    expect_gradients_match({.in = 4, .layers = {Dense(8), made("relu", {{"max_value", 0.4}, {"negative_slope", 0.2},
                                                                        {"threshold", 0.1}}), Dense(3)},
                            .loss = make_loss(LossKind::log_cosh), .rows = 7});
    expect_gradients_match({.in = 4, .layers = {Dense(6), made("leaky_relu"), Dense(4), made("softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::one_hot});
}

TEST(Gradients, ASoftmaxLayerOverAnImagesChannels) {
    expect_gradients_match({.layers = {Conv2D(3, 2), made("softmax"), Flatten(), Dense(2)},
                            .loss = make_loss(LossKind::mean_squared_error), .rows = 2, .image = {3, 3, 2}});
}

TEST(Gradients, LayerNormalizationOverFeaturesAndChannels) {
    expect_gradients_match({.in = 4, .layers = {Dense(6, "tanh"), made("layer_normalization"), Dense(3)},
                            .loss = make_loss(LossKind::mean_squared_error)});
    // As the first layer (no input gradient), without gamma, without beta, over each pixel's channels.
    expect_gradients_match({.in = 5, .layers = {made("layer_normalization", {{"scale", false}}), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::one_hot});
    expect_gradients_match({.in = 3, .layers = {Dense(4), made("layer_normalization", {{"center", false}, {"epsilon", 0.01}}),
                                                Dense(2)},
                            .loss = make_loss(LossKind::log_cosh)});
    expect_gradients_match({.layers = {Conv2D(3, 2, 1, "same"), made("layer_normalization"), Flatten(), Dense(2)},
                            .loss = make_loss(LossKind::mean_squared_error), .rows = 3, .image = {3, 4, 2}});
}

TEST(Gradients, Conv1DWithThe1DPoolingsAndGlobalPoolings) {
    // A (steps, channels) input: Reshape makes one from features.
    expect_gradients_match({.in = 14, .layers = {Reshape({7, 2}),
                                                 made("conv1d", {{"filters", 3}, {"kernel_size", 3}, {"activation", "tanh"}}),
                                                 made("max_pooling1d", {{"pool_size", 2}, {"strides", 1}}),
                                                 made("conv1d", {{"filters", 2}, {"kernel_size", 2}, {"strides", 2},
                                                                 {"padding", "same"}}),
                                                 made("average_pooling1d", {{"pool_size", 2}, {"padding", "same"}}),
                                                 Flatten(), Dense(3)},
                            .loss = make_loss(LossKind::mean_squared_error), .rows = 3});
    expect_gradients_match({.in = 12, .layers = {Reshape({6, 2}), made("conv1d", {{"filters", 4}, {"kernel_size", 2}}),
                                                 made("global_max_pooling1d"), Dense(2)},
                            .loss = make_loss(LossKind::log_cosh), .rows = 4});
    expect_gradients_match({.in = 12, .layers = {Reshape({6, 2}), made("conv1d", {{"filters", 4}, {"kernel_size", 3}}),
                                                 made("global_average_pooling1d"), Dense(2)},
                            .loss = make_loss(LossKind::log_cosh), .rows = 4});
    expect_gradients_match({.layers = {Conv2D(3, 2), made("global_max_pooling2d"), Dense(2)},
                            .loss = make_loss(LossKind::mean_squared_error), .rows = 3, .image = {4, 4, 2}});
}

TEST(Gradients, EmbeddingRowsGatherTheirPositionsGradients) {
    // 6 indices of a 5-word vocabulary per sample: some rows are read twice, some not at all.
    expect_gradients_match({.in = 6, .layers = {made("embedding", {{"input_dim", 5}, {"output_dim", 3}}),
                                                made("global_average_pooling1d"), Dense(2, "softmax")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index, .indices = 5});
    expect_gradients_match({.in = 4, .layers = {made("embedding", {{"input_dim", 7}, {"output_dim", 2}}), Flatten(),
                                                Dense(3, "tanh"), Dense(2)},
                            .loss = make_loss(LossKind::mean_squared_error), .indices = 7});
}

TEST(Gradients, LabelSmoothingFusedAndOnProbabilities) {
    // Keras's label_smoothing moves the labels, so the gradient is p - smoothed y when fused.
    const auto smoothed = [](LossKind kind, bool from_logits, float s) {
        Loss loss = make_loss(kind);
        loss.from_logits = from_logits;
        loss.label_smoothing = s;
        return loss;
    };
    expect_gradients_match({.layers = {Dense(5, "tanh"), Dense(3, "softmax")},
                            .loss = smoothed(LossKind::categorical_crossentropy, false, 0.2f), .labels = Labels::one_hot});
    expect_gradients_match({.layers = {Dense(5, "tanh"), Dense(3, "linear")},
                            .loss = smoothed(LossKind::categorical_crossentropy, true, 0.1f), .labels = Labels::one_hot});
    expect_gradients_match({.layers = {Dense(5, "tanh"), Dense(3, "relu"), Dense(3, "sigmoid")},
                            .loss = smoothed(LossKind::categorical_crossentropy, false, 0.3f), .labels = Labels::one_hot});
    expect_gradients_match({.layers = {Dense(5, "tanh"), Dense(2, "sigmoid")},
                            .loss = smoothed(LossKind::binary_crossentropy, false, 0.2f), .labels = Labels::binary});
    expect_gradients_match({.layers = {Dense(5, "tanh"), Dense(2, "linear")},
                            .loss = smoothed(LossKind::binary_crossentropy, true, 0.4f), .labels = Labels::binary});
    expect_gradients_match({.layers = {Dense(5, "tanh"), Dense(2, "softmax")},  // probabilities, not fused
                            .loss = smoothed(LossKind::binary_crossentropy, false, 0.2f), .labels = Labels::binary});
}

TEST(Gradients, WeightRegularizersAddTheirPenaltyAndItsGradient) {
    // The loss the executor reports includes l1 sum|w| + l2 sum w^2, so the finite differences see it.
    Layer dense = Dense(6, "tanh");
    dense.kernel_regularizer = {0.01f, 0.05f};
    dense.bias_regularizer = {0.0f, 0.2f};
    Layer conv = make_layer("conv1d", {{"filters", int64_t{2}}, {"kernel_size", int64_t{2}},
                                       {"kernel_regularizer", std::string("l1(0.03)")},
                                       {"bias_regularizer", std::string("l1_l2(l1=0.02, l2=0.1)")}});
    Layer embedding = make_layer("embedding", {{"input_dim", int64_t{5}}, {"output_dim", int64_t{2}},
                                               {"embeddings_regularizer", std::string("l2(0.3)")}});
    expect_gradients_match({.in = 4, .layers = {dense, Dense(3, "softmax")},
                            .loss = make_loss(LossKind::categorical_crossentropy), .labels = Labels::one_hot});
    expect_gradients_match({.in = 8, .layers = {Reshape({4, 2}), conv, Flatten(), Dense(2)},
                            .loss = make_loss(LossKind::mean_squared_error)});
    expect_gradients_match({.in = 3, .layers = {embedding, Flatten(), Dense(2)}, .loss = make_loss(LossKind::log_cosh),
                            .indices = 5});
}

TEST(Gradients, SampleWeightsWeightEachRowsLossAndGradient) {
    // Fused softmax crossentropy, an elementwise loss, and a tail of small layers split into halves
    // (each half reads its own rows' weights).
    expect_gradients_match({.layers = {Dense(6, "tanh"), Dense(3, "softmax")},
                            .loss = make_loss(LossKind::sparse_categorical_crossentropy),
                            .labels = Labels::class_index, .weighted = true});
    expect_gradients_match({.layers = {Dense(5, "relu"), Dense(2)}, .loss = make_loss(LossKind::log_cosh),
                            .weighted = true});
    expect_gradients_through_tail({.in = 32,
                                   .layers = {Dense(64, "tanh"), Dense(64, "sigmoid"), Dense(5, "softmax")},
                                   .loss = make_loss(LossKind::categorical_crossentropy),
                                   .labels = Labels::one_hot,
                                   .rows = 40,
                                   .weighted = true},
                                  0, 5);
}

}  // namespace
}  // namespace onefit
