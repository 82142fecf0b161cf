// `onefit sweep`: each member's history is the library's fit of that configuration (the seed
// experiment at that learning rate and seed), members ranked by val_loss; bad grids exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "onefit/onefit.hpp"
#include "support/run_cli.hpp"
#include "support/weights.hpp"

namespace {

using namespace onefit::testing_support;

// The seed experiment (its config's defaults) at a learning rate and seed, and optionally
// another hidden width, optimizer and batch size.
onefit::History seed_experiment(float learning_rate, uint64_t seed, int64_t units = 32, const std::string& optimizer = "adam",
                                int64_t batch_size = 20) {
    using namespace onefit;
    const LabeledData iris = load_iris();
    const TrainTestSplit data = train_test_split(iris.x, iris.y, 0.30, false);
    Sequential model({4}, seed);
    model.add(Dense(units, "relu")).add(Dense(3, "softmax"));
    model.compile(optimizer_from_name(optimizer, learning_rate), loss_from_name("log_cosh"));
    FitOptions o;
    o.batch_size = batch_size, o.epochs = 20, o.shuffle = false, o.verbose = 0;
    o.validation_data = {data.x_test, data.y_test};
    return model.fit(data.x_train, data.y_train, o);
}

TEST(CliSweep, EachMemberIsTheLibrarysFitOfItsConfigurationRankedByValLoss) {
    const CliResult r = run_cli({"sweep", "--grid", "learning_rate=0.01,0.1", "--grid", "seed=3..4", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json out = nlohmann::json::parse(r.out);
    ASSERT_EQ(out["members"].size(), 4u);
    double previous = -1;
    for (const nlohmann::json& m : out["members"]) {
        const onefit::History h = seed_experiment(m["learning_rate"].get<float>(), m["seed"].get<uint64_t>());
        EXPECT_EQ(m["history"]["loss"].get<std::vector<double>>(), h["loss"]);
        EXPECT_EQ(m["history"]["val_loss"].get<std::vector<double>>(), h["val_loss"]);
        const double val_loss = m["logs"]["val_loss"].get<double>();
        EXPECT_GE(val_loss, previous);  // ranked, best first
        previous = val_loss;
    }
    const CliResult text = run_cli({"sweep", "--grid", "seed=0..9", "--top", "3"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("10 members on iris"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("\n    3  "), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("\n    4  "), std::string::npos) << text.out;
}

TEST(CliSweep, CsvRowsAreTheRankedMembersAndTextSummarisesEachRateOverItsSeeds) {
    const CliResult r = run_cli({"sweep", "--grid", "learning_rate=0.01,0.1", "--grid", "seed=3..5", "--csv"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> lines;
    for (size_t start = 0, end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1)
        lines.push_back(r.out.substr(start, end - start));
    ASSERT_EQ(lines.size(), 7u) << r.out;
    EXPECT_EQ(lines[0], "rank,learning_rate,seed,optimizer,loss_function,units,dropout,batch_size,epochs,loss,val_loss");
    double previous = -1;
    for (size_t i = 1; i < lines.size(); ++i) {
        float rate = 0;
        unsigned long long seed = 0;
        size_t rank = 0, batch = 0, epochs = 0;
        double loss = 0, val_loss = 0;
        ASSERT_EQ(std::sscanf(lines[i].c_str(), "%zu,%g,%llu,adam,log_cosh,,,%zu,%zu,%lg,%lg", &rank, &rate, &seed, &batch, &epochs,
                              &loss, &val_loss),
                  7)
            << lines[i];
        EXPECT_EQ(rank, i);
        EXPECT_EQ(batch, 20u);
        EXPECT_EQ(epochs, 20u);
        const onefit::History h = seed_experiment(rate, seed);
        EXPECT_NEAR(val_loss, h["val_loss"].back(), 1e-8 * std::abs(val_loss));  // %.9g
        EXPECT_GE(val_loss, previous);
        previous = val_loss;
    }
    const CliResult text = run_cli({"sweep", "--grid", "learning_rate=0.01,0.1", "--grid", "seed=3..5"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("by learning_rate, the last val_loss over seeds"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("(3 seeds)"), std::string::npos) << text.out;
    EXPECT_EQ(run_cli({"sweep", "--json", "--csv"}).exit_code, 2);
}

TEST(CliSweep, RandomMembersDrawLearningRatesFromTheRange) {
    const CliResult r = run_cli({"sweep", "--random", "6", "--range", "learning_rate=0.001:0.1:log", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json out = nlohmann::json::parse(r.out);
    ASSERT_EQ(out["members"].size(), 6u);
    std::set<float> rates;
    std::set<uint64_t> seeds;
    for (const nlohmann::json& m : out["members"]) {
        const float rate = m["learning_rate"].get<float>();
        EXPECT_GE(rate, 0.001f);
        EXPECT_LE(rate, 0.1f);
        rates.insert(rate), seeds.insert(m["seed"].get<uint64_t>());
        EXPECT_EQ(m["history"]["val_loss"].get<std::vector<double>>(), seed_experiment(rate, m["seed"].get<uint64_t>())["val_loss"]);
    }
    EXPECT_EQ(rates.size(), 6u);
    EXPECT_EQ(seeds, (std::set<uint64_t>{0, 1, 2, 3, 4, 5}));  // from the config's seed (0) up
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"sweep", "--random", "3"}, {"sweep", "--random", "3", "--range", "learning_rate=0:0.1:log"},
          {"sweep", "--random", "3", "--range", "units=1:2"}, {"sweep", "--range", "learning_rate=0.1:1"},
          {"sweep", "--random", "3", "--range", "learning_rate=0.1:1", "--grid", "seed=1..2"}}) {
        const CliResult bad = run_cli(args);
        EXPECT_EQ(bad.exit_code, 2) << args.back();
        EXPECT_NE(bad.err.find("onefit: error:"), std::string::npos) << bad.err;
    }
}

TEST(CliSweep, KFoldRanksConfigurationsByTheirMeanOverFoldsAndSavesTheBestRefitted) {
    // The seed's config: 5 stratified folds of its 105 training rows (its 45 test rows held out);
    // each member is the library's fit on its fold; --save-best trains the best configuration
    // again on every training row.
    using namespace onefit;
    const std::string dir = temp_path("best");
    const CliResult r = run_cli({"sweep", "--grid", "learning_rate=0.01,0.1", "--kfold", "5", "--save-best", dir, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("saved: " + dir), std::string::npos) << r.err;  // stderr: stdout is the JSON
    const nlohmann::json out = nlohmann::json::parse(r.out);
    ASSERT_EQ(out["members"].size(), 10u);
    const LabeledData all = load_iris();
    const TrainTestSplit iris = train_test_split(all.x, all.y, 0.30, false);
    std::vector<int64_t> classes;
    for (int64_t i = 0; i < iris.y_train.rows(); ++i) classes.push_back(static_cast<int64_t>(iris.y_train[i]));
    const std::vector<int64_t> assignment = stratified_kfold_assignment(classes, 5);
    FitOptions o;
    o.batch_size = 20, o.epochs = 20, o.shuffle = false, o.verbose = 0;
    double mean[2] = {0, 0};
    for (size_t i = 0; i < 10; ++i) {
        const nlohmann::json& m = out["members"][i];
        EXPECT_EQ(m["fold"].get<int64_t>(), static_cast<int64_t>(i % 5));  // a configuration's folds together
        EXPECT_EQ(m["learning_rate"], out["members"][i - i % 5]["learning_rate"]);
        const TrainTestSplit s = fold_split(iris.x_train, iris.y_train, assignment, m["fold"].get<int64_t>());
        Sequential model({4}, 0);
        model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
        model.compile(Adam(m["learning_rate"].get<float>()), loss_from_name("log_cosh"));
        FitOptions fold = o;
        fold.validation_data = {s.x_test, s.y_test};
        EXPECT_EQ(m["history"]["val_loss"].get<std::vector<double>>(), model.fit(s.x_train, s.y_train, fold)["val_loss"]);
        mean[i / 5] += m["logs"]["val_loss"].get<double>() / 5;
    }
    EXPECT_LE(mean[0], mean[1]);  // ranked by the mean over folds, best first
    Sequential best({4}, 0);
    best.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    best.compile(Adam(out["members"][0]["learning_rate"].get<float>()), loss_from_name("log_cosh"));
    best.fit(iris.x_train, iris.y_train, o);
    EXPECT_TRUE(same_bits(load_model(dir).get_weights(), best.get_weights()));

    const CliResult text = run_cli({"sweep", "--grid", "learning_rate=0.01,0.1", "--grid", "seed=1..2", "--kfold", "3"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("12 members (4 configurations x 3 folds)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("the 45 test rows are held out"), std::string::npos) << text.out;
    const CliResult split = run_cli({"sweep", "--test-size", "0", "--validation-split", "0.2", "--kfold", "3"});
    ASSERT_EQ(split.exit_code, 0) << split.err;
    EXPECT_NE(split.out.find("validation_split 0.2 not used"), std::string::npos) << split.out;
    EXPECT_NE(split.out.find("3 members (1 configurations x 3 folds) on iris"), std::string::npos) << split.out;
    const CliResult shuffled_folds = run_cli({"sweep", "--kfold", "3", "--shuffle-folds", "--json"});
    ASSERT_EQ(shuffled_folds.exit_code, 0) << shuffled_folds.err;
    const CliResult plain_folds = run_cli({"sweep", "--kfold", "3", "--json"});
    EXPECT_NE(nlohmann::json::parse(shuffled_folds.out)["members"][0]["history"],
              nlohmann::json::parse(plain_folds.out)["members"][0]["history"]);  // other rows in fold 0
    const CliResult boot = run_cli({"sweep", "--grid", "learning_rate=0.01,0.1", "--bootstrap", "4"});
    ASSERT_EQ(boot.exit_code, 0) << boot.err;
    EXPECT_NE(boot.out.find("8 members (2 configurations x 4 samples)"), std::string::npos) << boot.out;
    const CliResult shuffled = run_cli({"sweep", "--shuffle-splits", "3", "--split-size", "0.3", "--json"});
    ASSERT_EQ(shuffled.exit_code, 0) << shuffled.err;
    EXPECT_EQ(nlohmann::json::parse(shuffled.out)["members"].size(), 3u);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"sweep", "--kfold", "1"}, {"sweep", "--kfold", "200"},
          {"sweep", "--kfold", "3", "--bootstrap", "2"}, {"sweep", "--shuffle-folds"}, {"sweep", "--shuffle-splits", "2", "--split-size", "1.5"},
          {"sweep", "--save-best", "/no/such/folder/best"}}) {
        const CliResult bad = run_cli(args);
        EXPECT_EQ(bad.exit_code, 2) << args.back();
        EXPECT_NE(bad.err.find("onefit: error:"), std::string::npos) << bad.err;
    }
}

TEST(CliSweep, ExplainProjectsASweepPerDeviceWithItsCrossover) {
    const CliResult r = run_cli({"explain", "--members", "10000", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json sweep = nlohmann::json::parse(r.out).at("sweep");
    EXPECT_EQ(sweep["members"], 10000);
    ASSERT_GE(sweep["devices"].size(), 2u);
    EXPECT_EQ(sweep["devices"][0]["crossover_members"], 0);  // the CPU first
    const double cpu = sweep["devices"][0]["seconds"].get<double>();
    for (size_t i = 1; i < sweep["devices"].size(); ++i) {
        const nlohmann::json& d = sweep["devices"][i];
        const int64_t n = d["crossover_members"].get<int64_t>();
        EXPECT_TRUE(n == -1 || n > 1) << d;  // one Iris fit is never worth a GPU
        if (n > 0 && n < 5000) {
            EXPECT_LT(d["seconds"].get<double>(), cpu) << d;
        }
        if (n == -1) {
            EXPECT_GT(d["seconds"].get<double>(), cpu) << d;
        }
    }
    const CliResult text = run_cli({"explain", "--members", "1"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("A sweep of 1 such members"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("fastest for 1 member: cpu"), std::string::npos) << text.out;
    EXPECT_EQ(run_cli({"explain", "--members", "0"}).exit_code, 2);
}

TEST(CliSweep, EveryAxisOnTheCommandLineIsTheLibrarysFitOfThatConfiguration) {
    const CliResult r = run_cli({"sweep", "--grid", "units=8,16", "--grid", "optimizer=adam,rmsprop", "--grid",
                                 "batch_size=10,35", "--grid", "learning_rate=0.01", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json out = nlohmann::json::parse(r.out);
    ASSERT_EQ(out["members"].size(), 8u);
    std::set<std::tuple<int64_t, std::string, int64_t>> seen;
    for (const nlohmann::json& m : out["members"]) {
        const int64_t units = m["units"].get<int64_t>(), batch = m["batch_size"].get<int64_t>();
        const std::string optimizer = m["optimizer"].get<std::string>();
        seen.emplace(units, optimizer, batch);
        EXPECT_EQ(m["history"]["val_loss"].get<std::vector<double>>(),
                  seed_experiment(0.01f, 0, units, optimizer, batch)["val_loss"])
            << m["units"] << " " << optimizer << " " << batch;
    }
    EXPECT_EQ(seen.size(), 8u);
    // Losses log incomparable values: ranked by a metric, higher accuracy first.
    EXPECT_EQ(run_cli({"sweep", "--grid", "loss=mse,log_cosh"}).exit_code, 2);
    const CliResult by_accuracy = run_cli({"sweep", "--grid", "loss=mse,log_cosh", "--grid", "learning_rate=0.01,0.1",
                                           "--metrics", "accuracy", "--rank-by", "val_accuracy", "--json"});
    ASSERT_EQ(by_accuracy.exit_code, 0) << by_accuracy.err;
    double previous = 2;
    const nlohmann::json ranked = nlohmann::json::parse(by_accuracy.out);  // (kept: the loop reads into it)
    for (const nlohmann::json& m : ranked["members"]) {
        EXPECT_LE(m["logs"]["val_accuracy"].get<double>(), previous);
        previous = m["logs"]["val_accuracy"].get<double>();
        EXPECT_TRUE(m["loss_function"] == "mean_squared_error" || m["loss_function"] == "log_cosh") << m["loss_function"];
    }
    EXPECT_EQ(run_cli({"sweep", "--rank-by", "val_acc"}).exit_code, 2);
    const CliResult text = run_cli({"sweep", "--grid", "units=8,16", "--grid", "epochs=2"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("units=16 epochs=2"), std::string::npos) << text.out;
    const std::string dir = temp_path("best");
    ASSERT_EQ(run_cli({"sweep", "--grid", "units=8,16", "--grid", "optimizer=sgd", "--save-best", dir}).exit_code, 0);
    const onefit::Sequential best = onefit::load_model(dir);
    EXPECT_EQ(best.optimizer().kind, onefit::OptimizerKind::sgd);
    const int64_t units = best.layers().front().units;
    EXPECT_TRUE(units == 8 || units == 16) << units;
    for (const char* bad : {"optimizer=adamx", "units=0", "dropout=1.5", "batch_size=0"}) {
        const CliResult b = run_cli({"sweep", "--grid", bad});
        EXPECT_EQ(b.exit_code, 2) << bad;
        EXPECT_NE(b.err.find("onefit: error:"), std::string::npos) << b.err;
    }
}

TEST(CliSweep, AnEnsembleOfTheBestKIsSavedAndPredictAveragesIt) {
    const std::string dir = temp_path("top3");
    const CliResult r = run_cli({"sweep", "--grid", "seed=0..5", "--save-best", dir, "--ensemble", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("an ensemble of the best 3"), std::string::npos) << r.out;
    std::vector<onefit::Sequential> members = onefit::load_ensemble(dir);
    ASSERT_EQ(members.size(), 3u);
    const std::string csv = temp_path("pred.csv");
    ASSERT_EQ(run_cli({"predict", "--model", dir, "--data", "iris", "--output", csv}).exit_code, 0);
    const onefit::LabeledData iris = onefit::load_iris();
    const onefit::Tensor mean = onefit::predict_ensemble(members, iris.x);
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "pred_0,pred_1,pred_2");
    std::getline(in, line);
    float p[3] = {0, 0, 0};
    ASSERT_EQ(std::sscanf(line.c_str(), "%g,%g,%g", &p[0], &p[1], &p[2]), 3) << line;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(p[k], mean.at(0, k)) << k;
    // The members are the three best seeds, each its configuration fitted alone.
    const CliResult ranked = run_cli({"sweep", "--grid", "seed=0..5", "--json"});
    const nlohmann::json out = nlohmann::json::parse(ranked.out);
    for (size_t k = 0; k < 3; ++k)
        EXPECT_EQ(members[k].seed(), out["members"][k]["seed"].get<uint64_t>()) << k;
    // evaluate: the loss of the mean prediction (evaluate_ensemble), as printed.
    const CliResult evaluate = run_cli({"evaluate", "--model", dir, "--data", "iris"});
    ASSERT_EQ(evaluate.exit_code, 0) << evaluate.err;
    char expected[64];
    std::snprintf(expected, sizeof expected, "loss: %.6f", onefit::evaluate_ensemble(members, iris.x, iris.y).at("loss"));
    EXPECT_EQ(evaluate.out.rfind(expected, 0), 0u) << evaluate.out << " wanted " << expected;
    EXPECT_EQ(run_cli({"sweep", "--ensemble", "3"}).exit_code, 2);  // where to?
}

TEST(CliSweep, TheHtmlReportHasTheBestCurvesAndAChartPerSweptAxis) {
    const std::string path = temp_path("sweep.html");
    const CliResult r = run_cli({"sweep", "--grid", "learning_rate=0.001,0.01,0.1", "--grid", "units=8,16", "--grid",
                                 "seed=1..2", "--report", path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(path);
    const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t svgs = 0, lines = 0, dots = 0;
    for (size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at) ++svgs;
    for (size_t at = 0; (at = html.find("<polyline", at)) != std::string::npos; ++at) ++lines;
    for (size_t at = 0; (at = html.find("<circle", at)) != std::string::npos; ++at) ++dots;
    EXPECT_EQ(svgs, 4u);         // the curves, then learning_rate, seed and units
    EXPECT_EQ(lines, 10u);       // the best 10 of 12 members
    EXPECT_EQ(dots, 3u * 12u);   // every member on each axis chart
    EXPECT_NE(html.find("val_loss by learning_rate (log scale)"), std::string::npos);
    EXPECT_NE(html.find("val_loss by units"), std::string::npos);
    EXPECT_EQ(html.find("by optimizer"), std::string::npos);  // not swept
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(run_cli({"sweep", "--report", "/no/such/folder/r.html"}).exit_code, 2);
}

TEST(CliSweep, ABadGridIsOneLineAndExitCodeTwo) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"sweep", "--grid", "width=8,16"}, {"sweep", "--grid", "seed=x"},
          {"sweep", "--grid", "seed=5..1"}, {"sweep", "--grid", "learning_rate"},
          {"sweep", "--grid", "seed=0..18446744073709551615"}}) {
        const CliResult r = run_cli(args);
        EXPECT_EQ(r.exit_code, 2) << args[2];
        EXPECT_NE(r.err.find("onefit: error: --grid"), std::string::npos) << r.err;
    }
    const CliResult range = run_cli({"sweep", "--random", "3", "--range", "learning_rate=0.001:0.1:lin"});
    EXPECT_EQ(range.err, "onefit: error: --range learning_rate=0.001:0.1:lin: '0.1:lin' is not a number\n");
    const CliResult top = run_cli({"sweep", "--top", "0"});
    EXPECT_EQ(top.err, "onefit: error: --top: Value 0 not in range 1 to 1000000000 (see onefit --help)\n");
}

}  // namespace
