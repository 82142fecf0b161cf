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
#include "runtime/cpu/stacked_fit.hpp"

HWY_BEFORE_NAMESPACE();
namespace onefit::HWY_NAMESPACE {  // (HWY_EXPORT wants the functions right here)

std::unique_ptr<DeviceProgram> make_fit(TrainingProgram& program, const FitPlan& plan,
                                        const std::vector<nn::Metric>& metrics) {
    return std::make_unique<cpu::CpuFit<float>>(program, plan, metrics);
}

LogSums evaluate(const TrainingProgram& program, const float* x, int64_t x_width, const float* y, int64_t y_width,
                 const float* sample_weight, int64_t rows, int64_t batch_size, const std::vector<nn::Metric>& metrics) {
    cpu::CpuExecutor<float> executor(program, std::min(batch_size, rows), metrics, y_width, 0);
    LogSums sums;
    for (int64_t done = 0; done < rows; done += batch_size) {
        const int64_t n = std::min(batch_size, rows - done);
        executor.evaluate_batch(x + done * x_width, y + done * y_width, n, sums,
                                sample_weight ? sample_weight + done : nullptr);
    }
    executor.finish_metrics(sums);
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

int64_t stack_lanes() { return cpu::StackedFit::L; }

bool can_stack(const TrainingProgram& program, const FitPlan& plan) { return cpu::can_stack(program, plan); }

std::vector<cpu::StackedResult> fit_stacked(const std::vector<TrainingProgram*>& members,
                                            const std::vector<FitPlan>& plans, const std::vector<nn::Metric>& metrics,
                                            int64_t first, int64_t last) {
    return cpu::StackedFit(members, plans, metrics).run(first, last);
}

}  // namespace onefit::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onefit::cpu {
namespace {

// The dispatch table, built from Highway's per-target names but without libhwy's run-time
// part: its shared library measures its timer when it loads (~4 ms in every process) and
// would be one more library for every program that links onefit.
using MakeFit = std::unique_ptr<DeviceProgram> (*)(TrainingProgram&, const FitPlan&, const std::vector<nn::Metric>&);
using Evaluate = LogSums (*)(const TrainingProgram&, const float*, int64_t, const float*, int64_t, const float*, int64_t,
                             int64_t, const std::vector<nn::Metric>&);
using Predict = void (*)(const TrainingProgram&, const float*, int64_t, int64_t, int64_t, float*);
using StackLanes = int64_t (*)();
using CanStack = bool (*)(const TrainingProgram&, const FitPlan&);
using FitStacked = std::vector<StackedResult> (*)(const std::vector<TrainingProgram*>&, const std::vector<FitPlan>&,
                                                  const std::vector<nn::Metric>&, int64_t, int64_t);

struct Target {
    const char* name;
    bool (*supported)();
    MakeFit make_fit;
    Evaluate evaluate;
    Predict predict;
    StackLanes stack_lanes;
    CanStack can_stack;
    FitStacked fit_stacked;
};

#define ONEFIT_TARGET(NAME, TARGET, SUPPORTED) \
    Target{NAME,                                                                                               \
           SUPPORTED,                                                                                          \
           HWY_CHOOSE_##TARGET(make_fit),                                                                      \
           HWY_CHOOSE_##TARGET(evaluate),                                                                      \
           HWY_CHOOSE_##TARGET(predict),                                                                       \
           HWY_CHOOSE_##TARGET(stack_lanes),                                                                   \
           HWY_CHOOSE_##TARGET(can_stack),                                                                     \
           HWY_CHOOSE_##TARGET(fit_stacked)}

#if HWY_ARCH_X86
// What Highway's targets assume, as the CPU and the OS report it (libgcc checks that the OS
// saves the wide registers).
bool has_avx3() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
}
bool has_avx2() {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("f16c");
}
bool has_ssse3() { return __builtin_cpu_supports("ssse3"); }
#endif
[[maybe_unused]] bool always() { return true; }

// Best first. Targets this build did not compile have null entries and are skipped.
const std::vector<Target>& compiled() {
    static const std::vector<Target> targets = [] {
        std::vector<Target> all = {
#if HWY_ARCH_X86
            ONEFIT_TARGET("AVX3", AVX3, has_avx3),
            ONEFIT_TARGET("AVX2", AVX2, has_avx2),
            ONEFIT_TARGET("SSSE3", SSSE3, has_ssse3),
#elif HWY_ARCH_ARM_A64
            ONEFIT_TARGET("NEON", NEON, always),
#endif
            // The build's baseline (what the compiler flags allow everywhere), last.
            ONEFIT_TARGET(hwy::TargetName(HWY_STATIC_TARGET), FALLBACK, always),
        };
        std::vector<Target> kept;
        for (const Target& t : all) {
            const bool seen = std::any_of(kept.begin(), kept.end(), [&](const Target& k) { return !std::strcmp(k.name, t.name); });
            if (t.make_fit && !seen && t.supported()) kept.push_back(t);
        }
        return kept;
    }();
    return targets;
}

const Target* chosen = nullptr;
std::once_flag chosen_once;

// The best target, or ONEFIT_SIMD's, settled on first use.
const Target& current() {
    std::call_once(chosen_once, [] {
        chosen = &compiled().front();
        const char* wanted = std::getenv("ONEFIT_SIMD");
        if (wanted && *wanted) force_simd_target(wanted);
    });
    return *chosen;
}

}  // namespace

std::unique_ptr<DeviceProgram> make_cpu_fit(TrainingProgram& program, const FitPlan& plan,
                                            const std::vector<nn::Metric>& metrics) {
    return current().make_fit(program, plan, metrics);
}

LogSums evaluate_rows(const TrainingProgram& program, const float* x, int64_t x_width, const float* y,
                      int64_t y_width, int64_t rows, int64_t batch_size, const std::vector<nn::Metric>& metrics,
                      const float* sample_weight) {
    return current().evaluate(program, x, x_width, y, y_width, sample_weight, rows, batch_size, metrics);
}

void predict_rows(const TrainingProgram& program, const float* x, int64_t x_width, int64_t rows, int64_t batch_size,
                  float* out) {
    current().predict(program, x, x_width, rows, batch_size, out);
}

int64_t stack_lanes() { return current().stack_lanes(); }

bool can_stack(const TrainingProgram& program, const FitPlan& plan) { return current().can_stack(program, plan); }

std::vector<StackedResult> fit_stacked(const std::vector<TrainingProgram*>& members,
                                       const std::vector<FitPlan>& plans, const std::vector<nn::Metric>& metrics,
                                       int64_t first, int64_t last) {
    return current().fit_stacked(members, plans, metrics, first, last);
}

std::string simd_target() { return current().name; }

std::vector<std::string> simd_targets() {
    std::vector<std::string> names;
    for (const Target& t : compiled()) names.push_back(t.name);
    return names;
}

void force_simd_target(const std::string& name) {
    std::string choices;
    for (const Target& t : compiled()) {
        if (name == t.name) {
            chosen = &t;
            return;
        }
        choices += choices.empty() ? "" : ", ";
        choices += t.name;
    }
    throw Error("SIMD target '" + name + "' is not one this build has for this CPU; choose one of: " + choices +
                " (ONEFIT_SIMD)");
}

}  // namespace onefit::cpu
#endif  // HWY_ONCE
