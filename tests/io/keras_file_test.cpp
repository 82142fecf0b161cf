// Keras 3 files from C++: a .keras round trip keeps the layers, weights, optimizer settings and
// state, so training goes on bit for bit; .weights.h5 moves weights between models; damaged or
// foreign files are refused with an Error naming the file. (Parity with Keras itself: python/tests.)
#include <gtest/gtest.h>

#include <filesystem>

#include "core/rng.hpp"
#include "support/resumable_fit.hpp"
#include "support/test_files.hpp"
#include "onefit/onefit.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

using test_files::error_of;
namespace fs = std::filesystem;

Tensor random_tensor(Shape shape, uint64_t seed) {
    Tensor t(std::move(shape));
    Rng rng(seed);
    for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = rng.uniform_float();
    return t;
}

void expect_same_weights(const Sequential& a, const Sequential& b) {
    const std::vector<Tensor> wa = a.get_weights(), wb = b.get_weights();
    ASSERT_EQ(wa.size(), wb.size());
    for (size_t i = 0; i < wa.size(); ++i) {
        ASSERT_EQ(wa[i].shape(), wb[i].shape()) << "array " << i;
        for (int64_t k = 0; k < wa[i].size(); ++k) ASSERT_EQ(wa[i].data()[k], wb[i].data()[k]) << "array " << i;
    }
}

TEST(KerasFile, RoundTripKeepsOptimizerStateAndTrainsOnBitForBit) {
    for (const Optimizer& optimizer : {Adam(0.01f, 0.9f, 0.999f, 1e-7f, true), SGD(0.05f, 0.9f, true),
                                       [] { Optimizer o = optimizer_from_name("rmsprop"); o.momentum = 0.5f; o.centered = true; return o; }(),
                                       optimizer_from_name("adagrad")}) {
        SCOPED_TRACE(optimizer_name(optimizer.kind));
        Sequential model({4}, 3);
        model.add(Dense(16, "relu")).add(Dense(3, "softmax"));
        model.compile(optimizer, loss_from_name("categorical_crossentropy"), CompileOptions{{"accuracy"}});
        const Tensor x = random_tensor({32, 4}, 1);
        Tensor y({32, 3});
        for (int64_t i = 0; i < 32; ++i) y.at(i, i % 3) = 1.0f;
        FitOptions o;
        o.epochs = 2, o.batch_size = 8, o.verbose = 0, o.shuffle = false;
        model.fit(x, y, o);
        const std::string path = test_files::temp_path(".keras");
        save_keras(model, path);
        Sequential loaded = load_model(path);  // load_model reads .keras paths too
        expect_same_weights(model, loaded);
        EXPECT_EQ(loaded.optimizer().kind, optimizer.kind);
        EXPECT_EQ(loaded.program().optimizer_step, model.program().optimizer_step);
        EXPECT_EQ(loaded.program().optimizer_slots, model.program().optimizer_slots);
        EXPECT_EQ(loaded.metrics(), model.metrics());
        model.fit(x, y, o);
        loaded.fit(x, y, o);
        expect_same_weights(model, loaded);
        fs::remove(path);
    }
}

TEST(KerasFile, GraphAndImageLayersRoundTrip) {
    Node in = Input({6, 6, 2});
    Node c = Conv2D(4, 3, 1, "same", "relu")(in);
    Node b = BatchNormalization()(c);
    Node a = make_layer("add")({b, Conv2D(4, 1)(in)});
    Node p = MaxPooling2D(2)(a);
    Node f = Flatten()(p);
    Node out = Dense(3, "softmax")(make_layer("concatenate")({f, Dense(5, "tanh")(f)}));
    Sequential model = Model(in, out, 7);
    const std::string path = test_files::temp_path(".keras");
    save_keras(model, path);
    Sequential loaded = load_keras(path);
    ASSERT_EQ(loaded.layers().size(), model.layers().size());
    const Tensor x = random_tensor({5, 72}, 2);
    const Tensor pa = model.predict(x), pb = loaded.predict(x);
    ASSERT_EQ(pa.size(), pb.size());
    for (int64_t i = 0; i < pa.size(); ++i) EXPECT_FLOAT_EQ(pa.data()[i], pb.data()[i]);
    fs::remove(path);
}

