// The two primitives every small dense product lowers to (tinygrad-style: few ops, reused):
//   weighted_row_sum: out[0:len] = init + sum_r coeff[r * cstride] * rows[r * rstride + 0:len]
//   row_dots:         out[j * ostride] = init[j] + dot(a[0:len], rows[j * rstride + 0:len]), j < count
// Dense forward, weight gradient and input gradient in either weight layout are these two with
// different strides. Tiny layers make the loops 3 to 64 long, so the AVX-512 versions keep the
// whole output in registers (up to 64 floats) with masked tails: no scalar prologue/epilogue and
// no store/reload per row.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace onefit::cpu {

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

#if defined(__AVX512F__)
// gcc 12 warns inside _mm512_reduce_add_ps's own body (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline __mmask16 tail_mask(int64_t left) {
    return static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1);
}
// Full registers use plain loads and stores: a masked store blocks store-to-load forwarding, and
// the next kernel reads these values straight back (measured: 13% of the activation pass).
inline __m512 load16(__mmask16 m, const float* p) { return m == 0xffff ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p); }
inline void store16(__mmask16 m, float* p, __m512 v) {
    if (m == 0xffff) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, m, v);
}

template <>
inline void weighted_row_sum<float>(float* __restrict out, const float* __restrict init, const float* __restrict coeff,
                                    int64_t cstride, const float* __restrict rows, int64_t rstride, int64_t nrows,
                                    int64_t len) {
    for (int64_t base = 0; base < len; base += 64) {  // four registers of output at a time
        __mmask16 m[4];
        __m512 acc[4];
        for (int v = 0; v < 4; ++v) {
            const int64_t left = len - base - 16 * v;
            m[v] = left > 0 ? tail_mask(left) : 0;
            acc[v] = init && m[v] ? load16(m[v], init + base + 16 * v) : _mm512_setzero_ps();
        }
        for (int64_t r = 0; r < nrows; ++r) {
            const __m512 c = _mm512_set1_ps(coeff[r * cstride]);
            const float* row = rows + r * rstride + base;
            for (int v = 0; v < 4; ++v)
                if (m[v]) acc[v] = _mm512_fmadd_ps(c, load16(m[v], row + 16 * v), acc[v]);
        }
        for (int v = 0; v < 4; ++v)
            if (m[v]) store16(m[v], out + base + 16 * v, acc[v]);
    }
}

template <>
inline void row_dots<float>(float* __restrict out, int64_t ostride, const float* __restrict init,
                            const float* __restrict a, const float* __restrict rows, int64_t rstride, int64_t count,
                            int64_t len) {
    for (int64_t j = 0; j < count; ++j) {
        const float* row = rows + j * rstride;
        __m512 acc = _mm512_setzero_ps();
        for (int64_t i = 0; i < len; i += 16) {
            const __mmask16 m = tail_mask(len - i);
            acc = _mm512_fmadd_ps(load16(m, a + i), load16(m, row + i), acc);
        }
        out[j * ostride] = (init ? init[j] : 0.0f) + _mm512_reduce_add_ps(acc);
    }
}

// Whole-batch forms for matrices small enough to live in registers (the Iris layers): the
// weights are loaded once for all rows instead of once per row, and the loops over k and the
// 16-lane vectors are unrolled at compile time. Return false when the shape is not covered.
//   out[r, 0:len] = init + sum_{k<K} coeff[r * crow + k] * m[k * mstride + 0:len]
// and, when relu_out is not null, relu_out[r, :] = max(out[r, :], 0) from the same registers
// (a dense layer with its relu in one pass: the separate relu pass re-read every output).
template <int K, int V>
inline void register_matrix_rows(float* __restrict out, int64_t ostride, const float* __restrict init,
                                 const float* __restrict coeff, int64_t crow, const float* __restrict m,
                                 int64_t mstride, int64_t rows, int64_t len, float* __restrict relu_out) {
    __mmask16 mask[V];
    __m512 w[K][V], b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
        mask[v] = tail_mask(len - 16 * v);
        b[v] = init ? load16(mask[v], init + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) w[k][v] = load16(mask[v], m + k * mstride + 16 * v);
    }
    for (int64_t r = 0; r < rows; ++r) {
        __m512 acc[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[v] = b[v];
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) {
            const __m512 c = _mm512_set1_ps(coeff[r * crow + k]);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[v] = _mm512_fmadd_ps(c, w[k][v], acc[v]);
        }
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) store16(mask[v], out + r * ostride + 16 * v, acc[v]);
        if (relu_out)
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v)
                store16(mask[v], relu_out + r * ostride + 16 * v, _mm512_max_ps(acc[v], _mm512_setzero_ps()));
    }
}

template <int K>
inline bool register_matrix_rows_k(int64_t v, float* out, int64_t ostride, const float* init, const float* coeff,
                                   int64_t crow, const float* m, int64_t mstride, int64_t rows, int64_t len,
                                   float* relu_out) {
    if (v == 1) register_matrix_rows<K, 1>(out, ostride, init, coeff, crow, m, mstride, rows, len, relu_out);
    else if (v == 2) register_matrix_rows<K, 2>(out, ostride, init, coeff, crow, m, mstride, rows, len, relu_out);
    else return false;
    return true;
}

