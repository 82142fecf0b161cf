// The two primitives every small dense product lowers to (tinygrad-style: few ops, reused):
//   weighted_row_sum: out[0:len] = init + sum_r coeff[r * cstride] * rows[r * rstride + 0:len]
//   row_dots:         out[j * ostride] = init[j] + dot(a[0:len], rows[j * rstride + 0:len]), j < count
// Dense forward, weight gradient and input gradient in either weight layout are these two with
// different strides. Tiny layers make the loops 3 to 64 long, so the float versions keep the
// whole output in registers with partial tail vectors: no scalar prologue/epilogue and no
// store/reload per row. Written once with Highway and compiled per SIMD target (core/simd.hpp):
// 4 lanes on SSSE3 and NEON, 8 on AVX2, 16 on AVX-512.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_RUNTIME_CPU_SMALL_KERNELS_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_RUNTIME_CPU_SMALL_KERNELS_HPP
#undef ONEFIT_RUNTIME_CPU_SMALL_KERNELS_HPP
#else
#define ONEFIT_RUNTIME_CPU_SMALL_KERNELS_HPP
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "nn/vector_loops.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(cpu)

template <class T>
inline void weighted_row_sum(T* __restrict out, const T* __restrict init, const T* __restrict coeff, int64_t cstride,
                             const T* __restrict rows, int64_t rstride, int64_t nrows, int64_t len) {
    for (int64_t i = 0; i < len; ++i) out[i] = init ? init[i] : T(0);
    for (int64_t r = 0; r < nrows; ++r) {
        const T c = coeff[r * cstride];
        const T* row = rows + r * rstride;
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) out[i] += c * row[i];
    }
}

template <class T>
inline void row_dots(T* __restrict out, int64_t ostride, const T* __restrict init, const T* __restrict a,
                     const T* __restrict rows, int64_t rstride, int64_t count, int64_t len) {
    for (int64_t j = 0; j < count; ++j) {
        const T* row = rows + j * rstride;
        T s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < len; ++i) s += a[i] * row[i];
        out[j * ostride] = (init ? init[j] : T(0)) + s;
    }
}

namespace simd {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
inline constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(D()));
// Floats of output a register kernel keeps in registers (two AVX-512 registers, eight NEON ones).
inline constexpr int64_t kRegisterFloats = 32;

// Lanes of vector v that a row of len floats fills (0 past its end).
inline int64_t lanes_of(int64_t len, int64_t v) {
    const int64_t left = len - kLanes * v;
    return left <= 0 ? 0 : left >= kLanes ? kLanes : left;
}

// The first n lanes from p, zeros after. A whole vector is a plain load; a part uses a masked
// load where it cannot fault (AVX2, AVX-512) and a copy through the stack where it could (SSE,
// NEON: their masked loads read the whole vector, possibly past the end of the buffer).
[[gnu::always_inline]] inline V load_part(const float* p, int64_t n) {
    const D d;
    if (n == kLanes) return hn::LoadU(d, p);
#if HWY_MEM_OPS_MIGHT_FAULT
    alignas(64) float part[kLanes] = {};
    std::memcpy(part, p, sizeof(float) * static_cast<size_t>(n));
    return hn::Load(d, part);
#else
    return hn::MaskedLoad(hn::FirstN(d, static_cast<size_t>(n)), d, p);
#endif
}

// Stores the first n lanes. Whole vectors use plain stores: a masked store blocks
// store-to-load forwarding, and the next kernel reads these values straight back (measured on
// AVX-512: 13% of the activation pass).
[[gnu::always_inline]] inline void store_part(V v, float* p, int64_t n) {
    const D d;
    if (n == kLanes) return hn::StoreU(v, d, p);
#if HWY_MEM_OPS_MIGHT_FAULT
    alignas(64) float part[kLanes];
    hn::Store(v, d, part);
    std::memcpy(p, part, sizeof(float) * static_cast<size_t>(n));
#else
    hn::BlendedStore(v, hn::FirstN(d, static_cast<size_t>(n)), d, p);
#endif
}

// The lanes' sum in nn::lanes_tree_sum's order (not Highway's SumOfLanes, whose order is its
// own and may change): stacked members repeat it exactly.
[[gnu::always_inline]] inline float sum_of_lanes(V v) {
    alignas(64) float lanes[kLanes];
    hn::Store(v, D(), lanes);
    return nn::lanes_tree_sum(lanes);
}

