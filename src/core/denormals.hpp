// Flush denormals to zero while training, as TensorFlow does: without it about a fifth of
// seeded Iris log_cosh fits reach float32 denormals and run five times slower.
#pragma once
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace onefit {

class DenormalsAreZero {
public:
#if defined(__x86_64__) || defined(__i386__)
    DenormalsAreZero() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }  // FTZ | DAZ
    ~DenormalsAreZero() { _mm_setcsr(saved_); }

private:
    unsigned saved_;
#elif defined(__aarch64__)
    DenormalsAreZero() : saved_(__builtin_aarch64_get_fpcr()) { __builtin_aarch64_set_fpcr(saved_ | (1u << 24)); }  // FZ
    ~DenormalsAreZero() { __builtin_aarch64_set_fpcr(saved_); }

private:
    unsigned saved_;
#else
    DenormalsAreZero() = default;  // other CPUs keep IEEE denormals
#endif
    DenormalsAreZero(const DenormalsAreZero&) = delete;
    DenormalsAreZero& operator=(const DenormalsAreZero&) = delete;
};

}  // namespace onefit
