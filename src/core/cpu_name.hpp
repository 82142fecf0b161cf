// The CPU's marketing name, as /proc/cpuinfo gives it: explain's calibration and the GEMM choice
// key their caches on it, and benchmarks and --profile print it beside every figure.
#pragma once
#include <fstream>
#include <string>

namespace onefit {

// "AMD EPYC", "Intel(R) Xeon(R) Platinum 8488C"; aarch64 kernels print no "model name", only
// "Model" on some boards; "unknown CPU" where neither is there.
inline std::string read_cpu_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("model name", 0) != 0 && line.rfind("Model", 0) != 0) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        if (start != std::string::npos) return line.substr(start);
    }
    return "unknown CPU";
}

}  // namespace onefit
