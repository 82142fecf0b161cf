// iris_fit_us: the seed's fit in-process (Iris 70/30 unshuffled, Dense(32, relu) -> Dense(3,
// softmax), Adam(0.1), log_cosh, batch 20, 20 epochs with validation, verbose 0), median of many.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "onefit/onefit.hpp"

int main(int argc, char** argv) {
    using namespace onefit;
    const int runs = argc > 1 ? std::atoi(argv[1]) : 2000;
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.30, false);
    FitOptions options;
    options.batch_size = 20;
    options.epochs = 20;
    options.verbose = 0;
    options.shuffle = false;  // the seed feeds an unshuffled tf.data pipeline
    options.validation_data = {d.x_test, d.y_test};

    std::vector<double> fit_us, total_us;
    double sink = 0;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        Sequential model({4}, static_cast<uint64_t>(i));
        model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
        model.compile(Adam(0.1f), loss_from_name("logcosh"));
        const auto t1 = std::chrono::steady_clock::now();
        const History h = model.fit(d.x_train, d.y_train, options);
        const auto t2 = std::chrono::steady_clock::now();
        sink += h["val_loss"].back();
        fit_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
        total_us.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
    }
    auto median = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
    };
    std::printf("# seed fit: Iris 105/45, 4-32-3, Adam(0.1), log_cosh, batch 20, 20 epochs + validation, "
                "verbose 0; %d runs, seeds 0..%d (checksum %.3f)\n", runs, runs - 1, sink);
    std::printf("iris_fit_us: %.1f us\n", median(fit_us));
    std::printf("iris_fit_min_us: %.1f us\n", *std::min_element(fit_us.begin(), fit_us.end()));
    std::printf("iris_fit_steps_per_s: %.0f steps/s\n", 120.0 / (median(fit_us) * 1e-6));
    std::printf("iris_build_and_fit_us: %.1f us\n", median(total_us));
}
