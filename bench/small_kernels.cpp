// onefit's own fused kernels at the Iris shapes, timed like bench/gemm_choice's library
// candidates (median ns per call): the measurement behind keeping tiny layers off BLAS.
// Each call is followed by a compiler barrier so no work is hoisted out of the timing loop.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "runtime/cpu/dense_kernels.hpp"

using namespace onefit;

namespace {

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
void bench_layer(const char* name, int64_t rows, int64_t in, int64_t out) {
    const bool out_major = in > out;
    std::vector<float> x(rows * in), w(in * out), b(out), z(rows * out), dz(rows * out), dw(in * out), db(out),
        dx(rows * in);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 7) * 0.1f - 0.3f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(i % 5) * 0.05f - 0.1f;
    for (size_t i = 0; i < dz.size(); ++i) dz[i] = float(i % 3) * 0.01f;
    const double fwd = median_ns([&] {
        cpu::dense_forward(z.data(), x.data(), w.data(), b.data(), rows, in, out, out_major, false);
        barrier(z.data());
    });
    const double dw_db = median_ns([&] {
        cpu::dense_backward(dw.data(), db.data(), static_cast<float*>(nullptr), dz.data(), x.data(), w.data(), rows, in,
                            out, out_major, false);
        barrier(dw.data());
    });
    const double all = median_ns([&] {
        cpu::dense_backward(dw.data(), db.data(), dx.data(), dz.data(), x.data(), w.data(), rows, in, out, out_major,
                            false);
        barrier(dx.data());
    });
    std::printf("small_%s_fwd: %.1f ns\n", name, fwd);
    std::printf("small_%s_dw: %.1f ns\n", name, dw_db);
    std::printf("small_%s_dx: %.1f ns\n", name, all - dw_db);
}

}  // namespace

int main() {
    std::printf("# onefit small kernels (fused bias; dw includes db), layout chosen as in lower.cpp; median of 21 rounds\n");
    bench_layer("iris1", 20, 4, 32);
    bench_layer("iris2", 20, 32, 3);
}
