// End-to-end tests of the onefit command line: each runs the built binary, captures stdout,
// stderr and the exit status, and checks what a user would see.
#include <gtest/gtest.h>

#include "onefit/onefit.hpp"
#include "support/run_cli.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace onefit::testing_support;

std::string write_file(const std::string& name, const std::string& contents) {
    const std::string path = temp_path(name);
    std::ofstream(path, std::ios::binary) << contents;
    return path;
}

// The line of `text` starting with `prefix`, or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix, 0) == 0) return line;
    return "";
}

double final_value(const std::string& out, const std::string& key) {
    std::smatch m;
    const std::string final_line = line_starting(out, "final:");
    if (!std::regex_search(final_line, m, std::regex(" " + key + " ([-0-9.e+]+)"))) return -1.0;
    return std::stod(m[1]);
}

// Exit status 2 and exactly one line on stderr: "onefit: error: ...", naming `must_contain`.
void expect_one_line_error(const CliResult& r, const std::string& must_contain) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("onefit: error: ", 0), 0u) << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_NE(r.err.find(must_contain), std::string::npos) << "missing '" << must_contain << "' in: " << r.err;
}

constexpr const char* kBroadcastWarning = "sparse_categorical_crossentropy";  // train/checks.cpp check_labels
constexpr const char* kCoverageWarning = "without shuffling";               // check_class_coverage

}  // namespace

// The seed experiment through the library (examples/iris.json's settings, the rows in order).
onefit::History library_seed_fit() {
    using namespace onefit;
    const LabeledData iris = load_iris();
    const TrainTestSplit data = train_test_split(iris.x, iris.y, 0.30, false);
    Sequential model({4}, 0);
    model.add(Dense(32, "relu", true, "relu")).add(Dense(3, "softmax", true, "softmax"));
    model.compile(Adam(0.1f), loss_from_name("log_cosh"));
    FitOptions o;
    o.batch_size = 20;
    o.epochs = 20;
    o.shuffle = false;
    o.seed = 0;
    o.verbose = 0;
    o.validation_data = {data.x_test, data.y_test};
    return model.fit(data.x_train, data.y_train, o);
}

TEST(CliFit, SilentSeedRunPrintsFinalValLossAndTime) {
    const CliResult r = run_cli({"fit", "--verbose", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("Epoch"), std::string::npos);
    // The final losses are the library's for the same fit, to the 4 decimals printed.
    const onefit::History h = library_seed_fit();
    EXPECT_NEAR(final_value(r.out, "val_loss"), h["val_loss"].back(), 0.5e-4 + 1e-12) << r.out;
    EXPECT_NEAR(final_value(r.out, "loss"), h["loss"].back(), 0.5e-4 + 1e-12) << r.out;
    // 20 epochs of ceil(105 / 20) = 6 steps.
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nTime: [0-9.]+ s \([0-9.]+ us/step, 120 steps\)\n)"))) << r.out;
    EXPECT_NE(r.out.find("iris (105 train / 45 validation rows), 4-32-3, adam(lr=0.1), log_cosh"), std::string::npos);
}

