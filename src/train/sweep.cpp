// sweep(): the grid expanded into members, each an ordinary build + compile + fit on one thread
// of the pool (a fit inside a pool task runs its own parallel loops serially, which gives the
// same bits as any thread count), so a member equals the configuration fitted alone.
#include "onefit/sweep.hpp"

#include <exception>
#include <string>

#include "core/thread_pool.hpp"
#include "onefit/error.hpp"

namespace onefit {

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

    std::vector<SweepMember> members;
    for (float rate : rates)
        for (uint64_t seed : seeds) {
            SweepMember m;
            m.learning_rate = rate, m.seed = seed;
            members.push_back(std::move(m));
        }
    std::vector<std::exception_ptr> errors(members.size());
    ThreadPool::instance().parallel_for(static_cast<int64_t>(members.size()), [&](int64_t i) {
        SweepMember& m = members[static_cast<size_t>(i)];
        try {
            Sequential member(model.input_shape(), m.seed);
            for (const Layer& layer : model.layers()) member.add(layer);
            Optimizer member_optimizer = optimizer;
            member_optimizer.learning_rate = m.learning_rate;
            member.compile(member_optimizer, loss, compile_options);
            m.history = member.fit(x, y, options);
            m.weights = member.get_weights();
        } catch (...) {
            errors[static_cast<size_t>(i)] = std::current_exception();  // tasks must not throw
        }
    });
    for (size_t i = 0; i < errors.size(); ++i) {
        if (!errors[i]) continue;
        try {
            std::rethrow_exception(errors[i]);
        } catch (const std::exception& e) {
            throw Error("sweep member " + std::to_string(i) + " (learning_rate " +
                        std::to_string(members[i].learning_rate) + ", seed " + std::to_string(members[i].seed) +
                        "): " + e.what());
        }
    }
    return members;
}

}  // namespace onefit