TEST(KerasFile, TheModelsNameIsKeptByBothFormatsAndDefaultsByKind) {
    Sequential chain({3}, 1);
    chain.add(Dense(2));
    Node in = Input({3});
    Sequential graph = Model(in, make_layer("add")({Dense(2)(in), Dense(2)(in)}), 2);
    EXPECT_EQ(chain.display_name(), "sequential");
    EXPECT_EQ(graph.display_name(), "functional");
    EXPECT_NE(chain.summary().find("Model: \"sequential\""), std::string::npos);
    for (Sequential* model : {&chain, &graph}) {
        const std::string keras = test_files::temp_path(".keras"), folder = test_files::temp_path("");
        save_keras(*model, keras);
        save_model(*model, folder);
        EXPECT_EQ(load_keras(keras).display_name(), model->display_name());
        EXPECT_TRUE(load_model(folder).name.empty());  // the default is not written
        model->name = "iris_classifier";
        save_keras(*model, keras);
        save_model(*model, folder);
        EXPECT_EQ(load_keras(keras).name, "iris_classifier");
        EXPECT_EQ(load_model(folder).name, "iris_classifier");
        EXPECT_NE(load_model(folder).summary().find("Model: \"iris_classifier\""), std::string::npos);
        fs::remove(keras);
        fs::remove_all(folder);
    }
}

TEST(KerasFile, WeightsFileMovesWeightsBetweenModels) {
    Sequential a({4}, 1), b({4}, 2);
    for (Sequential* m : {&a, &b}) m->add(Dense(8, "relu")).add(Dropout(0.1f)).add(Dense(2));
    const std::string path = test_files::temp_path(".weights.h5");
    save_weights_h5(a, path);
    load_weights_h5(b, path);
    expect_same_weights(a, b);
    Sequential other({4});
    other.add(Dense(8)).add(Dense(2)).add(Dense(2));
    EXPECT_NE(error_of([&] { load_weights_h5(other, path); }).find("holds 0 arrays"), std::string::npos);
    fs::remove(path);
}

TEST(KerasFile, ModelCheckpointWithSaveWeightsOnlyWritesTheEpochsWeightsFile) {
    const std::string dir = test_files::temp_path("_weights_ckpt");
    fs::create_directories(dir);
    const auto model_of = [](uint64_t seed) {
        Sequential m({4}, seed);
        m.add(Dense(6, "relu")).add(Dense(3, "softmax"));
        m.compile("adam", "categorical_crossentropy");
        return m;
    };
    Sequential model = model_of(4);
    const Tensor x = random_tensor({24, 4}, 3);
    Tensor y({24, 3});
    for (int64_t i = 0; i < 24; ++i) y.at(i, i % 3) = 1.0f;
    ModelCheckpoint checkpoint(dir + "/e{epoch}.weights.h5", "loss", false, "auto", 0, true);
    FitOptions o;
    o.epochs = 2, o.batch_size = 8, o.verbose = 0, o.shuffle = false, o.callbacks = {&checkpoint};
    model.fit(x, y, o);
    EXPECT_EQ(checkpoint.last_saved, dir + "/e2.weights.h5");
    Sequential other = model_of(9);
    load_weights_h5(other, dir + "/e2.weights.h5");
    expect_same_weights(model, other);
    load_weights_h5(other, dir + "/e1.weights.h5");  // the first epoch's weights differ from the second's
    EXPECT_NE(other.get_weights()[0].values(), model.get_weights()[0].values());
    EXPECT_NE(error_of([] { ModelCheckpoint("ckpt.keras", "loss", false, "auto", 0, true); }).find("must end in .weights.h5"),
              std::string::npos);
    fs::remove_all(dir);
}

TEST(KerasFile, DamagedOrForeignFilesAreRefusedNamingTheFile) {
    const std::string junk = test_files::write_bytes("this is not a zip archive at all, just text", ".keras");
    EXPECT_NE(error_of([&] { load_keras(junk); }).find("is not a zip archive"), std::string::npos);
    Sequential empty({4});
    empty.add(Dense(2));
    EXPECT_NE(error_of([&] { load_weights_h5(empty, junk); }).find("is not an HDF5 file"), std::string::npos);
    Sequential model({4});
    model.add(Dense(3));
    const std::string path = test_files::temp_path("_cut.keras");
    save_keras(model, path);
    const std::string bytes = test_files::read_bytes(path);
    const std::string cut = test_files::write_bytes(bytes.substr(0, bytes.size() / 2), "_half.keras");
    const std::string message = error_of([&] { load_keras(cut); });
    EXPECT_NE(message.find(cut), std::string::npos) << message;
    for (const std::string& p : {junk, path, cut}) fs::remove(p);
}

}  // namespace
}  // namespace onefit
