// fit(), evaluate(), predict() and summary() as Keras users expect them: History's keys and
// lengths, seeded reproducibility, batch schedules (shuffle, validation_split, steps_per_epoch,
// Dataset), callbacks, errors, and that the Iris example actually learns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_files.hpp"
#include "support/weights.hpp"
#include "onefit/onefit.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

// Ten rows, three features, three classes; row i is (sin i, cos 2i, i / 10), label i mod 3.
Tensor small_x(int64_t n = 10) {
    Tensor x({n, 3});
    for (int64_t i = 0; i < n; ++i) {
        x.at(i, 0) = static_cast<float>(std::sin(double(i)));
        x.at(i, 1) = static_cast<float>(std::cos(2.0 * double(i)));
        x.at(i, 2) = static_cast<float>(i) / 10.0f;
    }
    return x;
}
Tensor small_y(int64_t n = 10) {
    Tensor y({n});
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(i % 3);
    return y;
}

Sequential classifier(uint64_t seed = 0, bool dropout = false, const std::vector<std::string>& metrics = {}) {
    Sequential model({3}, seed);
    model.add(Dense(8, "relu"));
    if (dropout) model.add(Dropout(0.25f));
    model.add(Dense(3, "softmax"));
    model.compile(Adam(0.05f), loss_from_name("sparse_categorical_crossentropy"), CompileOptions{metrics});
    return model;
}

FitOptions options(int64_t batch_size, int64_t epochs, bool shuffle = true) {
    FitOptions o;
    o.batch_size = batch_size;
    o.epochs = epochs;
    o.shuffle = shuffle;
    o.verbose = 0;
    return o;
}


::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

TEST(FitInput, ANonFiniteFeatureIsNamedByRowAndColumn) {
    // Far past the first few thousand values too: the scan checks x in chunks.
    Tensor x({3000, 4}), y({3000});
    for (int64_t k = 0; k < x.size(); ++k) x[k] = 0.25f;
    for (int64_t i = 0; i < y.rows(); ++i) y[i] = static_cast<float>(i % 3);
    Sequential model({4}, 0);
    model.add(Dense(3, "softmax"));
    model.compile(Adam(), loss_from_name("sparse_categorical_crossentropy"));
    FitOptions o;
    o.verbose = 0;
    const auto message = [&] {
        try {
            model.fit(x, y, o);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(), "no error");
    x.at(2500, 3) = std::numeric_limits<float>::infinity();
    x.at(2999, 0) = std::nanf("");
    EXPECT_NE(message().find("x holds a non-finite value at row 2500, column 3"), std::string::npos) << message();
    x.at(2500, 3) = 0.5f;
    EXPECT_NE(message().find("row 2999, column 0"), std::string::npos) << message();
    x.at(0, 1) = -std::numeric_limits<float>::infinity();
    EXPECT_NE(message().find("row 0, column 1"), std::string::npos) << message();
}

TEST(FitInput, AnEmbeddingsIndicesAreCheckedBeforeTheFitAndPredict) {
    Tensor x({6, 3}), y({6});
    for (int64_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k % 4);
    for (int64_t i = 0; i < y.rows(); ++i) y[i] = static_cast<float>(i % 2);
    Sequential model({3}, 0);
    model.add(make_layer("embedding", {{"input_dim", int64_t{4}}, {"output_dim", int64_t{2}}}));
    model.add(Flatten());
    model.add(Dense(2, "softmax"));
    model.compile(Adam(), loss_from_name("sparse_categorical_crossentropy"));
    FitOptions o;
    o.verbose = 0;
    const auto message = [&](bool fit) {
        try {
            if (fit) model.fit(x, y, o);
            else model.predict(x);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(true), "no error");
    x.at(4, 2) = 4.0f;  // one past the vocabulary
    EXPECT_EQ(message(true), "x row 4, column 2 holds 4; an Embedding takes integer indices in [0, 4) (layer 'embedding')");
    x.at(4, 2) = 1.5f;
    EXPECT_NE(message(false).find("row 4, column 2 holds 1.5"), std::string::npos) << message(false);
    x.at(4, 2) = -1.0f;
    EXPECT_NE(message(true).find("holds -1"), std::string::npos) << message(true);
}

TEST(FitHistory, HasLossMetricsAndValidationKeysWithOneValuePerEpoch) {
    Sequential model = classifier(0, false, {"accuracy", "mae"});
    FitOptions o = options(4, 3);
    o.validation_data = {small_x(6), small_y(6)};
    const History h = model.fit(small_x(), small_y(), o);
    std::vector<std::string> keys;
    for (const auto& [k, v] : h.history) {
        keys.push_back(k);
        EXPECT_EQ(v.size(), 3u) << k;
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"accuracy", "loss", "mae", "val_accuracy", "val_loss", "val_mae"}));
    EXPECT_EQ(h.epoch, (std::vector<int64_t>{0, 1, 2}));
}

