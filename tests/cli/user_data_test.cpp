// `onefit fit` on a user's own data: what a flag left out means there (Keras's defaults, not the
// seed's), the loss chosen from the labels, the one real conflict (--test-size with
// --validation-split), the seed run unchanged, and --resume refusing flags the saved model fixes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "explain/format.hpp"
#include "onefit/device.hpp"
#include "support/run_cli.hpp"

namespace onefit {
namespace {

using namespace testing_support;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// 300 rows, 4 features, labels 0, 1, 2 in turn (class k centred on k), header a,b,c,d,target.
std::string classes_csv() {
    const std::string path = temp_path("classes.csv");
    std::ofstream out(path);
    out << "a,b,c,d,target\n";
    for (int i = 0; i < 300; ++i) {
        const int k = i % 3;
        for (int c = 0; c < 4; ++c) out << k + 0.3 * std::sin(i * 1.7 + c) << ",";
        out << k << "\n";
    }
    return path;
}

// y = 0.5 x1 + 0.1 over 100 rows: not classes.
std::string regression_csv() {
    const std::string path = temp_path("regression.csv");
    std::ofstream out(path);
    out << "x1,x2,y\n";
    for (int i = 0; i < 100; ++i) out << i / 100.0 << "," << (i * 7 % 13) / 13.0 << "," << 0.5 * i / 100.0 + 0.1 << "\n";
    return path;
}

// The "onefit: DATA (...)" line that says what trains.
std::string run_line(const std::string& out) {
    for (size_t at = 0; (at = out.find("onefit: ", at)) != std::string::npos; ++at)
        if (out.compare(at, 13, "onefit: loss ") != 0 && out.compare(at, 17, "onefit: resuming ") != 0)
            return out.substr(at, out.find('\n', at) - at);
    return "";
}

TEST(CliUserData, ValidationSplitAloneWorksWithKerasDefaults) {
    const CliResult r = run_cli({"fit", "--data", classes_csv(), "--label", "target", "--layers", "32:relu,3:softmax",
                                 "--validation-split", "0.2", "--metrics", "accuracy", "--verbose", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Keras's validation_split: the last 20 % validate; Adam at its Keras rate; batch 32.
    EXPECT_TRUE(contains(run_line(r.out), "(240 train / 60 validation rows), 4-32-3, adam(lr=0.001)"));
    EXPECT_TRUE(contains(run_line(r.out), "sparse_categorical_crossentropy, metrics accuracy, batch 32, 20 epochs"));
    EXPECT_TRUE(contains(r.out, "onefit: loss sparse_categorical_crossentropy (integer class labels and a 3-unit "
                                "softmax output"));
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // none of the seed's mistakes
}

TEST(CliUserData, NoTestSplitUnlessAskedFor) {
    const CliResult r = run_cli({"fit", "--data", classes_csv(), "--verbose", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(run_line(r.out), "(300 train rows, no validation)"));
    const CliResult split = run_cli({"fit", "--data", classes_csv(), "--test-size", "0.3", "--verbose", "0"});
    ASSERT_EQ(split.exit_code, 0) << split.err;
    EXPECT_TRUE(contains(run_line(split.out), "(210 train / 90 validation rows)"));
}

TEST(CliUserData, TestSizeWithValidationSplitIsTheOneConflict) {
    const CliResult r = run_cli({"fit", "--data", classes_csv(), "--test-size", "0.2", "--validation-split", "0.2"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "not both"));
    // On the built-in iris too, --validation-split alone replaces the seed's test split.
    const CliResult iris = run_cli({"fit", "--validation-split", "0.2", "--verbose", "0"});
    ASSERT_EQ(iris.exit_code, 0) << iris.err;
    EXPECT_TRUE(contains(run_line(iris.out), "iris (120 train / 30 validation rows)"));
}

TEST(CliUserData, LossFollowsTheLabelsAndTheLastLayer) {
    const CliResult regression = run_cli({"fit", "--data", regression_csv(), "--layers", "8:relu,1", "--verbose", "0"});
    ASSERT_EQ(regression.exit_code, 0) << regression.err;
    EXPECT_TRUE(contains(regression.out, "onefit: loss mean_squared_error"));

    // 0/1 labels and one sigmoid unit: binary crossentropy.
    const std::string binary = temp_path("binary.csv");
    {
        std::ofstream out(binary);
        out << "x,label\n";
        for (int i = 0; i < 40; ++i) out << i / 40.0 << "," << (i % 2) << "\n";
    }
    const CliResult b = run_cli({"fit", "--data", binary, "--layers", "4:relu,1:sigmoid", "--verbose", "0"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_TRUE(contains(b.out, "onefit: loss binary_crossentropy (0/1 labels and a 1-unit sigmoid output"));

    // A given loss is used as given, and nothing is chosen.
    const CliResult given = run_cli({"fit", "--data", regression_csv(), "--layers", "8:relu,1", "--loss", "mae",
                                     "--lr", "0.01", "--verbose", "0"});
    ASSERT_EQ(given.exit_code, 0) << given.err;
    EXPECT_EQ(given.out.find("onefit: loss "), std::string::npos) << given.out;
    EXPECT_TRUE(contains(run_line(given.out), "adam(lr=0.01), mean_absolute_error"));
}

TEST(CliUserData, ShufflingIsOnUnlessTurnedOff) {
    const std::string data = classes_csv();
    auto final_line = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"fit", "--data", data, "--epochs", "3", "--verbose", "0"};
        args.insert(args.end(), extra.begin(), extra.end());
        const CliResult r = run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out.substr(r.out.find("final:"), r.out.find('\n', r.out.find("final:")) - r.out.find("final:"));
    };
    const std::string by_default = final_line({});
    EXPECT_EQ(by_default, final_line({"--shuffle"}));
    EXPECT_NE(by_default, final_line({"--no-shuffle"}));
}

TEST(CliUserData, TheSeedRunIsUnchangedWithoutArguments) {
    const CliResult bare = run_cli({"fit", "--verbose", "0"});
    const CliResult config = run_cli({"fit", "examples/iris.json", "--verbose", "0"});
    ASSERT_EQ(bare.exit_code, 0) << bare.err;
    EXPECT_EQ(run_line(bare.out),
              "onefit: iris (105 train / 45 validation rows), 4-32-3, adam(lr=0.1), log_cosh, batch 20, 20 epochs");
    EXPECT_EQ(bare.out.substr(0, bare.out.find("Time:")), config.out.substr(0, config.out.find("Time:")));
    EXPECT_EQ(bare.err, config.err);  // the seed's two warnings, on purpose
}

TEST(CliUserData, ProfileSaysHowManyBytesWereReadAndHowFast) {
    const std::string data = classes_csv();
    const CliResult r = run_cli({"fit", "--data", data, "--profile", "--verbose", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double bytes = static_cast<double>(std::filesystem::file_size(data));
    EXPECT_TRUE(contains(r.out, "reading and splitting " + explain_format::si(bytes, "B") + " of files at "));
    // The built-in iris reads no file.
    const CliResult iris = run_cli({"fit", "--profile", "--verbose", "0"});
    EXPECT_TRUE(contains(iris.out, "reading and splitting the data (command line)"));
}

TEST(CliUserData, ProfileNamesTheSimdTargetAndForLargeLayersTheGemmLibraries) {
    const CliResult iris = run_cli({"fit", "--profile", "--verbose", "0"});
    ASSERT_EQ(iris.exit_code, 0) << iris.err;
    EXPECT_TRUE(contains(iris.out, "CPU kernels: SIMD " + cpu_simd_target() + "\n"));  // tiny layers: no GEMM
    const CliResult large = run_cli({"fit", "--data", classes_csv(), "--label", "target", "--layers", "300:relu,3:softmax", "--epochs", "1",
                                     "--profile", "--verbose", "0"});
    ASSERT_EQ(large.exit_code, 0) << large.err;
    EXPECT_TRUE(contains(large.out, "CPU kernels: SIMD " + cpu_simd_target() + "; GEMM NN small: "));
}

TEST(CliResume, FlagsThatDisagreeWithTheSavedModelAreRefused) {
    const std::string dir = temp_path("saved");
    std::filesystem::remove_all(dir);
    ASSERT_EQ(run_cli({"fit", "--epochs", "2", "--verbose", "0", "--save", dir}).exit_code, 0);
    const CliResult layers = run_cli({"fit", "--epochs", "4", "--verbose", "0", "--resume", dir, "--layers", "8:relu,3:softmax"});
    EXPECT_EQ(layers.exit_code, 2);
    EXPECT_TRUE(contains(layers.err, "the saved model is 4-32-3 (32 relu, 3 softmax) but the layers given are 4-8-3"));
    const CliResult loss = run_cli({"fit", "--epochs", "4", "--verbose", "0", "--resume", dir, "--loss", "mse"});
    EXPECT_EQ(loss.exit_code, 2);
    EXPECT_TRUE(contains(loss.err, "the saved model's loss is log_cosh but the loss given is mse"));
    const CliResult lr = run_cli({"fit", "--epochs", "4", "--verbose", "0", "--resume", dir, "--lr", "0.5"});
    EXPECT_EQ(lr.exit_code, 2);
    EXPECT_TRUE(contains(lr.err, "the saved learning rate is 0.1 but the learning rate given is 0.5"));
    // Nothing given that disagrees: it resumes, and the header shows the model that trains.
    const CliResult same = run_cli({"fit", "--epochs", "4", "--verbose", "0", "--resume", dir, "--layers", "32:relu,3:softmax"});
    ASSERT_EQ(same.exit_code, 0) << same.err;
    EXPECT_TRUE(contains(run_line(same.out), "4-32-3, adam(lr=0.1), log_cosh"));
    std::filesystem::remove_all(dir);
}

TEST(CliResume, TheHeaderShowsTheSavedModelOnUserData) {
    // On a user's data the defaults would be Keras's; a resumed fit still trains (and shows) the saved model.
    const std::string dir = temp_path("saved"), data = classes_csv();
    std::filesystem::remove_all(dir);
    ASSERT_EQ(run_cli({"fit", "--data", data, "--layers", "16:relu,3:softmax", "--lr", "0.01", "--epochs", "1",
                       "--verbose", "0", "--save", dir})
                  .exit_code,
              0);
    const CliResult r = run_cli({"fit", "--data", data, "--epochs", "2", "--verbose", "0", "--resume", dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(run_line(r.out), "4-16-3, adam(lr=0.01), sparse_categorical_crossentropy"));
    EXPECT_EQ(r.out.find("onefit: loss "), std::string::npos) << r.out;  // the saved loss, not a new choice
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace onefit
