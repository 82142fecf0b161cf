// One build, every CPU: the step loop's code (the hot headers of src/nn and src/runtime/cpu) is
// compiled once per SIMD target in src/runtime/cpu/cpu_targets.cpp by Highway's foreach_target,
// and the best target the CPU supports is chosen when the process first trains (cpu_simd.hpp).
//
// A hot header wraps its body in ONEFIT_SIMD_BEGIN(nn) ... ONEFIT_SIMD_END(nn), which puts it in
// onefit::<target>::nn (N_AVX2, N_AVX3, ...) with that target's instructions enabled. So each
// target's copy has its own symbols (copies compiled for different CPUs never merge at link
// time) and std:: code the hot loops call stays baseline. Outside cpu_targets.cpp (the CLI,
// tests, lowering) the static target's copy is visible as onefit::nn as before. CUDA sees plain
// code. Hot headers use the toggle guard that foreach_target needs instead of #pragma once; their
// own #includes must come before ONEFIT_SIMD_BEGIN (everything they include is then baseline).
#pragma once

#if defined(__CUDACC__)
#define ONEFIT_SIMD_NS device_code
#define ONEFIT_SIMD_PUSH
#define ONEFIT_SIMD_POP
#else
#include <hwy/highway.h>
#define ONEFIT_SIMD_NS HWY_NAMESPACE
#define ONEFIT_SIMD_PUSH HWY_BEFORE_NAMESPACE();
#define ONEFIT_SIMD_POP HWY_AFTER_NAMESPACE();
#endif

// cpu_targets.cpp defines ONEFIT_SIMD_PER_TARGET: there every target's copy is compiled side by
// side and code names its own target's namespace; elsewhere onefit::nn also sees the hot names.
#if defined(ONEFIT_SIMD_PER_TARGET)
#define ONEFIT_SIMD_EXPOSE(sub)
#else
#define ONEFIT_SIMD_EXPOSE(sub) \
    namespace onefit::sub {     \
    using namespace ::onefit::ONEFIT_SIMD_NS::sub; \
    }
#endif

#define ONEFIT_SIMD_BEGIN(sub)        \
    namespace onefit::sub {}          \
    ONEFIT_SIMD_PUSH                  \
    namespace onefit::ONEFIT_SIMD_NS::sub { \
    using namespace ::onefit::sub;

#define ONEFIT_SIMD_END(sub) \
    }                        \
    ONEFIT_SIMD_POP          \
    ONEFIT_SIMD_EXPOSE(sub)