TEST(FitHistory, WithoutValidationThereAreNoValKeys) {
    Sequential model = classifier(0, false, {"acc"});
    const History h = model.fit(small_x(), small_y(), options(4, 2));
    EXPECT_EQ(h.history.size(), 2u);
    EXPECT_EQ(h["acc"].size(), 2u);
    EXPECT_THROW(h["val_loss"], Error);
}

TEST(FitReproducibility, SameSeedGivesBitIdenticalWeights) {
    Sequential a = classifier(3, true), b = classifier(3, true);
    a.fit(small_x(), small_y(), options(3, 5));
    b.fit(small_x(), small_y(), options(3, 5));
    EXPECT_TRUE(testing_support::same_bits(a.get_weights(), b.get_weights()));
}

TEST(FitReproducibility, DifferentModelSeedsGiveDifferentWeights) {
    Sequential a = classifier(3), b = classifier(4);
    a.fit(small_x(), small_y(), options(3, 5));
    b.fit(small_x(), small_y(), options(3, 5));
    EXPECT_FALSE(testing_support::same_bits(a.get_weights(), b.get_weights()));
}

TEST(FitReproducibility, TheFitSeedChangesShufflingAndDropoutOnly) {
    Sequential a = classifier(3, true), b = classifier(3, true);
    ASSERT_TRUE(testing_support::same_bits(a.get_weights(), b.get_weights()));
    FitOptions oa = options(3, 5), ob = options(3, 5);
    oa.seed = 11;
    ob.seed = 12;
    a.fit(small_x(), small_y(), oa);
    b.fit(small_x(), small_y(), ob);
    EXPECT_FALSE(testing_support::same_bits(a.get_weights(), b.get_weights()));
}

TEST(FitSchedule, WithoutShuffleBatchesAreConsecutiveRowsInOrder) {
    // The same batches, spelled out as a Dataset: rows 0-3, 4-7, 8-9 each epoch.
    Sequential arrays = classifier(1), dataset = classifier(1);
    arrays.fit(small_x(), small_y(), options(4, 3, false));
    dataset.fit(Dataset::from_tensor_slices(small_x(), small_y()).batch(4), options(999, 3));
    EXPECT_TRUE(testing_support::same_bits(arrays.get_weights(), dataset.get_weights()));
}

TEST(FitSchedule, ADatasetsSampleWeightsWeightAsArraysSampleWeightDoes) {
    Tensor w({10}), vw({4});
    for (int64_t i = 0; i < 10; ++i) w[i] = 0.25f + 0.5f * static_cast<float>(i % 4);
    for (int64_t i = 0; i < 4; ++i) vw[i] = 2.0f - 0.4f * static_cast<float>(i);
    const Tensor vx = small_x(4), vy = small_y(4);
    Sequential arrays = classifier(3), dataset = classifier(3), unweighted = classifier(3);
    FitOptions o = options(4, 3, false);
    o.sample_weight = w;
    o.validation_data = std::make_pair(vx, vy);
    o.validation_sample_weight = vw;
    const History a = arrays.fit(small_x(), small_y(), o);
    FitOptions d = options(999, 3);
    const Dataset validation = Dataset::from_tensor_slices(vx, vy, vw).batch(32);
    d.validation_dataset = validation;
    const History b = dataset.fit(Dataset::from_tensor_slices(small_x(), small_y(), w).batch(4), d);
    EXPECT_TRUE(testing_support::same_bits(arrays.get_weights(), dataset.get_weights()));
    EXPECT_EQ(a.history.at("loss"), b.history.at("loss"));
    EXPECT_EQ(a.history.at("val_loss"), b.history.at("val_loss"));
    unweighted.fit(Dataset::from_tensor_slices(small_x(), small_y()).batch(4), options(999, 3));
    EXPECT_FALSE(testing_support::same_bits(unweighted.get_weights(), dataset.get_weights()));
    // with_sample_weight keeps the dataset's ops: the same batches, these weights.
    Sequential replaced = classifier(3);
    replaced.fit(Dataset::from_tensor_slices(small_x(), small_y()).batch(4).with_sample_weight(w), options(999, 3));
    EXPECT_TRUE(testing_support::same_bits(replaced.get_weights(), dataset.get_weights()));
    FitOptions both = options(999, 1);
    both.sample_weight = w;
    EXPECT_NE(test_files::error_of([&] { dataset.fit(Dataset::from_tensor_slices(small_x(), small_y()).batch(4), both); })
                  .find("a Dataset carries its own"),
              std::string::npos);
}

