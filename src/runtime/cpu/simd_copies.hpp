// For programs outside the library that call the step loop's header kernels themselves
// (benchmarks): their own function compiled once per SIMD target, as cpu_targets.cpp compiles
// the step loop (Highway's foreach_target), and the copy the step loop runs on this CPU picked
// by its target's name. So such a program times the kernels the fit runs without being built
// for the build machine (-march=native fails where Highway or the compiler do not know the
// CPU, issue 28). Include in the file's HWY_ONCE part, after hwy/highway.h.
#pragma once
#include <cstddef>
#include <string>

#include "onefit/error.hpp"
#include "runtime/cpu/cpu_simd.hpp"

namespace onefit::cpu {

template <class Fn>
struct SimdCopy {
    const char* target;  // Highway's name, as simd_target() gives it
    Fn fn;               // null where the file was not compiled for that target
};

// The copy for the target the step loop runs on (simd_target(), ONEFIT_SIMD included).
template <class Fn, size_t N>
Fn copy_for_step_target(const SimdCopy<Fn> (&copies)[N]) {
    const std::string wanted = simd_target();
    for (const SimdCopy<Fn>& c : copies)
        if (c.fn && wanted == c.target) return c.fn;
    throw Error("this program has no copy of a kernel for the step loop's SIMD target " + wanted +
                " (it must be compiled with the library's HWY_DISABLED_TARGETS)");
}

}  // namespace onefit::cpu

// Every copy of FN, by target name, best first: the build's static target last, as in
// cpu_targets.cpp.
#if HWY_ARCH_X86
#define ONEFIT_SIMD_COPIES(FN)                                                               \
    {                                                                                        \
        {"AVX3", HWY_CHOOSE_AVX3(FN)}, {"AVX2", HWY_CHOOSE_AVX2(FN)},                        \
            {"SSSE3", HWY_CHOOSE_SSSE3(FN)}, {hwy::TargetName(HWY_STATIC_TARGET), HWY_CHOOSE_FALLBACK(FN)} \
    }
#else
#define ONEFIT_SIMD_COPIES(FN) \
    { {"NEON", HWY_CHOOSE_NEON(FN)}, {hwy::TargetName(HWY_STATIC_TARGET), HWY_CHOOSE_FALLBACK(FN)} }
#endif
