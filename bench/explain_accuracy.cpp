// explain_accuracy: how well `onefit explain`'s cost model projects CPU fit time. Calibrates
// once, then for configurations from Iris-sized (4-32-3) to MNIST-sized (784-512-512-10), and three
// convnets (Keras's MNIST one among them), prints
// the projected and the measured wall time of model.fit (the fastest of 3 runs: other work on
// the machine only adds time), then the median and worst relative error.
// Targets: median_error_pct <= 25, worst_error_pct <= 50.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"

namespace {

uint64_t mix(uint64_t i) {  // splitmix64, as bench/mlp_mnist.cpp
    uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct Config {
    std::string name;
    int64_t inputs;
    std::vector<int64_t> hidden;
    int64_t classes, batch, rows, validation_rows, epochs;
    // A convnet instead: images of this shape (inputs = their size), per filters entry a 3x3
    // Conv2D (relu) and a 2x2 max pooling, then Flatten and the hidden Dense layers.
    onefit::Shape image{};
    std::vector<int64_t> filters{};
};

}  // namespace

int main() {
    using namespace onefit;
    const auto t0 = std::chrono::steady_clock::now();
    const DeviceProfile cpu = calibrate_cpu();
    const double calibration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::vector<Config> configs = {
        {"iris_4_32_3_b20", 4, {32}, 3, 20, 105, 45, 20},
        {"iris_4_32_3_b16_e100", 4, {32}, 3, 16, 105, 45, 100},
        {"tiny_8_16_2_b16", 8, {16}, 2, 16, 2000, 0, 5},
        {"small_32_64_64_4_b32", 32, {64, 64}, 4, 32, 4000, 500, 3},
        {"mid_128_256_10_b64", 128, {256}, 10, 64, 4000, 0, 2},
        {"mnist_784_256_10_b128", 784, {256}, 10, 128, 6000, 1000, 1},
        {"mnist_784_256_10_b32", 784, {256}, 10, 32, 3000, 0, 1},
        {"mnist_784_256_10_b256", 784, {256}, 10, 256, 8192, 0, 1},
        {"wide_784_512_512_10_b64", 784, {512, 512}, 10, 64, 3000, 0, 1},
        {"wide_784_512_512_10_b256", 784, {512, 512}, 10, 256, 4096, 0, 1},
        {"deep_64_128x4_10_b16", 64, {128, 128, 128, 128}, 10, 16, 2000, 0, 2},
        {"wide_256_1024_10_b128", 256, {1024}, 10, 128, 4096, 0, 1},
        {"cnn_12x12x1_c8_b32", 144, {}, 10, 32, 2048, 256, 1, {12, 12, 1}, {8}},
        {"cnn_28x28x1_c32_c64_b128", 784, {}, 10, 128, 1024, 0, 1, {28, 28, 1}, {32, 64}},
        {"cnn_20x20x3_c16_d64_b64", 1200, {64}, 10, 64, 1024, 0, 1, {20, 20, 3}, {16}},
    };
    std::printf("# explain_accuracy: projected vs measured CPU fit time (min of 3), %zu configurations; "
                "calibration %.2f s on %s\n", configs.size(), calibration_s, cpu.name.c_str());
    std::vector<double> errors;
    for (const Config& c : configs) {
        const int64_t n = c.rows + c.validation_rows;
        Shape x_shape = {n};
        if (c.image.empty()) x_shape.push_back(c.inputs);
        x_shape.insert(x_shape.end(), c.image.begin(), c.image.end());
        Tensor x(x_shape), y({n});
        for (int64_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(mix(static_cast<uint64_t>(k) + 7) >> 40) * 0x1.0p-24f;
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(mix((1ull << 41) + static_cast<uint64_t>(i)) % c.classes);
        double measured = INFINITY;
        FitWork work;
        for (int run = 0; run < 3; ++run) {
            Sequential model(c.image.empty() ? Shape{c.inputs} : c.image, 0);
            for (int64_t f : c.filters) model.add(Conv2D(f, 3, 1, "valid", "relu")), model.add(MaxPooling2D(2));
            if (!c.filters.empty()) model.add(Flatten());
            for (int64_t h : c.hidden) model.add(Dense(h, "relu"));
            model.add(Dense(c.classes, "softmax"));
            model.compile(Adam(1e-3f), loss_from_name("sparse_categorical_crossentropy"));
            FitOptions o;
            o.batch_size = c.batch;
            o.epochs = c.epochs;
            o.verbose = 0;
            if (c.validation_rows > 0) o.validation_split = static_cast<double>(c.validation_rows) / static_cast<double>(n);
            const auto start = std::chrono::steady_clock::now();
            model.fit(x, y, o);
            measured = std::min(measured, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            const int64_t train_rows = static_cast<int64_t>(std::floor(static_cast<double>(n) * (1.0 - o.validation_split)));
            work = fit_work(step_work(model, c.batch), train_rows, n - train_rows, c.inputs, c.epochs);
        }
        const double projected = project(cpu, work).total_seconds;
        const double error = 100.0 * std::fabs(projected - measured) / measured;
        errors.push_back(error);
        std::printf("explain_%s_projected_ms: %.3f ms\n", c.name.c_str(), projected * 1e3);
        std::printf("explain_%s_measured_ms: %.3f ms\n", c.name.c_str(), measured * 1e3);
        std::printf("# %s: %lld steps, %.3g FLOP, error %.1f%%\n", c.name.c_str(), static_cast<long long>(work.steps),
                    work.flops, error);
    }
    std::sort(errors.begin(), errors.end());
    const size_t m = errors.size();
    const double median = m % 2 ? errors[m / 2] : 0.5 * (errors[m / 2 - 1] + errors[m / 2]);
    std::printf("median_error_pct: %.1f %%\n", median);
    std::printf("worst_error_pct: %.1f %%\n", errors.back());
}