// Calls f.template operator()<K>() for K = k in 1..8 (the register kernels' unrolled row
// counts) and returns what it returns; false for any other k.
template <class F>
inline bool with_register_k(int64_t k, F&& f) {
    switch (k) {
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

inline bool try_register_matrix_rows(float* out, int64_t ostride, const float* init, const float* coeff, int64_t crow,
                                     const float* m, int64_t mstride, int64_t rows, int64_t k, int64_t len,
                                     float* relu_out = nullptr) {
    const int64_t v = (len + 15) / 16;
    return with_register_k(k, [&]<int K>() {
        return register_matrix_rows_k<K>(v, out, ostride, init, coeff, crow, m, mstride, rows, len, relu_out);
    });
}

// out[r, j] = init[j] + a[r, 0:len] . m[j, 0:len] for j < count <= 4, len <= 32: the weight rows stay
// in registers and the four sums of a row are reduced together (10 instructions, not 4 x 8).
inline __m128 sum_each_of_four(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    const __m512 t0 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
    const __m512 t1 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
    const __m512 u = _mm512_add_ps(_mm512_shuffle_ps(t0, t1, 0x44), _mm512_shuffle_ps(t0, t1, 0xEE));
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(u), _mm512_extractf32x8_ps(u, 1));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

template <int V>
inline void register_row_dots4(float* __restrict out, int64_t ostride, const float* __restrict init,
                               const float* __restrict a, int64_t astride, const float* __restrict m, int64_t mstride,
                               int64_t rows, int64_t count, int64_t len) {
    __mmask16 mask[V];
    __m512 w[4][V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
        mask[v] = tail_mask(len - 16 * v);
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j)
            w[j][v] = j < count ? load16(mask[v], m + j * mstride + 16 * v) : _mm512_setzero_ps();
    }
    const __mmask8 out_mask = static_cast<__mmask8>((1u << count) - 1);
    const __m128 bias = init ? _mm_maskz_loadu_ps(out_mask, init) : _mm_setzero_ps();
    for (int64_t r = 0; r < rows; ++r) {
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
            const __m512 x = load16(mask[v], a + r * astride + 16 * v);
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) acc[j] = _mm512_fmadd_ps(x, w[j][v], acc[j]);
        }
        _mm_mask_storeu_ps(out + r * ostride, out_mask, _mm_add_ps(bias, sum_each_of_four(acc[0], acc[1], acc[2], acc[3])));
    }
}

inline bool try_register_row_dots(float* out, int64_t ostride, const float* init, const float* a, int64_t astride,
                                  const float* m, int64_t mstride, int64_t rows, int64_t count, int64_t len) {
    if (count > 4) return false;
    if (len <= 16) register_row_dots4<1>(out, ostride, init, a, astride, m, mstride, rows, count, len);
    else if (len <= 32) register_row_dots4<2>(out, ostride, init, a, astride, m, mstride, rows, count, len);
    else return false;
    return true;
}

//   out[k * ostride + 0:len] = sum_r coeff[r * crow + k] * data[r * drow + 0:len], k < K
// (a weight gradient): the K x len sums stay in registers across all rows. Optionally also the
// bias gradient in the same pass: data_sums = sum_r data[r, :], or coeff_sums[k] = sum_r coeff[r, k].
template <int K, int V>
inline void register_outer_sums(float* __restrict out, int64_t ostride, const float* __restrict coeff, int64_t crow,
                                const float* __restrict data, int64_t drow, int64_t rows, int64_t len,
                                float* __restrict data_sums, float* __restrict coeff_sums) {
    __mmask16 mask[V];
    __m512 acc[K][V], dsum[V];
    float csum[K] = {};
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
        mask[v] = tail_mask(len - 16 * v);
        dsum[v] = _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) acc[k][v] = _mm512_setzero_ps();
    }
    for (int64_t r = 0; r < rows; ++r) {
        __m512 d[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
            d[v] = load16(mask[v], data + r * drow + 16 * v);
            dsum[v] = _mm512_add_ps(dsum[v], d[v]);
        }
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) {
            csum[k] += coeff[r * crow + k];
            const __m512 c = _mm512_set1_ps(coeff[r * crow + k]);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[k][v] = _mm512_fmadd_ps(c, d[v], acc[k][v]);
        }
    }
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) store16(mask[v], out + k * ostride + 16 * v, acc[k][v]);
    if (data_sums)
        for (int v = 0; v < V; ++v) store16(mask[v], data_sums + 16 * v, dsum[v]);
    if (coeff_sums)
        for (int k = 0; k < K; ++k) coeff_sums[k] = csum[k];
}

template <int K>
inline bool register_outer_sums_k(int64_t v, float* out, int64_t ostride, const float* coeff, int64_t crow,
                                  const float* data, int64_t drow, int64_t rows, int64_t len, float* data_sums,
                                  float* coeff_sums) {
    if (v == 1) register_outer_sums<K, 1>(out, ostride, coeff, crow, data, drow, rows, len, data_sums, coeff_sums);
    else if (v == 2) register_outer_sums<K, 2>(out, ostride, coeff, crow, data, drow, rows, len, data_sums, coeff_sums);
    else return false;
    return true;
}

inline bool try_register_outer_sums(float* out, int64_t ostride, const float* coeff, int64_t crow, const float* data,
                                    int64_t drow, int64_t rows, int64_t k, int64_t len, float* data_sums,
                                    float* coeff_sums) {
    const int64_t v = (len + 15) / 16;
    return with_register_k(k, [&]<int K>() {
        return register_outer_sums_k<K>(v, out, ostride, coeff, crow, data, drow, rows, len, data_sums, coeff_sums);
    });
}
#pragma GCC diagnostic pop
#endif

}  // namespace onefit::cpu
