// The CUDA backend's entry points, in plain C++ (no CUDA types), so the rest of onefit builds
// and links the same with or without nvcc.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/metrics.hpp"
#include "program/device_program.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"

namespace onefit::cuda {

// True when the backend is compiled in and a GPU is visible; otherwise `why` says what is missing.
bool available(std::string* why);
std::string describe();

// The fit lowered for the GPU: data uploaded once; a model whose parameters, optimizer state
// and one batch fit in one block's shared memory runs every step of every epoch (and the
// validation) in one persistent kernel; larger models replay a CUDA graph of cuBLAS products
// and fused kernels per epoch. Throws Error when no GPU is usable or the model is unsupported.
std::unique_ptr<DeviceProgram> make_cuda_fit(TrainingProgram& program, const FitPlan& plan,
                                             const std::vector<nn::Metric>& metrics);

// Fits of one shape and schedule (a sweep's members; one plan each, alike but for seeds and
// data) for epochs [first, last) in ONE launch of the persistent kernel, a block per member, each
// member's block running exactly what its fit alone would; parameters, optimizer state and
// step count are written back into each member's program. Empty when the model is too large
// for one block (the caller then fits the members one by one). Throws Error when no GPU is usable.
std::vector<MemberResult> fit_members(const std::vector<TrainingProgram*>& members, const std::vector<FitPlan>& plans,
                                      const std::vector<nn::Metric>& metrics, int64_t first, int64_t last);

// GPU time of the fit's launches since the process started, measured with CUDA events (for
// bench/gpu_fit). Launch counts are observed from outside, with CUPTI
// (tests/runtime/cupti_launches.hpp): the library keeps no counter of its own.
double device_milliseconds();

}  // namespace onefit::cuda
