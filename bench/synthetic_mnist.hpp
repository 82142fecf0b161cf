// The synthetic MNIST-shaped data of bench_mlp_mnist and bench_cnn_mnist (bench/peers/torch_peer.py
// builds the very same values in numpy).
#pragma once
#include <cstdint>

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

}  // namespace bench
