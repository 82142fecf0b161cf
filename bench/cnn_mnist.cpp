// cnn_mnist_samples_per_s: Keras's "simple MNIST convnet" (Conv2D 32 3x3 relu, MaxPooling2D 2,
// Conv2D 64 3x3 relu, MaxPooling2D 2, Flatten, Dropout 0.5, Dense 10 softmax), Adam(1e-3),
// sparse_categorical_crossentropy, batch 128, shuffle on, over synthetic 28x28x1 images (the
// MLP bench's hash; bench/peers/torch_peer.py cnn builds the same). One fit of 1 warm-up + N
// timed epochs, median epoch. Arguments: [timed epochs (1)] [samples (60000)].
#include <cstdio>
#include <cstdlib>

#include "machine.hpp"
#include "mnist_bench.hpp"

int main(int argc, char** argv) {
    using namespace onefit;
    const int timed_epochs = argc > 1 ? std::atoi(argv[1]) : 1;
    const int64_t samples = argc > 2 ? std::atoll(argv[2]) : 60000, batch = 128;
    LabeledData data = bench::synthetic_mnist(samples, 784, 10);
    data.x = data.x.reshaped({samples, 28, 28, 1});

    Sequential model({28, 28, 1}, 0);
    model.add(Conv2D(32, 3, 1, "valid", "relu")).add(MaxPooling2D(2));
    model.add(Conv2D(64, 3, 1, "valid", "relu")).add(MaxPooling2D(2));
    model.add(Flatten()).add(Dropout(0.5f)).add(Dense(10, "softmax"));
    model.compile(Adam(1e-3f), loss_from_name("sparse_categorical_crossentropy"));

    const bench::TimedFit run = bench::fit_timed(model, data, timed_epochs, batch);
    const History& h = run.history;
    const double s = run.median_epoch_s;
    // Multiply-adds per sample forward: 26*26*32*9 + 11*11*64*288 + 1600*10; a step is ~3x that
    // (no input gradient for the first convolution: 2x there).
    const double first = 26.0 * 26 * 32 * 9, rest = 11.0 * 11 * 64 * 288 + 1600.0 * 10;
    const double flops = double(samples) * 2.0 * (2.0 * first + 3.0 * rest);
    std::printf("# cnn_mnist: %lld synthetic 28x28x1 images, conv32(3x3,relu)-maxpool2-conv64(3x3,relu)-maxpool2-"
                "flatten-dropout(0.5)-10(softmax), Adam(1e-3), batch %lld, shuffle; 1 warm-up + %d timed epochs, "
                "median; loss first %.4f last %.4f\n",
                static_cast<long long>(samples), static_cast<long long>(batch), timed_epochs, h["loss"].front(),
                h["loss"].back());
    const char* tag = bench::tag().c_str();
    bench::print_machine();
    std::printf("cnn_mnist_epoch_s: %.4f s %s\n", s, tag);
    std::printf("cnn_mnist_samples_per_s: %.0f samples/s %s\n", double(samples) / s, tag);
    std::printf("cnn_mnist_gflops: %.2f GFLOP/s %s\n", flops / s * 1e-9, tag);
}
