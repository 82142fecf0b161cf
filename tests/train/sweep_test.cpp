// sweep(): every member bit-identical to its configuration built, compiled and fitted alone,
// with shuffling, dropout and validation on (members fitted side by side) and for members stacked
// in SIMD lanes (runtime/cpu/stacked_fit.hpp) on every SIMD target this CPU has; the grid's
// order; errors that name the member.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "runtime/cpu/cpu_simd.hpp"
#include "support/test_files.hpp"
#include "support/weights.hpp"
#include "onefit/onefit.hpp"
#include "train/fit_setup.hpp"

namespace onefit {
namespace {

Sequential layers_only(uint64_t seed) {
    Sequential model({4}, seed);
    model.add(Dense(16, "relu")).add(Dropout(0.2f)).add(Dense(3, "softmax"));
    return model;
}

FitOptions fit_options() {
    FitOptions o;
    o.batch_size = 16, o.epochs = 4, o.validation_split = 0.2, o.verbose = 0;
    return o;
}

// Whether sweep() stacks members of this configuration (or fits them side by side).
bool stacks(Sequential model, const Optimizer& optimizer, const Loss& loss, const CompileOptions& compile,
            const Tensor& x, const Tensor& y, const FitOptions& options) {
    model.compile(optimizer, loss, compile);
    train::ArrayFit fit;
    std::vector<std::string> warnings;
    train::prepare_array_fit(model.program(), x, y, options, warnings, fit);
    train::complete_plan(fit.plan, fit.rest, 0);
    return cpu::can_stack(model.program(), fit.plan);
}

// Members fitted side by side (a layer of 16 x 40 >= 512 weights goes to BLAS, which the stack
// does not take).
Sequential side_by_side(uint64_t seed) {
    Sequential model({4}, seed);
    model.add(Dense(16, "relu")).add(Dropout(0.2f)).add(Dense(40, "relu")).add(Dense(3, "softmax"));
    return model;
}

TEST(Sweep, EveryMemberEqualsItsConfigurationFittedAlone) {
    const LabeledData iris = load_iris();
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    const SweepGrid grid{{0.001f, 0.01f, 0.1f}, {3, 4}};
    ASSERT_FALSE(stacks(side_by_side(0), Adam(), loss, CompileOptions{{"accuracy"}}, iris.x, iris.y, fit_options()));
    const std::vector<SweepMember> members =
        sweep(side_by_side(0), Adam(), loss, CompileOptions{{"accuracy"}}, iris.x, iris.y, fit_options(), grid);
    ASSERT_EQ(members.size(), 6u);
    for (size_t i = 0; i < members.size(); ++i) {
        const SweepMember& m = members[i];
        EXPECT_EQ(m.learning_rate, grid.learning_rates[i / 2]) << i;  // learning rate major
        EXPECT_EQ(m.seed, grid.seeds[i % 2]) << i;
        Sequential alone = side_by_side(m.seed);
        alone.compile(Adam(m.learning_rate), loss, CompileOptions{{"accuracy"}});
        const History h = alone.fit(iris.x, iris.y, fit_options());
        EXPECT_TRUE(testing_support::same_bits(m.weights, alone.get_weights())) << i;
        EXPECT_EQ(m.history.history, h.history) << i;
        EXPECT_EQ(m.history.epoch, h.epoch) << i;
    }
    // The grid's points differ: a sweep that fitted one configuration six times would not.
    EXPECT_FALSE(testing_support::same_bits(members[0].weights, members[1].weights));
    EXPECT_FALSE(testing_support::same_bits(members[0].weights, members[2].weights));
}

// The k folds' splits of x, y, stratified by the class of each row (labels in these tests are
// classes: indices in one column, or one-hot rows); none for folds 0.
std::vector<TrainTestSplit> fold_splits(const Tensor& x, const Tensor& y, int64_t folds,
                                        std::optional<uint64_t> shuffle_seed) {
    if (folds == 0) return {};
    std::vector<int64_t> classes;
    for (int64_t r = 0; r < y.rows(); ++r) {
        const int64_t w = y.rank() == 1 ? 1 : y.row_width();
        const float* row = y.data() + r * w;
        classes.push_back(w == 1 ? static_cast<int64_t>(row[0]) : std::max_element(row, row + w) - row);
    }
    const std::vector<int64_t> assignment = stratified_kfold_assignment(classes, folds, shuffle_seed);
    std::vector<TrainTestSplit> splits;
    for (int64_t f = 0; f < folds; ++f) splits.push_back(fold_split(x, y, assignment, f));
    return splits;
}

// Restores the best SIMD target when a test ends.
struct TargetGuard {
    ~TargetGuard() { set_cpu_simd_target(cpu_simd_targets().front()); }
};

// Checks that sweep's members on this configuration take the stacked path and equal their fits
// alone, bit for bit (weights and every History value), on each SIMD target of this CPU.
void expect_stacked_members_equal_fits_alone(const std::function<Sequential(uint64_t)>& layers, const Optimizer& base,
                                             const Loss& loss, const CompileOptions& compile, const Tensor& x,
                                             const Tensor& y, const FitOptions& options, const SweepGrid& grid) {
    TargetGuard guard;
    for (const std::string& target : cpu_simd_targets()) {
        SCOPED_TRACE("SIMD target " + target);
        set_cpu_simd_target(target);
        // the configuration is one sweep() stacks (else this test would pass on the fallback)
        // With folds, each member alone fits on its fold's split (stratified: the labels are classes
        // in these tests), validated on the fold.
        const std::vector<TrainTestSplit> splits = fold_splits(x, y, grid.folds, grid.fold_shuffle_seed);
        FitOptions fold_options = options;
        if (grid.folds) fold_options.validation_data = std::pair(splits[0].x_test, splits[0].y_test);
        ASSERT_TRUE(grid.folds ? stacks(layers(0), base, loss, compile, splits[0].x_train, splits[0].y_train, fold_options)
                               : stacks(layers(0), base, loss, compile, x, y, options));
        SweepGrid stacked = grid;
        stacked.stacking = SweepStacking::always;  // however few members, on however many threads
        const std::vector<SweepMember> members = sweep(layers(0), base, loss, compile, x, y, options, stacked);
        const size_t folds = static_cast<size_t>(std::max<int64_t>(grid.folds, 1));
        ASSERT_EQ(members.size(), grid.learning_rates.size() * grid.seeds.size() * folds);
        for (size_t i = 0; i < members.size(); ++i) {
            const SweepMember& m = members[i];
            EXPECT_EQ(m.learning_rate, grid.learning_rates[i / (grid.seeds.size() * folds)]) << i;
            EXPECT_EQ(m.seed, grid.seeds[i / folds % grid.seeds.size()]) << i;
            EXPECT_EQ(m.fold, grid.folds ? static_cast<int64_t>(i % folds) : -1) << i;
            Sequential alone = layers(m.seed);
            Optimizer optimizer = base;
            optimizer.learning_rate = m.learning_rate;
            alone.compile(optimizer, loss, compile);
            History h;
            if (m.fold >= 0) {
                const TrainTestSplit& s = splits[static_cast<size_t>(m.fold)];
                fold_options.validation_data = std::pair(s.x_test, s.y_test);
                h = alone.fit(s.x_train, s.y_train, fold_options);
            } else {
                h = alone.fit(x, y, options);
            }
            EXPECT_TRUE(testing_support::same_bits(m.weights, alone.get_weights(), true)) << "member " << i;
            EXPECT_EQ(m.history.epoch, h.epoch) << "member " << i;
            ASSERT_EQ(m.history.history.size(), h.history.size()) << "member " << i;
            for (const auto& [key, values] : h.history) {
                const std::vector<double>& got = m.history.history.at(key);
                ASSERT_EQ(got.size(), values.size()) << key;
                for (size_t e = 0; e < values.size(); ++e)  // NaN equals NaN here: bit for bit
                    EXPECT_TRUE(got[e] == values[e] || (std::isnan(got[e]) && std::isnan(values[e])))
                        << "member " << i << " " << key << " epoch " << e << ": " << got[e] << " vs " << values[e];
            }
        }
    }
}

TEST(Sweep, StackedSeedShapedMembersEqualTheirFitsAlone) {
    // The seed's model with accuracy, unshuffled, validation_split; 15 members fill some groups of
    // lanes and leave the last one part-empty.
    const LabeledData iris = load_iris();
    FitOptions o;
    o.batch_size = 20, o.epochs = 5, o.validation_split = 0.3, o.shuffle = false, o.verbose = 0;
    const auto layers = [](uint64_t seed) {
        Sequential m({4}, seed);
        m.add(Dense(32, "relu")).add(Dense(3, "softmax"));
        return m;
    };
    expect_stacked_members_equal_fits_alone(layers, Adam(), loss_from_name("logcosh"), CompileOptions{{"accuracy"}},
                                            iris.x, iris.y, o, SweepGrid{{0.001f, 0.01f, 0.1f}, {0, 1, 2, 3, 4}});
    // Keras's default: shuffled, each member by its own seed (each lane gathers its own rows).
    o.shuffle = true;
    expect_stacked_members_equal_fits_alone(layers, Adam(), loss_from_name("logcosh"), CompileOptions{{"accuracy"}},
                                            iris.x, iris.y, o, SweepGrid{{0.001f, 0.01f, 0.1f}, {0, 1, 2, 3, 4}});
}

TEST(Sweep, StackedMembersOfEveryKernelShapeEqualTheirFitsAlone) {
    // Every dense kernel form: a first layer with (out, in) weights (in > out) and the shared
    // input, an (in, out) layer with relu fused, one too wide to fuse, dot products over more
    // than one vector with padding, a linear output; mse; Nesterov SGD, one member of which
    // diverges (its loss becomes NaN and it stops early, as fit does); shuffled batches with
    // one shuffle seed for all members.
    const LabeledData iris = load_iris();
    FitOptions o;
    o.batch_size = 16, o.epochs = 6, o.validation_split = 0.2, o.seed = 11, o.verbose = 0;
    const auto layers = [](uint64_t seed) {
        Sequential m({4}, seed);
        m.add(Dense(2, "sigmoid")).add(Dense(9, "relu")).add(Dense(20, "relu")).add(Dense(17, "tanh"));
        m.add(Dense(1, "linear"));
        return m;
    };
    Optimizer sgd = SGD(0.01f);
    sgd.momentum = 0.9f, sgd.nesterov = true;
    expect_stacked_members_equal_fits_alone(layers, sgd, loss_from_name("mse"), CompileOptions{{"mae"}}, iris.x, iris.y,
                                            o, SweepGrid{{0.001f, 0.05f, 1e4f}, {5, 6, 7}});
}

TEST(Sweep, StackedClassifiersWithFusedCrossentropyEqualTheirFitsAlone) {
    // Softmax with sparse and one-hot categorical crossentropy, and a sigmoid with binary
    // crossentropy: the loss takes the logits, as in a single fit; RMSprop and Adagrad.
    const LabeledData iris = load_iris();
    FitOptions o;
    o.batch_size = 32, o.epochs = 4, o.validation_split = 0.25, o.verbose = 0;
    const auto softmax = [](uint64_t seed) {
        Sequential m({4}, seed);
        m.add(Dense(12, "tanh")).add(Dense(3, "softmax"));
        return m;
    };
    const SweepGrid grid{{0.002f, 0.02f}, {1, 2, 3}};
    o.shuffle = true;  // each member by its own seed: labels gathered lane by lane
    expect_stacked_members_equal_fits_alone(softmax, RMSprop(), loss_from_name("sparse_categorical_crossentropy"),
                                            CompileOptions{{"accuracy"}}, iris.x, iris.y, o, grid);
    Tensor one_hot({iris.y.rows(), 3});
    Tensor is_setosa({iris.y.rows(), 1});
    for (int64_t r = 0; r < iris.y.rows(); ++r) {
        one_hot.at(r, static_cast<int64_t>(iris.y[r])) = 1.0f;
        is_setosa[r] = iris.y[r] == 0.0f ? 1.0f : 0.0f;
    }
    expect_stacked_members_equal_fits_alone(softmax, Adam(), loss_from_name("categorical_crossentropy"),
                                            CompileOptions{{"accuracy"}}, iris.x, one_hot, o, grid);
    const auto sigmoid = [](uint64_t seed) {
        Sequential m({4}, seed);
        m.add(Dense(6, "relu")).add(Dense(1, "sigmoid"));
        return m;
    };
    expect_stacked_members_equal_fits_alone(sigmoid, Adagrad(), loss_from_name("binary_crossentropy"),
                                            CompileOptions{{"accuracy"}}, iris.x, is_setosa, o, grid);
}

TEST(Sweep, StackedMembersWithDropoutEqualTheirFitsAlone) {
    // Each member draws its own masks (its seed's), shuffled by its own seed, validation off the
    // masks; AdamW.
    const LabeledData iris = load_iris();
    expect_stacked_members_equal_fits_alone(layers_only, AdamW(), loss_from_name("sparse_categorical_crossentropy"),
                                            CompileOptions{{"accuracy"}}, iris.x, iris.y, fit_options(),
                                            SweepGrid{{0.003f, 0.03f}, {4, 5, 6, 7, 8}});
}

TEST(Sweep, StackedKFoldMembersEqualTheirFoldsFittedAlone) {
    // 5 folds of Iris (30 rows each): every member of one data group, each lane its own rows,
    // shuffled by its own seed, validated on its own fold. Then 4 folds (38, 38, 37, 37 rows):
    // two groups of different sizes, each stacked apart.
    const LabeledData iris = load_iris();
    FitOptions o;
    o.batch_size = 20, o.epochs = 4, o.verbose = 0;
    const auto layers = [](uint64_t seed) {
        Sequential m({4}, seed);
        m.add(Dense(32, "relu")).add(Dense(3, "softmax"));
        return m;
    };
    SweepGrid grid{{0.01f, 0.1f}, {3, 4}};
    grid.folds = 5;
    expect_stacked_members_equal_fits_alone(layers, Adam(), loss_from_name("sparse_categorical_crossentropy"),
                                            CompileOptions{{"accuracy"}}, iris.x, iris.y, o, grid);
    grid.folds = 4, o.shuffle = false;
    grid.fold_shuffle_seed = 3;  // shuffled folds: fold_splits draws the same ones
    expect_stacked_members_equal_fits_alone(layers_only, Adam(), loss_from_name("sparse_categorical_crossentropy"),
                                            CompileOptions{{"accuracy"}}, iris.x, iris.y, o, grid);
}

TEST(Sweep, HowMembersRunChangesNoBit) {
    // Stacked, side by side, or as automatic chooses for this many members and threads.
    const LabeledData iris = load_iris();
    SweepGrid grid{{0.01f, 0.05f}, {1, 2, 3}};
    grid.folds = 3;
    FitOptions cv = fit_options();
    cv.validation_split = 0;
    std::vector<std::vector<SweepMember>> runs;  // without folds, then with, for each choice
    for (SweepStacking how : {SweepStacking::always, SweepStacking::never, SweepStacking::automatic}) {
        SweepGrid plain{grid.learning_rates, grid.seeds};
        plain.stacking = grid.stacking = how;
        runs.push_back(sweep(layers_only(0), Adam(), loss_from_name("sparse_categorical_crossentropy"), {}, iris.x,
                             iris.y, fit_options(), plain));
        runs.push_back(sweep(layers_only(0), Adam(), loss_from_name("sparse_categorical_crossentropy"), {}, iris.x,
                             iris.y, cv, grid));
    }
    for (size_t r = 2; r < runs.size(); ++r)
        for (size_t i = 0; i < runs[r].size(); ++i) {
            EXPECT_TRUE(testing_support::same_bits(runs[r][i].weights, runs[r % 2][i].weights)) << r << " " << i;
            EXPECT_EQ(runs[r][i].history.history, runs[r % 2][i].history.history) << r << " " << i;
        }
}

TEST(Sweep, EveryAxisMultipliesAndEachMemberIsItsConfigurationAlone) {
    // Optimizer, hidden units, dropout rate, batch size and epochs (major in that order), then
    // learning rate and seed: 64 members in groups of one shape and schedule, stacked, each
    // equal to the model built with those values and fitted alone.
    const LabeledData iris = load_iris();
    SweepGrid grid{{0.02f}, {1, 2}};
    grid.optimizers = {"adam", "sgd"}, grid.hidden_units = {8, 12}, grid.dropout_rates = {0.1f, 0.3f};
    grid.batch_sizes = {16, 40}, grid.epochs = {2, 3};
    grid.stacking = SweepStacking::always;
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    const std::vector<SweepMember> members = sweep(layers_only(0), Adam(), loss, {}, iris.x, iris.y, fit_options(), grid);
    ASSERT_EQ(members.size(), 64u);
    for (size_t i = 0; i < members.size(); ++i) {
        const SweepMember& m = members[i];
        EXPECT_EQ(m.optimizer, grid.optimizers[i / 32]) << i;
        EXPECT_EQ(m.hidden_units, grid.hidden_units[i / 16 % 2]) << i;
        EXPECT_EQ(m.dropout_rate, grid.dropout_rates[i / 8 % 2]) << i;
        EXPECT_EQ(m.batch_size, grid.batch_sizes[i / 4 % 2]) << i;
        EXPECT_EQ(m.epochs, grid.epochs[i / 2 % 2]) << i;
        EXPECT_EQ(m.seed, grid.seeds[i % 2]) << i;
        Sequential alone({4}, m.seed);
        alone.add(Dense(m.hidden_units, "relu")).add(Dropout(m.dropout_rate)).add(Dense(3, "softmax"));
        Optimizer optimizer = optimizer_from_name(m.optimizer);
        optimizer.learning_rate = m.learning_rate;
        alone.compile(optimizer, loss);
        FitOptions o = fit_options();
        o.batch_size = m.batch_size, o.epochs = m.epochs;
        const History h = alone.fit(iris.x, iris.y, o);
        EXPECT_TRUE(testing_support::same_bits(m.weights, alone.get_weights())) << i;
        EXPECT_EQ(m.history.history, h.history) << i;
    }
    // A loss axis: each member compiled with its loss.
    SweepGrid losses{{0.02f}, {1}};
    losses.losses = {"sparse_categorical_crossentropy", "mse"};
    const std::vector<SweepMember> by_loss = sweep(layers_only(0), Adam(), loss, {}, iris.x, iris.y, fit_options(), losses);
    ASSERT_EQ(by_loss.size(), 2u);
    for (const SweepMember& m : by_loss) {
        Sequential alone = layers_only(1);
        alone.compile(Adam(0.02f), loss_from_name(m.loss));
        const History h = alone.fit(iris.x, iris.y, fit_options());
        EXPECT_TRUE(testing_support::same_bits(m.weights, alone.get_weights())) << m.loss;
        EXPECT_EQ(m.history.history, h.history) << m.loss;
    }
    EXPECT_EQ(by_loss[1].loss, "mean_squared_error");
    grid.hidden_units = {0};
    EXPECT_THROW(sweep(layers_only(0), Adam(), loss, {}, iris.x, iris.y, fit_options(), grid), Error);
    grid.hidden_units = {}, grid.optimizers = {"adamax"};
    EXPECT_THROW(sweep(layers_only(0), Adam(), loss, {}, iris.x, iris.y, fit_options(), grid), Error);
}

TEST(Sweep, RandomSplitAndBootstrapMembersEqualTheirSamplesFittedAlone) {
    // 3 random splits (ShuffleSplit: as many rows each, so they stack together) and 3 bootstrap
    // samples (out-of-bag sizes differ: side by side), seeds from split_seed up.
    const LabeledData iris = load_iris();
    FitOptions o;
    o.batch_size = 16, o.epochs = 3, o.verbose = 0;
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    for (bool bootstrap : {false, true}) {
        SweepGrid grid{{0.01f}, {1, 2}};
        (bootstrap ? grid.bootstraps : grid.shuffle_splits) = 3;
        grid.split_test_size = 0.25, grid.split_seed = 40, grid.stacking = SweepStacking::always;
        const std::vector<SweepMember> members = sweep(layers_only(0), Adam(), loss, {}, iris.x, iris.y, o, grid);
        ASSERT_EQ(members.size(), 6u);
        for (size_t i = 0; i < members.size(); ++i) {
            const SweepMember& m = members[i];
            EXPECT_EQ(m.fold, static_cast<int64_t>(i % 3));
            const uint64_t seed = 40 + static_cast<uint64_t>(m.fold);
            const TrainTestSplit s =
                bootstrap ? bootstrap_split(iris.x, iris.y, seed) : train_test_split(iris.x, iris.y, 0.25, true, seed);
            Sequential alone = layers_only(m.seed);
            alone.compile(Adam(0.01f), loss);
            FitOptions sample = o;
            sample.validation_data = std::pair(s.x_test, s.y_test);
            const History h = alone.fit(s.x_train, s.y_train, sample);
            EXPECT_TRUE(testing_support::same_bits(m.weights, alone.get_weights())) << bootstrap << " " << i;
            EXPECT_EQ(m.history.history, h.history) << bootstrap << " " << i;
        }
    }
    SweepGrid both{{0.01f}, {1}};
    both.folds = 3, both.bootstraps = 2;
    EXPECT_THROW(sweep(layers_only(0), Adam(), loss, {}, iris.x, iris.y, o, both), Error);
}

TEST(Sweep, KFoldOfValuesIsPlainAndRefusesOtherValidation) {
    // One column of values under mse into a linear output is a regression: plain contiguous folds
    // (the stacked test above holds class labels to stratified folds).
    const auto regressor = [](uint64_t seed) {
        Sequential m({4}, seed);
        m.add(Dense(8, "relu")).add(Dense(1));
        return m;
    };
    const LabeledData iris = load_iris();
    FitOptions o;
    o.batch_size = 16, o.epochs = 3, o.verbose = 0;
    SweepGrid grid{{0.01f}, {1}};
    grid.folds = 3;
    const std::vector<SweepMember> members =
        sweep(regressor(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, o, grid);
    ASSERT_EQ(members.size(), 3u);
    const std::vector<int64_t> assignment = kfold_assignment(150, 3);
    for (const SweepMember& m : members) {
        const TrainTestSplit s = fold_split(iris.x, iris.y, assignment, m.fold);
        Sequential alone = regressor(1);
        alone.compile(Adam(0.01f), loss_from_name("mse"));
        FitOptions fold_options = o;
        fold_options.validation_data = std::pair(s.x_test, s.y_test);
        const History h = alone.fit(s.x_train, s.y_train, fold_options);
        EXPECT_TRUE(testing_support::same_bits(m.weights, alone.get_weights())) << m.fold;
        EXPECT_EQ(m.history.history, h.history) << m.fold;
    }
    o.validation_split = 0.2;
    EXPECT_THROW(sweep(regressor(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, o, grid), Error);
    o.validation_split = 0;
    grid.folds = 1;
    EXPECT_THROW(sweep(regressor(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, o, grid), Error);
    grid.folds = 151;
    EXPECT_THROW(sweep(regressor(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, o, grid), Error);
}

TEST(Sweep, RandomPointsAreLogUniformInTheRangeAndRepeatForTheirSeed) {
    const std::vector<SweepPoint> a = random_points(2000, 1e-4f, 1e-1f, true, 10, 7);
    ASSERT_EQ(a.size(), 2000u);
    int per_decade[3] = {0, 0, 0};
    for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_GE(a[i].learning_rate, 1e-4f);
        ASSERT_LE(a[i].learning_rate, 1e-1f);
        EXPECT_EQ(a[i].seed, 10 + i);
        ++per_decade[std::min(2, static_cast<int>(std::floor(std::log10(a[i].learning_rate) + 4)))];
    }
    for (int n : per_decade) EXPECT_NEAR(n, 2000 / 3.0, 100);  // log-uniform: each decade a third
    const std::vector<SweepPoint> again = random_points(2000, 1e-4f, 1e-1f, true, 10, 7);
    const std::vector<SweepPoint> other = random_points(2000, 1e-4f, 1e-1f, true, 10, 8);
    EXPECT_EQ(again[17].learning_rate, a[17].learning_rate);
    EXPECT_NE(other[17].learning_rate, a[17].learning_rate);
    int below_half = 0;  // uniform: half of [0, 1] below 0.5
    for (const SweepPoint& p : random_points(2000, 0.0f, 1.0f, false, 0, 3)) below_half += p.learning_rate < 0.5f;
    EXPECT_NEAR(below_half, 1000, 100);
    EXPECT_THROW(random_points(3, 0.0f, 1.0f, true, 0, 0), Error);
    EXPECT_THROW(random_points(3, 1.0f, 0.5f, false, 0, 0), Error);
    EXPECT_THROW(random_points(0, 0.1f, 0.5f, false, 0, 0), Error);

    // A sweep over points trains exactly those members, in order.
    const LabeledData iris = load_iris();
    SweepGrid grid;
    grid.points = random_points(3, 0.001f, 0.1f, true, 20, 1);
    const std::vector<SweepMember> members =
        sweep(layers_only(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(), grid);
    ASSERT_EQ(members.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(members[i].learning_rate, grid.points[i].learning_rate);
        EXPECT_EQ(members[i].seed, grid.points[i].seed);
    }
    grid.seeds = {1};
    EXPECT_THROW(sweep(layers_only(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(), grid), Error);
}

TEST(Sweep, AnEmptyAxisIsTheModelsOwnValue) {
    const LabeledData iris = load_iris();
    const std::vector<SweepMember> members = sweep(layers_only(7), SGD(0.05f), loss_from_name("mse"), {}, iris.x,
                                                   iris.y, fit_options(), SweepGrid{});
    ASSERT_EQ(members.size(), 1u);
    EXPECT_EQ(members[0].learning_rate, 0.05f);
    EXPECT_EQ(members[0].seed, 7u);
}

TEST(Sweep, AFailingMemberIsNamedAndCallbacksAreRefused) {
    const LabeledData iris = load_iris();
    try {
        sweep(layers_only(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(),
              SweepGrid{{0.01f, -1.0f}, {5}});
        FAIL() << "a negative learning rate must fail";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("sweep member 1 (learning_rate -1.000000, seed 5, adam, mean_squared_error, batch_size 16, epochs 4)"), std::string::npos)
            << e.what();
    }
    EarlyStopping stop;
    FitOptions o = fit_options();
    o.callbacks = {&stop};
    EXPECT_THROW(sweep(layers_only(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, o, SweepGrid{}), Error);
    EXPECT_THROW(sweep(Sequential({4}), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(), SweepGrid{}),
                 Error);
}

TEST(Sweep, AnAxisTheModelHasNothingForOrTooManyMembersAreRefusedBeforeTraining) {
    const LabeledData iris = load_iris();
    Sequential output_only({4}, 0);
    output_only.add(Dense(3, "softmax"));
    const auto error = [&](const Sequential& model, const SweepGrid& grid) {
        return test_files::error_of([&] { sweep(model, Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(), grid); });
    };
    SweepGrid units;
    units.hidden_units = {4, 8};
    EXPECT_NE(error(output_only, units).find("the units axis sets the units of every Dense layer but the last, and the "
                                             "model has no other Dense layer"),
              std::string::npos);
    SweepGrid dropout;
    dropout.dropout_rates = {0.1f, 0.5f};
    EXPECT_NE(error(output_only, dropout).find("the dropout axis sets the rate of every Dropout layer, and the model has none"),
              std::string::npos);
    EXPECT_EQ(sweep(layers_only(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(), dropout).size(), 2u);

    SweepGrid huge;  // 1,000 rates x 1,001 seeds: refused before a member is listed
    for (int i = 0; i < 1000; ++i) huge.learning_rates.push_back(0.001f * static_cast<float>(i + 1));
    for (uint64_t s = 0; s <= 1000; ++s) huge.seeds.push_back(s);
    EXPECT_NE(error(layers_only(0), huge).find("sweep: 1001000 members, more than the 1000000 one sweep trains"),
              std::string::npos);
    EXPECT_THROW(random_points(kMaxSweepMembers + 1, 0.001f, 0.1f, true, 0, 0), Error);
}

}  // namespace
}  // namespace onefit
