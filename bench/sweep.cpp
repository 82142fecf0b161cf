// sweep_1000_iris_ms: 1000 seed-shaped Iris members (10 learning rates x 100 seeds; Dense(32,
// relu) -> Dense(3, softmax), Adam, log_cosh, batch 20, 20 epochs, unshuffled, validation on)
// through onefit::sweep (stacked in SIMD lanes, the stacks spread over the cores), beside the same
// 1000 fits one after another (separate_1000_iris_ms, as a loop over fit would run them), paired
// rounds; sweep_vs_separate is the median of the per-round ratios (issue 14's target: >= 4x).
// kfold5_iris_ms: 5-fold cross-validation of the seed's model on all 150 rows (stratified folds
// of 120 + 30 rows) as one sweep, beside the 5 fits on the fold splits one after another;
// kfold5_vs_separate is their paired median ratio (target: >= 3x).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "machine.hpp"
#include "onefit/onefit.hpp"

int main(int argc, char** argv) {
    using namespace onefit;
    using clock = std::chrono::steady_clock;
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.30, false);
    FitOptions options;
    options.batch_size = 20, options.epochs = 20, options.verbose = 0, options.shuffle = false;
    options.validation_data = {d.x_test, d.y_test};
    SweepGrid grid;
    for (int i = 0; i < 10; ++i) grid.learning_rates.push_back(0.001f * static_cast<float>(1 << i));
    for (uint64_t s = 0; s < 100; ++s) grid.seeds.push_back(s);
    Sequential layers({4});
    layers.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    const Loss loss = loss_from_name("logcosh");

    const auto ms = [](clock::time_point a, clock::time_point b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
    };
    std::vector<double> sweep_ms, separate_ms, ratio;
    double largest_difference = 0;  // between a member's final val_loss and its separate fit's
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = clock::now();
        const std::vector<SweepMember> members = sweep(layers, Adam(), loss, {}, d.x_train, d.y_train, options, grid);
        const auto t1 = clock::now();
        std::vector<double> separate_val_loss;
        for (float rate : grid.learning_rates)
            for (uint64_t seed : grid.seeds) {
                Sequential m({4}, seed);
                m.add(Dense(32, "relu")).add(Dense(3, "softmax"));
                m.compile(Adam(rate), loss);
                separate_val_loss.push_back(m.fit(d.x_train, d.y_train, options)["val_loss"].back());
            }
        const auto t2 = clock::now();
        for (size_t i = 0; i < members.size(); ++i)
            largest_difference = std::max(largest_difference, std::abs(members[i].history.history.at("val_loss").back() -
                                                                       separate_val_loss[i]));
        sweep_ms.push_back(ms(t0, t1));
        separate_ms.push_back(ms(t1, t2));
        ratio.push_back(separate_ms.back() / sweep_ms.back());
    }
    // 5-fold cross-validation: one sweep against five fits on the fold splits.
    std::vector<double> kfold_ms, kfold_separate_ms, kfold_ratio;
    SweepGrid folds{{0.01f}, {0}};
    folds.folds = 5;
    FitOptions cv = options;
    cv.validation_data.reset();
    std::vector<int64_t> classes;
    for (int64_t i = 0; i < iris.y.rows(); ++i) classes.push_back(static_cast<int64_t>(iris.y[i]));
    const std::vector<int64_t> assignment = stratified_kfold_assignment(classes, 5);
    std::vector<TrainTestSplit> splits;
    for (int64_t f = 0; f < 5; ++f) splits.push_back(fold_split(iris.x, iris.y, assignment, f));
    for (int r = 0; r < rounds * 20; ++r) {  // (each round is 100x shorter than the 1000-member one)
        const auto t0 = clock::now();
        sweep(layers, Adam(), loss, {}, iris.x, iris.y, cv, folds);
        const auto t1 = clock::now();
        for (const TrainTestSplit& s : splits) {
            Sequential m({4}, 0);
            m.add(Dense(32, "relu")).add(Dense(3, "softmax"));
            m.compile(Adam(0.01f), loss);
            FitOptions o = cv;
            o.validation_data = {s.x_test, s.y_test};
            m.fit(s.x_train, s.y_train, o);
        }
        const auto t2 = clock::now();
        kfold_ms.push_back(ms(t0, t1)), kfold_separate_ms.push_back(ms(t1, t2));
        kfold_ratio.push_back(kfold_separate_ms.back() / kfold_ms.back());
    }
    using bench::median;
    const char* tag = bench::tag().c_str();
    bench::print_machine();
    std::printf("# sweep: 1000 seed-shaped Iris members (10 learning rates x 100 seeds), %d paired rounds, %u logical CPUs; "
                "largest final val_loss difference from the separate fits: %g (0: the same fits)\n",
                rounds, std::thread::hardware_concurrency(), largest_difference);
    std::printf("sweep_1000_iris_ms: %.2f ms %s\n", median(sweep_ms), tag);
    std::printf("separate_1000_iris_ms: %.2f ms %s\n", median(separate_ms), tag);
    std::printf("sweep_vs_separate: %.2f x (paired median of separate / sweep)\n", median(ratio));
    std::printf("sweep_member_us: %.2f us (one member's share of the sweep)\n", median(sweep_ms));  // ms per 1000 = us per member
    std::printf("kfold5_iris_ms: %.3f ms %s\n", median(kfold_ms), tag);
    std::printf("separate_kfold5_iris_ms: %.3f ms %s\n", median(kfold_separate_ms), tag);
    std::printf("kfold5_vs_separate: %.2f x (paired median of 5 separate fold fits / one 5-fold sweep)\n", median(kfold_ratio));
}
