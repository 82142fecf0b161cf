// Where a fit runs. cpu is always there; cuda when onefit was built with the CUDA backend and a
// GPU is visible.
#pragma once
#include <string>
#include <vector>

namespace onefit {

enum class Device { cpu, cuda };

Device device_from_name(const std::string& name);  // "cpu", "cuda"; throws Error otherwise
std::string device_name(Device device);

// True when the CUDA backend is compiled in and a GPU is visible; `why` says why not.
bool cuda_available(std::string* why = nullptr);
// "NVIDIA H200 (sm_90, 139 GiB)" or an explanation.
std::string cuda_device_description();

// The CPU's name as the kernel reports it ("AMD EPYC"; "unknown CPU" where it does not).
std::string cpu_name();

// The SIMD instruction set the CPU step loop runs on, by Highway's name: "AVX3" (AVX-512),
// "AVX2", "SSSE3" on x86-64, "NEON" on aarch64. One binary carries every target and uses the
// best this CPU has; the environment variable ONEFIT_SIMD, or set_cpu_simd_target, picks another.
std::string cpu_simd_target();
// The targets this build carries that this CPU can run, best first.
std::vector<std::string> cpu_simd_targets();
// Runs later fits, evaluate and predict on the named target; throws Error naming the choices.
void set_cpu_simd_target(const std::string& name);

// The library that runs each class of large product on the CPU (LIBXSMM, OpenBLAS or BLIS),
// measured once per machine and cached, or set by ONEFIT_GEMM; measures it first if needed.
// The choice never depends on the thread count (ONEFIT_NUM_THREADS), so neither do results.
std::string cpu_gemm_choice();

}  // namespace onefit
