// The CPU step loop's entry points, compiled once per SIMD target (cpu_targets.cpp) and
// dispatched to the best target this CPU supports, chosen when first called. ONEFIT_SIMD names
// a target to use instead (its Highway name: SSSE3, AVX2, AVX3, NEON); tests and benchmarks
// force each target in turn with force_simd_target.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/metrics.hpp"
#include "program/device_program.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"

namespace onefit::cpu {

std::unique_ptr<DeviceProgram> make_cpu_fit(TrainingProgram& program, const FitPlan& plan,
                                            const std::vector<nn::Metric>& metrics);

// Sums of the loss and metrics over rows of x (x_width floats each) and y (y_width), in batches;
// with sample_weight (one per row), each row's loss weighted by it (Keras's; metrics unweighted).
LogSums evaluate_rows(const TrainingProgram& program, const float* x, int64_t x_width, const float* y,
                      int64_t y_width, int64_t rows, int64_t batch_size, const std::vector<nn::Metric>& metrics,
                      const float* sample_weight = nullptr);

// The model's outputs for rows of x, in batches: out holds rows x program.output_width floats.
void predict_rows(const TrainingProgram& program, const float* x, int64_t x_width, int64_t rows, int64_t batch_size,
                  float* out);

// Fits of one shape trained side by side, a member per SIMD lane (stacked_fit.hpp).
using StackedResult = MemberResult;
// Members per stacked program on the current target (its float lanes).
int64_t stack_lanes();
// Whether members of this program can be stacked on this plan.
bool can_stack(const TrainingProgram& program, const FitPlan& plan);
// Fits members (1 to stack_lanes(), one shape) on their plans (one each, every one
// can_stack, alike but for seeds and data: as many training and validation rows each) as one
// program for epochs [first, last), each exactly as make_cpu_fit's run_epochs would; their
// parameters, optimizer state and step count are written back.
std::vector<StackedResult> fit_stacked(const std::vector<TrainingProgram*>& members,
                                       const std::vector<FitPlan>& plans, const std::vector<nn::Metric>& metrics,
                                       int64_t first, int64_t last);

// The target the step loop runs on, by Highway's name ("AVX2").
std::string simd_target();
// The targets compiled into this build that this CPU can run, best first.
std::vector<std::string> simd_targets();
// Runs the step loop on the named target from now on (one of simd_targets()); throws Error
// naming the choices otherwise.
void force_simd_target(const std::string& name);

}  // namespace onefit::cpu
