// Loop shapes for the CPU step loop's elementwise and per-row work (host code only): a row
// width known at compile time, and trip counts in whole vectors.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_VECTOR_LOOPS_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_VECTOR_LOOPS_HPP
#undef ONEFIT_NN_VECTOR_LOOPS_HPP
#else
#define ONEFIT_NN_VECTOR_LOOPS_HPP
#endif
#include <cstdint>
#include <type_traits>
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

// Calls f.template operator()<W>() with the row width as a compile-time constant when it is
// 2..8 (the output widths of small classifiers), and with W = 0 otherwise (f reads the runtime
// width). A constant width turns per-row loops into strided vector code across rows: the seed's
// softmax over rows of 3 runs 16 rows per vector instead of one scalar row at a time.
template <class F>
void with_small_width(int64_t width, F&& f) {
    switch (width) {
        case 2: f.template operator()<2>(); return;
        case 3: f.template operator()<3>(); return;
        case 4: f.template operator()<4>(); return;
        case 5: f.template operator()<5>(); return;
        case 6: f.template operator()<6>(); return;
        case 7: f.template operator()<7>(); return;
        case 8: f.template operator()<8>(); return;
        default: f.template operator()<0>(); return;
    }
}

// Lanes of a float vector on the target being compiled (4 on SSSE3 and NEON, 8 on AVX2, 16 on
// AVX-512).
#if defined(__CUDACC__)
inline constexpr int64_t kVectorLanes = 16;
#else
inline constexpr int64_t kVectorLanes =
    static_cast<int64_t>(hwy::HWY_NAMESPACE::MaxLanes(hwy::HWY_NAMESPACE::ScalableTag<float>()));
#endif

// Covers iterations [0, n) with loops of exactly one vector each: body(first, count, skip) runs
// iterations [first, first + count) with count a compile-time kVectorLanes, for first = 0, 16,
// 32, ..., and, when n is not a multiple, once more ending at n, overlapping the one before: its
// first `skip` iterations were done already, so the body must make them harmless (write the
// same values again, add nothing to a sum, leave an in-place update alone). Below one vector,
// one call with count = n. Why: for loops of 3 to 64 elements the compiler's scalar prologue
// and remainder iterations cost more than the vector body (measured on Zen 4: log_cosh over 60
// elements 163 ns, over 64 elements 65 ns), and a constant trip count leaves it none to emit.
template <class Body>
[[gnu::always_inline]] inline void in_whole_vectors(int64_t n, Body&& body) {
    constexpr std::integral_constant<int64_t, kVectorLanes> lanes;
    if (n < kVectorLanes) return body(int64_t{0}, n, int64_t{0});
    int64_t first = 0;
    for (; first + kVectorLanes <= n; first += kVectorLanes) body(first, lanes, int64_t{0});
    if (first < n) body(n - kVectorLanes, lanes, first - (n - kVectorLanes));
}

// The sum of kVectorLanes values in one fixed order, a halving tree: v[i] += v[i + h] for
// h = lanes/2, ..., 1, so the result is v[0]. Every cross-lane sum of the step loop (a dot
// product's lanes, a chunk of loss values) uses this order, and members trained side by side
// in lanes (runtime/cpu/stacked_fit.hpp) repeat it with T a vector of members: that is what
// keeps a stacked member's bits equal to its fit alone. Overwrites v.
template <class T>
[[gnu::always_inline]] inline T lanes_tree_sum(T* v) {
    for (int64_t h = kVectorLanes / 2; h >= 1; h /= 2)
        for (int64_t i = 0; i < h; ++i) v[i] = v[i] + v[i + h];
    return v[0];
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_VECTOR_LOOPS_HPP
