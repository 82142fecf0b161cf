// `onefit fit --save/--resume/--checkpoint/--csv-log/--early-stopping-patience`, `onefit
// evaluate` and `onefit predict`, run as a user would run them.
#include <gtest/gtest.h>

#include "support/run_cli.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "onefit/io.hpp"

namespace {

using namespace onefit::testing_support;

namespace fs = std::filesystem;

// Iris, shuffled every epoch, with dropout: the hardest case for an exact resume.
std::vector<std::string> fit_args(int epochs) {
    return {"fit", "--layers", "16:relu,dropout:0.2,3:softmax", "--loss", "sparse_categorical_crossentropy",
            "--metrics", "accuracy", "--shuffle", "--seed", "3", "--verbose", "0", "--epochs", std::to_string(epochs)};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

void expect_same_weights(const std::string& a, const std::string& b) {
    const auto x = onefit::read_safetensors(a + "/model.safetensors"), y = onefit::read_safetensors(b + "/model.safetensors");
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(x[i].first, y[i].first);
        ASSERT_EQ(x[i].second.shape(), y[i].second.shape());
        EXPECT_EQ(std::memcmp(x[i].second.data(), y[i].second.data(), sizeof(float) * x[i].second.values().size()), 0)
            << x[i].first;
    }
}

TEST(CliPersist, TenEpochsSavedThenResumedToTwentyEqualTwentyStraight) {
    const std::string straight = temp_path("straight"), half = temp_path("half"), resumed = temp_path("resumed");
    for (const auto& d : {straight, half, resumed}) fs::remove_all(d);
    const CliResult a = run_cli(with(fit_args(20), {"--save", straight}));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_NE(a.out.find("saved: " + straight + " (epoch 20)"), std::string::npos) << a.out;
    ASSERT_EQ(run_cli(with(fit_args(10), {"--save", half})).exit_code, 0);
    const CliResult c = run_cli(with(fit_args(20), {"--resume", half, "--save", resumed}));
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_NE(c.out.find("resuming " + half + " at epoch 11 of 20"), std::string::npos) << c.out;
    expect_same_weights(straight, resumed);
    EXPECT_EQ(onefit::load_training_state(resumed).epoch, 20);
}

TEST(CliPersist, ResumingAFinishedFitIsAnError) {
    const std::string dir = temp_path("done");
    fs::remove_all(dir);
    ASSERT_EQ(run_cli(with(fit_args(2), {"--save", dir})).exit_code, 0);
    const CliResult r = run_cli(with(fit_args(2), {"--resume", dir}));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("onefit: error: --resume"), std::string::npos) << r.err;
}

TEST(CliPersist, SaveIntoAMissingFolderFailsBeforeTraining) {
    const CliResult r = run_cli(with(fit_args(2), {"--save", "/nonexistent/dir/model"}));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");  // nothing ran
    EXPECT_NE(r.err.find("--save /nonexistent/dir/model: the folder /nonexistent/dir does not exist"), std::string::npos)
        << r.err;
}

TEST(CliPersist, OutputPathsThatCannotBeWrittenFailBeforeTraining) {
    const std::string file = temp_path("a_file"), folder = temp_path("a_folder");
    std::ofstream(file) << "mine";
    fs::create_directories(folder);
    for (const auto& [flags, message] :
         std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--save", file}, "it is a file, not a folder"},
             {{"--csv-log", folder}, "is a folder; give the log's file name"}}) {
        const CliResult r = run_cli(with(fit_args(2), flags));
        EXPECT_EQ(r.exit_code, 2) << flags[0];
        EXPECT_EQ(r.out, "") << "nothing ran: " << r.out;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    }
    EXPECT_EQ(read_file(file), "mine");
    const CliResult e = run_cli({"explain", "--epochs", "1", "--save", folder + "/m"});
    EXPECT_EQ(e.exit_code, 2);
    EXPECT_NE(e.err.find("--save and --resume belong to `onefit fit`"), std::string::npos) << e.err;
    const CliResult report = run_cli({"explain", "--epochs", "1", "--report", "/nonexistent/r.html"});
    EXPECT_EQ(report.exit_code, 2);
    EXPECT_EQ(report.out, "");
    EXPECT_NE(report.err.find("--report /nonexistent/r.html: the folder /nonexistent does not exist"), std::string::npos)
        << report.err;
}

