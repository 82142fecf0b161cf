// save_model / load_model: a round trip predicts the same, resumes training bit for bit, and
// every damaged file is refused with an Error naming the file and field.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/rng.hpp"
#include "support/resumable_fit.hpp"
#include "support/test_files.hpp"
#include "support/weights.hpp"
#include "onefit/onefit.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

using test_files::error_of;
using test_files::read_bytes;
namespace fs = std::filesystem;

std::string fresh_dir(const std::string& suffix = "_model") {
    const std::string dir = test_files::temp_path(suffix);
    fs::remove_all(dir);
    return dir;
}

Sequential iris_model(uint64_t seed = 11) { return testing_support::shuffled_dropout_model(seed); }
FitOptions options(int64_t epochs, int64_t initial_epoch = 0) {
    return testing_support::shuffled_fit_options(epochs, initial_epoch);
}


void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Replaces the first `from` in a file by `to`.
void edit(const std::string& path, const std::string& from, const std::string& to) {
    std::string text = read_bytes(path);
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in " << path;
    write_text(path, text.replace(at, from.size(), to));
}

TEST(ModelIo, RoundTripGivesIdenticalPredictions) {
    const LabeledData iris = load_iris();
    Sequential model = iris_model();
    model.fit(iris.x, iris.y, options(3));
    const std::string dir = fresh_dir();
    save_model(model, dir, 3, 5);
    Sequential loaded = load_model(dir);
    EXPECT_TRUE(testing_support::same_bits(model.get_weights(), loaded.get_weights()));
    const Tensor a = model.predict(iris.x), b = loaded.predict(iris.x);
    ASSERT_EQ(a.shape(), b.shape());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<size_t>(a.size())), 0);
    EXPECT_EQ(loaded.program().optimizer_step, model.program().optimizer_step);
    EXPECT_EQ(loaded.program().optimizer_slots, model.program().optimizer_slots);
    EXPECT_EQ(loaded.program().metric_names, std::vector<std::string>{"accuracy"});
    const TrainingState state = load_training_state(dir);
    EXPECT_EQ(state.epoch, 3);
    EXPECT_EQ(state.fit_seed, 5u);
    EXPECT_EQ(state.optimizer_step, 3 * 10);  // 150 rows in batches of 16
}

TEST(ModelIo, KeepsTheWholeConfigurationAndLayerNames) {
    Sequential model({3}, 42);
    model.add(Dense(5, "tanh", false, "hidden")).add(Dense(2, "linear"));
    Optimizer opt = RMSprop(0.003f, 0.8f, 0.5f, 1e-6f, true);
    Loss loss = loss_from_name("huber");
    loss.delta = 0.25f;
    model.compile(opt, loss, CompileOptions{{"mae", "mse"}});
    const std::string dir = fresh_dir();
    model.save(dir);
    Sequential loaded = load_model(dir);
    EXPECT_EQ(loaded.seed(), 42u);
    ASSERT_EQ(loaded.layers().size(), 2u);
    EXPECT_EQ(loaded.layers()[0].name, "hidden");
    EXPECT_EQ(loaded.layers()[1].name, "dense");
    EXPECT_FALSE(loaded.layers()[0].use_bias);
    EXPECT_EQ(loaded.layers()[0].activation, Activation::tanh);
    const TrainingProgram& p = loaded.program();
    EXPECT_EQ(p.optimizer.kind, OptimizerKind::rmsprop);
    EXPECT_EQ(p.optimizer.learning_rate, 0.003f);
    EXPECT_EQ(p.optimizer.rho, 0.8f);
    EXPECT_EQ(p.optimizer.momentum, 0.5f);
    EXPECT_EQ(p.optimizer.epsilon, 1e-6f);
    EXPECT_TRUE(p.optimizer.centered);
    EXPECT_EQ(p.loss.kind, LossKind::huber);
    EXPECT_EQ(p.loss.delta, 0.25f);
    EXPECT_EQ(p.metric_names, (std::vector<std::string>{"mae", "mse"}));
    EXPECT_TRUE(testing_support::same_bits(model.get_weights(), loaded.get_weights()));
    EXPECT_EQ(load_training_state(dir).epoch, -1);  // saved without an epoch
    // config.json keeps floats readable: 0.003, not 0.0030000000260770321.
    EXPECT_NE(read_bytes(dir + "/config.json").find("\"learning_rate\": 0.003,"), std::string::npos);
}