TEST(CliFit, SeedRunPrintsEpochLinesAndBothWarnings) {
    const CliResult r = run_cli({"fit"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Epoch 20/20"), std::string::npos);
    EXPECT_NE(r.err.find(kBroadcastWarning), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(kCoverageWarning), std::string::npos) << r.err;
}

TEST(CliFit, SilentRunStillPrintsWarnings) {
    const CliResult r = run_cli({"fit", "--verbose", "0"});
    EXPECT_NE(r.err.find(kBroadcastWarning), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(kCoverageWarning), std::string::npos) << r.err;
}

TEST(CliFit, IrisJsonExampleIsTheSeedRun) {
    const CliResult seed = run_cli({"fit", "--verbose", "0"});
    const CliResult example = run_cli({"fit", "examples/iris.json", "--verbose", "0"});
    ASSERT_EQ(example.exit_code, 0) << example.err;
    EXPECT_EQ(line_starting(example.out, "final:"), line_starting(seed.out, "final:"));
    EXPECT_EQ(line_starting(example.out, "onefit:"), line_starting(seed.out, "onefit:"));
}

TEST(CliFit, IrisFixedExampleReaches95PercentWithoutWarnings) {
    const CliResult r = run_cli({"fit", "examples/iris_fixed.json", "--verbose", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GE(final_value(r.out, "val_accuracy"), 0.95) << line_starting(r.out, "final:");
    EXPECT_EQ(r.err.find(kBroadcastWarning), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(kCoverageWarning), std::string::npos) << r.err;
}

TEST(CliFit, FlagsOverrideTheConfig) {
    const CliResult r = run_cli({"fit", "examples/iris.json", "--epochs", "3", "--batch-size", "35", "--verbose", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Epoch 3/3"), std::string::npos);
    EXPECT_EQ(r.out.find("Epoch 4/"), std::string::npos);
    EXPECT_NE(r.out.find(", 9 steps)"), std::string::npos) << r.out;  // 3 epochs of ceil(105 / 35)
}

TEST(CliFit, AConfigsOptimizerTakesAKerasScheduleAndClipping) {
    const auto config = [](const std::string& name, const std::string& optimizer) {
        return write_file(name, R"({"compile": {"optimizer": )" + optimizer + "}}");
    };
    const CliResult constant = run_cli({"fit", config("constant.json", R"({"name": "adam", "learning_rate": 0.1})"), "--verbose", "0"});
    // A schedule that stays at its initial rate trains exactly as that constant rate does.
    const CliResult flat = run_cli({"fit", config("flat.json", R"({"name": "adam", "learning_rate": {"class_name":
        "ExponentialDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 1.0}}})"),
                                    "--verbose", "0"});
    const CliResult decayed = run_cli({"fit", config("decayed.json", R"({"name": "adam", "learning_rate": {"class_name":
        "ExponentialDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5,
        "name": "ExponentialDecay"}}})"), "--verbose", "0"});
    ASSERT_EQ(flat.exit_code, 0) << flat.err;
    ASSERT_EQ(decayed.exit_code, 0) << decayed.err;
    EXPECT_NE(decayed.out.find("adam(lr=ExponentialDecay from 0.1)"), std::string::npos) << decayed.out;
    EXPECT_EQ(line_starting(flat.out, "final:"), line_starting(constant.out, "final:"));
    EXPECT_NE(line_starting(decayed.out, "final:"), line_starting(constant.out, "final:"));
    // (SGD: Adam's step hardly changes when every gradient is scaled alike.)
    const CliResult sgd = run_cli({"fit", config("sgd.json", R"({"name": "sgd", "learning_rate": 0.1})"), "--verbose", "0"});
    const CliResult clipped = run_cli({"fit", config("clipped.json", R"({"name": "sgd", "learning_rate": 0.1,
        "clipnorm": 0.01})"), "--verbose", "0"});
    ASSERT_EQ(clipped.exit_code, 0) << clipped.err;
    EXPECT_NE(line_starting(clipped.out, "final:"), line_starting(sgd.out, "final:"));
    expect_one_line_error(run_cli({"fit", config("bad_schedule.json", R"({"name": "adam", "learning_rate": {"class_name":
        "ExponentialDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": 0, "decay_rate": 0.5}}})")}),
                          "'compile.optimizer.learning_rate': ExponentialDecay: Argument `decay_steps` must be > 0");
    expect_one_line_error(run_cli({"fit", config("two_clips.json", R"({"name": "adam", "clipnorm": 1, "clipvalue": 1})")}),
                          "clip");
}

TEST(CliFit, ValidationSplitAppliesWhenTestSizeIsZero) {
    const CliResult r = run_cli({"fit", "--test-size", "0", "--validation-split", "0.2", "--verbose", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("(120 train / 30 validation rows)"), std::string::npos) << r.out;
    EXPECT_GE(final_value(r.out, "val_loss"), 0.0);
}

TEST(CliFit, TrainsOnACsvNamedByAConfigNextToIt) {
    std::string csv = "x1,x2,kind\n";
    for (int i = 0; i < 40; ++i)
        csv += std::to_string(i % 2 ? 1.0 + 0.01 * i : -1.0 - 0.01 * i) + "," + std::to_string(0.5) + "," +
               (i % 2 ? "cat" : "dog") + "\n";
    const std::string csv_path = write_file("data.csv", csv);
    const std::string csv_name = csv_path.substr(csv_path.rfind('/') + 1);
    const std::string config = write_file("config.json", R"({"data": {"source": ")" + csv_name +
                                                             R"(", "label": "kind", "test_size": 0.3, "shuffle_split": true},
        "model": {"layers": [{"units": 8, "activation": "relu"}, {"type": "dropout", "rate": 0.1},
                             {"units": 2, "activation": "softmax"}]},
        "compile": {"loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"],
                    "optimizer": {"name": "adam", "learning_rate": 0.05}},
        "fit": {"epochs": 30, "batch_size": 8, "verbose": 0}})");
    const CliResult r = run_cli({"fit", config});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2-8-dropout(0.1)-2"), std::string::npos) << r.out;
    EXPECT_GE(final_value(r.out, "val_accuracy"), 0.9) << r.out;
}

TEST(CliFit, LayersFlagBuildsTheModel) {
    const CliResult r = run_cli({"fit", "--layers", "16:tanh,dropout:0.2,3:softmax", "--loss",
                                 "sparse_categorical_crossentropy", "--metrics", "accuracy,mae", "--verbose", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("4-16-dropout(0.2)-3"), std::string::npos) << r.out;
    EXPECT_GE(final_value(r.out, "val_mae"), 0.0) << r.out;
}

TEST(CliFit, AConfigsLayersMayNameTheirInputs) {
    // A Functional graph in the config file: a residual Add and a Concatenate with the input, saved
    // with its inputs; an unknown input name is one line naming the key.
    const std::string config = write_file("graph.json", R"({"model": {"layers": [
        {"units": 8, "activation": "relu"}, {"units": 8, "name": "branch"},
        {"type": "add", "inputs": ["dense", "branch"]}, {"type": "concatenate", "inputs": ["add", "input"]},
        {"units": 3, "activation": "softmax"}]}, "fit": {"epochs": 5, "verbose": 0}})");
    const std::string saved = testing::TempDir() + "/cli_graph_model";
    const CliResult r = run_cli({"fit", config, "--save", saved});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_file(saved + "/config.json").find(R"("inputs": [)"), std::string::npos);
    const std::string bad = write_file("bad_graph.json", R"({"model": {"layers": [
        {"units": 8}, {"type": "add", "inputs": ["dense", "nowhere"]}, {"units": 3}]}})");
    expect_one_line_error(run_cli({"fit", bad}), "model.layers[1].inputs");
}

