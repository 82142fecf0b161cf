// ONEFIT_HD marks the per-element math that both the CPU loops and the CUDA kernels call, so a
// formula lives in one place (src/nn) and the devices cannot drift apart.
#pragma once

#if defined(__CUDACC__)
#define ONEFIT_HD __host__ __device__ __forceinline__
#else
#define ONEFIT_HD [[gnu::always_inline]] inline  // inlined into vectorised loops
#endif
