// The float exp and log1p of the step loop (nn/fastmath.hpp) against double-precision std::exp
// and std::log1p: the error, in float ulps of the exact value, stays within the bound the code
// states (kFastMathMaxUlp), over a sweep of float inputs across the range each one serves, and
// the clamped ends of exp behave. Each sweep steps through the float bit patterns of its range
// (every binade sampled alike, tiny arguments as densely as large ones) and is evaluated in a
// plain loop over an array, the form the step loop's vectorised code takes.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "nn/fastmath.hpp"

namespace onefit {
namespace {

// Every 251st float (a prime stride, so the low mantissa bits vary) from bit pattern `first`
// to `last`, both ends included: about 4 million values per range.
std::vector<float> float_sweep(float from, float to) {
    const uint32_t first = std::bit_cast<uint32_t>(from), last = std::bit_cast<uint32_t>(to);
    std::vector<float> xs;
    for (uint32_t u = first; u < last; u += 251) xs.push_back(std::bit_cast<float>(u));
    xs.push_back(to);
    return xs;
}

// The spacing of floats at |v|: 2^(e - 23) in the binade [2^e, 2^(e+1)), 2^-149 below FLT_MIN.
double float_ulp_at(double v) {
    const double a = std::fabs(v);
    if (a < static_cast<double>(std::numeric_limits<float>::min())) return std::ldexp(1.0, -149);
    return std::ldexp(1.0, std::ilogb(a) - 23);
}

struct WorstError {
    double ulps = 0;
    float at = 0;
};

template <class Fast, class Exact>
WorstError worst_ulp_error(const std::vector<float>& xs, Fast fast, Exact exact) {
    std::vector<float> out(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) out[i] = fast(xs[i]);
    WorstError worst;
    for (size_t i = 0; i < xs.size(); ++i) {
        const double want = exact(static_cast<double>(xs[i]));
        const double ulps = std::fabs(static_cast<double>(out[i]) - want) / float_ulp_at(want);
        if (!(ulps <= worst.ulps)) worst = {ulps, xs[i]};  // NaN counts as the worst
    }
    return worst;
}

float exp_f(float x) { return nn::exp_fast(x); }
float log1p_f(float x) { return nn::log1p_unit_fast(x); }

TEST(FastExp, IsWithinTheStatedUlpBoundOverItsUnclampedRange) {
    // Negative arguments: softmax, log_cosh, crossentropy from logits; positive: sigmoid(-z), elu.
    for (const auto& [from, to] : {std::pair{-0.0f, -87.0f}, std::pair{0.0f, 88.0f}}) {
        const WorstError w = worst_ulp_error(float_sweep(from, to), exp_f, [](double x) { return std::exp(x); });
        EXPECT_LE(w.ulps, nn::kFastMathMaxUlp) << "exp_fast(" << w.at << ")";
        RecordProperty(to > 0 ? "max_ulp_positive" : "max_ulp_negative",
                       std::to_string(w.ulps));
    }
}

TEST(FastExp, IsWithinTheStatedUlpBoundAtEvenlySpacedLargeArguments) {
    // The bit-pattern sweep puts half its points below |x| = 1; here every 1/4096 across the
    // range, where the scaling by 2^n is largest.
    std::vector<float> xs;
    for (int k = -87 * 4096; k <= 88 * 4096; ++k) xs.push_back(static_cast<float>(k) / 4096.0f);
    const WorstError w = worst_ulp_error(xs, exp_f, [](double x) { return std::exp(x); });
    EXPECT_LE(w.ulps, nn::kFastMathMaxUlp) << "exp_fast(" << w.at << ")";
}

TEST(FastExp, SaturatesToFiniteNormalValuesBeyondItsClamp) {
    // Below -87 the result stays at exp(-87) ~ 1.6e-38: a normal float (so no denormal slows the
    // step loop) within 2^-125 of the true, smaller value. Above 88 it stays at exp(88) ~ 1.7e38
    // and never becomes infinity (1 / (1 + e^x) in sigmoid stays a number).
    const float low = nn::exp_fast(-87.0f), high = nn::exp_fast(88.0f);
    EXPECT_NEAR(low, std::exp(-87.0), 2 * float_ulp_at(std::exp(-87.0)));
    EXPECT_NEAR(high, std::exp(88.0), 2 * float_ulp_at(std::exp(88.0)));
    EXPECT_GE(low, std::numeric_limits<float>::min());
    const float inf = std::numeric_limits<float>::infinity();
    for (float x : {-87.001f, -100.0f, -1e4f, -3e38f, -inf}) {
        SCOPED_TRACE(x);
        EXPECT_EQ(nn::exp_fast(x), low);
        const double error = std::fabs(static_cast<double>(nn::exp_fast(x)) - std::exp(static_cast<double>(x)));
        EXPECT_LT(error, std::ldexp(1.0, -125));
    }
    for (float x : {88.001f, 89.0f, 100.0f, 1e4f, 3e38f, inf}) {
        SCOPED_TRACE(x);
        EXPECT_EQ(nn::exp_fast(x), high);
        EXPECT_TRUE(std::isfinite(nn::exp_fast(x)));
    }
}

TEST(FastLog1p, IsWithinTheStatedUlpBoundOverZeroToOne) {
    // The losses call it on e^-|z| in [0, 1]; the sweep includes the denormals and both ends.
    const WorstError w = worst_ulp_error(float_sweep(0.0f, 1.0f), log1p_f, [](double x) { return std::log1p(x); });
    EXPECT_LE(w.ulps, nn::kFastMathMaxUlp) << "log1p_unit_fast(" << w.at << ")";
    RecordProperty("max_ulp", std::to_string(w.ulps));
}

TEST(FastMath, DoubleVersionsAreTheStandardLibrarys) {
    // The finite-difference gradient tests run in double and must check formulas, not approximations.
    for (double x : {-80.5, -2.25, -1e-9, 0.0, 3e-7, 0.75, 1.0, 30.0})
        EXPECT_EQ(nn::exp_fast(x), std::exp(x)) << x;
    for (double x : {0.0, 1e-300, 1e-8, 0.3, 0.999, 1.0})
        EXPECT_EQ(nn::log1p_unit_fast(x), std::log1p(x)) << x;
}

}  // namespace
}  // namespace onefit
