// What every benchmark line names: the CPU and the SIMD target the step loop ran on, so a
// figure can be read beside figures from other machines ("(AMD EPYC, AVX2)").
#pragma once
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "onefit/device.hpp"

namespace bench {

// "(AMD EPYC, AVX2)": appended to each figure line.
inline const std::string& tag() {
    static const std::string t = [] {
        std::string s = "(";  // appended piece by piece: GCC 12 warns falsely on "(" + string
        s += onefit::cpu_name();
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
    std::printf("# machine: %s; SIMD target %s (this CPU runs: %s)\n", onefit::cpu_name().c_str(),
                onefit::cpu_simd_target().c_str(), targets.c_str());
}

// The median of a benchmark's samples (the upper one of an even count).
inline double median(std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

}  // namespace bench
