// sweep: many fits of one model description in one call, for learning-rate and seed searches.
// Each member is bit-identical to the same configuration built, compiled and fitted alone.
// Members of one shape that share their batches (unshuffled, or FitOptions::seed set) train
// stacked, kLanes members per program in SIMD lanes, the programs spread over the cores; the
// others run side by side, one fit per thread.
#pragma once
#include <cstdint>
#include <vector>

#include "onefit/model.hpp"

namespace onefit {

struct SweepPoint {
    float learning_rate = 0;
    uint64_t seed = 0;
};

// The grid: every learning rate with every seed. An empty axis is the one value the model and
// optimizer already have. Or, when `points` is not empty, exactly those members in that order
// (an explicit list, or random_points's draws); the axes must then be empty.
struct SweepGrid {
    std::vector<float> learning_rates;
    std::vector<uint64_t> seeds;
    std::vector<SweepPoint> points = {};  // (a default, so SweepGrid{rates, seeds} stays warning-free)
};

// `count` random members: learning rates drawn uniformly from [low, high], or log-uniformly
// (log_scale, as learning rates are searched), seeds first_seed, first_seed + 1, ...; the same
// draws for the same draw_seed. Throws Error for an empty or non-positive (log) range.
std::vector<SweepPoint> random_points(int64_t count, float low, float high, bool log_scale, uint64_t first_seed,
                                      uint64_t draw_seed);

struct SweepMember {
    float learning_rate = 0;
    uint64_t seed = 0;  // weight initialisation, and shuffling and dropout unless FitOptions::seed is set
    History history;
    std::vector<Tensor> weights;  // after the fit, Keras layout
};

// One member per grid point, learning rate major (all seeds of the first rate, then the next):
// `model`'s input shape and layers with the member's seed, compiled with `optimizer` at the
// member's learning rate, `loss` and `compile_options`, fitted on x, y with `options`. Members
// run stacked where they can (see above), on the thread pool's threads; callbacks are refused (a member's fit cannot be watched from
// one place), and verbose is 0. A member that fails throws Error naming its grid point.
std::vector<SweepMember> sweep(const Sequential& model, const Optimizer& optimizer, const Loss& loss,
                               const CompileOptions& compile_options, const Tensor& x, const Tensor& y,
                               FitOptions options, const SweepGrid& grid);

}  // namespace onefit
