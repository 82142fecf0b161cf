// `onefit sweep [CONFIG.json] [fit flags] --grid learning_rate=A,B,... --grid seed=0..99
// [--random N --range learning_rate=LOW:HIGH[:log]] [--top K] [--json | --csv]`: the fit a config describes, once per grid point (onefit::sweep),
// ranked.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "onefit/distributed.hpp"

namespace onefit::cli {

struct SweepFlags {
    std::vector<std::string> grid;  // "learning_rate=0.001,0.01", "seed=0..9"
    int64_t random = 0;             // random members instead of the grid's product
    std::string range;              // "learning_rate=LOW:HIGH[:log]" for --random
    int64_t kfold = 0;              // k-fold cross-validation: each point trained once per fold
    bool shuffle_folds = false;     // folds of random rows (the config's seed)
    int64_t shuffle_splits = 0;     // or random splits
    double split_size = 0.2;        // their validation fraction
    int64_t bootstrap = 0;          // or bootstrap samples
    std::string save_best;          // the best configuration, trained again alone, saved here
    int64_t ensemble = 0;           // with save_best: the best K saved as an ensemble
    std::string rank_by;            // the log to rank by ("" = val_loss, else loss)
    std::string report;             // --report FILE.html
    int top = 5;
    bool json = false;
    bool csv = false;
    std::vector<std::string> rest;  // the config path and fit flags, parsed as `onefit fit` would
};

CLI::App* add_sweep_command(CLI::App& app, SweepFlags& flags);
// With `ranks` (mpirun -np N): this rank's share of the members; rank 0 gathers, ranks and
// prints, the others print nothing.
int run_sweep(const SweepFlags& flags, const RankGroup* ranks = nullptr);

}  // namespace onefit::cli
