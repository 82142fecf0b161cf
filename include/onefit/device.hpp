// Where a fit runs. cpu is always there; cuda when onefit was built with the CUDA backend and a
// GPU is visible.
#pragma once
#include <string>

namespace onefit {

enum class Device { cpu, cuda };

Device device_from_name(const std::string& name);  // "cpu", "cuda"; throws Error otherwise
std::string device_name(Device device);

// True when the CUDA backend is compiled in and a GPU is visible; `why` says why not.
bool cuda_available(std::string* why = nullptr);
// "NVIDIA H200 (sm_90, 139 GiB)" or an explanation.
std::string cuda_device_description();

}  // namespace onefit