TEST(ModelIo, AnUncompiledModelSavesArchitectureAndWeights) {
    Sequential model({4}, 3);
    model.add(Dense(2, "relu"));
    const std::string dir = fresh_dir();
    save_model(model, dir);
    Sequential loaded = load_model(dir);
    EXPECT_TRUE(testing_support::same_bits(model.get_weights(), loaded.get_weights()));
    EXPECT_THROW(loaded.program(), Error);
}

TEST(ModelIo, SavingAgainReplacesTheSaveAndKeepsOtherFiles) {
    const LabeledData iris = load_iris();
    Sequential model = iris_model();
    const std::string dir = fresh_dir();
    save_model(model, dir, 0);
    write_text(dir + "/notes.txt", "mine");
    model.fit(iris.x, iris.y, options(1));
    save_model(model, dir, 1);
    EXPECT_TRUE(testing_support::same_bits(load_model(dir).get_weights(), model.get_weights()));
    EXPECT_EQ(read_bytes(dir + "/notes.txt"), "mine");
    const std::string prefix = "." + fs::path(dir).filename().string() + ".saving.";
    for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))  // no temporary folder left
        EXPECT_NE(entry.path().filename().string().rfind(prefix, 0), 0u) << entry.path();
}

TEST(ModelIo, SavingIntoAUsersFolderKeepsItsDotfilesSubfoldersAndPermissions) {
    Sequential model = iris_model();
    for (const bool subfolder : {false, true}) {  // swapped in whole; replaced file by file
        const std::string dir = fresh_dir(subfolder ? "_project_git" : "_project");
        fs::create_directory(dir);
        ::chmod(dir.c_str(), 0700);
        write_text(dir + "/.env", "SECRET=1");
        write_text(dir + "/data.csv", "1,2");
        if (subfolder) fs::create_directories(dir + "/.git/objects"), write_text(dir + "/.git/HEAD", "ref");
        save_model(model, dir, 0);
        save_model(model, dir, 1);
        EXPECT_EQ(read_bytes(dir + "/.env"), "SECRET=1") << subfolder;
        EXPECT_EQ(read_bytes(dir + "/data.csv"), "1,2") << subfolder;
        if (subfolder) {
            EXPECT_EQ(read_bytes(dir + "/.git/HEAD"), "ref");
        }
        struct stat st {};
        ASSERT_EQ(::stat(dir.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0700u) << subfolder;
        EXPECT_EQ(load_training_state(dir).epoch, 1);
        const std::string aside = "." + fs::path(dir).filename().string() + ".saving.";  // nothing moved aside
        for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))
            EXPECT_NE(entry.path().filename().string().rfind(aside, 0), 0u) << entry.path();
    }
}

TEST(ModelIo, SavingOverAnEnsembleOrAnotherProgramsConfigIsRefused) {
    Sequential model = iris_model();
    const std::string ensemble = fresh_dir("_ensemble");
    std::vector<Sequential> members;
    members.push_back(iris_model()), members.push_back(iris_model(12));
    save_ensemble(members, ensemble);
    const std::string error = error_of([&] { save_model(model, ensemble); });
    EXPECT_NE(error.find("holds an ensemble (ensemble.json)"), std::string::npos) << error;
    EXPECT_EQ(load_ensemble(ensemble).size(), 2u);

    const std::string foreign = fresh_dir("_foreign");
    fs::create_directory(foreign);
    write_text(foreign + "/config.json", "{\"epochs\": 3}");
    const std::string refused = error_of([&] { save_model(model, foreign); });
    EXPECT_NE(refused.find("is not a onefit model's config.json"), std::string::npos) << refused;
    EXPECT_EQ(read_bytes(foreign + "/config.json"), "{\"epochs\": 3}");
    EXPECT_NO_THROW(check_model_folder(fresh_dir("_new")));
}

// The acceptance test of resuming: 20 epochs straight == 10, save, load, 10 more (shuffle, dropout).
TEST(ModelIo, TenEpochsSavedLoadedAndResumedEqualTwentyStraight) {
    const LabeledData iris = load_iris();
    Sequential straight = iris_model();
    straight.fit(iris.x, iris.y, options(20));

    Sequential first = iris_model();
    first.fit(iris.x, iris.y, options(10));
    const std::string dir = fresh_dir();
    save_model(first, dir, 10, 5);

    Sequential resumed = load_model(dir);
    const TrainingState state = load_training_state(dir);
    FitOptions o = options(20, state.epoch);
    o.seed = state.fit_seed;
    resumed.fit(iris.x, iris.y, o);
    EXPECT_TRUE(testing_support::same_bits(straight.get_weights(), resumed.get_weights()));
}

