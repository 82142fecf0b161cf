// mlp_mnist_samples_per_s: one epoch of an MNIST-sized MLP (784 -> Dense(256, relu) ->
// Dense(10, softmax)), sparse_categorical_crossentropy, Adam(1e-3), batch 128, shuffle on,
// verbose 0, over 60000 synthetic MNIST-shaped samples. One fit of 1 warm-up + N timed epochs;
// each epoch is timed from on_epoch_begin to on_epoch_end and the median is quoted.
// bench/peers/torch_peer.py builds the very same data (same hash) for the PyTorch peer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "machine.hpp"
#include "synthetic_mnist.hpp"
#include "onefit/onefit.hpp"

namespace {

double median(std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    using namespace onefit;
    const int timed_epochs = argc > 1 ? std::atoi(argv[1]) : 5;
    const int64_t samples = 60000, features = 784, hidden = 256, classes = 10, batch = 128;
    const LabeledData data = bench::synthetic_mnist(samples, features, classes);

    Sequential model({features}, 0);
    model.add(Dense(hidden, "relu")).add(Dense(classes, "softmax"));
    model.compile(Adam(1e-3f), loss_from_name("sparse_categorical_crossentropy"));

    std::vector<double> epoch_s;
    std::chrono::steady_clock::time_point begin;
    LambdaCallback timer;
    timer.epoch_begin = [&](int64_t) { begin = std::chrono::steady_clock::now(); };
    timer.epoch_end = [&](int64_t epoch, const Logs&) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        if (epoch > 0) epoch_s.push_back(s);  // epoch 0 is the warm-up
    };
    FitOptions options;
    options.batch_size = batch;
    options.epochs = 1 + timed_epochs;
    options.shuffle = true;
    options.verbose = 0;
    options.callbacks = {&timer};
    const History h = model.fit(data.x, data.y, options);

    const double s = median(epoch_s);
    // Flops actually computed per sample: 2 per weight forward, 2 for the weight gradient, and 2
    // for the input gradient except in the first layer, which needs none (so 4 x 784*256 + 6 x 256*10).
    const double first = double(features * hidden), rest = double(hidden * classes);
    const double flops = double(samples) * (4.0 * first + 6.0 * rest);
    const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
    std::printf("# mlp_mnist: %lld synthetic MNIST-shaped samples (splitmix64 features in [0,1), labels 0..9), "
                "784-256(relu)-10(softmax), sparse_categorical_crossentropy, Adam(1e-3), batch %lld, shuffle, "
                "verbose 0\n", static_cast<long long>(samples), static_cast<long long>(batch));
    std::printf("# one fit of 1 warm-up + %d timed epochs, median epoch; loss first %.4f last %.4f; "
                "%u hardware threads, OPENBLAS_NUM_THREADS=%s\n", timed_epochs, h["loss"].front(),
                h["loss"].back(), std::thread::hardware_concurrency(), blas_threads ? blas_threads : "(unset)");
    std::printf("# flops per epoch: %lld * (4*784*256 + 6*256*10) = %.3g (no input gradient for the first layer)\n",
                static_cast<long long>(samples), flops);
    const char* tag = bench::tag().c_str();
    bench::print_machine();
    std::printf("# GEMM: %s\n", onefit::cpu_gemm_choice().c_str());
    std::printf("mlp_mnist_epoch_s: %.4f s %s\n", s, tag);
    std::printf("mlp_mnist_samples_per_s: %.0f samples/s %s\n", double(samples) / s, tag);
    std::printf("mlp_mnist_gflops: %.2f GFLOP/s %s\n", flops / s * 1e-9, tag);
}
