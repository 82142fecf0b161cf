// save_ensemble / load_ensemble / predict_ensemble: members come back as saved, predictions are
// their mean, a new save replaces the old one whole, and a damaged ensemble.json is refused with
// an Error naming the file and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/test_files.hpp"
#include "support/weights.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

namespace fs = std::filesystem;
using test_files::error_of;

Sequential member(uint64_t seed, int64_t units = 8) {
    Sequential m({4}, seed);
    m.add(Dense(units, "relu")).add(Dense(3, "softmax"));
    m.compile(Adam(0.01f), loss_from_name("sparse_categorical_crossentropy"));
    return m;
}

// Sequential moves but does not copy: no initializer lists.
std::vector<Sequential> members_of(std::initializer_list<uint64_t> seeds) {
    std::vector<Sequential> out;
    for (uint64_t seed : seeds) out.push_back(member(seed, 4 + static_cast<int64_t>(seed)));
    return out;
}

std::string fresh_dir() {
    const std::string dir = test_files::temp_path("_ensemble");
    fs::remove_all(dir);
    return dir;
}

TEST(Ensemble, MembersComeBackAndPredictTheirMean) {
    const LabeledData iris = load_iris();
    std::vector<Sequential> members = members_of({1, 2, 3});
    FitOptions o;
    o.batch_size = 30, o.epochs = 2, o.verbose = 0;
    for (Sequential& m : members) m.fit(iris.x, iris.y, o);
    const std::string dir = fresh_dir();
    save_ensemble(members, dir);
    ASSERT_TRUE(is_ensemble(dir));
    std::vector<Sequential> loaded = load_ensemble(dir);
    ASSERT_EQ(loaded.size(), 3u);
    for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(testing_support::same_bits(loaded[k].get_weights(), members[k].get_weights()));
    const Tensor mean = predict_ensemble(loaded, iris.x);
    const Tensor a = members[0].predict(iris.x), b = members[1].predict(iris.x), c = members[2].predict(iris.x);
    ASSERT_EQ(mean.shape(), a.shape());
    for (int64_t i = 0; i < mean.size(); ++i)
        EXPECT_EQ(mean[i], static_cast<float>((double(a[i]) + double(b[i]) + double(c[i])) / 3.0)) << i;
    EXPECT_FALSE(is_ensemble(test_files::temp_path("_not_there")));
}

