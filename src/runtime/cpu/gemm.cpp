// gemm_f32 on the library chosen for the product's class (gemm_choice.cpp): LIBXSMM 1.17 JIT
// kernels, or the cblas_sgemm of OpenBLAS or BLIS (gemm_libraries.cpp), blocked over the pool the
// same way. (On an AVX-512 Xeon LIBXSMM ran the MNIST layer at ~220 GFLOP/s on one core, twice
// OpenBLAS's Haswell kernels; on a Zen 3 EPYC OpenBLAS's were faster. Hence the measurement.)
//
// LIBXSMM is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so B
// is the kernel's first operand and A its second. 1.17 JITs a transposed second operand
// (row-major trans_a) but not a transposed first one (row-major trans_b), so for trans_b each
// task first transposes its slice of B into scratch, in 16 x 16 tiles.
//
// C is cut into blocks of whole columns (or whole rows), one per logical CPU, that run as ThreadPool tasks.
// Each element of C is computed by one kernel over the whole of k, so the result does not
// depend on which thread ran which block.
#include "runtime/cpu/gemm.hpp"

#if ONEFIT_HAVE_XSMM
#include <libxsmm.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>


#include "core/thread_pool.hpp"
#include "runtime/cpu/gemm_libraries.hpp"

namespace onefit::cpu {
namespace {

constexpr int64_t kColumnAlign = 16;  // column blocks are multiples of one AVX-512 register
// For trans_b, at most this many floats of B per block (512 KiB, half this machine's L2), so a
// block's transposed slice is still in L2 when its kernel reads it. On one core the 128x784x256
// forward product took 320 us as one block and 230 us as two.
constexpr int64_t kSliceFloats = 1 << 17;

#if ONEFIT_HAVE_XSMM
// The column-major kernel C[M, N] = A[M, K] B[K, N] (B^T when trans_second) + beta C, beta 0 or 1.
// LIBXSMM keeps dispatched kernels in its own registry: after the first call with a shape this
// is a hash lookup (~20 ns measured), with no JIT and no allocation.
libxsmm_smmfunction kernel(int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
                           bool trans_second, bool beta_one) {
    const libxsmm_blasint m = M, n = N, k = K, la = lda, lb = ldb, lc = ldc;
    const float alpha = 1.0f, beta = beta_one ? 1.0f : 0.0f;
    const int flags = trans_second ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
    const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    const libxsmm_smmfunction f = libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, &prefetch);
    if (!f) {  // 1.17 JITs every size with these flags on x86-64 (SSE3 and up)
        std::fprintf(stderr, "onefit: LIBXSMM could not generate a %lldx%lldx%lld sgemm kernel (flags %d)\n",
                     static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K), flags);
        std::abort();
    }
    return f;
}
#endif


// out[j, i] = in[i, j] for in[rows, cols]: out is cols x rows. 16 x 16 tiles keep both sides'
// cache lines in L1 (a 784 x 256 transpose: 20 us, libxsmm_otrans 1.17: 120 us).
[[maybe_unused]] void transpose(float* __restrict out, int64_t ldo, const float* __restrict in, int64_t ldi, int64_t rows,
               int64_t cols) {
    for (int64_t i0 = 0; i0 < rows; i0 += 16) {
        const int64_t i1 = std::min(rows, i0 + 16);
        for (int64_t j0 = 0; j0 < cols; j0 += 16) {
            const int64_t j1 = std::min(cols, j0 + 16);
            for (int64_t j = j0; j < j1; ++j)
                for (int64_t i = i0; i < i1; ++i) out[j * ldo + i] = in[i * ldi + j];
        }
    }
}

