// Seeded random numbers that are identical on every platform and compiler
// (std::uniform_*_distribution are not), so a seed gives bit-identical fits.
#pragma once
#include <cstdint>

#include "core/hd.hpp"

namespace onefit {

// A uniform float in [0, 1) from (key, counter) alone (splitmix64's finalizer): dropout masks
// drawn this way are the same on every device and need no sequential generator state.
ONEFIT_HD float hash_uniform(uint64_t key, uint64_t counter) {
    uint64_t z = key + counter * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) * 0x1.0p-24f;
}

// The dropout key of op `op` at optimizer step `step`.
ONEFIT_HD uint64_t dropout_key(uint64_t seed, int64_t step, int64_t op) {
    return seed ^ (static_cast<uint64_t>(step) * 0xD1B54A32D192ED03ull) ^ (static_cast<uint64_t>(op) << 56);
}

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Rng {
public:
    explicit Rng(uint64_t seed = 0) { reseed(seed); }
    void reseed(uint64_t seed) {
        for (auto& s : state_) {
            seed += 0x9E3779B97F4A7C15ull;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            s = z ^ (z >> 31);
        }
    }
    uint64_t next_u64() {
        const uint64_t result = rotl(state_[1] * 5, 7) * 9;
        const uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = rotl(state_[3], 45);
        return result;
    }
    // Uniform in [0, 1) with 24 random bits (exact in float).
    float uniform_float() { return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f; }
    double uniform_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
    // Uniform integer in [0, bound), unbiased (Lemire's method).
    uint64_t below(uint64_t bound) {
        __uint128_t m = static_cast<__uint128_t>(next_u64()) * bound;
        uint64_t low = static_cast<uint64_t>(m);
        if (low < bound) {
            const uint64_t threshold = -bound % bound;
            while (low < threshold) {
                m = static_cast<__uint128_t>(next_u64()) * bound;
                low = static_cast<uint64_t>(m);
            }
        }
        return static_cast<uint64_t>(m >> 64);
    }
    // Fisher-Yates shuffle of [first, first+n).
    template <class T>
    void shuffle(T* first, int64_t n) {
        for (int64_t i = n - 1; i > 0; --i) {
            const int64_t j = static_cast<int64_t>(below(static_cast<uint64_t>(i) + 1));
            T tmp = first[i];
            first[i] = first[j];
            first[j] = tmp;
        }
    }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t state_[4];
};

}  // namespace onefit
