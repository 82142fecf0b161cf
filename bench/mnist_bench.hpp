// What bench_mlp_mnist and bench_cnn_mnist share: the synthetic MNIST-shaped data
// (bench/peers/torch_peer.py builds the very same values in numpy) and a fit timed per epoch.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "onefit/onefit.hpp"

namespace bench {

// splitmix64 as a stateless hash of the index: simple, and reproducible in numpy (uint64 wraps).
inline uint64_t splitmix64(uint64_t i) {
    uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Feature j of sample i: hash(i * 784 + j), top 24 bits as a float in [0, 1).
// Label of sample i: hash(2^40 + i) mod 10.
inline onefit::LabeledData synthetic_mnist(int64_t samples, int64_t features, int64_t classes) {
    onefit::LabeledData d;
    d.x = onefit::Tensor({samples, features});
    d.y = onefit::Tensor({samples});
    for (int64_t k = 0; k < samples * features; ++k)
        d.x[k] = static_cast<float>(splitmix64(static_cast<uint64_t>(k)) >> 40) * 0x1.0p-24f;
    for (int64_t i = 0; i < samples; ++i)
        d.y[i] = static_cast<float>(splitmix64((1ull << 40) + static_cast<uint64_t>(i)) % static_cast<uint64_t>(classes));
    return d;
}

struct TimedFit {
    onefit::History history;
    double median_epoch_s = 0;
};

// One fit of 1 warm-up + timed_epochs epochs (batch 128, shuffle on, verbose 0), each epoch timed
// from on_epoch_begin to on_epoch_end; the median of the timed ones.
inline TimedFit fit_timed(onefit::Sequential& model, const onefit::LabeledData& data, int timed_epochs,
                          int64_t batch = 128) {
    std::vector<double> epoch_s;
    std::chrono::steady_clock::time_point begin;
    onefit::LambdaCallback timer;
    timer.epoch_begin = [&](int64_t) { begin = std::chrono::steady_clock::now(); };
    timer.epoch_end = [&](int64_t epoch, const onefit::Logs&) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        if (epoch > 0) epoch_s.push_back(s);  // epoch 0 is the warm-up
    };
    onefit::FitOptions options;
    options.batch_size = batch;
    options.epochs = 1 + timed_epochs;
    options.shuffle = true;
    options.verbose = 0;
    options.callbacks = {&timer};
    TimedFit result{model.fit(data.x, data.y, options)};
    std::nth_element(epoch_s.begin(), epoch_s.begin() + epoch_s.size() / 2, epoch_s.end());
    result.median_epoch_s = epoch_s[epoch_s.size() / 2];
    return result;
}

}  // namespace bench
