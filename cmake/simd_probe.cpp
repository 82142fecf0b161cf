// Highway's choice of SIMD targets under the compiler flags in force and onefit's
// HWY_DISABLED_TARGETS. Highway 1.0 stops with an #error when the flags' best target is one it
// would not compile for dispatch; this file compiles exactly when a onefit file that includes
// core/simd.hpp gets past that. Compiled by cmake/native_check.cmake (ONEFIT_NATIVE) and by
// scripts/ci-march.sh for every -march value GCC knows.
#include <hwy/highway.h>

#include <cstdio>

int main() {
    std::printf("%s\n", hwy::TargetName(HWY_STATIC_TARGET));
    return 0;
}
