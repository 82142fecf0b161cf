// bench/conv_onefit.hpp's kernels, compiled once per SIMD target as cpu_targets.cpp compiles
// the step loop; the copy called is the one the step loop runs (runtime/cpu/simd_copies.hpp).
#define ONEFIT_SIMD_PER_TARGET
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "conv_onefit.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "conv_onefit.hpp"
#include "core/thread_pool.hpp"
#include "runtime/cpu/cpu_executor.hpp"

HWY_BEFORE_NAMESPACE();
namespace conv_bench::HWY_NAMESPACE {
namespace cpu = onefit::HWY_NAMESPACE::cpu;

// CpuExecutor::over_parts: whole images per task, split when worth it.
template <class F>
void over_parts(const OnefitConv& c, F&& f) {
    onefit::ThreadPool& pool = onefit::ThreadPool::instance();
    const int64_t rows = c.images, values = rows * (c.win.in_h * c.win.in_w * c.win.channels + c.pixels * c.filters);
    if (pool.num_threads() == 1 || rows < 2 || values < cpu::kSplitMinImageValues) return f(0, rows);
    const int64_t tasks = std::min<int64_t>(pool.num_threads(), rows), chunk = (rows + tasks - 1) / tasks;
    pool.parallel_for(tasks, [&](int64_t t) {
        const int64_t a = t * chunk, e = std::min(rows, a + chunk);
        if (a < e) f(a, e - a);
    });
}

void forward(const OnefitConv& c) {
    const int64_t image = c.win.in_h * c.win.in_w * c.win.channels;
    over_parts(c, [&](int64_t a, int64_t n) { cpu::im2col(c.cols + a * c.pixels * c.patch, c.x + a * image, n, c.win); });
    cpu::dense_forward(c.z, c.cols, c.kernel, c.bias, c.images * c.pixels, c.patch, c.filters, false, c.use_blas);
}

void backward(const OnefitConv& c) {
    cpu::dense_backward(c.dw, c.db, c.dcols, c.dz, c.cols, c.kernel, c.images * c.pixels, c.patch, c.filters, false,
                        c.use_blas);
    if (!c.dx) return;
    const int64_t image = c.win.in_h * c.win.in_w * c.win.channels;
    over_parts(c, [&](int64_t a, int64_t n) { cpu::col2im(c.dx + a * image, c.dcols + a * c.pixels * c.patch, n, c.win); });
}

}  // namespace conv_bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "runtime/cpu/simd_copies.hpp"

namespace conv_bench {
using Step = void (*)(const OnefitConv&);

void onefit_conv_forward(const OnefitConv& c) {
    static const Step step = onefit::cpu::copy_for_step_target<Step>(ONEFIT_SIMD_COPIES(forward));
    step(c);
}

void onefit_conv_backward(const OnefitConv& c) {
    static const Step step = onefit::cpu::copy_for_step_target<Step>(ONEFIT_SIMD_COPIES(backward));
    step(c);
}

}  // namespace conv_bench
#endif  // HWY_ONCE
