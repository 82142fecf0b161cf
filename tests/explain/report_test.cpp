// The report's three forms: JSON with the keys docs/explain.md documents, HTML that is one
// self-contained page, and the command line end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

// The seed's fit as explain sees it: the Iris model 4-32-3 with Adam, 105 training rows in
// batches of 20, 45 validation rows, 20 epochs; its profile and command times are made up.
constexpr int64_t kTrainRows = 105, kValidationRows = 45, kBatch = 20, kEpochs = 20;
constexpr int64_t kSeedParams = (4 * 32 + 32) + (32 * 3 + 3);  // kernel + bias per Dense layer
const CommandTimes kTimes{1e-5, 2e-5, 0, 2e-4};                // load, compile, device start, fit

FitProfile sample_profile() {
    FitProfile fp;
    fp.device = "cpu";
    fp.prepare_seconds = 3e-5, fp.program_seconds = 1e-4, fp.validation_seconds = 2e-5, fp.steps = 120;
    return fp;
}

ExplainReport sample_report() {
    Sequential model({4}, 0);
    model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(0.1f), loss_from_name("log_cosh"));
    ExplainReport r;
    r.run = "iris (105 train / 45 validation rows), 4-32-3";
    r.device = "cpu";
    r.ran_on.name = "cpu (test)";
    r.ran_on.present = true;
    r.ran_on.estimate = false;
    r.ran_on.step_overhead_seconds = 1e-7;
    r.ran_on.call_overhead_seconds = 1e-8;
    r.work = fit_work(step_work(model, kBatch), kTrainRows, kValidationRows, 4, kEpochs);
    r.train_seconds = 8e-5;
    r.phases = fit_phases(sample_profile(), kTimes, r.work, r.ran_on);
    DeviceProfile gpu = datasheet_gpu_profiles().front();
    gpu.present = false;
    r.projections = {project(r.ran_on, r.work), project(gpu, r.work)};
    r.picked_device = "cpu";
    r.reason = projection_reason(r.work, r.projections);
    r.lints = {{"label_broadcast", "warning", "labels <broadcast>", "use sparse_categorical_crossentropy"}};
    r.history.epoch = {0, 1, 2};
    r.history.history = {{"loss", {1.0, 0.5, 0.25}}, {"val_loss", {1.1, 0.7, NAN}}};
    return r;
}

TEST(ExplainReport, JsonParsesAndHasTheDocumentedKeys) {
    const nlohmann::json j = nlohmann::json::parse(explain_json(sample_report()));
    for (const char* key : {"run", "device", "phases", "total_seconds", "work", "rate", "calibration", "projections",
                            "pick", "lints", "history"})
        EXPECT_TRUE(j.contains(key)) << key;
    for (const char* key : {"name", "seconds", "measured", "note"}) EXPECT_TRUE(j["phases"][0].contains(key)) << key;
    for (const char* key : {"formula", "per_step", "steps", "flops", "bytes", "dispatches"})
        EXPECT_TRUE(j["work"].contains(key)) << key;
    for (const char* key : {"device", "kind", "present", "estimate", "source", "total_seconds"})
        EXPECT_TRUE(j["projections"][1].contains(key)) << key;
    for (const char* key : {"id", "severity", "message", "fix"}) EXPECT_TRUE(j["lints"][0].contains(key)) << key;
    EXPECT_TRUE(j["history"]["val_loss"][2].is_null());  // NaN has no JSON spelling
    EXPECT_EQ(j["pick"]["device"], "cpu");
}

TEST(ExplainReport, HtmlIsSelfContainedWithSvgCharts) {
    const std::string html = explain_html(sample_report());
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_NE(html.find("<polyline"), std::string::npos);  // the loss curve
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_NE(html.find("labels &lt;broadcast&gt;"), std::string::npos);  // text is escaped
}

TEST(ExplainReport, JsonWorkNumbersFollowFromTheModelAndTheBatchSchedule) {
    const nlohmann::json work = nlohmann::json::parse(explain_json(sample_report()))["work"];
    const int64_t steps_per_epoch = (kTrainRows + kBatch - 1) / kBatch;  // the last batch holds 5 rows
    EXPECT_EQ(work["per_step"]["params"], kSeedParams);
    EXPECT_EQ(work["per_step"]["batch_size"], kBatch);
    EXPECT_EQ(work["per_step"]["forward_macs_per_sample"], 4 * 32 + 32 * 3);
    EXPECT_EQ(work["epochs"], kEpochs);
    EXPECT_EQ(work["steps"], kEpochs * steps_per_epoch);
    EXPECT_EQ(work["validation_rows"], kValidationRows);
    EXPECT_EQ(work["dispatches"], kEpochs * steps_per_epoch + kEpochs);  // one validation batch per epoch
    const nlohmann::json& step = work["per_step"];
    EXPECT_DOUBLE_EQ(step["flops"].get<double>(), step["forward_flops"].get<double>() +
                                                      step["backward_flops"].get<double>() +
                                                      step["optimizer_flops"].get<double>());
    EXPECT_DOUBLE_EQ(work["validation_flops"].get<double>(), 2.0 * (4 * 32 + 32 * 3) * kValidationRows * kEpochs);
    EXPECT_DOUBLE_EQ(work["data_bytes"].get<double>(), 4.0 * (kTrainRows + kValidationRows) * (4 + 1));
    EXPECT_DOUBLE_EQ(work["bytes"].get<double>(), double(kEpochs * steps_per_epoch) * step["bytes"].get<double>());
}