TEST(FitSchedule, ShuffleChangesTheBatches) {
    Sequential in_order = classifier(1), shuffled = classifier(1);
    in_order.fit(small_x(), small_y(), options(4, 3, false));
    shuffled.fit(small_x(), small_y(), options(4, 3, true));
    EXPECT_FALSE(testing_support::same_bits(in_order.get_weights(), shuffled.get_weights()));
}

TEST(FitSchedule, DatasetRepeatIsTheSameAsMoreEpochs) {
    Sequential arrays = classifier(2), dataset = classifier(2);
    arrays.fit(small_x(), small_y(), options(4, 3, false));
    dataset.fit(Dataset::from_tensor_slices(small_x(), small_y()).batch(4).repeat(3), options(32, 1));
    EXPECT_TRUE(testing_support::same_bits(arrays.get_weights(), dataset.get_weights()));
}

TEST(FitSchedule, ValidationSplitTakesTheLastRowsBeforeShuffling) {
    // Keras: split_at = floor(10 * (1 - 0.25)) = 7; rows 7, 8, 9 validate.
    FitOptions split = options(3, 4);
    split.validation_split = 0.25;
    FitOptions explicit_data = options(3, 4);
    explicit_data.validation_data = {small_x().slice_rows(7, 10), small_y().slice_rows(7, 10)};
    Sequential a = classifier(5), b = classifier(5);
    const History ha = a.fit(small_x(), small_y(), split);
    const History hb = b.fit(small_x().slice_rows(0, 7), small_y().slice_rows(0, 7), explicit_data);
    EXPECT_TRUE(testing_support::same_bits(a.get_weights(), b.get_weights()));
    EXPECT_EQ(ha["val_loss"], hb["val_loss"]);
}

TEST(FitSchedule, StepsPerEpochContinuesThroughTheDataAcrossEpochs) {
    // 10 rows in batches of 4 are passes of 4, 4, 2: three epochs of two steps are two passes.
    FitOptions steps = options(4, 3, false);
    steps.steps_per_epoch = 2;
    Sequential a = classifier(6), b = classifier(6);
    const History h = a.fit(small_x(), small_y(), steps);
    b.fit(small_x(), small_y(), options(4, 2, false));
    EXPECT_EQ(h["loss"].size(), 3u);
    EXPECT_TRUE(testing_support::same_bits(a.get_weights(), b.get_weights()));
}

TEST(FitSchedule, BatchSizeLargerThanTheDataIsOneFullBatch) {
    // Keras accepts any batch_size; a batch can hold at most all the rows.
    Sequential a = classifier(7), b = classifier(7);
    a.fit(small_x(), small_y(), options(10, 2, false));
    EXPECT_NO_THROW(b.fit(small_x(), small_y(), options(int64_t{1} << 40, 2, false)));
    EXPECT_TRUE(testing_support::same_bits(a.get_weights(), b.get_weights()));
}

TEST(FitSchedule, AnEndlessDatasetRunsStepsPerEpochBatchesInOrder) {
    const Dataset endless = Dataset::from_tensor_slices(small_x(), small_y()).batch(4).repeat();
    Sequential arrays = classifier(8), dataset = classifier(8);
    arrays.fit(small_x(), small_y(), options(4, 2, false));
    FitOptions o = options(32, 2);
    EXPECT_THROW(dataset.fit(endless, o), Error);  // how long is an epoch?
    o.steps_per_epoch = 3;
    dataset.fit(endless, o);
    EXPECT_TRUE(testing_support::same_bits(arrays.get_weights(), dataset.get_weights()));
}

