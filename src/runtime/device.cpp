#include "onefit/device.hpp"

#include "core/cpu_name.hpp"
#include "onefit/error.hpp"
#include "runtime/cpu/cpu_simd.hpp"
#include "runtime/cpu/gemm.hpp"
#include "runtime/cuda/cuda_fit.hpp"

namespace onefit {

Device device_from_name(const std::string& name) {
    if (name == "cpu") return Device::cpu;
    if (name == "cuda" || name == "gpu") return Device::cuda;
    throw Error("unknown device '" + name + "' (known: cpu, cuda)");
}

std::string device_name(Device device) { return device == Device::cpu ? "cpu" : "cuda"; }

std::string cpu_name() { return read_cpu_name(); }
std::string cpu_simd_target() { return cpu::simd_target(); }
std::vector<std::string> cpu_simd_targets() { return cpu::simd_targets(); }
void set_cpu_simd_target(const std::string& name) { cpu::force_simd_target(name); }
std::string cpu_gemm_choice() { return cpu::gemm_choice_summary(); }

bool cuda_available(std::string* why) { return cuda::available(why); }

std::string cuda_device_description() { return cuda::describe(); }

}  // namespace onefit
