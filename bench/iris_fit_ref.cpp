// The floor a framework should beat: the seed's fit written by hand as one plain loop (per
// sample forward and backward, Keras's Adam, log_cosh against the label broadcast over the 3
// outputs as tf.keras 2 does, softmax, glorot-uniform weights), single thread, no intrinsics,
// fixed-size arrays only (no std:: code, so nothing it compiles is shared with the rest of the
// program). -O3, and on x86-64 compiled three times in this one file, for AVX-512, AVX2 and the
// build's baseline, each with the instructions *and the tuning* of a common CPU of its level
// (GCC's tuning alone moved this loop 1.2-1.4x on a Sapphire Rapids class Xeon: generic tuning
// 535 us, skylake-avx512 tuning 367 us, -march=native 425 us); the best copy this CPU runs is
// chosen at the first call, as the library's own dispatch does. So it is the strongest plain loop
// without the build being for the build machine (-march=native breaks on CPUs that the compiler
// or Highway do not know, issue 28). The file includes itself once per copy.
#ifndef IRIS_REF_COPY
#include <math.h>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#define IRIS_REF_COPY avx512
#pragma GCC push_options
#pragma GCC target("arch=skylake-avx512,tune=skylake-avx512")
#include "iris_fit_ref.cpp"
#pragma GCC pop_options
#undef IRIS_REF_COPY
#define IRIS_REF_COPY avx2
#pragma GCC push_options
#pragma GCC target("arch=haswell,tune=haswell")
#include "iris_fit_ref.cpp"
#pragma GCC pop_options
#undef IRIS_REF_COPY
#endif
#define IRIS_REF_COPY baseline
#include "iris_fit_ref.cpp"
#undef IRIS_REF_COPY

namespace iris_ref {

using Fit = double (*)(const float*, const float*, int, const float*, const float*, int, uint64_t);

double fit(const float* x, const float* y, int train, const float* vx, const float* vy, int val, uint64_t seed) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const Fit chosen = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                                  ? avx512::fit
                              : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? avx2::fit
                                                                                                 : baseline::fit;
#else
    static const Fit chosen = baseline::fit;
#endif
    return chosen(x, y, train, vx, vy, val, seed);
}

}  // namespace iris_ref

#else  // one copy of the loop, in namespace iris_ref::IRIS_REF_COPY
namespace iris_ref::IRIS_REF_COPY {

constexpr int kIn = 4, kHidden = 32, kOut = 3, kBatch = 20, kEpochs = 20;

struct Params {
    float w1[kIn][kHidden], b1[kHidden], w2[kHidden][kOut], b2[kOut];
};

// Returns the last epoch's validation loss (a checksum: the work must be done).
double fit(const float* x, const float* y, int train, const float* vx, const float* vy, int val, uint64_t seed) {
    static Params p, g, m, v;  // static: the reference allocates nothing per fit either
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    const auto uniform = [&s](float limit) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        return limit * (2.0f * static_cast<float>(s >> 40) / static_cast<float>(1 << 24) - 1.0f);
    };
    const float l1 = sqrtf(6.0f / (kIn + kHidden)), l2 = sqrtf(6.0f / (kHidden + kOut));
    for (int i = 0; i < kIn; ++i)
        for (int j = 0; j < kHidden; ++j) p.w1[i][j] = uniform(l1);
    for (int i = 0; i < kHidden; ++i)
        for (int j = 0; j < kOut; ++j) p.w2[i][j] = uniform(l2);
    for (int j = 0; j < kHidden; ++j) p.b1[j] = 0;
    for (int j = 0; j < kOut; ++j) p.b2[j] = 0;
    float* const pf = &p.w1[0][0];
    float* const gf = &g.w1[0][0];
    float* const mf = &m.w1[0][0];
    float* const vf = &v.w1[0][0];
    constexpr int n = sizeof(Params) / sizeof(float);
    for (int i = 0; i < n; ++i) mf[i] = vf[i] = 0;

    float h[kHidden], prob[kOut];
    const auto forward = [&](const float* row) {
        for (int j = 0; j < kHidden; ++j) h[j] = p.b1[j];
        for (int i = 0; i < kIn; ++i)
            for (int j = 0; j < kHidden; ++j) h[j] += row[i] * p.w1[i][j];
        for (int j = 0; j < kHidden; ++j) h[j] = h[j] > 0 ? h[j] : 0;
        float z[kOut], top = -INFINITY, sum = 0;
        for (int k = 0; k < kOut; ++k) {
            z[k] = p.b2[k];
            for (int j = 0; j < kHidden; ++j) z[k] += h[j] * p.w2[j][k];
            top = z[k] > top ? z[k] : top;
        }
        for (int k = 0; k < kOut; ++k) sum += (prob[k] = expf(z[k] - top));
        for (int k = 0; k < kOut; ++k) prob[k] /= sum;
    };
    const auto sample_loss = [&](float label) {
        float l = 0;
        for (int k = 0; k < kOut; ++k) l += logf(coshf(prob[k] - label));
        return l / kOut;
    };

    const float lr = 0.1f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-7f;
    float beta1_power = 1, beta2_power = 1;
    double val_loss = 0;
    for (int epoch = 0; epoch < kEpochs; ++epoch) {
        for (int first = 0; first < train; first += kBatch) {
            const int rows = train - first < kBatch ? train - first : kBatch;
            for (int i = 0; i < n; ++i) gf[i] = 0;
            for (int r = first; r < first + rows; ++r) {
                forward(x + r * kIn);
                float dp[kOut], dz[kOut], dot = 0;
                for (int k = 0; k < kOut; ++k) dot += (dp[k] = tanhf(prob[k] - y[r]) / (kOut * rows)) * prob[k];
                for (int k = 0; k < kOut; ++k) dz[k] = prob[k] * (dp[k] - dot);
                float dh[kHidden];
                for (int j = 0; j < kHidden; ++j) {
                    dh[j] = 0;
                    for (int k = 0; k < kOut; ++k) {
                        g.w2[j][k] += h[j] * dz[k];
                        dh[j] += dz[k] * p.w2[j][k];
                    }
                    dh[j] = h[j] > 0 ? dh[j] : 0;
                    g.b1[j] += dh[j];
                }
                for (int i = 0; i < kIn; ++i)
                    for (int j = 0; j < kHidden; ++j) g.w1[i][j] += x[r * kIn + i] * dh[j];
                for (int k = 0; k < kOut; ++k) g.b2[k] += dz[k];
            }
            beta1_power *= beta1, beta2_power *= beta2;
            const float alpha = lr * sqrtf(1 - beta2_power) / (1 - beta1_power);
            for (int i = 0; i < n; ++i) {
                mf[i] += (gf[i] - mf[i]) * (1 - beta1);
                vf[i] += (gf[i] * gf[i] - vf[i]) * (1 - beta2);
                pf[i] -= alpha * mf[i] / (sqrtf(vf[i]) + eps);
            }
        }
        val_loss = 0;
        for (int r = 0; r < val; ++r) {
            forward(vx + r * kIn);
            val_loss += sample_loss(vy[r]);
        }
        val_loss /= val;
    }
    return val_loss;
}

}  // namespace iris_ref::IRIS_REF_COPY
#endif  // IRIS_REF_COPY
