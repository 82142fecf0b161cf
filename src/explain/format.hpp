// Numbers for people: "120 ms", "3.6 MFLOP". Shared by the explain text, JSON notes and HTML.
#pragma once
#include <cmath>
#include <cstdio>
#include <string>

namespace onefit::explain_format {

// 0.1234 -> "123 ms", 2.5e-6 -> "2.5 us": three significant figures at most.
inline std::string seconds(double s) {
    char text[32];
    const double a = std::fabs(s);
    if (a >= 1) std::snprintf(text, sizeof text, "%.3g s", s);
    else if (a >= 1e-3) std::snprintf(text, sizeof text, "%.3g ms", s * 1e3);
    else if (a >= 1e-6 || a == 0) std::snprintf(text, sizeof text, "%.3g us", s * 1e6);
    else std::snprintf(text, sizeof text, "%.3g ns", s * 1e9);
    return text;
}

// 3.6e6, "FLOP" -> "3.6 MFLOP"
inline std::string si(double v, const char* unit) {
    const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    int k = 0;
    while (std::fabs(v) >= 1000 && k < 5) v /= 1000, ++k;
    char text[48];
    std::snprintf(text, sizeof text, std::fabs(v) < 10 ? "%.1f %s%s" : "%.0f %s%s", v, prefixes[k], unit);
    return text;
}

}  // namespace onefit::explain_format
