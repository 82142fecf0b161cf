// sweep(): the grid expanded into members. Members that can share SIMD lanes (one shape:
// runtime/cpu/stacked_fit.hpp) train as stacked programs of kLanes members each,
// the programs spread over the thread pool; the rest are each an ordinary build + compile + fit
// on one thread of the pool (a fit inside a pool task runs its own parallel loops serially,
// which gives the same bits as any thread count). Either way a member equals the configuration
// fitted alone, bit for bit.
#include "onefit/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include "core/rng.hpp"
#include "core/thread_pool.hpp"
#include "onefit/error.hpp"
#include "runtime/cpu/cpu_simd.hpp"
#include "train/fit_setup.hpp"

namespace onefit {
namespace {

std::string member_name(size_t i, const SweepMember& m) {
    return "sweep member " + std::to_string(i) + " (learning_rate " + std::to_string(m.learning_rate) + ", seed " +
           std::to_string(m.seed) + ")";
}

// Runs task(i) for every member on the pool; the first member's error (in member order) is
// rethrown as an Error naming it.
template <class Task>
void for_each_member(std::vector<SweepMember>& members, int64_t tasks, int64_t members_per_task, Task&& task) {
    std::vector<std::exception_ptr> errors(members.size());
    ThreadPool::instance().parallel_for(tasks, [&](int64_t t) {
        try {
            task(t);
        } catch (...) {
            errors[static_cast<size_t>(t * members_per_task)] = std::current_exception();  // tasks must not throw
        }
    });
    for (size_t i = 0; i < errors.size(); ++i) {
        if (!errors[i]) continue;
        try {
            std::rethrow_exception(errors[i]);
        } catch (const std::exception& e) {
            throw Error(member_name(i, members[i]) + ": " + e.what());
        }
    }
}

// Members' models trained as stacked programs. Returns false (having trained nothing) when they
// cannot be stacked.
bool fit_stacked(std::vector<Sequential>& models, std::vector<SweepMember>& members, const Tensor& x, const Tensor& y,
                 const FitOptions& options) {
    if (options.device != Device::cpu) return false;
    const TrainingProgram& first = models.front().program();
    std::vector<std::string> warnings;
    train::ArrayFit fit;
    try {
        train::prepare_array_fit(first, x, y, options, warnings, fit);
    } catch (const std::exception& e) {
        throw Error(member_name(0, members[0]) + ": " + e.what());  // every member's data is the same
    }
    train::complete_plan(fit.plan, fit.rest, models.front().seed());
    if (!cpu::can_stack(first, fit.plan)) return false;
    const std::vector<nn::Metric> metrics = train::plan_metrics(first, fit.plan);
    const bool validation = fit.plan.val_x || fit.plan.val_dataset;
    const int64_t lanes = cpu::stack_lanes(), count = static_cast<int64_t>(members.size());
    for_each_member(members, (count + lanes - 1) / lanes, lanes, [&](int64_t group) {
        const int64_t begin = group * lanes, end = std::min(count, begin + lanes);
        std::vector<TrainingProgram*> programs;
        std::vector<uint64_t> seeds;  // each member's fit seed: its shuffle
        for (int64_t i = begin; i < end; ++i) {
            programs.push_back(&models[static_cast<size_t>(i)].program_state());
            seeds.push_back(options.seed.value_or(members[static_cast<size_t>(i)].seed));
        }
        const std::vector<cpu::StackedResult> results =
            cpu::fit_stacked(programs, fit.plan, metrics, seeds, options.initial_epoch, options.epochs);
        for (int64_t i = begin; i < end; ++i) {  // the History as fit() records it
            const cpu::StackedResult& r = results[static_cast<size_t>(i - begin)];
            SweepMember& m = members[static_cast<size_t>(i)];
            Logs logs;
            std::vector<std::string> member_warnings;
            for (int64_t e = options.initial_epoch; e < r.end_epoch; ++e)
                if (train::record_epoch(m.history, logs, r.logs[static_cast<size_t>(e)], e, metrics, validation,
                                        member_warnings))
                    break;
            m.weights = models[static_cast<size_t>(i)].get_weights();
        }
    });
    return true;
}

}  // namespace

std::vector<SweepPoint> random_points(int64_t count, float low, float high, bool log_scale, uint64_t first_seed,
                                      uint64_t draw_seed) {
    if (count < 1) throw Error("sweep: the number of random members must be at least 1");
    if (!(low <= high) || !std::isfinite(low) || !std::isfinite(high))
        throw Error("sweep: the range [" + std::to_string(low) + ", " + std::to_string(high) + "] is empty");
    if (log_scale && !(low > 0)) throw Error("sweep: a log range needs positive bounds, got " + std::to_string(low));
    Rng rng(draw_seed);
    std::vector<SweepPoint> points;
    for (int64_t i = 0; i < count; ++i) {
        const double u = rng.uniform_double();
        const double v = log_scale ? std::exp(std::log(double(low)) + u * (std::log(double(high)) - std::log(double(low))))
                                   : double(low) + u * (double(high) - double(low));
        points.push_back({std::clamp(static_cast<float>(v), low, high), first_seed + static_cast<uint64_t>(i)});
    }
    return points;
}

std::vector<SweepMember> sweep(const Sequential& model, const Optimizer& optimizer, const Loss& loss,
                               const CompileOptions& compile_options, const Tensor& x, const Tensor& y,
                               FitOptions options, const SweepGrid& grid) {
    if (model.layers().empty()) throw Error("sweep: the model has no layers");
    if (!options.callbacks.empty()) throw Error("sweep: callbacks are not supported (members fit side by side)");
    options.verbose = 0;
    options.out = nullptr;
    options.profile = nullptr;
    const std::vector<float> rates =
        grid.learning_rates.empty() ? std::vector<float>{optimizer.learning_rate} : grid.learning_rates;
    const std::vector<uint64_t> seeds = grid.seeds.empty() ? std::vector<uint64_t>{model.seed()} : grid.seeds;
    if (!grid.points.empty() && (!grid.learning_rates.empty() || !grid.seeds.empty()))
        throw Error("sweep: give the grid's axes or its points, not both");

    std::vector<SweepMember> members;
    const auto add = [&](float rate, uint64_t seed) {
        SweepMember m;
        m.learning_rate = rate, m.seed = seed;
        members.push_back(std::move(m));
    };
    for (const SweepPoint& p : grid.points) add(p.learning_rate, p.seed);
    if (grid.points.empty())
        for (float rate : rates)
            for (uint64_t seed : seeds) add(rate, seed);
    // Every member's model, built and compiled (microseconds each: weights from its seed).
    std::vector<Sequential> models;
    models.reserve(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
        try {
            Sequential& member = models.emplace_back(model.input_shape(), members[i].seed);
            for (const Layer& layer : model.layers()) member.add(layer);
            Optimizer member_optimizer = optimizer;
            member_optimizer.learning_rate = members[i].learning_rate;
            member.compile(member_optimizer, loss, compile_options);
        } catch (const std::exception& e) {
            throw Error(member_name(i, members[i]) + ": " + e.what());
        }
    }
    if (fit_stacked(models, members, x, y, options)) return members;
    for_each_member(members, static_cast<int64_t>(members.size()), 1, [&](int64_t i) {
        Sequential& member = models[static_cast<size_t>(i)];
        members[static_cast<size_t>(i)].history = member.fit(x, y, options);
        members[static_cast<size_t>(i)].weights = member.get_weights();
    });
    return members;
}

}  // namespace onefit
