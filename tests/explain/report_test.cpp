// The report's three forms: JSON with the keys docs/explain.md documents, HTML that is one
// self-contained page, and the command line end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "onefit/explain.hpp"

namespace onefit {
namespace {

ExplainReport sample_report() {
    ExplainReport r;
    r.run = "iris (105 train / 45 validation rows), 4-32-3";
    r.device = "cpu";
    FitProfile fp;
    fp.device = "cpu";
    fp.prepare_seconds = 3e-5, fp.program_seconds = 1e-4, fp.validation_seconds = 2e-5, fp.steps = 120;
    r.ran_on.name = "cpu (test)";
    r.ran_on.present = true;
    r.ran_on.estimate = false;
    r.work.steps = 120;
    r.work.flops = 3.5e6;
    r.phases = fit_phases(fp, CommandTimes{1e-5, 2e-5, 0, 2e-4}, r.work, r.ran_on);
    r.projections = {project(r.ran_on, r.work), project(datasheet_gpu_profiles().front(), r.work)};
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
    EXPECT_EQ(seed["work"]["steps"], 120);

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
