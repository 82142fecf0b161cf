// sweep_1000_iris_ms: 1000 seed-shaped Iris members (10 learning rates x 100 seeds; Dense(32,
// relu) -> Dense(3, softmax), Adam, log_cosh, batch 20, 20 epochs, unshuffled, validation on)
// through onefit::sweep (stacked in SIMD lanes, the stacks spread over the cores), beside the same
// 1000 fits one after another (separate_1000_iris_ms, as a loop over fit would run them), paired
// rounds; sweep_vs_separate is the median of the per-round ratios (issue 14's target: >= 4x).
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
}
