// exp and log1p for the step loop. The float versions are branch-free polynomial forms
// (Cephes-style, within kFastMathMaxUlp over the range training uses) that inline and
// vectorise; glibc's expf/log1pf are calls that cannot, and were 20% of the seed's fit. Double
// stays exact so the finite-difference gradient tests check the formulas, not the approximations.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_FASTMATH_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_FASTMATH_HPP
#undef ONEFIT_NN_FASTMATH_HPP
#else
#define ONEFIT_NN_FASTMATH_HPP
#endif
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/hd.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

// The accuracy the float forms promise, in float ulps of the exact result: exp_fast over its
// unclamped range [-87, 88], log1p_unit_fast over [0, 1]. tests/nn/fastmath_test.cpp holds
// them to it. Measured over every float in those ranges (GCC 12, -O3, Zen 3): exp_fast 1.02
// ulp with -march=native (FMA), 0.99 without; log1p_unit_fast 1.97 either way.
inline constexpr double kFastMathMaxUlp = 2.0;

ONEFIT_HD float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// e^x = 2^n e^r, n = round(x / ln 2), |r| <= ln2 / 2, e^r by a degree-6 polynomial.
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float exp_fast(float x) { return expf(x); }
__device__ __forceinline__ float log1p_unit_fast(float x) { return log1pf(x); }
#else
[[gnu::always_inline]] inline float exp_fast(float x) {
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    // Round to nearest by adding and removing 1.5 * 2^23 (no libm call, vectorises).
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // ln 2 split in two for exactness
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * bits_to_float(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
}

// log(1 + x) for x in [0, 1], the only range the losses need (x = e^-|z|): with
// s = x / (2 + x) in [0, 1/3], log(1 + x) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), pure
// arithmetic, so it vectorises together with exp_fast in one loop.
[[gnu::always_inline]] inline float log1p_unit_fast(float x) {
    const float s = x / (2.0f + x), s2 = s * s;
    float p = 1.0f / 15.0f;
    p = p * s2 + 1.0f / 13.0f;
    p = p * s2 + 1.0f / 11.0f;
    p = p * s2 + 1.0f / 9.0f;
    p = p * s2 + 1.0f / 7.0f;
    p = p * s2 + 1.0f / 5.0f;
    p = p * s2 + 1.0f / 3.0f;
    return 2.0f * s + 2.0f * s * s2 * p;
}

#endif

ONEFIT_HD double exp_fast(double x) { return std::exp(x); }
ONEFIT_HD double log1p_unit_fast(double x) { return std::log1p(x); }

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_FASTMATH_HPP