// Calls f.template operator()<N>() for N = n in 1..8 and returns what it returns; false otherwise.
template <class F>
inline bool with_count(int64_t n, F&& f) {
    switch (n) {
        case 1: return f.template operator()<1>();
        case 2: return f.template operator()<2>();
        case 3: return f.template operator()<3>();
        case 4: return f.template operator()<4>();
        case 5: return f.template operator()<5>();
        case 6: return f.template operator()<6>();
        case 7: return f.template operator()<7>();
        case 8: return f.template operator()<8>();
        default: return false;
    }
}

// Vectors for len floats when they fit kRegisterFloats, else 0.
inline int64_t register_vectors(int64_t len) {
    return len <= kRegisterFloats ? (len + kLanes - 1) / kLanes : 0;
}

// Runs f.template operator()<NV>() with NV the vectors that hold len floats, and returns true,
// when those fit the register budget; false otherwise (the caller takes its general loop).
template <class F>
inline bool with_register_vectors(int64_t len, F&& f) {
    return with_count(register_vectors(len), [&]<int NV>() {
        if constexpr (NV * kLanes > kRegisterFloats) {
            return false;
        } else {
            f.template operator()<NV>();
            return true;
        }
    });
}
}  // namespace simd

template <>
inline void weighted_row_sum<float>(float* __restrict out, const float* __restrict init, const float* __restrict coeff,
                                    int64_t cstride, const float* __restrict rows, int64_t rstride, int64_t nrows,
                                    int64_t len) {
    using namespace simd;
    constexpr int kBlock = 4;  // vectors of output at a time
    for (int64_t base = 0; base < len; base += kBlock * kLanes) {
        int64_t n[kBlock];
        V acc[kBlock];
        for (int v = 0; v < kBlock; ++v) {
            n[v] = lanes_of(len - base, v);
            acc[v] = init && n[v] ? load_part(init + base + kLanes * v, n[v]) : hn::Zero(D());
        }
        for (int64_t r = 0; r < nrows; ++r) {
            const V c = hn::Set(D(), coeff[r * cstride]);
            const float* row = rows + r * rstride + base;
            for (int v = 0; v < kBlock; ++v)
                if (n[v]) acc[v] = hn::MulAdd(c, load_part(row + kLanes * v, n[v]), acc[v]);
        }
        for (int v = 0; v < kBlock; ++v)
            if (n[v]) store_part(acc[v], out + base + kLanes * v, n[v]);
    }
}

template <>
inline void row_dots<float>(float* __restrict out, int64_t ostride, const float* __restrict init,
                            const float* __restrict a, const float* __restrict rows, int64_t rstride, int64_t count,
                            int64_t len) {
    using namespace simd;
    for (int64_t j = 0; j < count; ++j) {
        const float* row = rows + j * rstride;
        V acc = hn::Zero(D());
        for (int64_t i = 0; i < len; i += kLanes) {
            const int64_t n = len - i < kLanes ? len - i : kLanes;
            acc = hn::MulAdd(load_part(a + i, n), load_part(row + i, n), acc);
        }
        out[j * ostride] = (init ? init[j] : 0.0f) + sum_of_lanes(acc);
    }
}

// Whole-batch forms for matrices small enough to live in registers (the Iris layers): the
// weights are loaded once for all rows instead of once per row, and the loops over k and the
// vectors are unrolled at compile time. Return false when the shape is not covered.
//   out[r, 0:len] = init + sum_{k<K} coeff[r * crow + k] * m[k * mstride + 0:len]
// and, when relu_out is not null, relu_out[r, :] = max(out[r, :], 0) from the same registers
// (a dense layer with its relu in one pass: the separate relu pass re-read every output).
template <int K, int NV>
inline void register_matrix_rows(float* __restrict out, int64_t ostride, const float* __restrict init,
                                 const float* __restrict coeff, int64_t crow, const float* __restrict m,
                                 int64_t mstride, int64_t rows, int64_t len, float* __restrict relu_out) {
    using namespace simd;
    const D d;
    int64_t n[NV];
    V w[K][NV], b[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
        n[v] = lanes_of(len, v);
        b[v] = init ? load_part(init + kLanes * v, n[v]) : hn::Zero(d);
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) w[k][v] = load_part(m + k * mstride + kLanes * v, n[v]);
    }
    for (int64_t r = 0; r < rows; ++r) {
        V acc[NV];
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[v] = b[v];
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) {
            const V c = hn::Set(d, coeff[r * crow + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v) acc[v] = hn::MulAdd(c, w[k][v], acc[v]);
        }
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) store_part(acc[v], out + r * ostride + kLanes * v, n[v]);
        if (relu_out)
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v) store_part(hn::Max(acc[v], hn::Zero(d)), relu_out + r * ostride + kLanes * v, n[v]);
    }
}