TEST(ExplainReport, JsonTimesAddUp) {
    const ExplainReport r = sample_report();
    const nlohmann::json j = nlohmann::json::parse(explain_json(r));
    double phases = 0;
    for (const auto& p : j["phases"]) phases += p["seconds"].get<double>();
    EXPECT_NEAR(j["total_seconds"].get<double>(), phases, 1e-15);
    // The phases split the command's measured times, so they add up to them.
    EXPECT_NEAR(phases, kTimes.load_seconds + kTimes.compile_seconds + kTimes.device_start_seconds + kTimes.fit_seconds,
                1e-15);
    for (const auto& p : j["projections"]) {
        EXPECT_NEAR(p["total_seconds"].get<double>(),
                    p["fixed_seconds"].get<double>() + p["overhead_seconds"].get<double>() +
                        p["compute_seconds"].get<double>(),
                    1e-15)
            << p["device"];
    }
    // Achieved rate: the training flops (validation excluded) over the training time.
    EXPECT_DOUBLE_EQ(j["rate"]["achieved_flops_per_second"].get<double>(),
                     (j["work"]["flops"].get<double>() - j["work"]["validation_flops"].get<double>()) / 8e-5);
    EXPECT_EQ(j["calibration"]["step_overhead_seconds"], r.ran_on.step_overhead_seconds);
    EXPECT_EQ(j["history"]["loss"], (std::vector<double>{1.0, 0.5, 0.25}));
    EXPECT_EQ(j["history"]["epoch"], (std::vector<int64_t>{0, 1, 2}));
}

TEST(ExplainReport, FitPhasesSplitTheProgramTimeWithTheCalibration) {
    const ExplainReport r = sample_report();
    const auto seconds_of = [&](const std::string& name) {
        for (const Phase& p : r.phases)
            if (p.name == name) return p.seconds;
        ADD_FAILURE() << "no phase " << name;
        return -1.0;
    };
    const FitProfile fp = sample_profile();
    // 120 steps, each one dispatch and 3 calls per Dense layer, at the profile's costs.
    const double overhead = 120 * 1e-7 + 120 * 3 * 2 * 1e-8;
    const double transfer = 4.0 * 150 * 5 / r.ran_on.transfer_bytes_per_second;  // the packed arrays
    EXPECT_NEAR(seconds_of("dispatch overhead"), overhead, 1e-18);
    EXPECT_NEAR(seconds_of("compute"), fp.program_seconds - fp.validation_seconds - overhead, 1e-18);
    EXPECT_NEAR(seconds_of("validation"), fp.validation_seconds, 1e-18);
    EXPECT_NEAR(seconds_of("host->device transfer"), transfer, 1e-18);
    EXPECT_NEAR(seconds_of("program build"), fp.prepare_seconds - transfer, 1e-18);
    EXPECT_NEAR(seconds_of("other"), kTimes.fit_seconds - fp.prepare_seconds - fp.program_seconds, 1e-18);
}

// The points="x,y x,y ..." of each <polyline> in the page, in order.
std::vector<std::vector<std::pair<double, double>>> polylines(const std::string& html) {
    std::vector<std::vector<std::pair<double, double>>> lines;
    const std::regex polyline("<polyline[^>]* points=\"([^\"]*)\""), point("([^ ,]+),([^ ]+)");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), polyline); it != std::sregex_iterator(); ++it) {
        const std::string points = (*it)[1];
        lines.emplace_back();
        for (auto p = std::sregex_iterator(points.begin(), points.end(), point); p != std::sregex_iterator(); ++p)
            lines.back().push_back({std::stod((*p)[1]), std::stod((*p)[2])});
    }
    return lines;
}

TEST(ExplainReport, HtmlLossCurvesPlotEveryFiniteValueOnOneLinearScale) {
    // loss {1.0, 0.5, 0.25} and val_loss {1.1, 0.7, NaN} share one chart.
    const auto lines = polylines(explain_html(sample_report()));
    ASSERT_EQ(lines.size(), 2u);
    const std::vector<std::pair<double, double>>& loss = lines[0];
    const std::vector<std::pair<double, double>>& val = lines[1];
    ASSERT_EQ(loss.size(), 3u);
    ASSERT_EQ(val.size(), 2u);  // the NaN epoch is left out, not drawn at 0
    // Epochs evenly spaced left to right, the same x for the same epoch in both series.
    EXPECT_NEAR(loss[1].first - loss[0].first, loss[2].first - loss[1].first, 0.1);
    EXPECT_GT(loss[1].first, loss[0].first);
    EXPECT_NEAR(val[0].first, loss[0].first, 0.1);
    EXPECT_NEAR(val[1].first, loss[1].first, 0.1);
    // y is one decreasing affine function of the value (SVG's y grows downwards): the pixels
    // per unit from loss's first and last points predict every other point, val_loss's too.
    const double per_unit = (loss[2].second - loss[0].second) / (0.25 - 1.0);
    EXPECT_LT(per_unit, 0);
    const auto y_of = [&](double v) { return loss[0].second + per_unit * (v - 1.0); };
    EXPECT_NEAR(loss[1].second, y_of(0.5), 0.2);
    EXPECT_NEAR(val[0].second, y_of(1.1), 0.2);
    EXPECT_NEAR(val[1].second, y_of(0.7), 0.2);
}

