// Test files built byte by byte, independently of onefit's writers, and the errors readers throw.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "onefit/error.hpp"

namespace onefit::test_files {

// A path in the test temp folder named after the running test.
inline std::string temp_path(const std::string& suffix) {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return ::testing::TempDir() + "onefit_" + info->test_suite_name() + "_" + info->name() + suffix;
}

inline std::string write_bytes(const std::string& bytes, const std::string& suffix) {
    const std::string path = temp_path(suffix);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
}

inline std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <class T>
void append_le(std::string& out, T value) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &value, sizeof(T));  // the test machine is little-endian (x86-64, arm64)
    out.append(reinterpret_cast<const char*>(b), sizeof(T));
}

template <class T>
void append_be(std::string& out, T value) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &value, sizeof(T));
    for (size_t i = sizeof(T); i-- > 0;) out.push_back(static_cast<char>(b[i]));
}

// The message `read` throws as onefit::Error, or "" (and a failure) when it does not throw.
// ONEFIT_SHOW_ERRORS=1 prints each message, to review them all in one run.
template <class Read>
std::string error_of(Read read) {
    try {
        read();
    } catch (const Error& e) {
        if (std::getenv("ONEFIT_SHOW_ERRORS")) std::printf("error: %s\n", e.what());
        return e.what();
    }
    ADD_FAILURE() << "expected an onefit::Error";
    return "";
}

// The interop tests' Python (scripts/python-env.sh, run by make's set-up): numpy and
// safetensors are installed there, so a test asserts they import rather than skipping.
inline std::string python() { return ONEFIT_TEST_PYTHON; }

// Succeeds when `python -c CODE` does (e.g. "import numpy"), else says how to get it.
inline ::testing::AssertionResult python_has(const std::string& import) {
    if (std::system((python() + " -c '" + import + "' >/dev/null 2>&1").c_str()) == 0)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << python() << " cannot run '" << import
                                         << "': run make test (or scripts/python-env.sh build/pyenv)";
}

}  // namespace onefit::test_files
