// ModelCheckpoint, EarlyStopping and CSVLogger against hand-worked Keras semantics: scripted logs
// fed to on_epoch_end directly, then each inside a real fit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "support/test_files.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

namespace fs = std::filesystem;

Sequential small_model() {
    Sequential model({4}, 3);
    model.add(Dense(8, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(0.01f), loss_from_name("sparse_categorical_crossentropy"), CompileOptions{{"accuracy"}});
    return model;
}

// Runs `stop` over val_loss values as fit would: epoch by epoch until it sets stop_training.
int64_t epochs_run(EarlyStopping& stop, Sequential& model, const std::vector<double>& values) {
    stop.model = &model;
    model.stop_training = false;
    stop.on_train_begin();
    int64_t epoch = 0;
    for (; epoch < static_cast<int64_t>(values.size()) && !model.stop_training; ++epoch)
        stop.on_epoch_end(epoch, {{"loss", 1.0}, {"val_loss", values[static_cast<size_t>(epoch)]}});
    stop.on_train_end({});
    return epoch;
}

TEST(CallbacksEarlyStopping, PatienceZeroStopsAtTheFirstEpochWithoutImprovement) {
    Sequential model = small_model();
    EarlyStopping stop;  // val_loss, patience 0
    // epoch 0 best 1.0; 1 improves (0.9); 2 is worse: wait 1 >= 0 -> stop at epoch 2.
    EXPECT_EQ(epochs_run(stop, model, {1.0, 0.9, 0.95, 0.5}), 3);
    EXPECT_EQ(stop.stopped_epoch, 2);
    EXPECT_EQ(*stop.best, 0.9);
}

TEST(CallbacksEarlyStopping, AFitOfABillionEpochsHoldsOnlyTheEpochsItRuns) {
    // Keras's idiom: epochs far beyond need, EarlyStopping ends it (logs for every epoch asked
    // were once made up front: 10^9 of them cannot be).
    const LabeledData iris = load_iris();
    Sequential model = small_model();
    EarlyStopping stop("loss", 0.5, 0);
    FitOptions o;
    o.epochs = 1'000'000'000, o.verbose = 0, o.callbacks = {&stop};
    const History h = model.fit(iris.x, iris.y, o);
    EXPECT_EQ(h.history.at("loss").size(), 2u);  // no epoch improves the loss by 0.5
    EXPECT_EQ(stop.stopped_epoch, 1);
}

TEST(CallbacksEarlyStopping, PatienceCountsEpochsSinceTheBest) {
    Sequential model = small_model();
    EarlyStopping stop("val_loss", 0.0, 2);
    // best 0.8 at epoch 1; epochs 2, 3 do not improve: wait 2 >= 2 at epoch 3.
    EXPECT_EQ(epochs_run(stop, model, {1.0, 0.8, 0.8, 0.9, 0.1}), 4);
    EXPECT_EQ(stop.stopped_epoch, 3);
    EXPECT_EQ(stop.wait, 2);
}

TEST(CallbacksEarlyStopping, MinDeltaIsTheSmallestImprovementThatCounts) {
    Sequential model = small_model();
    EarlyStopping stop("val_loss", 0.1, 1);
    // 0.95 is not below 1.0 - 0.1: wait 1 >= 1 at epoch 1.
    EXPECT_EQ(epochs_run(stop, model, {1.0, 0.95, 0.5}), 2);
    EXPECT_EQ(*stop.best, 1.0);
}

TEST(CallbacksEarlyStopping, AccuracyIsMaximisedInAutoMode) {
    Sequential model = small_model();
    EarlyStopping stop("val_accuracy");
    stop.model = &model;
    stop.on_train_begin();
    stop.on_epoch_end(0, {{"val_accuracy", 0.5}});
    stop.on_epoch_end(1, {{"val_accuracy", 0.7}});
    EXPECT_FALSE(model.stop_training);
    stop.on_epoch_end(2, {{"val_accuracy", 0.6}});
    EXPECT_TRUE(model.stop_training);
    EXPECT_EQ(*stop.best, 0.7);
}

TEST(CallbacksEarlyStopping, BaselineMustBeBeatenToResetTheWait) {
    Sequential model = small_model();
    EarlyStopping stop("val_loss", 0.0, 2, "auto", false, 0, 0.5);
    // Improving but above the baseline 0.5: wait keeps counting -> stop at epoch 2 (wait 3 >= 2 at epoch 1? epoch>0).
    // epoch 0: wait 1, best 1.0 (no reset); epoch 1: wait 2, best 0.9, no reset; epoch 2: wait 3, best 0.8 -> return
    // (an improvement returns before the patience check); epoch 3: 0.85, wait 4 >= 2 -> stop.
    EXPECT_EQ(epochs_run(stop, model, {1.0, 0.9, 0.8, 0.85, 0.1}), 4);
    EXPECT_EQ(stop.stopped_epoch, 3);
}

TEST(CallbacksEarlyStopping, StartFromEpochIgnoresTheWarmUp) {
    Sequential model = small_model();
    EarlyStopping stop("val_loss", 0.0, 0, "auto", false, 2);
    EXPECT_EQ(epochs_run(stop, model, {1.0, 2.0, 3.0, 2.5, 4.0}), 5);  // epoch 3 improves on 3.0, 4 stops
    EXPECT_EQ(stop.stopped_epoch, 4);
}

TEST(CallbacksEarlyStopping, UnknownDirectionNeedsAMode) {
    EXPECT_THROW(EarlyStopping("val_f1"), Error);
    EXPECT_NO_THROW(EarlyStopping("val_f1", 0, 0, "max"));
}

TEST(CallbacksEarlyStopping, RestoresTheBestEpochsWeightsInAFit) {
    const LabeledData iris = load_iris();
    // Reference: the weights after each epoch, from fits of 1..5 epochs.
    std::vector<std::vector<Tensor>> after;
    for (int64_t e = 1; e <= 5; ++e) {
        Sequential m = small_model();
        FitOptions o;
        o.epochs = e, o.verbose = 0, o.shuffle = false;
        m.fit(iris.x, iris.y, o);
        after.push_back(m.get_weights());
    }
    // Scripted monitor: best at epoch 1 (0-based), via a callback that writes logs the stopper reads.
    Sequential model = small_model();
    EarlyStopping stop("scripted", 0.0, 10, "min", true);
    struct Script : Callback {
        EarlyStopping* stop;
        void on_epoch_end(int64_t epoch, const Logs&) override {
            const double values[] = {3, 1, 2, 2, 2};
            stop->on_epoch_end(epoch, {{"scripted", values[epoch]}});
        }
        void on_train_end(const Logs& logs) override { stop->on_train_end(logs); }
    } script;
    script.stop = &stop;
    stop.model = &model;
    stop.on_train_begin();
    FitOptions o;
    o.epochs = 5, o.verbose = 0, o.shuffle = false, o.callbacks = {&script};
    model.fit(iris.x, iris.y, o);
    EXPECT_EQ(stop.best_epoch, 1);
    EXPECT_EQ(stop.stopped_epoch, 0);  // never stopped, restored anyway (Keras 3)
    const std::vector<Tensor> got = model.get_weights();
    ASSERT_EQ(got.size(), after[1].size());
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(std::memcmp(got[i].data(), after[1][i].data(), sizeof(float) * got[i].values().size()), 0) << i;
}

TEST(CallbacksEarlyStopping, StopsAFit) {
    const LabeledData iris = load_iris();
    Sequential model = small_model();
    EarlyStopping stop("loss", 100.0, 1);  // nothing improves by 100: stop at epoch 1
    FitOptions o;
    o.epochs = 50, o.verbose = 0, o.callbacks = {&stop};
    const History h = model.fit(iris.x, iris.y, o);
    EXPECT_EQ(h.epoch.size(), 2u);
    EXPECT_EQ(stop.stopped_epoch, 1);
}

// compile, add or fit from a callback would free the running program: each is refused with a
// message, the fit goes on, and after it returns they work again.
TEST(Callbacks, ACallbackCannotRebuildTheModelItIsFitting) {
    const LabeledData iris = load_iris();
    Sequential model = small_model();
    struct Rebuild : Callback {
        const LabeledData* data;
        std::vector<std::string> errors;
        void on_epoch_end(int64_t, const Logs&) override {
            const auto error_of = [&](auto&& f) {
                try {
                    f();
                } catch (const Error& e) {
                    errors.push_back(e.what());
                }
            };
            error_of([&] { model->compile("sgd", "mse"); });
            error_of([&] { model->add(Dense(2)); });
            error_of([&] { model->fit(data->x, data->y); });
        }
    } rebuild;
    rebuild.data = &iris;
    FitOptions o;
    o.epochs = 2, o.verbose = 0, o.callbacks = {&rebuild};
    const History h = model.fit(iris.x, iris.y, o);
    EXPECT_EQ(h.epoch.size(), 2u);
    ASSERT_EQ(rebuild.errors.size(), 6u);
    EXPECT_NE(rebuild.errors[0].find("compile: not while the model is fitting"), std::string::npos) << rebuild.errors[0];
    EXPECT_NE(rebuild.errors[1].find("add: not while"), std::string::npos) << rebuild.errors[1];
    EXPECT_NE(rebuild.errors[2].find("fit: not while"), std::string::npos) << rebuild.errors[2];
    model.compile("sgd", "sparse_categorical_crossentropy");  // after fit: allowed again
    o.callbacks.clear(), o.epochs = 1;
    EXPECT_EQ(model.fit(iris.x, iris.y, o).epoch.size(), 1u);
}

// A callback's messages go where the fit's epoch lines go (FitOptions::out), not to std::cout:
// in Python that is sys.stdout, which a notebook shows.
TEST(Callbacks, MessagesGoWhereTheEpochLinesGo) {
    const LabeledData iris = load_iris();
    Sequential model = small_model();
    EarlyStopping stop("loss", 100.0, 0, "auto", true);  // nothing improves by 100: stop, restore
    stop.verbose = 1;
    std::ostringstream out;
    FitOptions o;
    o.epochs = 5, o.verbose = 2, o.callbacks = {&stop}, o.out = &out;
    model.fit(iris.x, iris.y, o);
    EXPECT_NE(out.str().find("Epoch 2: early stopping"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("Restoring model weights from the end of the best epoch: 1."), std::string::npos);
}

TEST(CallbacksModelCheckpoint, FormatsTheEpochOneBasedWithPadding) {
    ModelCheckpoint a("ckpt/epoch_{epoch:02d}"), b("ckpt/e{epoch}"), c("plain");
    EXPECT_EQ(a.path_for(0), "ckpt/epoch_01");
    EXPECT_EQ(a.path_for(99), "ckpt/epoch_100");
    EXPECT_EQ(b.path_for(6), "ckpt/e7");
    EXPECT_EQ(c.path_for(3), "plain");
    EXPECT_THROW(ModelCheckpoint("x_{epoch:.2f}"), Error);
    EXPECT_THROW(ModelCheckpoint("x_{epoch"), Error);
}

TEST(CallbacksModelCheckpoint, SavesEveryEpochWithItsWeightsAndEpoch) {
    const LabeledData iris = load_iris();
    const std::string dir = test_files::temp_path("_ckpt");
    fs::remove_all(dir);
    fs::create_directories(dir);
    Sequential model = small_model();
    ModelCheckpoint checkpoint(dir + "/e{epoch}");
    FitOptions o;
    o.epochs = 3, o.verbose = 0, o.shuffle = false, o.callbacks = {&checkpoint};
    model.fit(iris.x, iris.y, o);
    for (int64_t e = 1; e <= 3; ++e) EXPECT_EQ(load_training_state(dir + "/e" + std::to_string(e)).epoch, e);
    // The second checkpoint holds the weights of a 2-epoch fit.
    Sequential two = small_model();
    o.epochs = 2, o.callbacks = {};
    two.fit(iris.x, iris.y, o);
    const std::vector<Tensor> want = two.get_weights(), got = load_model(dir + "/e2").get_weights();
    for (size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), sizeof(float) * want[i].values().size()), 0) << i;
}

