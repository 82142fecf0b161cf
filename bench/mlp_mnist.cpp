// mlp_mnist_samples_per_s: one epoch of an MNIST-sized MLP (784 -> Dense(256, relu) ->
// Dense(10, softmax)), sparse_categorical_crossentropy, Adam(1e-3), batch 128, shuffle on,
// verbose 0, over 60000 synthetic MNIST-shaped samples. One fit of 1 warm-up + N timed epochs;
// each epoch is timed from on_epoch_begin to on_epoch_end and the median is quoted.
// bench/peers/torch_peer.py builds the very same data (same hash) for the PyTorch peer.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "machine.hpp"
#include "mnist_bench.hpp"
#include "onefit/onefit.hpp"

int main(int argc, char** argv) {
    using namespace onefit;
    const int timed_epochs = argc > 1 ? std::atoi(argv[1]) : 5;
    const int64_t samples = 60000, features = 784, hidden = 256, classes = 10, batch = 128;
    const LabeledData data = bench::synthetic_mnist(samples, features, classes);

    Sequential model({features}, 0);
    model.add(Dense(hidden, "relu")).add(Dense(classes, "softmax"));
    model.compile(Adam(1e-3f), loss_from_name("sparse_categorical_crossentropy"));

    const bench::TimedFit run = bench::fit_timed(model, data, timed_epochs, batch);
    const History& h = run.history;
    const double s = run.median_epoch_s;
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
