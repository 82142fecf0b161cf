// sweep(): the grid (and folds) expanded into members. Members that can share SIMD lanes (one shape:
// runtime/cpu/stacked_fit.hpp) train as stacked programs of kLanes members each,
// the programs spread over the thread pool; the rest are each an ordinary build + compile + fit
// on one thread of the pool (a fit inside a pool task runs its own parallel loops serially,
// which gives the same bits as any thread count). Either way a member equals the configuration
// fitted alone, bit for bit.
#include "onefit/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "core/rng.hpp"
#include "core/thread_pool.hpp"
#include "onefit/error.hpp"
#include "runtime/cpu/cpu_simd.hpp"
#include "runtime/cuda/cuda_fit.hpp"
#include "train/fit_setup.hpp"
#include "train/sweep_part.hpp"

namespace onefit {
namespace {

std::string member_name(size_t i, const SweepMember& m) {
    std::string name = "sweep member " + std::to_string(i) + " (learning_rate " + std::to_string(m.learning_rate) +
                       ", seed " + std::to_string(m.seed);
    if (m.fold >= 0) name += ", fold " + std::to_string(m.fold);
    if (m.hidden_units) name += ", hidden_units " + std::to_string(m.hidden_units);
    if (m.dropout_rate >= 0) name += ", dropout_rate " + std::to_string(m.dropout_rate);
    return name + ", " + m.optimizer + ", " + m.loss + ", batch_size " + std::to_string(m.batch_size) + ", epochs " +
           std::to_string(m.epochs) + ")";
}

// Keras's canonical name of a loss ("mse" -> "mean_squared_error"); an unknown name as given
// (building the member's model then fails, naming the member).
std::string canonical_loss_name(const std::string& name) {
    try {
        return loss_name(loss_from_name(name).kind);
    } catch (const Error&) {
        return name;
    }
}

// One value of each axis but learning rate, seed and fold ("", 0, -1: not swept).
struct Variant {
    std::string optimizer, loss;
    int64_t hidden_units = 0;
    float dropout_rate = -1;
    int64_t batch_size = 0, epochs = 0;
};

// Every combination of the grid's other axes, in SweepGrid's order (the first axis major).
std::vector<Variant> grid_variants(const SweepGrid& g) {
    std::vector<Variant> out(1);
    const auto multiply = [&](const auto& values, auto set) {
        if (values.empty()) return;
        std::vector<Variant> next;
        for (const Variant& v : out)
            for (const auto& value : values) set(next.emplace_back(v), value);
        out = std::move(next);
    };
    multiply(g.optimizers, [](Variant& v, const std::string& o) { v.optimizer = o; });
    multiply(g.losses, [](Variant& v, const std::string& l) { v.loss = l; });
    multiply(g.hidden_units, [](Variant& v, int64_t u) { v.hidden_units = u; });
    multiply(g.dropout_rates, [](Variant& v, float r) { v.dropout_rate = r; });
    multiply(g.batch_sizes, [](Variant& v, int64_t b) { v.batch_size = b; });
    multiply(g.epochs, [](Variant& v, int64_t e) { v.epochs = e; });
    return out;
}

// What a member trains on: the sweep's x, y and options, or one fold's split.
struct MemberData {
    const Tensor* x;
    const Tensor* y;
    FitOptions options;
    std::unique_ptr<train::ArrayFit> fit;  // its plan (seed unset)
};

// Each row's class when y's rows are classes (the model is a classifier, as scikit-learn
// stratifies a classifier's folds): one-hot rows, or one column of whole numbers when the loss
// is a crossentropy or the output a softmax or sigmoid (the seed's logcosh over a softmax).
// Empty otherwise (k-fold is then not stratified).
std::vector<int64_t> row_classes(const Tensor& y, const Loss& loss, const Layer& last) {
    const int64_t rows = y.rows(), width = label_width(y);
    std::vector<int64_t> classes(static_cast<size_t>(rows));
    if (width == 1) {
        const bool classifier = loss.kind == LossKind::sparse_categorical_crossentropy ||
                                loss.kind == LossKind::categorical_crossentropy || loss.kind == LossKind::binary_crossentropy ||
                                last.activation == Activation::softmax || last.activation == Activation::sigmoid;
        if (!classifier) return {};
        for (int64_t i = 0; i < rows; ++i) {
            if (y[i] != std::floor(y[i]) || !std::isfinite(y[i])) return {};
            classes[static_cast<size_t>(i)] = static_cast<int64_t>(y[i]);
        }
        return classes;
    }
    for (int64_t i = 0; i < rows; ++i) {
        int64_t ones = 0;
        for (int64_t j = 0; j < width; ++j) {
            const float v = y.data()[i * width + j];
            if (v == 1.0f) ++ones, classes[static_cast<size_t>(i)] = j;
            else if (v != 0.0f) return {};
        }
        if (ones != 1) return {};
    }
    return classes;
}

// A task's members (one data group and variant) trained together by `run` (cpu::fit_stacked:
// one stacked program; cuda::fit_members: one launch), each History recorded as fit() records
// it. False when `run` could not take them (returned no results).
template <class Run>
bool fit_together(const std::vector<size_t>& task, std::vector<Sequential>& models, std::vector<SweepMember>& members,
                  const std::vector<size_t>& data_of, const std::vector<MemberData>& data,
                  const std::vector<nn::Metric>& metrics, Run&& run) {
    std::vector<TrainingProgram*> programs;
    std::vector<FitPlan> plans;
    const FitOptions& options = data[data_of[task.front()]].options;  // (epochs alike in a stack)
    for (size_t i : task) {
        programs.push_back(&models[i].program_state());
        plans.push_back(data[data_of[i]].fit->plan);
        plans.back().seed = options.seed.value_or(members[i].seed);  // its shuffle and dropout
    }
    const bool validation = static_cast<bool>(plans.front().val_x);
    const std::vector<MemberResult> results = run(programs, plans, metrics, options.initial_epoch, options.epochs);
    if (results.empty()) return false;
    for (size_t k = 0; k < task.size(); ++k) {
        const MemberResult& r = results[k];
        SweepMember& m = members[task[k]];
        Logs logs;
        std::vector<std::string> member_warnings;
        for (int64_t e = options.initial_epoch; e < r.end_epoch; ++e)
            if (train::record_epoch(m.history, logs, r.logs[static_cast<size_t>(e)], e, metrics, validation,
                                    member_warnings))
                break;
        m.weights = models[task[k]].get_weights();
    }
    return true;
}

constexpr size_t kMaxBlocks = 65535;  // members per GPU launch; more make several launches

// The members' stacks: members of one variant (one shape, optimizer and schedule) and data
// group (as many training and validation rows, so the same batches) that can stack, `lanes` at a
// time (kLanes on the CPU, a launch's blocks on the GPU); every other member alone.
std::vector<std::vector<size_t>> member_tasks(const std::vector<size_t>& data_of, const std::vector<size_t>& variant_of,
                                              const std::vector<MemberData>& data, const std::vector<char>& stacks,
                                              size_t lanes) {
    const auto key = [&](size_t i) {
        const MemberData& d = data[data_of[i]];
        return std::tuple(d.fit->plan.x.rows, d.fit->plan.val_x.rows, variant_of[i]);
    };
    std::vector<std::vector<size_t>> tasks;
    std::vector<size_t> open;  // per open stack: its task
    for (size_t i = 0; i < data_of.size(); ++i) {
        if (!stacks[i]) {
            tasks.push_back({i});
            continue;
        }
        auto it = std::find_if(open.begin(), open.end(), [&](size_t t) { return key(tasks[t].front()) == key(i); });
        if (it == open.end()) it = open.insert(open.end(), tasks.size()), tasks.emplace_back();
        tasks[*it].push_back(i);
        if (tasks[*it].size() == lanes) open.erase(it);
    }
    return tasks;
}

}  // namespace

std::vector<SweepPoint> random_points(int64_t count, float low, float high, bool log_scale, uint64_t first_seed,
                                      uint64_t draw_seed) {
    if (count < 1) throw Error("sweep: the number of random members must be at least 1");
    if (count > kMaxSweepMembers)
        throw Error("sweep: " + std::to_string(count) + " random members, more than the " +
                    std::to_string(kMaxSweepMembers) + " one sweep trains");
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

Sequential sweep_member_model(const Sequential& model, const Optimizer& base, const Loss& loss,
                              const CompileOptions& compile_options, const SweepMember& m) {
    Sequential member = Sequential::with_inputs(model.input_shapes(), m.seed);
    size_t last_dense = 0;
    for (size_t i = 0; i < model.layers().size(); ++i)
        if (model.layers()[i].kind == Layer::Kind::Dense) last_dense = i;
    for (size_t i = 0; i < model.layers().size(); ++i) {
        Layer layer = model.layers()[i];
        if (layer.kind == Layer::Kind::Dense && i != last_dense && m.hidden_units) layer.units = m.hidden_units;
        if (layer.kind == Layer::Kind::Dropout && m.dropout_rate >= 0) layer = Dropout(m.dropout_rate, layer.name);
        member.add(layer);
    }
    Optimizer optimizer = m.optimizer.empty() || m.optimizer == optimizer_name(base.kind) ? base : optimizer_from_name(m.optimizer);
    if (optimizer.learning_rate_schedule.kind == ScheduleKind::constant) optimizer.learning_rate = m.learning_rate;
    const Loss member_loss = m.loss.empty() || loss_from_name(m.loss).kind == loss.kind ? loss : loss_from_name(m.loss);
    member.compile(optimizer, member_loss, compile_options);
    return member;
}

std::vector<SweepMember> sweep(const Sequential& model, const Optimizer& optimizer, const Loss& loss,
                               const CompileOptions& compile_options, const Tensor& x, const Tensor& y,
                               FitOptions options, const SweepGrid& grid) {
    return train::sweep_part(model, optimizer, loss, compile_options, x, y, std::move(options), grid, 0, 1);
}

std::vector<SweepMember> train::sweep_part(const Sequential& model, const Optimizer& optimizer, const Loss& loss,
                                           const CompileOptions& compile_options, const Tensor& x, const Tensor& y,
                                           FitOptions options, const SweepGrid& grid, int part, int parts) {
    if (parts < 1 || part < 0 || part >= parts)
        throw Error("sweep: part " + std::to_string(part) + " of " + std::to_string(parts) + " does not exist");
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
    if (optimizer.learning_rate_schedule.kind != ScheduleKind::constant &&
        (!grid.learning_rates.empty() || !grid.points.empty()))  // (a member's rate would replace the schedule)
        throw Error("sweep: the optimizer's learning rate follows a " + schedule_name(optimizer.learning_rate_schedule.kind) +
                    "; a grid of learning rates needs a constant rate");
    const auto positive = [](const std::vector<int64_t>& values, const char* axis) {
        for (int64_t v : values)
            if (v < 1) throw Error(std::string("sweep: ") + axis + " must be at least 1, got " + std::to_string(v));
    };
    positive(grid.hidden_units, "hidden_units"), positive(grid.batch_sizes, "batch_size"), positive(grid.epochs, "epochs");
    for (float r : grid.dropout_rates)
        if (!(r >= 0 && r < 1)) throw Error("sweep: a dropout rate must be in [0, 1), got " + std::to_string(r));
    if (grid.folds == 1 || grid.folds < 0) throw Error("sweep: k-fold needs at least 2 folds, got " + std::to_string(grid.folds));
    if (grid.shuffle_splits < 0 || grid.bootstraps < 0) throw Error("sweep: the number of samples must be positive");
    if ((grid.folds > 0) + (grid.shuffle_splits > 0) + (grid.bootstraps > 0) > 1)
        throw Error("sweep: give one of k-fold, random splits and bootstrap samples");
    // An axis the model has nothing for would label identical members as different.
    int64_t dense_layers = 0, dropout_layers = 0;
    for (const Layer& l : model.layers())
        dense_layers += l.kind == Layer::Kind::Dense, dropout_layers += l.kind == Layer::Kind::Dropout;
    if (!grid.hidden_units.empty() && dense_layers < 2)
        throw Error("sweep: the units axis sets the units of every Dense layer but the last, and the model has no "
                    "other Dense layer");
    if (!grid.dropout_rates.empty() && dropout_layers == 0)
        throw Error("sweep: the dropout axis sets the rate of every Dropout layer, and the model has none");
    const auto count = [](size_t n) { return static_cast<double>(std::max<size_t>(n, 1)); };
    const double member_count =
        (grid.points.empty() ? count(rates.size()) * count(seeds.size()) : count(grid.points.size())) *
        count(grid.optimizers.size()) * count(grid.losses.size()) * count(grid.hidden_units.size()) *
        count(grid.dropout_rates.size()) * count(grid.batch_sizes.size()) * count(grid.epochs.size()) *
        std::max(1.0, static_cast<double>(grid.folds) + static_cast<double>(grid.shuffle_splits) +
                          static_cast<double>(grid.bootstraps));
    if (member_count > static_cast<double>(kMaxSweepMembers))
        throw Error("sweep: " + std::to_string(static_cast<long long>(member_count)) + " members, more than the " +
                    std::to_string(kMaxSweepMembers) + " one sweep trains; split the grid");

    // What members train on: x and y, or each fold's split with the fold as validation data;
    // one entry per (batch size, epochs, fold).
    std::vector<TrainTestSplit> splits;
    if (grid.folds > 0 || grid.shuffle_splits > 0 || grid.bootstraps > 0) {
        if (options.validation_split > 0 || options.validation_data || options.validation_dataset)
            throw Error("sweep: k-fold and resampling validate each member on what its sample left out; give no "
                        "validation_split or validation_data");
        if (x.rows() != y.rows())
            throw Error("sweep: x has " + std::to_string(x.rows()) + " rows but y has " + std::to_string(y.rows()));
    }
    if (grid.folds >= 2) {
        const std::vector<int64_t> classes = row_classes(y, loss, model.layers().back());
        const std::vector<int64_t> assignment =
            classes.empty() ? kfold_assignment(x.rows(), grid.folds, grid.fold_shuffle_seed)
                            : stratified_kfold_assignment(classes, grid.folds, grid.fold_shuffle_seed);
        for (int64_t f = 0; f < grid.folds; ++f) splits.push_back(fold_split(x, y, assignment, f));
    }
    for (int64_t i = 0; i < grid.shuffle_splits; ++i)
        splits.push_back(train_test_split(x, y, grid.split_test_size, true, grid.split_seed + static_cast<uint64_t>(i)));
    for (int64_t i = 0; i < grid.bootstraps; ++i)
        splits.push_back(bootstrap_split(x, y, grid.split_seed + static_cast<uint64_t>(i)));
    const int64_t folds = std::max<int64_t>(static_cast<int64_t>(splits.size()), 1);
    std::vector<MemberData> data;
    // (by loss too: the labels are checked against the loss they train under)
    std::map<std::tuple<int64_t, int64_t, int64_t, std::string>, size_t> data_index;
    const auto data_for = [&](const Variant& v, int64_t fold) {
        const int64_t batch = v.batch_size ? v.batch_size : options.batch_size, epochs = v.epochs ? v.epochs : options.epochs;
        const auto [it, added] = data_index.emplace(std::tuple(batch, epochs, fold, v.loss), data.size());
        if (added) {
            FitOptions o = options;
            o.batch_size = batch, o.epochs = epochs;
            if (fold < 0) {
                data.push_back({&x, &y, std::move(o), nullptr});
            } else {
                const TrainTestSplit& s = splits[static_cast<size_t>(fold)];
                o.validation_data = std::pair(s.x_test, s.y_test);
                data.push_back({&s.x_train, &s.y_train, std::move(o), nullptr});
            }
        }
        return it->second;
    };

    const std::vector<Variant> variants = grid_variants(grid);
    std::vector<SweepMember> members;
    std::vector<size_t> data_of, variant_of;  // each member's entries in data and variants
    for (size_t v = 0; v < variants.size(); ++v) {
        const auto add = [&](float rate, uint64_t seed) {
            for (int64_t f = 0; f < folds; ++f) {
                const int64_t fold = splits.empty() ? -1 : f;
                data_of.push_back(data_for(variants[v], fold));
                variant_of.push_back(v);
                SweepMember m;
                m.learning_rate = rate, m.seed = seed, m.fold = fold;
                m.optimizer = variants[v].optimizer.empty() ? optimizer_name(optimizer.kind) : variants[v].optimizer;
                m.loss = variants[v].loss.empty() ? loss_name(loss.kind) : canonical_loss_name(variants[v].loss);
                m.hidden_units = variants[v].hidden_units, m.dropout_rate = variants[v].dropout_rate;
                m.batch_size = data[data_of.back()].options.batch_size, m.epochs = data[data_of.back()].options.epochs;
                members.push_back(std::move(m));
            }
        };
        for (const SweepPoint& p : grid.points) add(p.learning_rate, p.seed);
        if (grid.points.empty())
            for (float rate : rates)
                for (uint64_t seed : seeds) add(rate, seed);
    }
    // This part's members only (contiguous, so a part's stacks are those the whole sweep's
    // would be, but for the stacks it cuts); `offset` names them by their place in the whole.
    const size_t total = members.size(), offset = total * static_cast<size_t>(part) / static_cast<size_t>(parts),
                 end = total * static_cast<size_t>(part + 1) / static_cast<size_t>(parts);
    members = std::vector<SweepMember>(std::make_move_iterator(members.begin() + static_cast<ptrdiff_t>(offset)),
                                       std::make_move_iterator(members.begin() + static_cast<ptrdiff_t>(end)));
    data_of = std::vector<size_t>(data_of.begin() + static_cast<ptrdiff_t>(offset), data_of.begin() + static_cast<ptrdiff_t>(end));
    variant_of =
        std::vector<size_t>(variant_of.begin() + static_cast<ptrdiff_t>(offset), variant_of.begin() + static_cast<ptrdiff_t>(end));
    if (members.empty()) return members;  // (more parts than members)
    const auto name = [&](size_t i) { return member_name(offset + i, members[i]); };
    // Every member's model, built and compiled (microseconds each: weights from its seed).
    std::vector<Sequential> models;
    models.reserve(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
        try {
            models.push_back(sweep_member_model(model, optimizer, loss, compile_options, members[i]));
        } catch (const std::exception& e) {
            throw Error(name(i) + ": " + e.what());
        }
    }
    // Each data entry checked and planned once (every member's is the same but for its seed; a
    // plan's error is each member's, named by the first's), then which members can stack.
    for (size_t d = 0; d < data.size(); ++d) {
        const size_t first = static_cast<size_t>(std::find(data_of.begin(), data_of.end(), d) - data_of.begin());
        if (first == data_of.size()) continue;  // another part's
        std::vector<std::string> warnings;
        data[d].fit = std::make_unique<train::ArrayFit>();
        try {
            train::prepare_array_fit(models[first].program(), *data[d].x, *data[d].y, data[d].options, warnings,
                                     *data[d].fit);
        } catch (const std::exception& e) {
            throw Error(name(first) + ": " + e.what());
        }
        train::complete_plan(data[d].fit->plan, data[d].fit->rest, 0);
    }
    const std::vector<nn::Metric> metrics = train::plan_metrics(models.front().program(), data[data_of.front()].fit->plan);
    std::vector<char> stacks(members.size(), 0);
    std::map<std::pair<size_t, size_t>, bool> can;  // per (data, variant)
    for (size_t i = 0; i < members.size(); ++i) {
        const auto [it, added] = can.emplace(std::pair(data_of[i], variant_of[i]), false);
        if (added)
            it->second = options.device == Device::cpu && cpu::can_stack(models[i].program(), data[data_of[i]].fit->plan);
        stacks[i] = it->second;
    }
    // Stacks pay once they fill every thread (SweepStacking); fewer members run side by side.
    const size_t stackable = static_cast<size_t>(std::count(stacks.begin(), stacks.end(), 1));
    const size_t full = static_cast<size_t>(cpu::stack_lanes() * ThreadPool::instance().num_threads());
    if (grid.stacking == SweepStacking::never || (grid.stacking == SweepStacking::automatic && stackable < full))
        std::fill(stacks.begin(), stacks.end(), 0);
    // On the GPU: each data group and variant in ONE launch, a block per member; a model too
    // large for one block leaves its members to the separate fits below.
    std::vector<char> done(members.size(), 0);
    if (options.device == Device::cuda) {
        const std::vector<char> together(members.size(), 1);
        for (const std::vector<size_t>& task : member_tasks(data_of, variant_of, data, together, kMaxBlocks)) {
            try {
                if (fit_together(task, models, members, data_of, data, metrics, cuda::fit_members))
                    for (size_t i : task) done[i] = 1;
            } catch (const std::exception& e) {
                throw Error(name(task.front()) + ": " + e.what());
            }
        }
    }
    const std::vector<std::vector<size_t>> tasks =
        member_tasks(data_of, variant_of, data, stacks, static_cast<size_t>(cpu::stack_lanes()));
    std::vector<std::exception_ptr> errors(tasks.size());
    ThreadPool::instance().parallel_for(static_cast<int64_t>(tasks.size()), [&](int64_t t) {
        const std::vector<size_t>& task = tasks[static_cast<size_t>(t)];
        if (done[task.front()]) return;
        try {  // (tasks must not throw)
            if (!stacks[task.front()]) {
                const size_t i = task.front();
                const MemberData& d = data[data_of[i]];
                members[i].history = models[i].fit(*d.x, *d.y, d.options);
                members[i].weights = models[i].get_weights();
            } else {
                fit_together(task, models, members, data_of, data, metrics, cpu::fit_stacked);
            }
        } catch (...) {
            errors[static_cast<size_t>(t)] = std::current_exception();
        }
    });
    // The first failed member in member order, named.
    size_t failed = members.size();
    std::exception_ptr error;
    for (size_t t = 0; t < tasks.size(); ++t)
        if (errors[t] && tasks[t].front() < failed) failed = tasks[t].front(), error = errors[t];
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            throw Error(name(failed) + ": " + e.what());
        }
    }
    return members;
}

}  // namespace onefit