TEST(CliFit, AConfigsModelMayTakeSeveralInputs) {
    // Iris's 4 features as two inputs of 2 (petal and sepal), each through its own layer, then
    // merged: fitted, saved with its inputs, and a width that does not add up is one line.
    const std::string config = write_file("two_inputs.json", R"({"model": {"inputs": [[2], 2], "layers": [
        {"units": 8, "activation": "relu"}, {"units": 8, "activation": "relu", "inputs": ["input_1"]},
        {"type": "concatenate", "inputs": ["dense", "dense_1"]}, {"units": 3, "activation": "softmax"}]},
        "fit": {"epochs": 5, "verbose": 0}})");
    const std::string saved = testing::TempDir() + "/cli_two_inputs";
    const CliResult r = run_cli({"fit", config, "--save", saved});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(onefit::load_model(saved).input_shapes(), (std::vector<onefit::Shape>{{2}, {2}}));
    const std::string other = write_file("other_inputs.json", R"({"model": {"inputs": [3, 1]}, "fit": {"epochs": 6}})");
    expect_one_line_error(run_cli({"fit", other, "--resume", saved}), "inputs of other shapes than model.inputs gives");
    const std::string wide = write_file("three_inputs.json", R"({"model": {"inputs": [2, 3], "layers": [
        {"units": 3, "activation": "softmax"}, {"units": 3, "inputs": ["input_1"]}, {"type": "add", "inputs": ["dense", "dense_1"]}]}})");
    expect_one_line_error(run_cli({"fit", wide}), "model.inputs take 5 values per row, but the data has 4 features");
}

TEST(CliFit, AConfigsLayerMayBeCalledAgainOnAnotherInput) {
    // A siamese encoder: one layer on both halves of Iris's features ("shares" names it), fitted,
    // saved with its one set of weights and loaded; a call of no earlier layer is one line.
    const std::string config = write_file("shared.json", R"({"model": {"inputs": [2, 2], "layers": [
        {"units": 6, "activation": "tanh", "name": "encoder"}, {"shares": "encoder", "inputs": ["input_1"]},
        {"type": "concatenate", "inputs": ["encoder", "encoder@1"]}, {"units": 3, "activation": "softmax"}]},
        "fit": {"epochs": 5, "verbose": 0}})");
    const std::string saved = testing::TempDir() + "/cli_shared_layer";
    const CliResult r = run_cli({"fit", config, "--save", saved});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const onefit::Sequential loaded = onefit::load_model(saved);
    EXPECT_EQ(loaded.layers()[1].shares, 0);
    EXPECT_EQ(loaded.get_weights().size(), 4u);
    const std::string bad = write_file("bad_shared.json", R"({"model": {"inputs": [2, 2], "layers": [
        {"units": 6}, {"shares": "encoder", "inputs": ["input_1"]}, {"units": 3}]}})");
    expect_one_line_error(run_cli({"fit", bad}), "model.layers[1].shares");
}

