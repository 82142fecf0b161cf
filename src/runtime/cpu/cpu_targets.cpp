// The CPU step loop compiled once per SIMD target: Highway's foreach_target includes this file
// again for each target in HWY_TARGETS (SSSE3, AVX2, AVX-512 on x86-64; NEON on aarch64), and
// the hot headers it includes put each copy in that target's namespace (core/simd.hpp).
// Dispatch happens once per fit, evaluate or predict call, never per step.
#define ONEFIT_SIMD_PER_TARGET
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/cpu/cpu_targets.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>  // (nothing before foreach_target may include it)

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "onefit/error.hpp"
#include "runtime/cpu/cpu_simd.hpp"
#include "runtime/cpu/cpu_fit.hpp"

HWY_BEFORE_NAMESPACE();
namespace onefit::HWY_NAMESPACE {  // (HWY_EXPORT wants the functions right here)

std::unique_ptr<DeviceProgram> make_fit(TrainingProgram& program, const FitPlan& plan,
                                        const std::vector<nn::Metric>& metrics) {
    return std::make_unique<cpu::CpuFit<float>>(program, plan, metrics);
}

LogSums evaluate(const TrainingProgram& program, const float* x, int64_t x_width, const float* y, int64_t y_width,
                 int64_t rows, int64_t batch_size, const std::vector<nn::Metric>& metrics) {
    cpu::CpuExecutor<float> executor(program, std::min(batch_size, rows), metrics, y_width, 0);
    LogSums sums;
    for (int64_t done = 0; done < rows; done += batch_size) {
        const int64_t n = std::min(batch_size, rows - done);
        executor.evaluate_batch(x + done * x_width, y + done * y_width, n, sums);
    }
    return sums;
}

void predict(const TrainingProgram& program, const float* x, int64_t x_width, int64_t rows, int64_t batch_size,
             float* out) {
    cpu::CpuExecutor<float> executor(program, std::min(batch_size, rows), {}, 1, 0);
    const int64_t width = program.output_width;
    for (int64_t done = 0; done < rows; done += batch_size) {
        const int64_t n = std::min(batch_size, rows - done);
        executor.forward(x + done * x_width, n, false);
        std::copy(executor.output(), executor.output() + n * width, out + done * width);
    }
}

// This target's bit, in the table's order (so the dispatcher can name what it chose).
int64_t target_bit() { return HWY_TARGET; }

}  // namespace onefit::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onefit {
HWY_EXPORT(make_fit);
HWY_EXPORT(evaluate);
HWY_EXPORT(predict);
HWY_EXPORT(target_bit);
}  // namespace onefit

namespace onefit::cpu {

namespace {

// The compiled targets this CPU supports, best (lowest bit) first.
// Read once, before anything forces a target (forcing narrows what SupportedTargets returns).
std::vector<int64_t> available_bits() {
    static const std::vector<int64_t> bits = [] {
        std::vector<int64_t> all;
        for (int64_t t = hwy::SupportedTargets() & HWY_TARGETS; t != 0; t &= t - 1) all.push_back(t & -t);
        return all;
    }();
    return bits;
}

void choose(int64_t bit) {
    hwy::SetSupportedTargetsForTest(bit);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

// The first call applies ONEFIT_SIMD, if set.
void settle() {
    static std::once_flag once;
    std::call_once(once, [] {
        const char* wanted = std::getenv("ONEFIT_SIMD");
        if (wanted && *wanted) force_simd_target(wanted);
    });
}

}  // namespace

std::unique_ptr<DeviceProgram> make_cpu_fit(TrainingProgram& program, const FitPlan& plan,
                                            const std::vector<nn::Metric>& metrics) {
    settle();
    return HWY_DYNAMIC_DISPATCH(make_fit)(program, plan, metrics);
}

LogSums evaluate_rows(const TrainingProgram& program, const float* x, int64_t x_width, const float* y,
                      int64_t y_width, int64_t rows, int64_t batch_size, const std::vector<nn::Metric>& metrics) {
    settle();
    return HWY_DYNAMIC_DISPATCH(evaluate)(program, x, x_width, y, y_width, rows, batch_size, metrics);
}

void predict_rows(const TrainingProgram& program, const float* x, int64_t x_width, int64_t rows, int64_t batch_size,
                  float* out) {
    settle();
    HWY_DYNAMIC_DISPATCH(predict)(program, x, x_width, rows, batch_size, out);
}

std::string simd_target() {
    settle();
    return hwy::TargetName(HWY_DYNAMIC_DISPATCH(target_bit)());
}

std::vector<std::string> simd_targets() {
    std::vector<std::string> names;
    for (int64_t bit : available_bits()) names.push_back(hwy::TargetName(bit));
    return names;
}

void force_simd_target(const std::string& name) {
    std::string choices;
    for (int64_t bit : available_bits()) {
        if (name == hwy::TargetName(bit)) return choose(bit);
        choices += (choices.empty() ? "" : ", ") + std::string(hwy::TargetName(bit));
    }
    throw Error("SIMD target '" + name + "' is not one this build has for this CPU; choose one of: " + choices +
                " (ONEFIT_SIMD)");
}

}  // namespace onefit::cpu
#endif  // HWY_ONCE