TEST(CliPersist, CheckpointCsvLogAndEarlyStopping) {
    const std::string ckpt = temp_path("ckpt"), csv = temp_path("log.csv");
    fs::remove_all(ckpt);
    fs::create_directories(ckpt);
    const CliResult r = run_cli(with(fit_args(3), {"--checkpoint", ckpt + "/e{epoch:02d}", "--csv-log", csv,
                                                   "--early-stopping-patience", "5"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* e : {"e01", "e02", "e03"}) EXPECT_TRUE(fs::exists(ckpt + "/" + e + "/model.safetensors")) << e;
    const std::string log = read_file(csv);
    EXPECT_EQ(log.substr(0, log.find('\n')), "epoch,accuracy,loss,val_accuracy,val_loss");
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 4);
}

TEST(CliPersist, EvaluateAndPredictASavedModel) {
    const std::string dir = temp_path("model"), out = temp_path("pred.csv");
    fs::remove_all(dir);
    ASSERT_EQ(run_cli(with(fit_args(5), {"--save", dir})).exit_code, 0);
    const CliResult e = run_cli({"evaluate", "--model", dir, "--data", "iris"});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    EXPECT_EQ(e.out.rfind("loss: ", 0), 0u) << e.out;
    EXPECT_NE(e.out.find(" - accuracy: "), std::string::npos) << e.out;

    const CliResult p = run_cli({"predict", "--model", dir, "--data", "iris"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(p.out.substr(0, p.out.find('\n')), "pred_0,pred_1,pred_2");
    EXPECT_EQ(std::count(p.out.begin(), p.out.end(), '\n'), 151);
    ASSERT_EQ(run_cli({"predict", "--model", dir, "--data", "iris", "--output", out}).exit_code, 0);
    EXPECT_EQ(read_file(out), p.out);
}

TEST(CliPersist, NamedClassesAreNumberedAsTheModelLearntThemInEveryLaterFile) {
    // Three named classes, one feature that tells them apart: a model that learnt them scores
    // the same on a file missing one class (numbered by that file alone, its classes shifted).
    std::string all = "a,b,species\n", two = "a,b,species\n", unknown = "a,b,species\n";
    const char* names[] = {"setosa", "versicolor", "virginica"};
    for (int i = 0; i < 60; ++i) {
        const std::string row = std::to_string(i % 3 * 4) + "," + std::to_string(i % 7) + "," + names[i % 3] + "\n";
        all += row;
        if (i % 3 != 0) two += row;
    }
    unknown += "4,1,tulip\n";
    const std::string dir = temp_path("named"), all_csv = temp_path("all.csv"), two_csv = temp_path("two.csv"),
                      unknown_csv = temp_path("unknown.csv");
    fs::remove_all(dir);
    std::ofstream(all_csv) << all;
    std::ofstream(two_csv) << two;
    std::ofstream(unknown_csv) << unknown;
    const CliResult fit = run_cli({"fit", "--data", all_csv, "--layers", "3:softmax", "--loss",
                                   "sparse_categorical_crossentropy", "--metrics", "accuracy", "--lr", "0.1",
                                   "--epochs", "60", "--verbose", "0", "--save", dir});
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
    EXPECT_NE(read_file(dir + "/config.json").find("\"class_names\": [\n    \"setosa\",\n    \"versicolor\""),
              std::string::npos);
    const CliResult e_all = run_cli({"evaluate", "--model", dir, "--data", all_csv});
    const CliResult e_two = run_cli({"evaluate", "--model", dir, "--data", two_csv});
    ASSERT_EQ(e_two.exit_code, 0) << e_two.err;
    EXPECT_NE(e_all.out.find("accuracy: 1.000000"), std::string::npos) << e_all.out;
    EXPECT_NE(e_two.out.find("accuracy: 1.000000"), std::string::npos) << e_two.out;
    const CliResult resumed = run_cli({"fit", "--data", two_csv, "--resume", dir, "--epochs", "61", "--verbose", "0",
                                       "--metrics", "accuracy"});
    EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
    const CliResult bad = run_cli({"evaluate", "--model", dir, "--data", unknown_csv});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("label 'tulip' is not one of the model's classes (setosa, versicolor, virginica)"),
              std::string::npos) << bad.err;
}

TEST(CliPersist, PredictIntoAMissingFolderChangesNothing) {
    const std::string dir = temp_path("model"), missing = temp_path("missing");
    fs::remove_all(dir);
    ASSERT_EQ(run_cli(with(fit_args(1), {"--save", dir})).exit_code, 0);
    const CliResult p = run_cli({"predict", "--model", dir, "--data", "iris", "--output", missing + "/p.csv"});
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_EQ(p.err.rfind("onefit: error: --output", 0), 0u) << p.err;
    EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1);
    EXPECT_FALSE(fs::exists(missing));
}

TEST(CliPersist, EvaluateAMissingModelIsOneLineError) {
    const CliResult e = run_cli({"evaluate", "--model", "/nonexistent/model", "--data", "iris"});
    EXPECT_EQ(e.exit_code, 2);
    EXPECT_EQ(e.err.rfind("onefit: error: /nonexistent/model", 0), 0u) << e.err;
}

TEST(CliPersist, NpyDataNeedsLabels) {
    const CliResult e = run_cli(with(fit_args(1), {"--data", "/nonexistent/x.npy"}));
    EXPECT_EQ(e.exit_code, 2);
    EXPECT_NE(e.err.find("--labels"), std::string::npos) << e.err;
}

}  // namespace

#if ONEFIT_HAVE_KERAS_FILES && ONEFIT_HAVE_ONNX
TEST(CliPersist, AKerasFileSavesPredictsAndExportsAsOnnx) {
    const std::string model = temp_path("m.keras"), onnx = temp_path("m.onnx"), dir = temp_path("folder");
    fs::remove_all(dir);
    ASSERT_EQ(run_cli(with(fit_args(5), {"--save", model})).exit_code, 0);
    ASSERT_EQ(run_cli(with(fit_args(5), {"--save", dir})).exit_code, 0);
    // The same fit saved either way predicts the same.
    const CliResult from_file = run_cli({"predict", "--model", model, "--data", "iris"});
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    EXPECT_EQ(from_file.out, run_cli({"predict", "--model", dir, "--data", "iris"}).out);
    const CliResult e = run_cli({"export", "--model", model, "--onnx", onnx});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    EXPECT_EQ(e.out, "exported: " + onnx + "\n");
    EXPECT_GT(fs::file_size(onnx), 0u);
    // Bad input: one line naming what is wrong, exit 2.
    const CliResult missing = run_cli({"export", "--model", temp_path("nothing.keras"), "--onnx", onnx});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("nothing.keras"), std::string::npos) << missing.err;
    EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
    const CliResult nowhere = run_cli({"export", "--model", dir, "--onnx", "/no/such/folder/m.onnx"});
    EXPECT_EQ(nowhere.exit_code, 2);
    EXPECT_NE(nowhere.err.find("/no/such/folder"), std::string::npos) << nowhere.err;
    for (const std::string& p : {model, onnx}) fs::remove(p);
    fs::remove_all(dir);
}
#endif