// A small convnet on 6x6 two-channel images: every image layer saved (config and weights under
// Keras's names), loaded, and resumed bit for bit.
Sequential small_convnet() {
    Sequential model({6, 6, 2}, 3);
    model.add(Conv2D(4, {3, 2}, {1, 1}, "same", "relu", true, "features"));
    model.add(MaxPooling2D({2, 2}, {2, 1}, "valid"));
    model.add(AveragePooling2D(2, 1, "same"));
    model.add(Conv2D(3, 1, 1, "valid", "tanh", false));
    model.add(Reshape({-1, 3}));
    model.add(Flatten());
    model.add(Dropout(0.25f));
    model.add(Dense(3, "softmax"));
    model.compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
    return model;
}

TEST(ModelIo, ImageLayersRoundTripAndResumeBitForBit) {
    Rng rng(5);
    Tensor x({40, 6, 6, 2}), y({40});
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng.uniform_double());
    for (int64_t i = 0; i < 40; ++i) y[i] = static_cast<float>(i % 3);
    FitOptions o;
    o.batch_size = 8, o.epochs = 4, o.verbose = 0, o.seed = 9;
    testing_support::expect_saved_and_resumed_bit_for_bit(small_convnet, x, y, o, fresh_dir(), [](const std::string& dir) {
        const std::string config = read_bytes(dir + "/config.json");
        for (const char* key : {"\"conv2d\"", "\"max_pooling2d\"", "\"average_pooling2d\"", "\"reshape\"",
                                "\"flatten\"", "\"kernel_size\"", "\"target_shape\"", "\"input_shape\": [\n    6,"})
            EXPECT_NE(config.find(key), std::string::npos) << key;
        std::map<std::string, std::string> meta;
        const auto tensors = read_safetensors(dir + "/model.safetensors", &meta);
        ASSERT_EQ(tensors.size(), 5u);
        EXPECT_EQ(tensors[0].first, "features/kernel");
        EXPECT_EQ(tensors[0].second.shape(), (Shape{3, 2, 2, 4}));
    });
}

TEST(ModelIo, WithoutTheOptimizerStateResumingDiffers) {
    // The check above has teeth: dropping Adam's slots and step changes the result.
    const LabeledData iris = load_iris();
    Sequential straight = iris_model();
    straight.fit(iris.x, iris.y, options(20));
    Sequential first = iris_model();
    first.fit(iris.x, iris.y, options(10));
    Sequential fresh = iris_model();
    fresh.set_weights(first.get_weights());
    fresh.fit(iris.x, iris.y, options(20, 10));
    EXPECT_FALSE(testing_support::same_bits(straight.get_weights(), fresh.get_weights()));
}

TEST(ModelIo, PythonSafetensorsReadsTheWeights) {
    ASSERT_TRUE(test_files::python_has("import safetensors.numpy"));
    Sequential model = iris_model();
    const std::string dir = fresh_dir();
    save_model(model, dir);
    const std::vector<Tensor> w = model.get_weights();
    // Python prints every value with repr; the test compares them as floats.
    const std::string out = test_files::temp_path("_values.txt");
    const std::string script =
        "import sys, safetensors.numpy as st\n"
        "t = st.load_file(sys.argv[1] + '/model.safetensors')\n"
        "with open(sys.argv[2], 'w') as f:\n"
        "    for k in ['dense/kernel', 'dense/bias', 'dense_1/kernel', 'dense_1/bias']:\n"
        "        a = t[k]\n"
        "        f.write(k + ' ' + str(a.dtype) + ' ' + 'x'.join(map(str, a.shape)) + ' ' + "
        "' '.join(repr(float(v)) for v in a.ravel()) + '\\n')\n";
    const std::string script_path = test_files::write_bytes(script, "_check.py");
    ASSERT_EQ(std::system((test_files::python() + " " + script_path + " " + dir + " " + out).c_str()), 0);
    std::ifstream in(out);
    for (size_t i = 0; i < w.size(); ++i) {
        std::string name, dtype, shape;
        in >> name >> dtype >> shape;
        EXPECT_EQ(dtype, "float32") << name;
        std::string expected_shape;
        for (int64_t d : w[i].shape()) expected_shape.append(expected_shape.empty() ? "" : "x").append(std::to_string(d));
        EXPECT_EQ(shape, expected_shape) << name;
        for (int64_t j = 0; j < w[i].size(); ++j) {
            double v = 0;
            in >> v;
            ASSERT_EQ(static_cast<float>(v), w[i][j]) << name << " element " << j;
        }
    }
}

