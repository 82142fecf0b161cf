// What every benchmark line names: the CPU and the SIMD target the step loop ran on, so a
// figure can be read beside figures from other machines ("(AMD EPYC, AVX2)").
#pragma once
#include <cstdio>
#include <fstream>
#include <string>

#include "onefit/device.hpp"

namespace bench {

inline std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        // x86: "model name : AMD EPYC"; aarch64 kernels print no model name, only "CPU part".
        if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
            const size_t colon = line.find(':');
            std::string name = colon == std::string::npos ? line : line.substr(colon + 1);
            while (!name.empty() && name.front() == ' ') name.erase(name.begin());
            return name;
        }
    }
    return "unknown CPU";
}

// "(AMD EPYC, AVX2)": appended to each figure line.
inline const std::string& tag() {
    static const std::string t = [] {
        std::string s = "(";  // appended piece by piece: GCC 12 warns falsely on "(" + string
        s += cpu_model();
        s += ", ";
        s += onefit::cpu_simd_target();
        s += ")";
        return s;
    }();
    return t;
}

// The header line: the CPU, its cores, and every SIMD target this build and CPU have.
inline void print_machine() {
    std::string targets;
    for (const std::string& t : onefit::cpu_simd_targets()) {
        if (!targets.empty()) targets += ", ";
        targets += t;
    }
    std::printf("# machine: %s; SIMD target %s (this CPU runs: %s)\n", cpu_model().c_str(),
                onefit::cpu_simd_target().c_str(), targets.c_str());
}

}  // namespace bench