TEST(Ensemble, EvaluateIsTheLossAndMetricsOfTheMeanPrediction) {
    // Three softmax classifiers (sparse crossentropy, accuracy): by hand from the mean prediction,
    // Keras's crossentropy of probabilities (normalised, clipped to [1e-7, 1 - 1e-7]) and argmax
    // accuracy; then an elementwise loss (mse, mae) the same way.
    const LabeledData iris = load_iris();
    FitOptions o;
    o.batch_size = 30, o.epochs = 3, o.verbose = 0;
    std::vector<Sequential> members;
    for (uint64_t seed : {1, 2, 3}) {
        Sequential m({4}, seed);
        m.add(Dense(4 + static_cast<int64_t>(seed), "relu")).add(Dense(3, "softmax"));
        m.compile(Adam(0.05f), loss_from_name("sparse_categorical_crossentropy"), CompileOptions{{"accuracy"}});
        m.fit(iris.x, iris.y, o);
        members.push_back(std::move(m));
    }
    const Tensor mean = predict_ensemble(members, iris.x);
    double loss = 0, correct = 0;
    for (int64_t r = 0; r < mean.rows(); ++r) {
        const double s = double(mean.at(r, 0)) + double(mean.at(r, 1)) + double(mean.at(r, 2));
        const int64_t label = static_cast<int64_t>(iris.y[r]);
        loss -= std::log(std::clamp(double(mean.at(r, label)) / s, 1e-7, 1 - 1e-7));
        int64_t best = 0;
        for (int64_t k = 1; k < 3; ++k) best = mean.at(r, k) > mean.at(r, best) ? k : best;
        correct += best == label;
    }
    const Logs logs = evaluate_ensemble(members, iris.x, iris.y);
    EXPECT_NEAR(logs.at("loss"), loss / 150.0, 1e-12 * loss);
    EXPECT_DOUBLE_EQ(logs.at("accuracy"), correct / 150.0);
    // One member: its own evaluate, up to the fused softmax's rounding (evaluate takes logits).
    std::vector<Sequential> one;
    one.push_back(std::move(members[0]));
    EXPECT_NEAR(evaluate_ensemble(one, iris.x, iris.y).at("loss"), one[0].evaluate(iris.x, iris.y).at("loss"), 1e-5);

    // mse with mae: one-hot targets against the mean of two members.
    Tensor one_hot({150, 3});
    for (int64_t r = 0; r < 150; ++r) one_hot.data()[r * 3 + static_cast<int64_t>(iris.y[r])] = 1;
    std::vector<Sequential> regressors;
    for (uint64_t seed : {4, 5}) {
        Sequential m({4}, seed);
        m.add(Dense(6, "tanh")).add(Dense(3));
        m.compile(Adam(0.05f), loss_from_name("mse"), CompileOptions{{"mae"}});
        m.fit(iris.x, one_hot, o);
        regressors.push_back(std::move(m));
    }
    const Tensor average = predict_ensemble(regressors, iris.x);
    double squared = 0, absolute = 0;
    for (int64_t i = 0; i < average.size(); ++i) {
        const double d = double(average[i]) - double(one_hot[i]);
        squared += d * d, absolute += std::abs(d);
    }
    const Logs mse = evaluate_ensemble(regressors, iris.x, one_hot);
    EXPECT_NEAR(mse.at("loss"), squared / 450.0, 1e-12);
    EXPECT_NEAR(mse.at("mae"), absolute / 450.0, 1e-12);

    // Members compiled differently have no one loss; predictions of the wrong width are refused.
    regressors[1].compile(Adam(0.05f), loss_from_name("mae"), CompileOptions{{"mae"}});
    EXPECT_NE(error_of([&] { evaluate_ensemble(regressors, iris.x, one_hot); }).find("member 2 is compiled with"),
              std::string::npos);
    EXPECT_THROW(regressors[0].evaluate_predictions(Tensor({150, 2}), one_hot), Error);
}

TEST(Ensemble, ANewSaveReplacesTheOldOneWhole) {
    const std::string dir = fresh_dir();
    save_ensemble(members_of({1, 2, 3}), dir);
    save_ensemble(members_of({4}), dir);
    std::vector<Sequential> loaded = load_ensemble(dir);
    ASSERT_EQ(loaded.size(), 1u);
    EXPECT_TRUE(testing_support::same_bits(loaded[0].get_weights(), member(4, 8).get_weights()));
    int folders = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) folders += e.is_directory();
    EXPECT_EQ(folders, 1);  // the first save's members are gone
    EXPECT_THROW(save_ensemble({}, dir), Error);
}

TEST(Ensemble, ADamagedIndexIsRefusedNamingTheFileAndField) {
    const std::string dir = fresh_dir();
    save_ensemble(members_of({1, 2}), dir);
    const std::string index = dir + "/ensemble.json";
    const auto with = [&](const std::string& text) {
        std::ofstream(index, std::ios::trunc) << text;
        return error_of([&] { load_ensemble(dir); });
    };
    EXPECT_NE(with("{").find("ensemble.json: not valid JSON"), std::string::npos);
    EXPECT_NE(with(R"({"format": "onefit-model", "format_version": 1, "members": ["a"]})").find("\"format\""),
              std::string::npos);
    EXPECT_NE(with(R"({"format": "onefit-ensemble", "format_version": 2, "members": ["a"]})").find("format_version"),
              std::string::npos);
    EXPECT_NE(with(R"({"format": "onefit-ensemble", "format_version": 1, "members": []})").find("\"members\""),
              std::string::npos);
    EXPECT_NE(with(R"({"format": "onefit-ensemble", "format_version": 1, "members": ["../x"]})").find("inside"),
              std::string::npos);
    EXPECT_NE(with(R"({"format": "onefit-ensemble", "format_version": 1, "members": ["missing"]})").find("missing"),
              std::string::npos);
}

}  // namespace
}  // namespace onefit
