// Cases checked by the interop Python in one run: each case's model file (written by the test),
// its input rows and onefit's predictions as raw float32 files, listed in cases.txt as
// "NAME ROWS DIM..." (the per-sample input shape). The test's Python defines check(base, x), the
// other side's predictions for the files at base (+ ".onnx", ".keras", ...); run exits non-zero
// after printing each case whose predictions differ from onefit's beyond float rounding.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "onefit/tensor.hpp"
#include "support/test_files.hpp"

namespace onefit::python_check {

class CaseFolder {
public:
    explicit CaseFolder(const std::string& suffix) : dir_(test_files::temp_path(suffix)) {
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        manifest_.open(dir_ / "cases.txt");
    }
    ~CaseFolder() { std::filesystem::remove_all(dir_); }

    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    // x (rows, width) as the model takes it, of per-sample `shape`; y what onefit predicted.
    void add(const std::string& name, const Shape& shape, const Tensor& x, const Tensor& y) {
        write(path(name + ".x"), x);
        write(path(name + ".y"), y);
        manifest_ << name << " " << x.rows();
        for (int64_t d : shape) manifest_ << " " << d;
        manifest_ << "\n";
        ++count_;
    }
    // The script's exit status: 0 when every case agrees.
    int run(const std::string& check_function) {
        manifest_.close();
        std::ofstream(dir_ / "check.py") << check_function << R"(
import sys, numpy as np
def cases():
    d = sys.argv[1]
    for line in open(d + "/cases.txt"):
        name, rows, *shape = line.split()
        x = np.fromfile(f"{d}/{name}.x", np.float32).reshape(int(rows), *map(int, shape))
        yield name, f"{d}/{name}", x, np.fromfile(f"{d}/{name}.y", np.float32).reshape(int(rows), -1)
bad = seen = 0
for name, base, x, want in cases():
    seen += 1
    got = np.asarray(check(base, x)).reshape(len(x), -1)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
        bad += 1
        print(name, "differs by", np.abs(got - want).max() if got.shape == want.shape else (got.shape, want.shape))
if seen != int(sys.argv[2]):
    print("checked", seen, "cases of", sys.argv[2])
sys.exit(1 if bad or seen != int(sys.argv[2]) else 0)
)";
        const std::string command = test_files::python() + " " + (dir_ / "check.py").string() + " " + dir_.string() + " " +
                                    std::to_string(count_) + " 2>&1";
        return std::system(command.c_str());
    }

private:
    static void write(const std::string& path, const Tensor& t) {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.size() * sizeof(float)));
    }
    std::filesystem::path dir_;
    std::ofstream manifest_;
    int count_ = 0;
};

}  // namespace onefit::python_check