TEST(CliHelp, HelpAndVersionExitZero) {
    const CliResult help = run_cli({"--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("fit"), std::string::npos);
    const CliResult fit_help = run_cli({"fit", "--help"});
    EXPECT_EQ(fit_help.exit_code, 0);
    EXPECT_NE(fit_help.out.find("--layers"), std::string::npos);
    EXPECT_NE(fit_help.out.find("Examples:"), std::string::npos);
    const CliResult version = run_cli({"--version"});
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_EQ(version.out.rfind("onefit ", 0), 0u);
}

TEST(CliErrors, NoCommandOrUnknownCommand) {
    expect_one_line_error(run_cli({}), "onefit fit");
    expect_one_line_error(run_cli({"train"}), "train");
}

TEST(CliErrors, UnknownFlag) { expect_one_line_error(run_cli({"fit", "--epocs", "3"}), "--epocs"); }

TEST(CliErrors, AFlagTypoSuggestsTheFlagItMeant) {
    expect_one_line_error(run_cli({"fit", "--epocs", "3"}), "(did you mean --epochs?)");
    expect_one_line_error(run_cli({"fit", "--batchsize=4"}), "(did you mean --batch-size?)");
    // Nothing close: no guess, the pointer to the help instead.
    const CliResult r = run_cli({"fit", "--zzzzzz"});
    expect_one_line_error(r, "see onefit --help");
    EXPECT_EQ(r.err.find("did you mean"), std::string::npos);
}

TEST(CliErrors, BadFlagValues) {
    expect_one_line_error(run_cli({"fit", "--epochs", "many"}), "--epochs");
    expect_one_line_error(run_cli({"fit", "--epochs", "0"}), "--epochs");
    expect_one_line_error(run_cli({"fit", "--verbose", "3"}), "--verbose");
    expect_one_line_error(run_cli({"fit", "--lr", "-1"}), "--lr");
    expect_one_line_error(run_cli({"fit", "--layers", "32:relux,3:softmax"}), "relux");
    expect_one_line_error(run_cli({"fit", "--metrics", "accuracy,f1"}), "f1");
    expect_one_line_error(run_cli({"fit", "--optimizer", "adamm"}), "adamm");
}

TEST(CliErrors, UnknownLoss) {
    expect_one_line_error(run_cli({"fit", "--loss", "cross_entropy"}), "cross_entropy");
    const std::string config = write_file("loss.json", R"({"compile": {"loss": "logcoshh"}})");
    expect_one_line_error(run_cli({"fit", config}), "compile.loss");
}

TEST(CliErrors, ConfigKeysAreChecked) {
    const std::string typo = write_file("typo.json", R"({"compile": {"optimiser": "adam"}})");
    expect_one_line_error(run_cli({"fit", typo}), "unknown key 'compile.optimiser'");
    const std::string type = write_file("type.json", R"({"fit": {"epochs": "20"}})");
    expect_one_line_error(run_cli({"fit", type}), "'fit.epochs' must be an integer");
    const std::string huge = write_file("huge.json", R"({"fit": {"epochs": 1e300}})");
    expect_one_line_error(run_cli({"fit", huge}), "fit.epochs");
    const std::string layer = write_file("layer.json", R"({"model": {"layers": [{"units": 3, "activation": "soft"}]}})");
    expect_one_line_error(run_cli({"fit", layer}), "model.layers[0].activation");
}

TEST(CliErrors, MalformedJson) {
    const std::string path = write_file("bad.json", "{\"fit\": {\"epochs\": 20,}");
    expect_one_line_error(run_cli({"fit", path}), path);
    const std::string empty = write_file("empty.json", "");
    expect_one_line_error(run_cli({"fit", empty}), empty);
    std::string junk;
    for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 131 + 7) % 256);
    const std::string binary = write_file("junk.json", junk);
    expect_one_line_error(run_cli({"fit", binary}), binary);
    expect_one_line_error(run_cli({"fit", "--data", binary}), binary);
}

TEST(CliErrors, MissingFiles) {
    const std::string config = temp_path("absent.json");
    expect_one_line_error(run_cli({"fit", config}), config);
    const std::string csv = temp_path("absent.csv");
    expect_one_line_error(run_cli({"fit", "--data", csv}), csv);
}

TEST(CliErrors, RaggedCsv) {
    const std::string path = write_file("ragged.csv", "a,b,label\n1,2,0\n3,4\n");
    expect_one_line_error(run_cli({"fit", "--data", path}), path + ":3");
}

TEST(CliErrors, NonNumericCsv) {
    const std::string path = write_file("text.csv", "a,b,label\n1,2,0\n3,four,1\n");
    expect_one_line_error(run_cli({"fit", "--data", path}), path + ":3");
}

TEST(CliErrors, EmptyCsv) {
    const std::string path = write_file("empty.csv", "");
    expect_one_line_error(run_cli({"fit", "--data", path}), path);
}

TEST(CliErrors, LabelOutOfRange) {
    std::string csv = "a,b,label\n";
    for (int i = 0; i < 20; ++i) csv += std::to_string(i) + ",1," + std::to_string(i % 5) + "\n";
    const std::string path = write_file("five_classes.csv", csv);
    // The default model predicts 3 classes; labels 3 and 4 do not fit.
    expect_one_line_error(run_cli({"fit", "--data", path, "--loss", "sparse_categorical_crossentropy"}), path);
    expect_one_line_error(run_cli({"fit", "--data", path, "--label", "7"}), path);
}