inline bool try_register_matrix_rows(float* out, int64_t ostride, const float* init, const float* coeff, int64_t crow,
                                     const float* m, int64_t mstride, int64_t rows, int64_t k, int64_t len,
                                     float* relu_out = nullptr) {
    return simd::with_count(k, [&]<int K>() {
        return simd::with_register_vectors(len, [&]<int NV>() {
            register_matrix_rows<K, NV>(out, ostride, init, coeff, crow, m, mstride, rows, len, relu_out);
        });
    });
}

// out[r, j] = init[j] + a[r, 0:len] . m[j, 0:len] for j < count <= 4, len <= kRegisterFloats:
// the weight rows stay in registers for every row.
template <int NV>
inline void register_row_dots4(float* __restrict out, int64_t ostride, const float* __restrict init,
                               const float* __restrict a, int64_t astride, const float* __restrict m, int64_t mstride,
                               int64_t rows, int64_t count, int64_t len) {
    using namespace simd;
    const D d;
    int64_t n[NV];
    V w[4][NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
        n[v] = lanes_of(len, v);
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) w[j][v] = j < count ? load_part(m + j * mstride + kLanes * v, n[v]) : hn::Zero(d);
    }
    float bias[4] = {};
    for (int64_t j = 0; j < count; ++j) bias[j] = init ? init[j] : 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
        V acc[4] = {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
            const V x = load_part(a + r * astride + kLanes * v, n[v]);
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) acc[j] = hn::MulAdd(x, w[j][v], acc[j]);
        }
        for (int64_t j = 0; j < count; ++j) out[r * ostride + j] = bias[j] + sum_of_lanes(acc[j]);
    }
}

inline bool try_register_row_dots(float* out, int64_t ostride, const float* init, const float* a, int64_t astride,
                                  const float* m, int64_t mstride, int64_t rows, int64_t count, int64_t len) {
    if (count > 4) return false;
    return simd::with_register_vectors(len, [&]<int NV>() {
        register_row_dots4<NV>(out, ostride, init, a, astride, m, mstride, rows, count, len);
    });
}

//   out[k * ostride + 0:len] = sum_r coeff[r * crow + k] * data[r * drow + 0:len], k < K
// (a weight gradient): the K x len sums stay in registers across all rows. Optionally also the
// bias gradient in the same pass: data_sums = sum_r data[r, :], or coeff_sums[k] = sum_r coeff[r, k].
template <int K, int NV>
inline void register_outer_sums(float* __restrict out, int64_t ostride, const float* __restrict coeff, int64_t crow,
                                const float* __restrict data, int64_t drow, int64_t rows, int64_t len,
                                float* __restrict data_sums, float* __restrict coeff_sums) {
    using namespace simd;
    const D d;
    int64_t n[NV];
    V acc[K][NV], dsum[NV];
    float csum[K] = {};
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
        n[v] = lanes_of(len, v);
        dsum[v] = hn::Zero(d);
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) acc[k][v] = hn::Zero(d);
    }
    for (int64_t r = 0; r < rows; ++r) {
        V x[NV];
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
            x[v] = load_part(data + r * drow + kLanes * v, n[v]);
            dsum[v] = hn::Add(dsum[v], x[v]);
        }
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) {
            csum[k] += coeff[r * crow + k];
            const V c = hn::Set(d, coeff[r * crow + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v) acc[k][v] = hn::MulAdd(c, x[v], acc[k][v]);
        }
    }
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) store_part(acc[k][v], out + k * ostride + kLanes * v, n[v]);
    if (data_sums)
        for (int v = 0; v < NV; ++v) store_part(dsum[v], data_sums + kLanes * v, n[v]);
    if (coeff_sums)
        for (int k = 0; k < K; ++k) coeff_sums[k] = csum[k];
}

inline bool try_register_outer_sums(float* out, int64_t ostride, const float* coeff, int64_t crow, const float* data,
                                    int64_t drow, int64_t rows, int64_t k, int64_t len, float* data_sums,
                                    float* coeff_sums) {
    return simd::with_count(k, [&]<int K>() {
        return simd::with_register_vectors(len, [&]<int NV>() {
            register_outer_sums<K, NV>(out, ostride, coeff, crow, data, drow, rows, len, data_sums, coeff_sums);
        });
    });
}

ONEFIT_SIMD_END(cpu)
#endif  // ONEFIT_RUNTIME_CPU_SMALL_KERNELS_HPP
