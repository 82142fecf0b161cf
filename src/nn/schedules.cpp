// Keras 3's learning-rate schedules (keras/src/optimizers/schedules/learning_rate_schedule.py),
// formula for formula, in double (Keras's float32 differs by rounding only).
#include "onefit/schedules.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "onefit/error.hpp"

namespace onefit {
namespace {

constexpr const char* kNames[] = {"constant",          "ExponentialDecay",  "PiecewiseConstantDecay",
                                  "PolynomialDecay",   "InverseTimeDecay",  "CosineDecay",
                                  "CosineDecayRestarts"};

double cosine_decay(double step, double decay_steps, double from, double alpha) {
    const double cosine = 0.5 * (1.0 + std::cos(M_PI * step / decay_steps));
    return from * ((1.0 - alpha) * cosine + alpha);
}

// Each schedule's arguments by Keras's names, in its get_config()'s order.
struct ScheduleField {
    const char* name;
    std::variant<double LearningRateSchedule::*, int64_t LearningRateSchedule::*, bool LearningRateSchedule::*> field;
    bool required;
};

std::vector<ScheduleField> fields(ScheduleKind kind) {
    using S = LearningRateSchedule;
    switch (kind) {
        case ScheduleKind::exponential_decay:
        case ScheduleKind::inverse_time_decay:
            return {{"initial_learning_rate", &S::initial_learning_rate, true}, {"decay_steps", &S::decay_steps, true},
                    {"decay_rate", &S::decay_rate, true}, {"staircase", &S::staircase, false}};
        case ScheduleKind::polynomial_decay:
            return {{"initial_learning_rate", &S::initial_learning_rate, true}, {"decay_steps", &S::decay_steps, true},
                    {"end_learning_rate", &S::end_learning_rate, false}, {"power", &S::power, false},
                    {"cycle", &S::cycle, false}};
        case ScheduleKind::cosine_decay:
            return {{"initial_learning_rate", &S::initial_learning_rate, true}, {"decay_steps", &S::decay_steps, true},
                    {"alpha", &S::alpha, false}, {"warmup_target", &S::warmup_target, false},
                    {"warmup_steps", &S::warmup_steps, false}};
        case ScheduleKind::cosine_decay_restarts:
            return {{"initial_learning_rate", &S::initial_learning_rate, true},
                    {"first_decay_steps", &S::decay_steps, true}, {"t_mul", &S::t_mul, false},
                    {"m_mul", &S::m_mul, false}, {"alpha", &S::alpha, false}};
        default: return {};  // constant; piecewise_constant_decay's lists are read apart
    }
}

std::vector<double> numbers(const ScheduleValue& v, const std::string& what) {
    if (const auto* list = std::get_if<std::vector<double>>(&v)) return *list;
    throw Error(what + " must be a list of numbers");
}

}  // namespace

LearningRateSchedule make_schedule(const std::string& class_name, const ScheduleArguments& arguments) {
    LearningRateSchedule s;
    s.kind = schedule_from_name(class_name);
    const std::vector<ScheduleField> known = fields(s.kind);
    bool boundaries = false, values = false;
    int value_count = 0;
    std::vector<std::string> given;
    for (const auto& [key, value] : arguments) {
        const std::string what = class_name + ": " + key;
        if (key == "name") continue;
        given.push_back(key);
        if (s.kind == ScheduleKind::piecewise_constant_decay && (key == "boundaries" || key == "values")) {
            const std::vector<double> list = numbers(value, what);
            if (list.size() > (key == "values" ? 1u : 0u) + LearningRateSchedule::kMaxBoundaries)
                throw Error(class_name + ": at most " + std::to_string(LearningRateSchedule::kMaxBoundaries) +
                            " boundaries are supported, got " + std::to_string(list.size()) + " " + key);
            if (key == "boundaries") {
                s.boundary_count = static_cast<int>(list.size()), boundaries = true;
                for (size_t i = 0; i < list.size(); ++i) {
                    if (list[i] != std::floor(list[i])) throw Error(what + " must be integers (step counts)");
                    s.boundaries[i] = static_cast<int64_t>(list[i]);
                }
            } else {
                values = true;
                if (list.empty()) throw Error(what + " must not be empty");
                std::copy(list.begin(), list.end(), s.values.begin());
                s.initial_learning_rate = list[0];  // (the rate at step 0, for display)
                value_count = static_cast<int>(list.size());
            }
            continue;
        }
        const auto f = std::find_if(known.begin(), known.end(), [&](const ScheduleField& k) { return key == k.name; });
        if (f == known.end()) {
            std::string list;
            for (const ScheduleField& k : known) list += (list.empty() ? "" : ", ") + std::string(k.name);
            if (s.kind == ScheduleKind::piecewise_constant_decay) list = "boundaries, values";
            throw Error(class_name + ": unknown argument '" + key + "' (" + class_name + " takes " + list + ")");
        }
        if (std::holds_alternative<std::monostate>(value)) {
            if (f->required) throw Error(what + " is required; None is not a value for it");
            continue;  // None: the default (CosineDecay's warmup_target: no warmup)
        }
        std::visit([&](auto LearningRateSchedule::*field) {
            using Field = std::remove_cvref_t<decltype(s.*field)>;
            if constexpr (std::is_same_v<Field, bool>) {
                const auto* b = std::get_if<bool>(&value);
                if (!b) throw Error(what + " must be true or false");
                s.*field = *b;
            } else if constexpr (std::is_same_v<Field, int64_t>) {
                const auto* i = std::get_if<int64_t>(&value);
                const auto* d = std::get_if<double>(&value);
                if (i) s.*field = *i;
                else if (d && *d == std::floor(*d) && std::fabs(*d) < 9e15) s.*field = static_cast<int64_t>(*d);
                else throw Error(what + " must be an integer");
            } else {
                const auto* i = std::get_if<int64_t>(&value);
                const auto* d = std::get_if<double>(&value);
                if (!i && !d) throw Error(what + " must be a number");
                s.*field = d ? *d : static_cast<double>(*i);
            }
        }, f->field);
    }
    for (const ScheduleField& k : known)
        if (k.required && std::find(given.begin(), given.end(), k.name) == given.end())
            throw Error(class_name + ": " + k.name + " is required");
    if (s.kind == ScheduleKind::piecewise_constant_decay) {
        if (!boundaries || !values) throw Error(class_name + ": boundaries and values are required");
        if (value_count != s.boundary_count + 1)
            throw Error(class_name + ": The length of boundaries should be 1 less than the length of values. Received: " +
                        std::to_string(s.boundary_count) + " boundaries and " + std::to_string(value_count) +
                        " values");
    }
    check_schedule(s);
    return s;
}

ScheduleArguments schedule_arguments(const LearningRateSchedule& s) {
    ScheduleArguments arguments;
    if (s.kind == ScheduleKind::piecewise_constant_decay) {
        std::vector<double> boundaries, values;
        for (int i = 0; i < s.boundary_count; ++i) boundaries.push_back(static_cast<double>(s.boundaries[static_cast<size_t>(i)]));
        for (int i = 0; i <= s.boundary_count; ++i) values.push_back(s.values[static_cast<size_t>(i)]);
        return {{"boundaries", boundaries}, {"values", values}};
    }
    for (const ScheduleField& f : fields(s.kind))
        std::visit([&](auto LearningRateSchedule::*field) {
            using Field = std::remove_cvref_t<decltype(s.*field)>;
            if constexpr (std::is_same_v<Field, double>) {
                if (std::isnan(s.*field)) arguments.emplace_back(f.name, std::monostate{});  // warmup_target None
                else arguments.emplace_back(f.name, s.*field);
            } else {
                arguments.emplace_back(f.name, s.*field);
            }
        }, f.field);
    return arguments;
}

std::string schedule_name(ScheduleKind kind) { return kNames[static_cast<int>(kind)]; }

ScheduleKind schedule_from_name(const std::string& name) {
    for (int k = 1; k < static_cast<int>(std::size(kNames)); ++k)
        if (name == kNames[k]) return static_cast<ScheduleKind>(k);
    std::string known;
    for (int k = 1; k < static_cast<int>(std::size(kNames)); ++k) known += (k > 1 ? ", " : "") + std::string(kNames[k]);
    throw Error("unknown learning-rate schedule '" + name + "' (known: " + known + ")");
}

double scheduled_learning_rate(const LearningRateSchedule& s, int64_t iteration) {
    const double step = static_cast<double>(iteration), decay_steps = static_cast<double>(s.decay_steps);
    switch (s.kind) {
        case ScheduleKind::constant: return s.initial_learning_rate;
        case ScheduleKind::exponential_decay: {
            const double p = s.staircase ? std::floor(step / decay_steps) : step / decay_steps;
            return s.initial_learning_rate * std::pow(s.decay_rate, p);
        }
        case ScheduleKind::piecewise_constant_decay: {
            int i = 0;  // the first boundary the step does not exceed
            while (i < s.boundary_count && iteration > s.boundaries[static_cast<size_t>(i)]) ++i;
            return s.values[static_cast<size_t>(i)];
        }
        case ScheduleKind::polynomial_decay: {
            double at = step, over = decay_steps;
            if (s.cycle) over *= step == 0 ? 1.0 : std::ceil(step / decay_steps);
            else at = std::min(step, decay_steps);
            return (s.initial_learning_rate - s.end_learning_rate) * std::pow(1.0 - at / over, s.power) + s.end_learning_rate;
        }
        case ScheduleKind::inverse_time_decay: {
            const double p = s.staircase ? std::floor(step / decay_steps) : step / decay_steps;
            return s.initial_learning_rate / (1.0 + s.decay_rate * p);
        }
        case ScheduleKind::cosine_decay: {
            if (std::isnan(s.warmup_target))
                return cosine_decay(std::min(step, decay_steps), decay_steps, s.initial_learning_rate, s.alpha);
            const double warmup = static_cast<double>(s.warmup_steps), at = std::min(step, decay_steps + warmup);
            if (at < warmup) return (s.warmup_target - s.initial_learning_rate) * at / warmup + s.initial_learning_rate;
            return cosine_decay(at - warmup, decay_steps, s.warmup_target, s.alpha);
        }
        case ScheduleKind::cosine_decay_restarts: {
            double fraction = step / decay_steps, restart = 0.0;
            if (s.t_mul == 1.0) {
                restart = std::floor(fraction);
                fraction -= restart;
            } else {  // the restart whose (geometrically longer) period holds the step
                restart = std::floor(std::log(1.0 - fraction * (1.0 - s.t_mul)) / std::log(s.t_mul));
                const double before = (1.0 - std::pow(s.t_mul, restart)) / (1.0 - s.t_mul);
                fraction = (fraction - before) / std::pow(s.t_mul, restart);
            }
            const double cosine = 0.5 * std::pow(s.m_mul, restart) * (1.0 + std::cos(M_PI * fraction));
            return s.initial_learning_rate * ((1.0 - s.alpha) * cosine + s.alpha);
        }
    }
    return s.initial_learning_rate;
}

void check_schedule(const LearningRateSchedule& s) {
    if (s.kind == ScheduleKind::constant) return;
    const std::string what = schedule_name(s.kind) + ": ";
    const auto finite = [&](double v, const char* name) {
        if (!std::isfinite(v)) throw Error(what + name + " must be a finite number");
    };
    if (s.kind == ScheduleKind::piecewise_constant_decay) {
        if (s.boundary_count < 1 || s.boundary_count > LearningRateSchedule::kMaxBoundaries)
            throw Error(what + "needs 1 to " + std::to_string(LearningRateSchedule::kMaxBoundaries) +
                        " boundaries (and one more value), got " + std::to_string(s.boundary_count));
        for (int i = 0; i + 1 < s.boundary_count; ++i)
            if (s.boundaries[static_cast<size_t>(i)] >= s.boundaries[static_cast<size_t>(i + 1)])
                throw Error(what + "boundaries must increase, got " + std::to_string(s.boundaries[static_cast<size_t>(i)]) +
                            " then " + std::to_string(s.boundaries[static_cast<size_t>(i + 1)]));
        for (int i = 0; i <= s.boundary_count; ++i) finite(s.values[static_cast<size_t>(i)], "values");
        return;
    }
    const char* steps = s.kind == ScheduleKind::cosine_decay_restarts ? "first_decay_steps" : "decay_steps";
    if (s.decay_steps <= 0) throw Error(what + "Argument `" + steps + "` must be > 0. Received: " + steps + "=" +
                                        std::to_string(s.decay_steps));
    finite(s.initial_learning_rate, "initial_learning_rate");
    finite(s.decay_rate, "decay_rate"), finite(s.end_learning_rate, "end_learning_rate"), finite(s.power, "power");
    finite(s.alpha, "alpha"), finite(s.t_mul, "t_mul"), finite(s.m_mul, "m_mul");
    if (s.kind == ScheduleKind::cosine_decay && !std::isnan(s.warmup_target) && s.warmup_steps < 0)
        throw Error(what + "warmup_steps must not be negative, got " + std::to_string(s.warmup_steps));
    if (s.kind == ScheduleKind::cosine_decay_restarts && !(s.t_mul > 0.0))
        throw Error(what + "t_mul must be positive");
}

}  // namespace onefit
