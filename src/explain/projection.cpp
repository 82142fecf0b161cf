// Projections: the cost model (explain.hpp) applied to each device's profile, and the choice
// of device that follows from it.
#include <algorithm>

#include "explain/format.hpp"
#include "onefit/explain.hpp"

namespace onefit {
namespace {

using explain_format::si;
const auto format_seconds = explain_format::seconds;

// H200/H100 SXM figures. Achievable rates are taken as half the datasheet peak: onefit's
// layers are small products that do not fill the GPU (an assumption, not a measurement). The
// persistent kernel runs on one of the 132 SMs, at a quarter of its peak (tiny products between
// block-wide barriers; again an assumption until bench/gpu_check.sh measures it).
DeviceProfile gpu(const std::string& name, double fp32_tflops, double hbm_tb_s, const std::string& source) {
    constexpr double kMultiprocessors = 132;
    DeviceProfile p;
    p.name = name;
    p.device = Device::cuda;
    p.estimate = true;
    p.source = source;
    p.startup_seconds = 0.2;              // CUDA context creation + module load: ~100-300 ms
    p.transfer_bytes_per_second = 50e9;   // PCIe 5.0 x16: 64 GB/s peak, ~50 achievable
    p.launch_seconds = 15e-6;             // a launch, the sync and the logs' read-back per program call
    p.step_overhead_seconds = 0;          // steps are graph nodes: no per-step launch of their own
    p.call_overhead_seconds = 2e-6;       // each kernel node of a replayed graph
    p.flops_per_second = 0.5 * fp32_tflops * 1e12;
    p.blas_flops_per_second = p.flops_per_second;
    p.bytes_per_second = 0.5 * hbm_tb_s * 1e12;
    p.moved_values_per_second = p.bytes_per_second / 8;  // a value read and written
    p.block_memory_bytes = 227 * 1024;    // shared memory per block (opt-in maximum on sm_90)
    p.block_flops_per_second = 0.25 * fp32_tflops * 1e12 / kMultiprocessors;
    p.block_step_seconds = 2e-6;          // ~10 block-wide barriers per step, ~0.2 us each
    p.multiprocessors = static_cast<int64_t>(kMultiprocessors);
    return p;
}

}  // namespace

std::vector<DeviceProfile> datasheet_gpu_profiles() {
    std::vector<DeviceProfile> gpus = {
        gpu("NVIDIA H200", 67, 4.8,
            "datasheet: NVIDIA H200 SXM (67 TFLOPS fp32, 4.8 TB/s HBM3e), PCIe 5.0 x16, context ~200 ms; launch, node and "
            "barrier costs assumed"),
        gpu("NVIDIA H100", 67, 3.35,
            "datasheet: NVIDIA H100 SXM (67 TFLOPS fp32, 3.35 TB/s HBM3), PCIe 5.0 x16, context ~200 ms; launch, node and "
            "barrier costs assumed"),
    };
    std::string why;
    if (cuda_available(&why)) {
        const std::string description = cuda_device_description();
        for (DeviceProfile& p : gpus)
            if (description.find(p.name.substr(7)) != std::string::npos) p.present = true;
    }
    return gpus;
}

std::vector<DeviceProfile> device_profiles(const DeviceProfile& cpu) {
    std::vector<DeviceProfile> all = {cpu};
    for (DeviceProfile& p : datasheet_gpu_profiles()) all.push_back(p);
    return all;
}

Projection project(const DeviceProfile& p, const FitWork& w) {
    Projection r;
    r.device_name = p.name;
    r.source = p.source;
    r.device = p.device;
    r.present = p.present;
    r.estimate = p.estimate;
    r.fixed_seconds = p.startup_seconds + w.data_bytes / p.transfer_bytes_per_second;
    const double calls = static_cast<double>(w.program_calls) * p.launch_seconds;
    if (p.block_memory_bytes > 0 && w.persistent_state_bytes <= p.block_memory_bytes) {
        // One block holds everything: no launch per step or per layer, only its barriers, and
        // the arithmetic of one multiprocessor (its state never leaves shared memory).
        r.path = "one persistent kernel";
        r.overhead_seconds = calls + static_cast<double>(w.dispatches) * p.block_step_seconds;
        r.compute_seconds = w.flops / p.block_flops_per_second + w.moved_values / p.moved_values_per_second;
    } else {
        r.path = p.device == Device::cpu ? "step loop" : "CUDA graphs";
        r.overhead_seconds = calls + static_cast<double>(w.dispatches) * p.step_overhead_seconds +
                             static_cast<double>(w.layer_calls) * p.call_overhead_seconds;
        r.compute_seconds = (w.flops - w.blas_flops) / p.flops_per_second + w.blas_flops / p.blas_flops_per_second +
                            w.bytes / p.bytes_per_second + w.moved_values / p.moved_values_per_second;
    }
    r.total_seconds = r.fixed_seconds + r.overhead_seconds + r.compute_seconds;
    if (p.device == Device::cuda && !w.step.gpu_unsupported.empty()) {
        r.supported = false;
        r.path = "not supported: " + w.step.gpu_unsupported;
    }
    return r;
}

Device pick_device(const FitWork& work, const std::vector<DeviceProfile>& profiles) {
    Device best = Device::cpu;
    double best_seconds = -1;
    for (const DeviceProfile& p : profiles) {
        const Projection projection = project(p, work);
        if (!p.present || !projection.supported) continue;
        const double t = projection.total_seconds;
        if (best_seconds < 0 || t < best_seconds) best = p.device, best_seconds = t;
    }
    return best;
}

std::string projection_reason(const FitWork& work, const std::vector<Projection>& projections) {
    const Projection* cpu = nullptr;
    const Projection* gpu = nullptr;
    for (const Projection& p : projections) {
        if (p.device == Device::cpu && !cpu) cpu = &p;
        if (p.device == Device::cuda && (!gpu || p.total_seconds < gpu->total_seconds)) gpu = &p;
    }
    std::string line = si(work.flops, "FLOP") + " in " + std::to_string(work.steps) + " steps: ";
    if (cpu && gpu && !gpu->supported)
        return line + "the CPU runs it (" + format_seconds(cpu->total_seconds) + "): " + work.step.gpu_unsupported;
    if (!cpu || !gpu) return line + "only one device to compare";
    if (cpu->total_seconds <= gpu->total_seconds) {
        const bool fixed = gpu->fixed_seconds >= gpu->overhead_seconds;
        line += "on the GPU the " +
                std::string(fixed ? "fixed start-up (~" + format_seconds(gpu->fixed_seconds) + ")" : "per-launch costs (~" +
                                                                                                     format_seconds(gpu->overhead_seconds) + ")") +
                (gpu->compute_seconds < gpu->fixed_seconds + gpu->overhead_seconds ? " dominates" : " outweighs its speed") +
                "; the CPU finishes in " + format_seconds(cpu->total_seconds);
    } else {
        line += "the CPU needs " + format_seconds(cpu->compute_seconds) + " of arithmetic; the " + gpu->device_name +
                (gpu->estimate ? " (estimate)" : "") + " does it in " + format_seconds(gpu->compute_seconds) +
                " and pays " + format_seconds(gpu->fixed_seconds + gpu->overhead_seconds) +
                " of start-up and launches, finishing in " + format_seconds(gpu->total_seconds);
    }
    return line;
}

}  // namespace onefit
