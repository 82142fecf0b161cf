// Where onefit keeps what it measured about this machine (explain's calibration, the GEMM
// choice): $XDG_CACHE_HOME/onefit, else ~/.cache/onefit, else /tmp/.cache/onefit.
#pragma once
#include <cstdlib>
#include <string>

namespace onefit {

inline std::string cache_dir() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    const std::string base = xdg && *xdg ? std::string(xdg) : std::string(home && *home ? home : "/tmp") + "/.cache";
    return base + "/onefit";
}

}  // namespace onefit