TEST(ExplainReport, ALongDeviceNameStaysInItsColumn) {
    ExplainReport r = sample_report();
    r.projections[0].device_name = "cpu (Intel(R) Xeon(R) Platinum 8488C Processor, 192 threads)";
    const std::string text = explain_text(r);
    const size_t at = text.find(r.projections[0].device_name);
    ASSERT_NE(at, std::string::npos);
    const size_t end = at + r.projections[0].device_name.size();
    EXPECT_EQ(text.substr(end, 2), "  ") << text.substr(at, 120);  // a gap before the fixed time
    // Every row's next column starts where the header's does.
    const size_t header = text.find("  device", text.find("Projection ("));
    const size_t line_start = text.rfind('\n', at) + 1;
    const size_t fixed_col = text.find("fixed", header) - header;
    EXPECT_EQ(text[line_start + fixed_col - 1], ' ');
}

TEST(ExplainReport, DataLoadingIsTheCommandLinesOnly) {
    FitWork work;
    DeviceProfile cpu;
    CommandTimes call;  // a program's call: its arrays were read before
    EXPECT_EQ(fit_phases(sample_profile(), call, work, cpu)[0].note.find("command line"), std::string::npos);
    CommandTimes cli;
    cli.command_line = true;
    EXPECT_NE(fit_phases(sample_profile(), cli, work, cpu)[0].note.find("command line"), std::string::npos);
}

TEST(ExplainReport, PhaseTableListsEveryPhaseAndATotal) {
    const std::string table = format_phase_table(sample_report().phases);
    for (const char* phase : {"data loading", "compile", "device start-up", "host->device transfer",
                              "dispatch overhead", "compute", "validation", "device->host reads", "logging/callbacks", "total"})
        EXPECT_NE(table.find(phase), std::string::npos) << phase;
}

std::string run(const std::string& command) {
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    pclose(pipe);
    return out;
}

// End to end: one calibration into a fresh cache (about a second), then the seed and the fix.
TEST(ExplainCommand, SeedLintsFireAndTheFixedConfigIsClean) {
    const std::string cache = ::testing::TempDir() + "explain_cache";
    const std::string cli = std::string("XDG_CACHE_HOME=") + cache + " " + ONEFIT_CLI_PATH + " explain ";
    const nlohmann::json seed = nlohmann::json::parse(run(cli + "--json"));
    std::vector<std::string> ids;
    for (const auto& l : seed["lints"]) ids.push_back(l["id"]);
    for (const char* id : {"label_broadcast", "class_coverage", "single_class_validation"})
        EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
    EXPECT_EQ(seed["pick"]["device"], "cpu");
    // The seed: 150 rows split 70/30, batch 20, 20 epochs, the model 4-32-3.
    EXPECT_EQ(seed["work"]["steps"], 20 * ((105 + 19) / 20));
    EXPECT_EQ(seed["work"]["validation_rows"], 45);
    EXPECT_EQ(seed["work"]["per_step"]["params"], kSeedParams);
    double phases = 0;
    for (const auto& p : seed["phases"]) {
        EXPECT_GE(p["seconds"].get<double>(), 0.0) << p["name"];
        phases += p["seconds"].get<double>();
    }
    EXPECT_NEAR(seed["total_seconds"].get<double>(), phases, 1e-9 * phases);
    // The pick is the present device projected to finish first.
    double fastest = INFINITY;
    for (const auto& p : seed["projections"])
        if (p["present"]) fastest = std::min(fastest, p["total_seconds"].get<double>());
    for (const auto& p : seed["projections"]) {
        if (p["present"] && p["total_seconds"] == fastest) {
            EXPECT_EQ(p["kind"], seed["pick"]["device"]);
        }
    }

    const std::string report = ::testing::TempDir() + "explain_report.html";
    const nlohmann::json fixed = nlohmann::json::parse(
        run(cli + std::string(ONEFIT_SOURCE_DIR) + "/examples/iris_fixed.json --json --report " + report));
    for (const auto& l : fixed["lints"]) EXPECT_NE(l["severity"], "warning") << l["id"];
    std::ifstream in(report);
    std::stringstream html;
    html << in.rdbuf();
    EXPECT_NE(html.str().find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace onefit