// c[rows, cols] *= beta (beta 0 writes zeros, so NaN in an unread C does not survive).
void scale(float* c, int64_t ldc, int64_t rows, int64_t cols, float beta) {
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

constexpr size_t kStackFloats = 1 << 14;  // 64 KiB: MNIST's 256 x 10 layer needs 8,192

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The row stride of a transposed copy of B with `width` columns: whole registers, plus one so
// that it is never a multiple of 1 KiB, where the 16 stores of a transposed tile alias in L1
// (a 256 x 784 transpose took 64 us with stride 256, 21 us with 272).
[[maybe_unused]] int64_t padded(int64_t width) { return round_up(width, kColumnAlign) + kColumnAlign; }

// The caller's scratch for transposed slices of B; it only grows, so a step allocates nothing
// once each shape has run. Tasks on the workers use the caller's buffer, each its own part.
[[maybe_unused]] float* scratch(size_t floats) {
    thread_local std::vector<float> buffer;
    if (buffer.size() < floats) buffer.resize(floats);
    return buffer.data();
}


// How many parts a product of this size is cut into: one per logical CPU of the machine for a
// large product, never the pool's size, so ONEFIT_NUM_THREADS changes which thread runs a block
// but not the blocks. That matters: a library may round a block differently by its shape (BLIS
// 0.9 takes its small-matrix path for narrow blocks), and results must not depend on the pool.
int64_t parts_for(int64_t m, int64_t n, int64_t k) {
    static const int64_t cpus = std::max(1u, std::thread::hardware_concurrency());
    return 2.0 * double(m) * double(n) * double(k) >= kGemmParallelFlops ? cpus : 1;
}

// A library's cblas_sgemm on blocks of C: whole columns (a block of columns of op(B)), or whole
// rows when C is narrower than two blocks (a block of rows of op(A)).
void cblas_blocks(CblasSgemm sgemm, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    const int64_t parts = parts_for(m, n, k);
    const bool by_columns = n >= m && (parts == 1 || n >= 2 * kColumnAlign);
    const int64_t extent = by_columns ? n : m;
    const int64_t width = by_columns ? std::min(n, round_up((n + parts - 1) / parts, kColumnAlign))
                                     : (m + parts - 1) / parts;
    const int64_t blocks = (extent + width - 1) / width;
    constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
    const auto run_block = [&](int64_t t) {
        const int64_t start = t * width, w = std::min(width, extent - start);
        const float* ab = by_columns ? a : trans_a ? a + start : a + start * lda;
        const float* bb = !by_columns ? b : trans_b ? b + start * ldb : b + start;
        sgemm(kRowMajor, trans_a ? kTrans : kNoTrans, trans_b ? kTrans : kNoTrans, int(by_columns ? m : w),
              int(by_columns ? w : n), int(k), 1.0f, ab, int(lda), bb, int(ldb), beta,
              by_columns ? c + start : c + start * ldc, int(ldc));
    };
    if (blocks == 1) run_block(0);
    else ThreadPool::instance().parallel_for(blocks, run_block);
}

#if ONEFIT_HAVE_XSMM
void xsmm_blocks(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    ThreadPool& pool = ThreadPool::instance();
    const int64_t parts = parts_for(m, n, k);
    // C is cut into blocks of whole columns: a block's columns are a block of rows of B, which for
    // trans_b the task transposes itself. A C narrower than two blocks is cut into rows instead.
    const bool by_columns = (trans_b || n >= m) && (parts == 1 || n >= 2 * kColumnAlign);
    if (trans_b && !by_columns) {  // transpose all of B once, here
        const int64_t ld = padded(n);
        float* bt = scratch(static_cast<size_t>(k * ld));
        transpose(bt, ld, b, ldb, n, k);
        b = bt;
        ldb = ld;
        trans_b = false;
    }
    int64_t width = (m + parts - 1) / parts;
    if (by_columns) {  // one block per part, and for trans_b few enough columns to transpose in L2
        const int64_t wanted = trans_b ? std::max(parts, (k * n + kSliceFloats - 1) / kSliceFloats) : parts;
        width = std::min(n, round_up((n + wanted - 1) / wanted, kColumnAlign));
    }
    const int64_t extent = by_columns ? n : m;
    const int64_t blocks = (extent + width - 1) / width, tail = extent - (blocks - 1) * width;
    const bool beta_one = beta != 0.0f, prescale = beta != 0.0f && beta != 1.0f;

    // The column-major kernels for a full block and the last one: M = columns, N = rows of C.
    const auto dispatch = [&](int64_t w) {
        const int64_t M = by_columns ? w : n, N = by_columns ? m : w;
        return kernel(M, N, k, trans_b ? padded(w) : ldb, lda, ldc, trans_a, beta_one);
    };
    const libxsmm_smmfunction full = dispatch(width), last = tail == width ? full : dispatch(tail);
    const size_t slice = static_cast<size_t>(k * padded(width));  // floats of one transposed block of B
    // A small product's transposed B goes on the stack: the small layers at the end of a model
    // run on pool workers too (CpuExecutor's tail halves), and a worker's first scratch() would
    // allocate in whatever step it first ran one.
    alignas(64) float on_stack[kStackFloats];
    const size_t bt_floats = slice * static_cast<size_t>(blocks);
    float* const bt = !trans_b ? nullptr : bt_floats <= kStackFloats ? on_stack : scratch(bt_floats);

    const auto run_block = [&](int64_t t) {
        const int64_t start = t * width, w = t + 1 == blocks ? tail : width;
        const libxsmm_smmfunction f = t + 1 == blocks ? last : full;
        const int64_t rows = by_columns ? m : w, cols = by_columns ? w : n;
        float* cb = by_columns ? c + start : c + start * ldc;
        if (prescale) scale(cb, ldc, rows, cols, beta);
        if (!by_columns) {  // rows [start, start + w) of op(A) and C, all of B
            f(b, trans_a ? a + start : a + start * lda, cb);
        } else if (trans_b) {  // columns [start, start + w) of C are rows of B: transpose them
            float* s = bt + static_cast<size_t>(t) * slice;
            transpose(s, padded(w), b + start * ldb, ldb, w, k);
            f(s, a, cb);
        } else {
            f(b + start, a, cb);
        }
    };
    if (blocks == 1) run_block(0);
    else pool.parallel_for(blocks, run_block);
}
#endif

}  // namespace

void gemm_f32_with(GemmLibrary library, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) return scale(c, ldc, m, n, beta);
#if ONEFIT_HAVE_XSMM
    if (library == GemmLibrary::xsmm) return xsmm_blocks(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
#endif
    cblas_blocks(cblas_sgemm_of(library), trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    const bool large = 2.0 * double(m) * double(n) * double(k) >= kGemmParallelFlops;
    const GemmLibrary library = gemm_library_for(trans_a, trans_b, large);
    gemm_f32_with(library, trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace onefit::cpu
