// A sweep's members projected per device (explain.hpp's cost model, applied to many members of
// one shape at once), and the member count from which a device overtakes the CPU.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/thread_pool.hpp"
#include "explain/format.hpp"
#include "onefit/explain.hpp"

namespace onefit {
namespace {

// Members that run at once on the device (see SweepProjection).
int64_t at_once(const DeviceProfile& device, const FitWork& member) {
    if (device.device == Device::cpu) return ThreadPool::configured_threads();
    const bool persistent = device.block_memory_bytes > 0 && member.persistent_state_bytes <= device.block_memory_bytes;
    return persistent ? std::max<int64_t>(device.multiprocessors, 1) : 1;
}

}  // namespace

double sweep_seconds(const DeviceProfile& device, const FitWork& member, int64_t members) {
    FitWork silent = member;
    silent.program_calls = 1;  // a sweep's members are silent: nothing looks between epochs
    const Projection one = project(device, silent);
    const int64_t waves = (std::max<int64_t>(members, 1) + at_once(device, member) - 1) / at_once(device, member);
    return one.fixed_seconds + static_cast<double>(waves) * (one.overhead_seconds + one.compute_seconds);
}

int64_t sweep_crossover(const DeviceProfile& cpu, const DeviceProfile& device, const FitWork& member) {
    constexpr int64_t kLimit = 1000000000;
    const auto faster = [&](int64_t n) { return sweep_seconds(device, member, n) < sweep_seconds(cpu, member, n); };
    // The first power of two where the device is ahead, then the first count after the last one
    // below it where it is not (the costs step with whole waves; the trend decides).
    int64_t high = 1;
    while (high <= kLimit && !faster(high)) high *= 2;
    if (high > kLimit) return -1;
    int64_t low = high / 2;  // not faster (or 0)
    while (high - low > 1) {
        const int64_t mid = low + (high - low) / 2;
        (faster(mid) ? high : low) = mid;
    }
    return high;
}

std::vector<SweepProjection> project_sweep(const std::vector<DeviceProfile>& profiles, const FitWork& member,
                                           int64_t members) {
    std::vector<SweepProjection> out;
    const DeviceProfile* cpu = nullptr;
    for (const DeviceProfile& p : profiles)
        if (p.device == Device::cpu && !cpu) cpu = &p;
    for (const DeviceProfile& p : profiles) {
        out.push_back({p.name, p.device, p.estimate, at_once(p, member), sweep_seconds(p, member, members),
                       &p == cpu || !cpu ? 0 : sweep_crossover(*cpu, p, member)});
    }
    return out;
}

std::string sweep_projection_text(const std::vector<SweepProjection>& projections, int64_t members) {
    std::string text = "A sweep of " + std::to_string(members) + " such members (projected; one fit's cost each, "
                       "the CPU's side by side on its threads, a GPU's in one launch):\n";
    const SweepProjection* best = nullptr;
    for (const SweepProjection& s : projections) {
        if (!best || s.seconds < best->seconds) best = &s;
        text += "  " + s.device_name + (s.estimate ? " (estimate)" : "") + ": " + explain_format::seconds(s.seconds) +
                ", " + std::to_string(s.at_once) + " at once";
        if (s.device != Device::cpu)
            text += s.crossover < 0 ? "; never ahead of the CPU"
                                    : "; ahead of the CPU from " + std::to_string(s.crossover) + " members";
        text += "\n";
    }
    if (best)
        text += "  fastest for " + std::to_string(members) + (members == 1 ? " member: " : " members: ") +
                best->device_name + "\n";
    return text;
}

}  // namespace onefit
