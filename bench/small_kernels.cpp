// onefit's own fused kernels against its LIBXSMM path (gemm_f32) on the same layer, in the
// layout lower.cpp picks, median ns per call: the measurement behind kBlasMinMacs, the size
// from which a layer leaves our register kernels for LIBXSMM.
// Each call is followed by a compiler barrier so no work is hoisted out of the timing loop.
// Compiled once per SIMD target, as cpu_targets.cpp compiles the step loop: the kernels timed
// are the copy the step loop runs on this CPU (runtime/cpu/simd_copies.hpp).
#define ONEFIT_SIMD_PER_TARGET
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "small_kernels.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "runtime/cpu/dense_kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace small_bench::HWY_NAMESPACE {
namespace cpu = onefit::HWY_NAMESPACE::cpu;

inline void barrier(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

template <class F>
double median_ns(F&& f) {
    std::vector<double> samples;
    for (int round = 0; round < 21; ++round) {
        const int n = 20000;
        const auto t = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) f();
        samples.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count() / n);
    }
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    return samples[samples.size() / 2];
}

// The three products of one Dense layer's step at rows x in -> out, in onefit's layout choice.
void bench_layer(const char* path, const char* name, int64_t rows, int64_t in, int64_t out, bool use_blas) {
    const bool out_major = in > out;
    std::vector<float> x(rows * in), w(in * out), b(out), z(rows * out), dz(rows * out), dw(in * out), db(out),
        dx(rows * in);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 7) * 0.1f - 0.3f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 5) * 0.05f - 0.1f;
    for (size_t i = 0; i < dz.size(); ++i) dz[i] = float(i % 3) * 0.01f;
    const double fwd = median_ns([&] {
        cpu::dense_forward(z.data(), x.data(), w.data(), b.data(), rows, in, out, out_major, use_blas);
        barrier(z.data());
    });
    const double dw_db = median_ns([&] {
        cpu::dense_backward(dw.data(), db.data(), static_cast<float*>(nullptr), dz.data(), x.data(), w.data(), rows, in,
                            out, out_major, use_blas);
        barrier(dw.data());
    });
    const double all = median_ns([&] {
        cpu::dense_backward(dw.data(), db.data(), dx.data(), dz.data(), x.data(), w.data(), rows, in, out, out_major,
                            use_blas);
        barrier(dx.data());
    });
    std::printf("%s_%s_fwd: %.1f ns\n", path, name, fwd);
    std::printf("%s_%s_dw: %.1f ns\n", path, name, dw_db);
    std::printf("%s_%s_dx: %.1f ns\n", path, name, all - dw_db);
    std::printf("%s_%s_step: %.1f ns\n", path, name, fwd + all);
}

}  // namespace small_bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "runtime/cpu/simd_copies.hpp"

namespace small_bench {
using BenchLayer = void (*)(const char*, const char*, int64_t, int64_t, int64_t, bool);
}  // namespace small_bench

int main() {
    const small_bench::BenchLayer bench_layer = [] {
        using namespace small_bench;
        return onefit::cpu::copy_for_step_target<BenchLayer>(ONEFIT_SIMD_COPIES(bench_layer));
    }();
    std::printf("# onefit small kernels (%s copy) vs its LIBXSMM path (bias included; dw includes db; step = fwd + dw"
                " + dx), layout chosen as in lower.cpp; median of 21 rounds\n",
                onefit::cpu::simd_target().c_str());
    struct Shape {
        const char* name;
        int64_t rows, in, out;
    };
    const Shape shapes[] = {{"iris1", 20, 4, 32},    {"iris2", 20, 32, 3},      {"mnist2", 128, 256, 10},
                            {"b32_64x32", 32, 64, 32}, {"b32_128x64", 32, 128, 64}, {"b128_64x64", 128, 64, 64}};
    for (const Shape& s : shapes) {
        bench_layer("small", s.name, s.rows, s.in, s.out, false);
        bench_layer("xsmm", s.name, s.rows, s.in, s.out, true);
    }
}
#endif  // HWY_ONCE
