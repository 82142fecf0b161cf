// Inverted dropout's mask, shared by the CPU step loop and the CUDA kernels. An element is
// dropped with probability rate, decided by a hash of (seed, optimizer step, op) and the
// element's index in the batch, so every device draws the same mask without a generator's
// state; kept elements are scaled by 1 / (1 - rate). Outside training, and at rate 0, the
// mask is 1: the input passes through, and so does its gradient.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_DROPOUT_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_DROPOUT_HPP
#undef ONEFIT_NN_DROPOUT_HPP
#else
#define ONEFIT_NN_DROPOUT_HPP
#endif
#include <cstdint>

#include "core/hd.hpp"
#include "core/rng.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

// 1 / (1 - rate), the scale of a kept element (computed once per op, not per element).
template <class T>
ONEFIT_HD T dropout_keep_scale(float rate) {
    return T(1) / (T(1) - T(rate));
}

// The mask of element `index` of the batch; key = dropout_key(seed, step, op).
template <class T>
ONEFIT_HD T dropout_mask(bool training, float rate, T keep, uint64_t key, uint64_t index) {
    if (!training || !(rate > 0.0f)) return T(1);
    return hash_uniform(key, index) < rate ? T(0) : keep;
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_DROPOUT_HPP