// ---- Refused saves ----

class ModelIoErrors : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fresh_dir();
        Sequential model = iris_model();
        save_model(model, dir, 0);
    }
    std::string error() { return error_of([&] { load_model(dir); }); }
    std::string dir;
};

TEST_F(ModelIoErrors, MissingFolder) { EXPECT_NE(error_of([] { load_model("/nonexistent/model"); }).find("/nonexistent/model"), std::string::npos); }

TEST_F(ModelIoErrors, MissingWeightsFileIsNamed) {
    fs::remove(dir + "/model.safetensors");
    EXPECT_NE(error().find("model.safetensors"), std::string::npos);
}

TEST_F(ModelIoErrors, MissingStateFileIsNamed) {
    fs::remove(dir + "/state.json");
    EXPECT_NE(error().find("state.json"), std::string::npos);
}

TEST_F(ModelIoErrors, UnknownFormat) {
    edit(dir + "/config.json", "\"onefit-model\"", "\"keras\"");
    const std::string e = error();
    EXPECT_NE(e.find("config.json"), std::string::npos);
    EXPECT_NE(e.find("'format'"), std::string::npos);
}

TEST_F(ModelIoErrors, NewerFormatVersion) {
    edit(dir + "/config.json", "\"format_version\": 1", "\"format_version\": 2");
    EXPECT_NE(error().find("'format_version' is 2"), std::string::npos);
}

TEST_F(ModelIoErrors, MalformedJson) {
    edit(dir + "/config.json", "\"layers\":", "\"layers\"");
    const std::string e = error();
    EXPECT_NE(e.find("config.json: malformed JSON"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST_F(ModelIoErrors, WrongTypeNamesTheField) {
    edit(dir + "/config.json", "\"units\": 16", "\"units\": \"16\"");
    EXPECT_NE(error().find("'layers[0].units' must be an integer"), std::string::npos);
}

TEST_F(ModelIoErrors, ShapeMismatchNamesTheLayer) {
    edit(dir + "/config.json", "\"units\": 16", "\"units\": 17");
    const std::string e = error();
    EXPECT_NE(e.find("model.safetensors"), std::string::npos) << e;
    EXPECT_NE(e.find("layer 'dense'"), std::string::npos) << e;
    EXPECT_NE(e.find("(4, 17)"), std::string::npos) << e;
}

TEST_F(ModelIoErrors, OptimizerSlotsOfAnotherOptimizer) {
    edit(dir + "/config.json", "\"name\": \"adam\"", "\"name\": \"adagrad\"");
    const std::string e = error();
    EXPECT_NE(e.find("optimizer.safetensors"), std::string::npos) << e;
    EXPECT_NE(e.find("adagrad"), std::string::npos) << e;
}

TEST_F(ModelIoErrors, FilesOfDifferentSavesAreNotMixed) {
    const std::string other = fresh_dir("_other");
    Sequential model = iris_model(12);
    save_model(model, other, 0);
    fs::copy_file(other + "/state.json", dir + "/state.json", fs::copy_options::overwrite_existing);
    const std::string e = error();
    EXPECT_NE(e.find("state.json"), std::string::npos) << e;
    EXPECT_NE(e.find("interrupted"), std::string::npos) << e;
}

TEST_F(ModelIoErrors, TruncatedWeights) {
    const std::string bytes = read_bytes(dir + "/model.safetensors");
    write_text(dir + "/model.safetensors", bytes.substr(0, bytes.size() - 4));
    EXPECT_NE(error().find("model.safetensors"), std::string::npos);
}

TEST_F(ModelIoErrors, SavingIntoAMissingParentChangesNothing) {
    Sequential model = iris_model();
    const std::string e = error_of([&] { save_model(model, dir + "/missing/parent/model"); });
    EXPECT_NE(e.find("does not exist"), std::string::npos) << e;
    EXPECT_FALSE(fs::exists(dir + "/missing"));
}

}  // namespace
}  // namespace onefit
