// iris_fit_us: the seed's fit in-process (Iris 70/30 unshuffled, Dense(32, relu) -> Dense(3,
// softmax), Adam(0.1), log_cosh, batch 20, 20 epochs with validation, verbose 0), median of many,
// and beside it, run for run, the same fit as a hand-written plain loop (iris_fit_ref.cpp):
// iris_fit_vs_ref is the median of the per-run ratios (target: <= 0.5).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "machine.hpp"
#include "onefit/onefit.hpp"

namespace iris_ref {
double fit(const float* x, const float* y, int train, const float* vx, const float* vy, int val, uint64_t seed);
}

int main(int argc, char** argv) {
    using namespace onefit;
    using clock = std::chrono::steady_clock;
    const int runs = argc > 1 ? std::atoi(argv[1]) : 2000;
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.30, false);
    FitOptions options;
    options.batch_size = 20;
    options.epochs = 20;
    options.verbose = 0;
    options.shuffle = false;  // the seed feeds an unshuffled tf.data pipeline
    options.validation_data = {d.x_test, d.y_test};

    std::vector<double> fit_us, total_us, ref_us, ratio;
    double sink = 0, ref_sink = 0;
    const auto us = [](clock::time_point a, clock::time_point b) {
        return std::chrono::duration<double, std::micro>(b - a).count();
    };
    for (int i = 0; i < runs; ++i) {
        const auto t0 = clock::now();
        Sequential model({4}, static_cast<uint64_t>(i));
        model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
        model.compile(Adam(0.1f), loss_from_name("logcosh"));
        const auto t1 = clock::now();
        const History h = model.fit(d.x_train, d.y_train, options);
        const auto t2 = clock::now();
        ref_sink += iris_ref::fit(d.x_train.data(), d.y_train.data(), static_cast<int>(d.x_train.rows()),
                                  d.x_test.data(), d.y_test.data(), static_cast<int>(d.x_test.rows()),
                                  static_cast<uint64_t>(i));
        const auto t3 = clock::now();
        sink += h["val_loss"].back();
        fit_us.push_back(us(t1, t2));
        total_us.push_back(us(t0, t2));
        ref_us.push_back(us(t2, t3));
        ratio.push_back(fit_us.back() / ref_us.back());
    }
    using bench::median;
    const char* tag = bench::tag().c_str();
    bench::print_machine();
    std::printf("# seed fit: Iris 105/45, 4-32-3, Adam(0.1), log_cosh, batch 20, 20 epochs + validation, "
                "verbose 0; %d runs, seeds 0..%d (mean val_loss: onefit %.4f, plain loop %.4f)\n", runs, runs - 1,
                sink / runs, ref_sink / runs);
    std::printf("iris_fit_us: %.1f us %s\n", median(fit_us), tag);
    std::printf("iris_fit_min_us: %.1f us %s\n", *std::min_element(fit_us.begin(), fit_us.end()), tag);
    std::printf("iris_fit_steps_per_s: %.0f steps/s %s\n", 120.0 / (median(fit_us) * 1e-6), tag);
    std::printf("iris_build_and_fit_us: %.1f us %s\n", median(total_us), tag);
    std::printf("iris_fit_ref_us: %.1f us %s\n", median(ref_us), tag);
    std::printf("iris_fit_vs_ref: %.2f x (paired median of onefit / plain loop; target <= 0.5)\n", median(ratio));
}