TEST(FitReproducibility, ProgressOutputAndCallbacksDoNotChangeTheResult) {
    // verbose 0 runs all epochs in one call; logging and callbacks stop at each epoch end.
    Sequential quiet = classifier(4, true), logged = classifier(4, true), called = classifier(4, true);
    quiet.fit(small_x(), small_y(), options(3, 4));
    std::ostringstream out;
    FitOptions verbose = options(3, 4);
    verbose.verbose = 2;
    verbose.out = &out;
    logged.fit(small_x(), small_y(), verbose);
    LambdaCallback nothing;
    FitOptions with_callback = options(3, 4);
    with_callback.callbacks = {&nothing};
    called.fit(small_x(), small_y(), with_callback);
    EXPECT_TRUE(testing_support::same_bits(quiet.get_weights(), logged.get_weights()));
    EXPECT_TRUE(testing_support::same_bits(quiet.get_weights(), called.get_weights()));
    EXPECT_TRUE(contains(out.str(), "loss"));
}

TEST(FitReproducibility, RecompilingKeepsTheTrainedWeightsAndRestartsTheOptimizer) {
    Sequential model = classifier(2);
    model.fit(small_x(), small_y(), options(4, 2));
    const std::vector<Tensor> trained = model.get_weights();
    model.compile(SGD(), loss_from_name("sparse_categorical_crossentropy"));
    EXPECT_TRUE(testing_support::same_bits(model.get_weights(), trained));
    EXPECT_EQ(model.program().optimizer_step, 0);
}

TEST(FitLearning, IrisReachesNinetyFivePercentValidationAccuracy) {
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.3, true, 42);
    Sequential model({4}, 0);
    model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(0.01f), loss_from_name("sparse_categorical_crossentropy"), CompileOptions{{"accuracy"}});
    FitOptions o = options(16, 100);
    o.validation_data = {d.x_test, d.y_test};
    const History h = model.fit(d.x_train, d.y_train, o);
    EXPECT_GE(h["val_accuracy"].back(), 0.95);
    EXPECT_LT(h["loss"].back(), h["loss"].front());
    EXPECT_NEAR(model.evaluate(d.x_test, d.y_test).at("accuracy"), h["val_accuracy"].back(), 1e-12);
}

struct Recorder : Callback {
    std::vector<int64_t> begun, ended;
    std::vector<Logs> logs;
    int train_begin = 0, train_end = 0;
    int64_t stop_after = -1;
    void on_train_begin() override { ++train_begin; }
    void on_epoch_begin(int64_t epoch) override { begun.push_back(epoch); }
    void on_epoch_end(int64_t epoch, const Logs& l) override {
        ended.push_back(epoch);
        logs.push_back(l);
        if (epoch == stop_after) model->stop_training = true;
    }
    void on_train_end(const Logs&) override { ++train_end; }
};

