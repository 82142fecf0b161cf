// run_sweep: the data and model exactly as `onefit fit` loads and builds them (same config and
// flags), one member per grid point (and fold, with --kfold), then the members ranked by their
// last validation loss (the training loss without validation data; with folds, the mean over
// a configuration's folds).
#include "sweep_command.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "fit_command.hpp"
#include "model_commands.hpp"
#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"

namespace onefit::cli {
namespace {

template <class T>
T parse_number(const std::string& text, const std::string& flag) {
    T value{};
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end) throw Error(flag + ": '" + text + "' is not a number");
    return value;
}

// "a,b,c" or, for integers, "first..last" (inclusive).
template <class T>
std::vector<T> parse_values(const std::string& list, const std::string& axis) {
    std::vector<T> values;
    if (const size_t dots = list.find(".."); std::is_integral_v<T> && dots != std::string::npos) {
        const T first = parse_number<T>(list.substr(0, dots), "--grid " + axis),
                last = parse_number<T>(list.substr(dots + 2), "--grid " + axis);
        if (last < first) throw Error("--grid " + axis + "=" + list + ": the range is empty");
        if (static_cast<uint64_t>(last) - static_cast<uint64_t>(first) >= static_cast<uint64_t>(kMaxSweepMembers))
            throw Error("--grid " + axis + "=" + list + ": more than the " + std::to_string(kMaxSweepMembers) +
                        " members one sweep trains");
        for (T v = first; v <= last; ++v) values.push_back(v);
        return values;
    }
    size_t start = 0;
    for (;;) {
        const size_t comma = list.find(',', start);
        values.push_back(parse_number<T>(list.substr(start, comma - start), "--grid " + axis));
        if (comma == std::string::npos) return values;
        start = comma + 1;
    }
}

// "adam,sgd": names, each checked now (`check` throws Error naming an unknown one) so a typo
// fails before training.
template <class Check>
std::vector<std::string> parse_names(const std::string& list, Check&& check) {
    std::vector<std::string> names;
    for (size_t start = 0;;) {
        const size_t comma = list.find(',', start);
        names.push_back(list.substr(start, comma - start));
        check(names.back());
        if (comma == std::string::npos) return names;
        start = comma + 1;
    }
}

SweepGrid parse_grid(const std::vector<std::string>& specs) {
    SweepGrid grid;
    for (const std::string& spec : specs) {
        const size_t eq = spec.find('=');
        if (eq == std::string::npos) throw Error("--grid " + spec + ": expected AXIS=VALUES, e.g. learning_rate=0.001,0.01");
        const std::string axis = spec.substr(0, eq), values = spec.substr(eq + 1);
        if (axis == "learning_rate") grid.learning_rates = parse_values<float>(values, axis);
        else if (axis == "seed") grid.seeds = parse_values<uint64_t>(values, axis);
        else if (axis == "units") grid.hidden_units = parse_values<int64_t>(values, axis);
        else if (axis == "dropout") grid.dropout_rates = parse_values<float>(values, axis);
        else if (axis == "batch_size") grid.batch_sizes = parse_values<int64_t>(values, axis);
        else if (axis == "epochs") grid.epochs = parse_values<int64_t>(values, axis);
        else if (axis == "optimizer") grid.optimizers = parse_names(values, [](const std::string& n) { return optimizer_from_name(n); });
        else if (axis == "loss") grid.losses = parse_names(values, [](const std::string& n) { return loss_from_name(n); });
        else throw Error("--grid " + axis + ": the axes are learning_rate, seed, optimizer, loss, units, dropout, "
                         "batch_size and epochs");
    }
    return grid;
}

// --random N --range learning_rate=LOW:HIGH[:log]: N members, rates drawn from the range (log-
// uniformly with :log), seeds from the config's seed up.
std::vector<SweepPoint> parse_random(int64_t count, const std::string& range, uint64_t seed) {
    const std::string prefix = "learning_rate=";
    if (range.rfind(prefix, 0) != 0)
        throw Error("--range " + range + ": expected learning_rate=LOW:HIGH or learning_rate=LOW:HIGH:log");
    std::string bounds = range.substr(prefix.size());
    bool log_scale = false;
    if (bounds.size() > 4 && bounds.compare(bounds.size() - 4, 4, ":log") == 0) log_scale = true, bounds.resize(bounds.size() - 4);
    const size_t colon = bounds.find(':');
    if (colon == std::string::npos) throw Error("--range " + range + ": expected LOW:HIGH");
    const float low = parse_number<float>(bounds.substr(0, colon), "--range " + range);
    const float high = parse_number<float>(bounds.substr(colon + 1), "--range " + range);
    return random_points(count, low, high, log_scale, seed, seed);
}

// What members are ranked by: a log's last value (--rank-by; else val_loss, or loss without
// validation), lower first unless the log is an accuracy or an AUC.
struct Ranking {
    std::string key;
    bool higher_is_better = false;
};

Ranking ranking_for(const std::string& requested, const std::vector<SweepMember>& members, const SweepGrid& grid) {
    const auto& logs = members.front().history.history;
    if (requested.empty() && !grid.losses.empty())
        throw Error("sweep: members trained with different losses log incomparable loss values; rank them by a "
                    "metric, e.g. --rank-by val_accuracy");
    Ranking r{requested.empty() ? (logs.count("val_loss") ? "val_loss" : "loss") : requested};
    if (!logs.count(r.key)) {
        std::string names;
        for (const auto& [name, values] : logs) names += (names.empty() ? "" : ", ") + name;
        throw Error("--rank-by " + r.key + ": the members logged " + names);
    }
    r.higher_is_better = r.key.find("accuracy") != std::string::npos || r.key.find("auc") != std::string::npos;
    return r;
}

double score(const SweepMember& m, const Ranking& r) {
    const std::vector<double>& values = m.history.history.at(r.key);
    return values.empty() ? std::nan("") : values.back();
}

// Mean and sample standard deviation (0 for one value).
std::pair<double, double> mean_and_sd(const std::vector<double>& values) {
    double mean = 0, var = 0;
    for (double v : values) mean += v;
    mean /= static_cast<double>(values.size());
    for (double v : values) var += (v - mean) * (v - mean);
    return {mean, values.size() < 2 ? 0.0 : std::sqrt(var / static_cast<double>(values.size() - 1))};
}

// A configuration (every axis's value) and its members: one, or one per fold.
struct Configuration {
    float learning_rate;
    uint64_t seed;
    double mean, sd;  // of its members' scores
    std::vector<const SweepMember*> members;
};

// The values of the axes beside learning rate and seed, for the text table: "" when none varies.
std::string other_axes(const SweepMember& m, const SweepGrid& grid) {
    std::string text;
    const auto add = [&](bool swept, const std::string& item) { text += swept ? (text.empty() ? "" : " ") + item : ""; };
    add(!grid.optimizers.empty(), m.optimizer);
    add(!grid.losses.empty(), m.loss);
    add(!grid.hidden_units.empty(), "units=" + std::to_string(m.hidden_units));
    char rate[32];
    std::snprintf(rate, sizeof rate, "dropout=%g", static_cast<double>(m.dropout_rate));
    add(!grid.dropout_rates.empty(), rate);
    add(!grid.batch_sizes.empty(), "batch_size=" + std::to_string(m.batch_size));
    add(!grid.epochs.empty(), "epochs=" + std::to_string(m.epochs));
    return text;
}

// The sweep's configurations, best mean score first (a member order that keeps folds together).
std::vector<Configuration> rank_configurations(const std::vector<SweepMember>& members, const Ranking& ranking) {
    using Key = std::tuple<std::string, std::string, int64_t, float, int64_t, int64_t, float, uint64_t>;
    std::map<Key, std::vector<const SweepMember*>> by_point;
    for (const SweepMember& m : members)
        by_point[Key{m.optimizer, m.loss, m.hidden_units, m.dropout_rate, m.batch_size, m.epochs, m.learning_rate, m.seed}]
            .push_back(&m);
    std::vector<Configuration> ranked;
    for (const auto& [point, of] : by_point) {
        std::vector<double> scores;
        for (const SweepMember* m : of) scores.push_back(score(*m, ranking));
        const auto [mean, sd] = mean_and_sd(scores);
        ranked.push_back({of.front()->learning_rate, of.front()->seed, mean, sd, of});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [&](const Configuration& a, const Configuration& b) {
        if (std::isnan(a.mean) || std::isnan(b.mean)) return std::isnan(b.mean) && !std::isnan(a.mean);
        return ranking.higher_is_better ? a.mean > b.mean : a.mean < b.mean;
    });
    return ranked;
}

// Per learning rate with several seeds: the mean and standard deviation of the ranking score
// over its seeds, best mean first (how much of a rate's result is its seed's luck). Not when
// other axes vary too (a rate's configurations would then differ in more than their seed).
void print_rate_summary(const std::vector<Configuration>& ranked, const SweepGrid& grid, const Ranking& ranking) {
    if (!grid.optimizers.empty() || !grid.losses.empty() || !grid.hidden_units.empty() || !grid.dropout_rates.empty() ||
        !grid.batch_sizes.empty() || !grid.epochs.empty())
        return;
    std::map<float, std::vector<double>> by_rate;
    for (const Configuration& c : ranked) by_rate[c.learning_rate].push_back(c.mean);
    if (by_rate.empty() || by_rate.begin()->second.size() < 2) return;
    std::vector<std::tuple<double, double, float, size_t>> rows;  // mean, std, rate, seeds
    for (const auto& [rate, scores] : by_rate) {
        const auto [mean, sd] = mean_and_sd(scores);
        rows.emplace_back(mean, sd, rate, scores.size());
    }
    std::sort(rows.begin(), rows.end());
    if (ranking.higher_is_better) std::reverse(rows.begin(), rows.end());
    std::printf("by learning_rate, the last %s over seeds (mean, standard deviation):\n", ranking.key.c_str());
    for (const auto& [mean, sd, rate, n] : rows)
        std::printf("  %13g  %12.6f  %12.6f  (%zu seeds)\n", static_cast<double>(rate), mean, sd, n);
}

// A ranked configuration trained again alone: bit-identical to its member without folds; with
// folds, on every training row (scikit-learn's refit).
Sequential refit(const FitConfig& config, const SplitData& data, FitOptions options, const Configuration& c) {
    const SweepMember& m = *c.members.front();
    Sequential model = sweep_member_model(model_from(config, data.sample_shape),
                                          config_optimizer(config),
                                          loss_from_name(config.loss), CompileOptions{config.metrics}, m);
    options.verbose = 0, options.batch_size = m.batch_size, options.epochs = m.epochs;
    model.fit(data.x_train, data.y_train, options);
    model.class_names = data.class_names;
    return model;
}

// --save-best DIR: the best configuration refitted and saved as `onefit fit --save` saves; with
// --ensemble K, the best K as an ensemble folder that `onefit predict` averages.
void save_best(const FitConfig& config, const SplitData& data, const FitOptions& options,
               const std::vector<Configuration>& ranked, int64_t ensemble, const std::string& dir, std::ostream& say) {
    const bool folds = ranked.front().members.front()->fold >= 0;
    const char* how = folds ? "trained again on every training row" : "trained again alone";
    if (ensemble == 0) {
        const SweepMember& m = *ranked.front().members.front();
        save_model(refit(config, data, options, ranked.front()), dir, m.epochs, options.seed);
        say << "saved: " << dir << " (learning_rate " << m.learning_rate << ", seed " << m.seed << "; " << how << ")\n";
        return;
    }
    std::vector<Sequential> members;
    for (size_t k = 0; k < ranked.size() && k < static_cast<size_t>(ensemble); ++k)
        members.push_back(refit(config, data, options, ranked[k]));
    save_ensemble(members, dir);
    say << "saved: " << dir << " (an ensemble of the best " << members.size() << ", each " << how
        << "; onefit predict averages them)\n";
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, SweepFlags& flags) {
    CLI::App* sweep = app.add_subcommand(
        "sweep", "Train the fit a config describes once per grid point (learning rates x seeds), small members "
                 "stacked in SIMD lanes on every core, and rank them. Takes every `onefit fit` argument.");
    sweep->footer(
        "Examples:\n"
        "  onefit sweep --grid learning_rate=0.001,0.01,0.1 --grid seed=0..9\n"
        "  onefit sweep examples/iris.json --grid seed=0..99 --top 10 --json\n"
        "  onefit sweep --random 200 --range learning_rate=1e-4:1e-1:log --csv\n"
        "  onefit sweep --grid learning_rate=0.01,0.1 --kfold 5 --save-best best_model\n"
        "  onefit sweep --grid seed=0..19 --save-best top5 --ensemble 5 && onefit predict --model top5");
    sweep->add_option("--grid", flags.grid, "An axis and its values: learning_rate=A,B,... seed=A,B,... or FIRST..LAST, "
                                            "optimizer=adam,sgd,... loss=mse,log_cosh,... units=A,B,... (every hidden Dense layer), "
                                            "dropout=A,B,... batch_size=A,B,... epochs=A,B,...")
        ->type_name("AXIS=VALUES");
    sweep->add_option("--random", flags.random, "Instead of --grid: N members, learning rates drawn from --range, "
                                                "seeds from the config's seed up")
        ->check(CLI::Range(int64_t{1}, kMaxSweepMembers));
    sweep->add_option("--range", flags.range, "For --random: learning_rate=LOW:HIGH, or LOW:HIGH:log for log-uniform draws")
        ->type_name("AXIS=LOW:HIGH[:log]");
    sweep->add_option("--kfold", flags.kfold, "K-fold cross-validation: each configuration trained on K-1 folds and "
                                               "validated on the last, K times (stratified for class labels); "
                                               "ranked by the mean over its folds")
        ->check(CLI::Range(int64_t{2}, int64_t{1000000}))
        ->type_name("K");
    CLI::Option* kfold = sweep->get_option("--kfold");
    sweep->add_flag("--shuffle-folds", flags.shuffle_folds, "With --kfold: each fold's rows drawn at random (by the "
                                                            "config's seed), as scikit-learn's shuffle=True");
    CLI::Option* splits =
        sweep->add_option("--shuffle-splits", flags.shuffle_splits,
                          "Instead of --kfold: N random splits (scikit-learn's ShuffleSplit), each validating on "
                          "--split-size of the rows")
            ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
            ->type_name("N")
            ->excludes(kfold);
    sweep->add_option("--split-size", flags.split_size, "For --shuffle-splits: the fraction validated on (default 0.2)")
        ->check(CLI::Range(0.0, 1.0))
        ->type_name("F");
    sweep->add_option("--bootstrap", flags.bootstrap,
                      "Instead of --kfold: N bootstrap samples (rows drawn with replacement), each validating on "
                      "the rows it left out")
        ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
        ->type_name("N")
        ->excludes(kfold)
        ->excludes(splits);
    sweep->add_option("--save-best", flags.save_best, "Train the best configuration again and save it into this folder, "
                                                      "as `onefit fit --save` (with --kfold: on every row)")
        ->type_name("DIR");
    sweep->add_option("--ensemble", flags.ensemble, "With --save-best DIR: save the best K configurations, each trained "
                                                    "again, as an ensemble that `onefit predict --model DIR` averages")
        ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
        ->type_name("K");
    sweep->add_option("--rank-by", flags.rank_by, "The log to rank by, its last value (default val_loss, or loss "
                                                  "without validation; higher first for accuracies and AUCs); needed "
                                                  "when the grid sweeps losses")
        ->type_name("LOG");
    sweep->add_option("--report", flags.report, "Also write a self-contained HTML page: the best members' curves and "
                                                "the ranking log against each axis swept")
        ->type_name("FILE.html");
    sweep->add_option("--top", flags.top, "How many of the best members to print (default 5)")
        ->check(CLI::Range(1, 1'000'000'000));
    CLI::Option* json =
        sweep->add_flag("--json", flags.json, "Print every member (configuration, final logs, history) as one JSON object");
    sweep->add_flag("--csv", flags.csv, "Print every member as a CSV row, ranked: rank, learning_rate, seed, fold, optimizer, units, dropout, batch_size, epochs run, final logs")
        ->excludes(json);
    sweep->allow_extras();
    sweep->prefix_command(false);
    return sweep;
}

int run_sweep(const SweepFlags& flags, const RankGroup* ranks) {
    const bool root = !ranks || ranks->rank() == 0;  // the one that prints
    FitConfig config = fit_config_from(flags.rest, "sweep");
    SweepGrid grid = parse_grid(flags.grid);
    if (flags.random > 0) {
        if (!flags.grid.empty()) throw Error("sweep: give --grid or --random, not both");
        if (flags.range.empty()) throw Error("sweep: --random needs --range learning_rate=LOW:HIGH[:log]");
        grid.points = parse_random(flags.random, flags.range, config.seed);
    } else if (!flags.range.empty()) {
        throw Error("sweep: --range goes with --random N");
    }
    if (config.device != "cpu" && config.device != "auto" && config.device != "cuda")
        throw Error("sweep: --device " + config.device + ": members run on cpu or cuda");
    if (!flags.save_best.empty()) check_parent_exists(flags.save_best, "--save-best");
    if (!flags.save_best.empty() && flags.ensemble == 0) check_model_folder(flags.save_best);
    if (!flags.report.empty()) check_parent_exists(flags.report, "--report");
    if (flags.ensemble > 0 && flags.save_best.empty())
        throw Error("sweep: --ensemble K saves the best K members: give the folder with --save-best DIR");
    const bool text = root && !flags.json && !flags.csv;
    grid.folds = flags.kfold, grid.shuffle_splits = flags.shuffle_splits, grid.bootstraps = flags.bootstrap;
    grid.split_test_size = flags.split_size, grid.split_seed = config.seed;
    if (flags.shuffle_folds) {
        if (flags.kfold == 0) throw Error("sweep: --shuffle-folds goes with --kfold K");
        grid.fold_shuffle_seed = config.seed;
    }
    // Folds or samples of the training rows, each member validated on what its sample left out.
    const int64_t samples = flags.kfold + flags.shuffle_splits + flags.bootstrap;
    const std::string resampling = flags.kfold ? "--kfold " + std::to_string(flags.kfold)
                                 : flags.shuffle_splits ? "--shuffle-splits " + std::to_string(flags.shuffle_splits)
                                                        : "--bootstrap " + std::to_string(flags.bootstrap);
    const char* sample = flags.kfold ? "fold" : flags.shuffle_splits ? "split" : "sample";
    if (samples > 0 && config.validation_split > 0) {  // a test_size split stays held out
        if (text) std::printf("%s: each member validates on what its %s leaves out (validation_split %g not used)\n",
                              resampling.c_str(), sample, config.validation_split);
        config.validation_split = 0;
    }

    SplitData data = split_data(config);
    settle_loss(config, data.y_train, text ? &std::cout : nullptr);
    const Sequential model = model_from(config, data.sample_shape);
    FitOptions options = fit_options(config, data);  // sweep() makes members silent
    // --device cuda: each group of members in one launch, a block each (auto: the CPU, whose
    // stacks the cost model does not yet weigh against a GPU launch).
    if (config.device == "cuda") options.device = Device::cuda;
    if (samples > 0 && data.validation) {
        if (text) std::printf("%s: %ss of the %lld training rows; the %lld test rows are held out\n", resampling.c_str(),
                              sample, static_cast<long long>(data.train_rows), static_cast<long long>(data.validation_rows));
        options.validation_data.reset();
    }
    const auto start = std::chrono::steady_clock::now();
    const Optimizer optimizer = config_optimizer(config);
    const std::vector<SweepMember> members =
        ranks ? sweep(*ranks, model, optimizer, loss_from_name(config.loss), CompileOptions{config.metrics}, data.x_train,
                      data.y_train, options, grid)
              : sweep(model, optimizer, loss_from_name(config.loss), CompileOptions{config.metrics}, data.x_train,
                      data.y_train, options, grid);
    if (!root) return 0;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const Ranking ranking = ranking_for(flags.rank_by, members, grid);
    const std::vector<Configuration> ranked = rank_configurations(members, ranking);
    if (!flags.save_best.empty())
        save_best(config, data, options, ranked, flags.ensemble, flags.save_best, text ? std::cout : std::cerr);
    if (!flags.report.empty()) {
        std::vector<SweepMember> best_first;
        for (const Configuration& c : ranked)
            for (const SweepMember* m : c.members) best_first.push_back(*m);
        write_file_atomically(flags.report, sweep_html(best_first, data.name + ", " + std::to_string(members.size()) +
                                                                       " members", ranking.key));
        (text ? std::cout : std::cerr) << "report: " << flags.report << "\n";
    }
    const bool folds = samples > 0;

    if (flags.json) {
        nlohmann::json out{{"data", data.name}, {"members", nlohmann::json::array()}, {"seconds", seconds}};
        for (const Configuration& c : ranked)
            for (const SweepMember* m : c.members) {
                nlohmann::json logs, history;
                for (const auto& [key, values] : m->history.history) logs[key] = values.back(), history[key] = values;
                nlohmann::json member{{"learning_rate", m->learning_rate}, {"seed", m->seed}, {"optimizer", m->optimizer},
                                      {"loss_function", m->loss},
                                      {"batch_size", m->batch_size}, {"epochs", m->epochs}, {"logs", logs},
                                      {"history", history}};
                if (m->hidden_units) member["units"] = m->hidden_units;
                if (m->dropout_rate >= 0) member["dropout"] = m->dropout_rate;
                if (folds) member["fold"] = m->fold;
                out["members"].push_back(std::move(member));
            }
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    if (flags.csv) {
        std::vector<std::string> keys;  // the final logs' names, as History orders them
        if (!members.empty())
            for (const auto& [key, values] : members.front().history.history) keys.push_back(key);
        std::printf("rank,learning_rate,seed%s,optimizer,loss_function,units,dropout,batch_size,epochs", folds ? ",fold" : "");
        for (const std::string& key : keys) std::printf(",%s", key.c_str());
        std::printf("\n");
        for (size_t rank = 0; rank < ranked.size(); ++rank)
            for (const SweepMember* m : ranked[rank].members) {
                std::printf("%zu,%.9g,%llu", rank + 1, static_cast<double>(m->learning_rate),
                            static_cast<unsigned long long>(m->seed));
                if (folds) std::printf(",%lld", static_cast<long long>(m->fold));
                std::printf(",%s,%s,", m->optimizer.c_str(), m->loss.c_str());
                if (m->hidden_units) std::printf("%lld", static_cast<long long>(m->hidden_units));
                std::printf(",");
                if (m->dropout_rate >= 0) std::printf("%g", static_cast<double>(m->dropout_rate));
                std::printf(",%lld,%zu", static_cast<long long>(m->batch_size), m->history.epoch.size());
                for (const std::string& key : keys) std::printf(",%.9g", m->history.history.at(key).back());
                std::printf("\n");
            }
        return 0;
    }
    const char* by = ranking.key.c_str();
    std::string processes;  // (appended piece by piece: GCC 12 warns falsely on "literal" + string)
    if (ranks && ranks->size() > 1) processes.append(" on ").append(std::to_string(ranks->size())).append(" processes");
    const bool extra = ranking.key != "loss";  // a column of its own beside loss
    if (folds)
        std::printf("%zu members (%zu configurations x %lld %ss) on %s in %.3f s%s, ranked by the mean last %s over "
                    "%ss:\n",
                    members.size(), ranked.size(), static_cast<long long>(samples), sample, data.name.c_str(), seconds,
                    processes.c_str(), by, sample);
    else
        std::printf("%zu members on %s in %.3f s%s, ranked by the last %s:\n", members.size(), data.name.c_str(), seconds,
                    processes.c_str(), by);
    std::printf("%5s  %13s  %20s  %12s  %12s%s\n", "rank", "learning_rate", "seed", "loss", extra ? by : "",
                folds ? (std::string("  sd over ") + sample + "s").c_str() : "");
    for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(flags.top); ++i) {
        const Configuration& c = ranked[i];
        std::vector<double> losses;
        for (const SweepMember* m : c.members) losses.push_back(m->history.history.at("loss").back());
        std::printf("%5zu  %13g  %20llu  %12.6f", i + 1, static_cast<double>(c.learning_rate),
                    static_cast<unsigned long long>(c.seed), mean_and_sd(losses).first);
        if (extra) std::printf("  %12.6f", c.mean);
        if (folds) std::printf("  %12.6f", c.sd);
        const std::string others = other_axes(*c.members.front(), grid);
        if (!others.empty()) std::printf("  %s", others.c_str());
        std::printf("\n");
    }
    print_rate_summary(ranked, grid, ranking);
    return 0;
}

}  // namespace onefit::cli
