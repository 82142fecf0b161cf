// A fit gives the same bits on any number of threads: the pool splits large products into
// blocks of C (each element one library call over all of k), the optimizer pass into ranges, and
// a step's tail into two halves whatever the pool's size, and the GEMM library is chosen per
// product class, never per thread count. Checked through the CLI, since the pool's size is fixed
// when a process starts (ONEFIT_NUM_THREADS), on a model large enough to use all three splits,
// with each GEMM library this machine has and with the measured choice.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/cpu/gemm.hpp"
#include "support/run_cli.hpp"

namespace onefit {
namespace {

using namespace testing_support;

// 512 rows of 64 features, 10 classes.
std::string wide_csv() {
    const std::string path = temp_path("wide.csv");
    std::ofstream out(path);
    for (int c = 0; c < 64; ++c) out << "f" << c << ",";
    out << "label\n";
    for (int i = 0; i < 512; ++i) {
        const int label = (i * 7) % 10;
        for (int c = 0; c < 64; ++c) out << label * 0.1 + 0.5 * std::sin(i * 0.37 + c * 1.3) << ",";
        out << label << "\n";
    }
    return path;
}

// The saved weights after a shuffled fit with dropout: 64-512-256-10 (167k parameters, so the
// optimizer pass splits), batch 128 (every product of the first two layers is large, and the
// tail splits into halves).
std::string weights_after_fit(const std::string& csv, int threads, const std::string& gemm) {
    const std::string dir = temp_path("model_" + std::to_string(threads) + "_" + (gemm.empty() ? "chosen" : gemm));
    std::vector<std::string> env = {"ONEFIT_NUM_THREADS=" + std::to_string(threads)};
    if (!gemm.empty()) env.push_back("ONEFIT_GEMM=" + gemm);
    const CliResult r = run_cli({"fit", "--data", csv, "--label", "label", "--layers", "512:relu,dropout:0.2,256:relu,10:softmax",
                                 "--batch-size", "128", "--epochs", "2", "--seed", "7", "--verbose", "0", "--save", dir},
                                env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // The tensors only: the header's metadata carries a save id that differs on every save.
    const std::string file = read_file(dir + "/model.safetensors");
    uint64_t header = 0;
    if (file.size() >= 8) std::memcpy(&header, file.data(), 8);
    return file.size() >= 8 + header ? file.substr(8 + header) : std::string();
}

TEST(ThreadCounts, AFitGivesTheSameBitsOnOneTwoAndThreeThreadsWithEveryGemmLibrary) {
    const std::string csv = wide_csv();
    std::vector<std::string> libraries = {""};  // "": the choice measured on this machine
    for (int i = 0; i < cpu::kGemmLibraries; ++i)
        if (cpu::gemm_library_available(cpu::GemmLibrary(i))) libraries.push_back(cpu::gemm_library_name(cpu::GemmLibrary(i)));
    ASSERT_GE(libraries.size(), 2u);
    for (const std::string& gemm : libraries) {
        const std::string one = weights_after_fit(csv, 1, gemm);
        ASSERT_GT(one.size(), 167000u * 4) << gemm;  // the weights are there
        for (int threads : {2, 3})
            EXPECT_TRUE(weights_after_fit(csv, threads, gemm) == one)
                << (gemm.empty() ? "the measured GEMM choice" : gemm) << ": " << threads << " threads differ from 1";
    }
}

}  // namespace
}  // namespace onefit
