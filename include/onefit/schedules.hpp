// Keras's learning-rate schedules (keras.optimizers.schedules), given as an optimizer's
// learning_rate: the fit evaluates the rate at every optimizer step inside the compiled program,
// with Keras's formulas, at Keras's step count (optimizer.iterations: 0 for the first update).
// Plain values (no heap), so an Optimizer stays a struct a device kernel can take by value.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace onefit {

enum class ScheduleKind {
    constant,                  // no schedule: the optimizer's learning_rate
    exponential_decay,         // initial * decay_rate ^ (step / decay_steps)  (floored when staircase)
    piecewise_constant_decay,  // values[0] up to boundaries[0], values[i + 1] in (boundaries[i], boundaries[i + 1]]
    polynomial_decay,          // (initial - end) * (1 - step / decay_steps) ^ power + end  (cycle: restarting)
    inverse_time_decay,        // initial / (1 + decay_rate * step / decay_steps)  (floored when staircase)
    cosine_decay,              // a linear warmup to warmup_target, then a cosine from it down to alpha of it
    cosine_decay_restarts,     // SGDR: cosines of first_decay_steps, each t_mul longer and m_mul higher
};

struct LearningRateSchedule {
    static constexpr int kMaxBoundaries = 16;  // PiecewiseConstantDecay's (more is refused)
    ScheduleKind kind = ScheduleKind::constant;
    double initial_learning_rate = 0.0;
    int64_t decay_steps = 0;  // (CosineDecayRestarts: first_decay_steps)
    double decay_rate = 0.0;
    bool staircase = false;
    int boundary_count = 0;
    std::array<int64_t, kMaxBoundaries> boundaries{};
    std::array<double, kMaxBoundaries + 1> values{};
    double end_learning_rate = 1e-4, power = 1.0;
    bool cycle = false;
    double alpha = 0.0;
    double warmup_target = std::numeric_limits<double>::quiet_NaN();  // NaN: no warmup (Keras's None)
    int64_t warmup_steps = 0;
    double t_mul = 2.0, m_mul = 1.0;
};

// The rate at optimizer step `iteration` (0-based, as Keras's optimizer.iterations).
double scheduled_learning_rate(const LearningRateSchedule& schedule, int64_t iteration);
// Keras's checks (decay_steps > 0; boundaries one fewer than values), and onefit's (at most
// kMaxBoundaries boundaries, increasing; finite rates). Throws Error naming the schedule and argument.
void check_schedule(const LearningRateSchedule& schedule);
// Keras's class names: "ExponentialDecay", ...; schedule_from_name throws Error listing them.
std::string schedule_name(ScheduleKind kind);
ScheduleKind schedule_from_name(const std::string& name);

// A schedule by Keras's class name and its get_config() arguments (None: the default; "name" is
// ignored), and back: what config.json and the Python classes hold. Throws Error naming the
// schedule and argument ("ExponentialDecay: decay_rate is required").
using ScheduleValue = std::variant<std::monostate, bool, int64_t, double, std::vector<double>>;
using ScheduleArguments = std::vector<std::pair<std::string, ScheduleValue>>;
LearningRateSchedule make_schedule(const std::string& class_name, const ScheduleArguments& arguments);
ScheduleArguments schedule_arguments(const LearningRateSchedule& schedule);

}  // namespace onefit
