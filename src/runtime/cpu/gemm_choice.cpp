// Which library runs each class of product on this machine, by measurement: each available
// library times one representative product per class (forward NN, weight gradient TN, input
// gradient NT; small ones on one thread, large ones on the pool), best of five, and the fastest
// is kept. About 30-60 ms, once per machine: the result is cached beside explain's calibration,
// keyed by the CPU, its logical CPU count and the libraries' versions, under a file lock so that
// processes starting together measure once and agree. A fit's rounding depends on the library,
// and runs on one machine must give the same bits whatever ONEFIT_NUM_THREADS says: so a class
// is a product's size, never the pool's, and the key names the machine's CPUs, not the pool's.
// ONEFIT_GEMM=xsmm|openblas|blis overrides it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/cache_dir.hpp"
#include "core/cpu_name.hpp"
#include "core/thread_pool.hpp"
#include "onefit/error.hpp"
#include "runtime/cpu/gemm.hpp"

namespace onefit::cpu {
namespace {

constexpr int kClasses = 6;  // {NN, TN, NT} x {small, large}
constexpr const char* kClassNames[kClasses] = {"NN small", "NN large", "TN small", "TN large", "NT small", "NT large"};

int class_of(bool trans_a, bool trans_b, bool large) { return (trans_a ? 2 : trans_b ? 4 : 0) + (large ? 1 : 0); }

// A representative product per class: a 32-row batch through a 128 -> 64 layer (small: one
// thread), a 128-row batch through MNIST's 784 -> 256 layer (large: on the pool).
struct Shape {
    bool trans_a, trans_b;
    int64_t m, n, k;
};
Shape representative(int c) {
    const bool large = c % 2;
    const int64_t rows = large ? 128 : 32, in = large ? 784 : 128, out = large ? 256 : 64;
    switch (c / 2) {
        case 0: return {false, false, rows, out, in};  // z = x W
        case 1: return {true, false, in, out, rows};   // dW = x^T dz
        default: return {false, true, rows, in, out};  // dx = dz W^T
    }
}

double seconds_of(GemmLibrary library, const Shape& s, const std::vector<float>& a, const std::vector<float>& b,
                  std::vector<float>& c) {
    const int64_t lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n;
    const auto run = [&] {
        gemm_f32_with(library, s.trans_a, s.trans_b, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
    };
    run();  // warm: JIT, library start-up, caches
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

struct Choice {
    std::array<GemmLibrary, kClasses> library{};
    std::string source;
};

std::vector<GemmLibrary> available() {
    std::vector<GemmLibrary> libs;
    for (int i = 0; i < kGemmLibraries; ++i)
        if (gemm_library_available(GemmLibrary(i))) libs.push_back(GemmLibrary(i));
    if (libs.empty())
        throw Error("no GEMM library is available for the large layers: install OpenBLAS (libopenblas0) or BLIS (libblis4)");
    return libs;
}

Choice measure(const std::vector<GemmLibrary>& libs) {
    Choice choice;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int c = 0; c < kClasses; ++c) {
        const Shape s = representative(c);
        std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)),
            out(static_cast<size_t>(s.m * s.n));
        for (float& v : a) v = u(rng);
        for (float& v : b) v = u(rng);
        double best = 1e9;
        for (GemmLibrary lib : libs) {
            const double t = seconds_of(lib, s, a, b, out);
            if (t < best) best = t, choice.library[c] = lib;
        }
    }
    choice.source = "measured on this machine";
    return choice;
}

std::string cache_key(const std::vector<GemmLibrary>& libs) {
    std::string key = read_cpu_name() + "; " + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs";
    for (GemmLibrary lib : libs) key += "; " + gemm_library_version(lib);
    return key + "; format 2";
}

// The cache file: the key line, then "CLASS_INDEX LIBRARY_NAME" lines.
bool read_cache(const std::string& path, const std::string& key, Choice& choice) {
    std::ifstream in(path);
    std::string line;
    if (!std::getline(in, line) || line != key) return false;
    int seen = 0;
    for (int c; in >> c >> line;) {
        if (c < 0 || c >= kClasses) return false;
        bool known = false;
        for (int i = 0; i < kGemmLibraries; ++i)
            if (line == gemm_library_name(GemmLibrary(i))) choice.library[c] = GemmLibrary(i), known = true;
        if (!known || !gemm_library_available(choice.library[c])) return false;
        ++seen;
    }
    choice.source = "measured on this machine earlier (" + path + ")";
    return seen == kClasses;
}

void write_cache(const std::string& path, const std::string& key, const Choice& choice) {
    std::ostringstream text;
    text << key << "\n";
    for (int c = 0; c < kClasses; ++c) text << c << " " << gemm_library_name(choice.library[c]) << "\n";
    const std::string temp = path + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream out(temp);
        out << text.str();
        if (!out) return;
    }
    std::error_code ignored;
    std::filesystem::rename(temp, path, ignored);  // atomic: readers see the old file or the new one
}

Choice settle() {
    const std::vector<GemmLibrary> libs = available();
    if (const char* forced = std::getenv("ONEFIT_GEMM"); forced && *forced) {
        std::string names;
        for (GemmLibrary lib : libs) {
            if (forced == std::string(gemm_library_name(lib))) {
                Choice choice;
                choice.library.fill(lib);
                choice.source = "set by ONEFIT_GEMM";
                return choice;
            }
            names += (names.empty() ? "" : ", ") + std::string(gemm_library_name(lib));
        }
        throw Error("ONEFIT_GEMM=" + std::string(forced) + " is not an available GEMM library here; choose one of: " + names);
    }
    const std::string dir = cache_dir(), path = dir + "/gemm_choice.txt", key = cache_key(libs);
    Choice choice;
    if (read_cache(path, key, choice)) return choice;
    // One process measures; the others wait for it and read its result.
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    const int lock = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) ::flock(lock, LOCK_EX);
    if (!read_cache(path, key, choice)) {
        choice = measure(libs);
        write_cache(path, key, choice);
    }
    if (lock >= 0) ::close(lock);  // releases the lock
    return choice;
}

const Choice& current() {
    static const Choice choice = settle();  // thread-safe, once per process
    return choice;
}

}  // namespace

void prepare_gemm_choice() { (void)current(); }

GemmLibrary gemm_library_for(bool trans_a, bool trans_b, bool large) {
    return current().library[class_of(trans_a, trans_b, large)];
}

std::string gemm_choice_summary() {
    const Choice& choice = current();
    std::string s;
    for (int c = 0; c < kClasses; ++c) {
        if (!s.empty()) s += ", ";
        s += kClassNames[c];
        s += ": ";
        s += gemm_library_name(choice.library[c]);
    }
    return s + " (" + choice.source + ")";
}

}  // namespace onefit::cpu
