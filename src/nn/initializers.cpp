#include "nn/initializers.hpp"

#include <cmath>

#include "onefit/error.hpp"

namespace onefit::nn {
namespace {

// Keras's normal initializers are truncated at 2 standard deviations (stddev corrected by .8796).
float truncated_normal(Rng& rng, float stddev) {
    for (;;) {
        const double u1 = 1.0 - rng.uniform_double(), u2 = rng.uniform_double();
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        if (std::fabs(z) <= 2.0) return static_cast<float>(z * stddev / 0.87962566103423978);
    }
}

constexpr const char* kKnown[] = {"glorot_uniform", "glorot_normal", "he_uniform", "he_normal",
                                  "lecun_uniform", "uniform", "random_uniform", "zeros", "ones"};

std::string known_initializers() {
    std::string list;
    for (const char* k : kKnown) list += (list.empty() ? "" : ", ") + std::string(k);
    return list;
}

}  // namespace

void check_initializer(const std::string& name, const char* what) {
    for (const char* k : kKnown)
        if (name == k) return;
    throw Error(std::string(what) + " is '" + name + "'; onefit knows " + known_initializers());
}

void initialize(const std::string& name, float* values, int64_t n, int64_t fan_in, int64_t fan_out, Rng& rng) {
    auto uniform = [&](double limit) {
        for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>((2.0 * rng.uniform_double() - 1.0) * limit);
    };
    auto normal = [&](double stddev) {
        for (int64_t i = 0; i < n; ++i) values[i] = truncated_normal(rng, static_cast<float>(stddev));
    };
    const double fans = static_cast<double>(fan_in + fan_out);
    if (name == "glorot_uniform") return uniform(std::sqrt(6.0 / fans));
    if (name == "glorot_normal") return normal(std::sqrt(2.0 / fans));
    if (name == "he_uniform") return uniform(std::sqrt(6.0 / static_cast<double>(fan_in)));
    if (name == "he_normal") return normal(std::sqrt(2.0 / static_cast<double>(fan_in)));
    if (name == "lecun_uniform") return uniform(std::sqrt(3.0 / static_cast<double>(fan_in)));
    if (name == "uniform" || name == "random_uniform") return uniform(0.05);  // RandomUniform(-0.05, 0.05)
    if (name == "zeros" || name == "ones") {
        for (int64_t i = 0; i < n; ++i) values[i] = name == "ones" ? 1.0f : 0.0f;
        return;
    }
    throw Error("unknown initializer '" + name + "' (known: " + known_initializers() + ")");
}

}  // namespace onefit::nn