TEST(FitCallbacks, EveryEpochEndGetsTheLogsHistoryRecords) {
    Sequential model = classifier(0, false, {"accuracy"});
    Recorder recorder;
    FitOptions o = options(4, 4);
    o.validation_data = {small_x(5), small_y(5)};
    o.callbacks = {&recorder};
    const History h = model.fit(small_x(), small_y(), o);
    EXPECT_EQ(recorder.train_begin, 1);
    EXPECT_EQ(recorder.train_end, 1);
    EXPECT_EQ(recorder.begun, (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(recorder.ended, (std::vector<int64_t>{0, 1, 2, 3}));
    for (size_t e = 0; e < 4; ++e)
        for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy"})
            EXPECT_EQ(recorder.logs[e].at(key), h[key][e]) << key << " epoch " << e;
    EXPECT_EQ(recorder.model, &model);
}

TEST(FitCallbacks, StopTrainingEndsTheFitAfterTheCurrentEpoch) {
    Sequential model = classifier();
    Recorder recorder;
    recorder.stop_after = 1;
    FitOptions o = options(4, 10);
    o.callbacks = {&recorder};
    const History h = model.fit(small_x(), small_y(), o);
    EXPECT_EQ(recorder.ended, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(h["loss"].size(), 2u);
    // The next fit starts afresh.
    recorder.stop_after = -1;
    EXPECT_EQ(model.fit(small_x(), small_y(), o)["loss"].size(), 10u);
}

TEST(FitCallbacks, LambdaCallbackSeesEachEpoch) {
    Sequential model = classifier();
    LambdaCallback lambda;
    std::vector<double> losses;
    lambda.epoch_end = [&](int64_t, const Logs& logs) { losses.push_back(logs.at("loss")); };
    FitOptions o = options(4, 3);
    o.callbacks = {&lambda};
    const History h = model.fit(small_x(), small_y(), o);
    EXPECT_EQ(losses, h["loss"]);
}

TEST(EvaluatePredict, PredictGivesOneRowPerSampleSummingToOneForSoftmax) {
    Sequential model = classifier();
    const Tensor p = model.predict(small_x(7), 3);
    EXPECT_EQ(p.shape(), (Shape{7, 3}));
    for (int64_t r = 0; r < 7; ++r) EXPECT_NEAR(double(p.at(r, 0)) + p.at(r, 1) + p.at(r, 2), 1.0, 1e-6);
}

// Loss (sparse crossentropy), accuracy and mse of softmax outputs p against class indices y,
// computed from predict() in double, per sample and averaged over the samples as Keras does.
// mse compares every output with the label value (tf.keras 2's broadcast of y to (N, 1)).
Logs logs_from_predictions(const Tensor& p, const Tensor& y) {
    double loss = 0, hits = 0, squared = 0;
    for (int64_t r = 0; r < p.rows(); ++r) {
        const int64_t label = static_cast<int64_t>(y[r]);
        int64_t best = 0;
        for (int64_t j = 0; j < p.row_width(); ++j) {
            if (p.at(r, j) > p.at(r, best)) best = j;
            const double d = double(p.at(r, j)) - double(y[r]);
            squared += d * d / double(p.row_width());
        }
        loss -= std::log(double(p.at(r, label)));
        hits += best == label;
    }
    const double n = double(p.rows());
    return {{"loss", loss / n}, {"accuracy", hits / n}, {"mse", squared / n}};
}

TEST(EvaluatePredict, EvaluateGivesTheLossAndMetricsOfThePredictions) {
    Sequential model = classifier(0, false, {"accuracy", "mse"});
    model.fit(small_x(), small_y(), options(4, 5));  // away from the initialisation's near-uniform outputs
    const Logs logs = model.evaluate(small_x(), small_y(), 4);
    const Logs expected = logs_from_predictions(model.predict(small_x()), small_y());
    ASSERT_EQ(logs.size(), 3u);
    EXPECT_NEAR(logs.at("loss"), expected.at("loss"), 1e-5);
    EXPECT_DOUBLE_EQ(logs.at("accuracy"), expected.at("accuracy"));
    EXPECT_NEAR(logs.at("mse"), expected.at("mse"), 1e-6);
}

TEST(FitHistory, ValidationLossAndMetricsAreThoseOfTheEpochsFinalWeights) {
    // Validation runs after the epoch's last update, so the last epoch's val_ values are what
    // predict() on the trained model gives.
    Sequential model = classifier(1, true, {"accuracy", "mse"});
    FitOptions o = options(3, 4);
    o.validation_data = {small_x(7), small_y(7)};
    const History h = model.fit(small_x(), small_y(), o);
    const Logs expected = logs_from_predictions(model.predict(small_x(7)), small_y(7));
    EXPECT_NEAR(h["val_loss"].back(), expected.at("loss"), 1e-5);
    EXPECT_DOUBLE_EQ(h["val_accuracy"].back(), expected.at("accuracy"));
    EXPECT_NEAR(h["val_mse"].back(), expected.at("mse"), 1e-6);
}

TEST(FitHistory, TrainingMetricsOfAOneBatchEpochAreThoseOfTheWeightsBeforeItsUpdate) {
    // Keras computes training metrics on the forward pass of each batch, before that batch's
    // update: with the whole data in one batch, epoch e reports the weights epoch e started with.
    Sequential model = classifier(2, false, {"accuracy", "mse"});
    const Logs before = logs_from_predictions(model.predict(small_x()), small_y());
    const History h = model.fit(small_x(), small_y(), options(10, 1, false));
    const Logs after = logs_from_predictions(model.predict(small_x()), small_y());
    EXPECT_NEAR(h["loss"][0], before.at("loss"), 1e-5);
    EXPECT_DOUBLE_EQ(h["accuracy"][0], before.at("accuracy"));
    EXPECT_NEAR(h["mse"][0], before.at("mse"), 1e-6);
    EXPECT_GT(std::fabs(after.at("mse") - before.at("mse")), 1e-4);  // the update did change them
}

TEST(EvaluatePredict, PredictIsIndependentOfTheBatchSize) {
    Sequential model = classifier(9, true);  // dropout is off outside training
    EXPECT_EQ(model.predict(small_x(), 1).values(), model.predict(small_x(), 10).values());
}

using test_files::error_of;

TEST(FitErrors, FeaturesOfTheWrongWidth) {
    Sequential model = classifier();
    EXPECT_TRUE(contains(error_of([&] { model.fit(Tensor({10, 4}), small_y(), options(4, 1)); }), "(10, 4)"));
    EXPECT_THROW(model.predict(Tensor({2, 2})), Error);
    EXPECT_THROW(model.evaluate(Tensor({10, 2}), small_y()), Error);
}

TEST(FitErrors, LabelsWithTheWrongNumberOfRows) {
    Sequential model = classifier();
    EXPECT_THROW(model.fit(small_x(), small_y(9), options(4, 1)), Error);
}

TEST(FitErrors, SparseLabelsOutsideTheClasses) {
    Sequential model = classifier();
    Tensor y = small_y();
    y[4] = 3.0f;
    EXPECT_TRUE(contains(error_of([&] { model.fit(small_x(), y, options(4, 1)); }), "row 4"));
    y[4] = -1.0f;
    EXPECT_THROW(model.fit(small_x(), y, options(4, 1)), Error);
    y[4] = 1.5f;
    EXPECT_THROW(model.fit(small_x(), y, options(4, 1)), Error);
}

TEST(FitErrors, OneHotLabelsOfTheWrongWidth) {
    Sequential model({3});
    model.add(Dense(3, "softmax"));
    model.compile(Adam(), loss_from_name("categorical_crossentropy"));
    EXPECT_TRUE(contains(error_of([&] { model.fit(small_x(), Tensor({10, 4}), options(4, 1)); }), "(10, 4)"));
    // Class indices with categorical_crossentropy: the message points to the sparse loss.
    EXPECT_TRUE(contains(error_of([&] { model.fit(small_x(), small_y(), options(4, 1)); }), "sparse_categorical_crossentropy"));
}

TEST(FitErrors, BadOptions) {
    Sequential model = classifier();
    EXPECT_THROW(model.fit(small_x(), small_y(), options(0, 1)), Error);
    EXPECT_THROW(model.fit(small_x(), small_y(), options(4, 0)), Error);
    FitOptions split = options(4, 1);
    split.validation_split = 1.0;
    EXPECT_THROW(model.fit(small_x(), small_y(), split), Error);
    EXPECT_THROW(model.evaluate(small_x(), small_y(), 0), Error);
}

TEST(FitErrors, UnknownNames) {
    EXPECT_TRUE(contains(error_of([] { Dense(3, "relu6"); }), "relu6"));
    EXPECT_TRUE(contains(error_of([] { loss_from_name("hinge2"); }), "hinge2"));
    EXPECT_TRUE(contains(error_of([] { optimizer_from_name("lamb"); }), "lamb"));
    Sequential model({3});
    model.add(Dense(3));
    EXPECT_THROW(model.compile("nadam", "mse"), Error);
    EXPECT_THROW(model.compile("adam", "kld"), Error);
}

TEST(FitErrors, FitBeforeCompile) {
    Sequential model({3});
    model.add(Dense(3));
    EXPECT_TRUE(contains(error_of([&] { model.fit(small_x(), small_y(), options(4, 1)); }), "compile"));
}

TEST(Summary, SeedModelHas160And99ParametersAnd259InTotal) {
    Sequential model({4});
    model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    const std::string s = model.summary();
    EXPECT_EQ(model.count_params(), 259);
    EXPECT_TRUE(contains(s, "(None, 32)"));
    EXPECT_TRUE(contains(s, "(None, 3)"));
    EXPECT_TRUE(std::regex_search(s, std::regex("dense \\(Dense\\) +\\(None, 32\\) +160"))) << s;
    EXPECT_TRUE(std::regex_search(s, std::regex("dense_1 \\(Dense\\) +\\(None, 3\\) +99"))) << s;
    EXPECT_TRUE(contains(s, "Total params: 259"));
    EXPECT_TRUE(contains(s, "Trainable params: 259"));
}

}  // namespace
}  // namespace onefit