TEST(CallbacksModelCheckpoint, SaveBestOnlySkipsEpochsThatDoNotImprove) {
    Sequential model = small_model();
    const std::string dir = test_files::temp_path("_best");
    fs::remove_all(dir);
    ModelCheckpoint checkpoint(dir, "val_loss", true);
    checkpoint.model = &model;
    checkpoint.on_epoch_end(0, {{"val_loss", 1.0}});
    EXPECT_EQ(load_training_state(dir).epoch, 1);
    checkpoint.on_epoch_end(1, {{"val_loss", 1.5}});
    EXPECT_EQ(load_training_state(dir).epoch, 1);
    checkpoint.on_epoch_end(2, {{"val_loss", 0.5}});
    EXPECT_EQ(load_training_state(dir).epoch, 3);
    EXPECT_EQ(checkpoint.best, 0.5);
}

TEST(CallbacksCSVLogger, WritesAHeaderWithSortedKeysAndOneRowPerEpoch) {
    const std::string path = test_files::temp_path(".csv");
    CSVLogger log(path);
    log.on_train_begin();
    log.on_epoch_end(0, {{"val_loss", 0.5}, {"loss", 1.0}, {"accuracy", 0.25}});
    log.on_epoch_end(1, {{"val_loss", 0.125}, {"loss", 0.75}, {"accuracy", 0.5}});
    EXPECT_EQ(test_files::read_bytes(path), "epoch,accuracy,loss,val_loss\n0,0.25,1.0,0.5\n1,0.5,0.75,0.125\n");
    CSVLogger more(path, ";", true);  // append: no second header
    more.on_train_begin();
    more.on_epoch_end(2, {{"val_loss", 0.1}, {"loss", 0.5}, {"accuracy", 1.0}});
    EXPECT_EQ(test_files::read_bytes(path),
              "epoch,accuracy,loss,val_loss\n0,0.25,1.0,0.5\n1,0.5,0.75,0.125\n2;1.0;0.5;0.1\n");
    CSVLogger fresh(path);  // append=false starts over
    fresh.on_train_begin();
    EXPECT_EQ(test_files::read_bytes(path), "");
}

}  // namespace
}  // namespace onefit
