// `onefit explain [CONFIG.json] [fit flags] [--json] [--report FILE.html] [--recalibrate]`:
// runs the fit once and explains it: where the time went, the work, what it would take on
// each device, and lints with fixes (docs/explain.md). Also `--device auto` and `fit --profile`.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "config.hpp"
#include "onefit/explain.hpp"

namespace onefit::cli {

struct ExplainFlags {
    bool json = false, recalibrate = false;
    std::string report_path;         // --report FILE.html
    int64_t members = 0;             // --members N: also project a sweep of N such members
    std::vector<std::string> rest;   // the config path and fit flags, parsed as `onefit fit` would
};

CLI::App* add_explain_command(CLI::App& app, ExplainFlags& flags);
int run_explain(const ExplainFlags& flags);

// `--device auto`: the device projected to finish first (the CPU, without calibrating, when no
// GPU is present).
Device auto_device(const Sequential& model, int64_t train_rows, int64_t validation_rows, const FitConfig& config);

// `fit --profile`: the phase table of a fit run with FitOptions::profile set.
void print_fit_profile(const FitProfile& profile, const CommandTimes& times, const Sequential& model,
                       int64_t train_rows, int64_t validation_rows, const FitConfig& config, int64_t epochs_run);

}  // namespace onefit::cli
