// sweep: many fits of one model description in one call, for learning-rate and seed searches
// and k-fold cross-validation. Each member is bit-identical to the same configuration built,
// compiled and fitted alone. Members of one shape (and, across folds, as many rows) train
// stacked, kLanes members per program in SIMD lanes, the programs spread over the cores; the
// others run side by side, one fit per thread. Across processes: onefit/distributed.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onefit/model.hpp"

namespace onefit {

struct SweepPoint {
    float learning_rate = 0;
    uint64_t seed = 0;
};

// How members of one shape run. A stack of kLanes members costs about what kLanes fits alone
// cost when the model's layers already fill the vectors (the seed's Dense(32): on AVX2 a stack
// of 8 took the time of ~7 fits), so it pays only once the stacks keep every thread busy:
// automatic stacks when there are at least kLanes x threads members that can stack, and runs
// fewer side by side, one fit per thread. always: stack wherever possible; never: side by side.
// Every member's result is the same bits either way.
enum class SweepStacking { automatic, always, never };

// The grid: every learning rate with every seed. An empty axis is the one value the model and
// optimizer already have. Or, when `points` is not empty, exactly those members in that order
// (an explicit list, or random_points's draws); the axes must then be empty.
// The other axes multiply whatever the learning rates and seeds give (each empty: the model's,
// optimizer's or options' own): optimizers by Keras name ("adam", "sgd", ...: the base optimizer
// when it is of that kind, else that kind with its Keras defaults; at the member's learning rate),
// losses by Keras name (the base loss when of that kind), hidden_units (the units of every Dense layer but
// the last), dropout_rates (of every Dropout layer), batch_sizes and epochs.
// folds >= 2: k-fold cross-validation, every point trained once per fold on the other folds'
// rows and validated on the fold's (kfold_assignment, or stratified_kfold_assignment when the
// labels are classes: one-hot rows, or one column of whole numbers under a crossentropy or
// below a softmax or sigmoid output); FitOptions must then name no validation data or split.
// The most members one sweep trains (a grid, its random draws or its ranges past it are errors).
inline constexpr int64_t kMaxSweepMembers = 1'000'000;

struct SweepGrid {
    std::vector<float> learning_rates;
    std::vector<uint64_t> seeds;
    std::vector<SweepPoint> points = {};  // (defaults, so SweepGrid{rates, seeds} stays warning-free)
    std::vector<std::string> optimizers = {};
    std::vector<std::string> losses = {};
    std::vector<int64_t> hidden_units = {};
    std::vector<float> dropout_rates = {};
    std::vector<int64_t> batch_sizes = {};
    std::vector<int64_t> epochs = {};
    int64_t folds = 0;
    std::optional<uint64_t> fold_shuffle_seed = std::nullopt;  // shuffled folds (kfold_assignment)
    // Or, instead of folds, resampled data (each point trained once per sample, validated on what
    // the sample left out): `shuffle_splits` random splits (train_test_split with shuffling,
    // `split_test_size` of the rows to validate on, seeds split_seed, split_seed + 1, ...), as
    // scikit-learn's ShuffleSplit; or `bootstraps` bootstrap samples (bootstrap_split, seeds
    // split_seed + i), validated out of bag. FitOptions must then name no validation either.
    int64_t shuffle_splits = 0;
    double split_test_size = 0.2;
    int64_t bootstraps = 0;
    uint64_t split_seed = 0;
    SweepStacking stacking = SweepStacking::automatic;
};

// `count` random members: learning rates drawn uniformly from [low, high], or log-uniformly
// (log_scale, as learning rates are searched), seeds first_seed, first_seed + 1, ...; the same
// draws for the same draw_seed. Throws Error for an empty or non-positive (log) range.
std::vector<SweepPoint> random_points(int64_t count, float low, float high, bool log_scale, uint64_t first_seed,
                                      uint64_t draw_seed);

struct SweepMember {
    float learning_rate = 0;
    uint64_t seed = 0;  // weight initialisation, and shuffling and dropout unless FitOptions::seed is set
    int64_t fold = -1;  // the fold (or random split, or bootstrap sample) it trained on; -1 without
    std::string optimizer;      // its optimizer's Keras name
    std::string loss;           // its loss's Keras name
    int64_t hidden_units = 0;   // 0: the model's own widths
    float dropout_rate = -1;    // -1: the model's own rates
    int64_t batch_size = 0, epochs = 0;
    History history;
    std::vector<Tensor> weights;  // after the fit, Keras layout
};

// One member per grid point (and fold): optimizer, loss, hidden units, dropout rate, batch size
// and epochs major in that order, then learning rate (all seeds of the first rate, then the next),
// each point's folds in order: `model`'s input shape and layers with the member's
// seed, compiled with `optimizer` at the member's learning rate, `loss` and `compile_options`,
// fitted on x, y with `options` (with folds: on fold_split's training rows, validation_data its
// test rows). Members
// run stacked where they can (see above), on the thread pool's threads; with options.device
// cuda, each group of one shape, schedule and data in one GPU launch, a block per member. Callbacks
// are refused (a member's fit cannot be watched from one place), and verbose is 0. A member that
// fails throws Error naming its grid point.
std::vector<SweepMember> sweep(const Sequential& model, const Optimizer& optimizer, const Loss& loss,
                               const CompileOptions& compile_options, const Tensor& x, const Tensor& y,
                               FitOptions options, const SweepGrid& grid);

// A member's model as sweep() trains it, built and compiled but untrained: `model`'s layers with
// the member's hidden units and dropout rate, its seed, and its optimizer at its learning rate.
// Fitted on the member's data and options (its batch size and epochs; with folds, its fold's
// split), it is the member, bit for bit; on all the data, it is the member's configuration
// refitted (`onefit sweep --save-best`).
Sequential sweep_member_model(const Sequential& model, const Optimizer& optimizer, const Loss& loss,
                              const CompileOptions& compile_options, const SweepMember& member);

}  // namespace onefit
