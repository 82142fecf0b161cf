// Keras's L1/L2 penalty and its gradient, shared by the weight and the activity regularizers:
// l1 sum|v| + l2 sum v^2 (summed in double), and per value l1 sign(v) + 2 l2 v.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_REGULARIZER_PENALTY_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_REGULARIZER_PENALTY_HPP
#undef ONEFIT_NN_REGULARIZER_PENALTY_HPP
#else
#define ONEFIT_NN_REGULARIZER_PENALTY_HPP
#endif
#include <cmath>
#include <cstdint>

#include "onefit/layers.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

template <class T>
double regularizer_penalty(const Regularizer& r, const T* v, int64_t n) {
    double abs_sum = 0, square_sum = 0;
    for (int64_t i = 0; i < n; ++i) abs_sum += std::fabs(double(v[i])), square_sum += double(v[i]) * double(v[i]);
    return double(r.l1) * abs_sum + double(r.l2) * square_sum;
}

template <class T>
T regularizer_gradient(const Regularizer& r, T v) {
    return T(r.l1) * T((v > T(0)) - (v < T(0))) + T(2) * T(r.l2) * v;
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_REGULARIZER_PENALTY_HPP
