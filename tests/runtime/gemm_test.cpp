// gemm_f32 against a plain triple loop in double: every transpose combination, odd sizes,
// padded leading dimensions, beta 0 / 1 / other, shapes that run on one thread and shapes that
// are split over the pool (both ways of cutting C), and bitwise-repeatable results.
#include "runtime/cpu/gemm.hpp"
#include "runtime/cpu/gemm_libraries.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace onefit::cpu {
namespace {

struct Product {
    bool trans_a, trans_b;
    int64_t m, n, k;
    int64_t pad = 0;  // added to every leading dimension
    float beta = 0.0f;

    int64_t lda() const { return (trans_a ? m : k) + pad; }
    int64_t ldb() const { return (trans_b ? k : n) + pad; }
    int64_t ldc() const { return n + pad; }
    int64_t a_size() const { return (trans_a ? k : m) * lda(); }
    int64_t b_size() const { return (trans_b ? n : k) * ldb(); }
    int64_t c_size() const { return m * ldc(); }
    std::string name() const {
        return std::string(trans_a ? "T" : "N") + (trans_b ? "T" : "N") + " " + std::to_string(m) + "x" +
               std::to_string(n) + "x" + std::to_string(k) + " pad " + std::to_string(pad) + " beta " +
               std::to_string(beta);
    }
};

struct Operands {
    std::vector<float> a, b, c;
};

Operands random_operands(const Product& p, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    Operands o{std::vector<float>(static_cast<size_t>(p.a_size())), std::vector<float>(static_cast<size_t>(p.b_size())),
               std::vector<float>(static_cast<size_t>(p.c_size()))};
    for (float& x : o.a) x = u(rng);
    for (float& x : o.b) x = u(rng);
    // beta 0 must not read C: fill it with NaN then.
    for (float& x : o.c) x = p.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : u(rng);
    return o;
}

// The library the tests of this file run on: each test runs once per available library.
GemmLibrary tested = GemmLibrary::openblas;

std::vector<GemmLibrary> available_libraries() {
    std::vector<GemmLibrary> libs;
    for (int i = 0; i < kGemmLibraries; ++i)
        if (gemm_library_available(GemmLibrary(i))) libs.push_back(GemmLibrary(i));
    return libs;
}

#define FOR_EACH_LIBRARY                                   \
    for (GemmLibrary library : available_libraries())      \
        if (SCOPED_TRACE(gemm_library_name(library)); (tested = library), true)

std::vector<float> run(const Product& p, Operands o) {
    gemm_f32_with(tested, p.trans_a, p.trans_b, p.m, p.n, p.k, o.a.data(), p.lda(), o.b.data(), p.ldb(), p.beta, o.c.data(),
             p.ldc());
    return o.c;
}

// Checks C against sum_p op(A)[i,p] op(B)[p,j] + beta C0 in double; each element may be off by
// (k + 2) float roundings of the sum of the absolute terms. Padding columns of C are untouched.
void expect_matches_double_loop(const Product& p, uint32_t seed = 1) {
    const Operands in = random_operands(p, seed);
    const std::vector<float> c = run(p, in);
    int bad = 0;
    for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.ldc(); ++j) {
            const float got = c[static_cast<size_t>(i * p.ldc() + j)];
            const float before = in.c[static_cast<size_t>(i * p.ldc() + j)];
            if (j >= p.n) {  // padding
                if (std::memcmp(&got, &before, sizeof got) != 0 && ++bad <= 5)
                    ADD_FAILURE() << p.name() << ": padding C[" << i << "," << j << "] was written";
                continue;
            }
            double ref = 0.0, magnitude = 0.0;
            for (int64_t q = 0; q < p.k; ++q) {
                const double x = p.trans_a ? in.a[static_cast<size_t>(q * p.lda() + i)] : in.a[static_cast<size_t>(i * p.lda() + q)];
                const double y = p.trans_b ? in.b[static_cast<size_t>(j * p.ldb() + q)] : in.b[static_cast<size_t>(q * p.ldb() + j)];
                ref += x * y;
                magnitude += std::fabs(x * y);
            }
            if (p.beta != 0.0f) {
                ref += double(p.beta) * before;
                magnitude += std::fabs(double(p.beta) * before);
            }
            const double tolerance = double(p.k + 2) * std::ldexp(magnitude, -23);
            if (!(std::fabs(got - ref) <= tolerance) && ++bad <= 5)
                ADD_FAILURE() << p.name() << ": C[" << i << "," << j << "] = " << got << ", expected " << ref;
        }
    }
}

TEST(Gemm, MatchesTheDoubleLoopForAllTransposesOddSizesAndPaddedStrides) {
    FOR_EACH_LIBRARY {
        const int64_t sizes[][3] = {{1, 1, 1}, {3, 17, 129}, {17, 3, 1}, {1, 129, 3}, {129, 17, 17}, {33, 47, 65}};
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                for (const auto& s : sizes)
                    for (int64_t pad : {0, 3})
                        for (float beta : {0.0f, 1.0f})
                            expect_matches_double_loop({ta, tb, s[0], s[1], s[2], pad, beta});
    }
}

TEST(Gemm, BetaOtherThanZeroOrOneScalesC) {
    FOR_EACH_LIBRARY {
        for (bool ta : {false, true})
            for (bool tb : {false, true}) {
                expect_matches_double_loop({ta, tb, 5, 19, 7, 2, 0.5f});
                expect_matches_double_loop({ta, tb, 64, 96, 300, 1, -2.0f});  // split over the pool
            }
    }
}

TEST(Gemm, ZeroDepthLeavesBetaTimesC) {
    FOR_EACH_LIBRARY {
        expect_matches_double_loop({false, false, 4, 5, 0, 1, 0.0f});
        expect_matches_double_loop({false, true, 4, 5, 0, 1, 1.0f});
        expect_matches_double_loop({true, false, 4, 5, 0, 1, 0.25f});
    }
}

TEST(Gemm, LargeProductsSplitOverThePoolMatchTheDoubleLoop) {
    FOR_EACH_LIBRARY {
        for (bool ta : {false, true})
            for (bool tb : {false, true}) {
                // The MNIST layer (784 -> 256, batch 128) products, with column blocks of C.
                expect_matches_double_loop({ta, tb, 128, 256, 784, 0, 1.0f});
                expect_matches_double_loop({ta, tb, 256, 784, 128, 0, 0.0f});
                // Odd sizes: a short last block, and C too narrow for column blocks (row blocks).
                expect_matches_double_loop({ta, tb, 129, 211, 133, 5, 1.0f});
                expect_matches_double_loop({ta, tb, 301, 20, 517, 1, 0.0f});
            }
    }
}

TEST(Gemm, RepeatedCallsGiveBitwiseIdenticalResults) {
    FOR_EACH_LIBRARY {
        // The second call of a shape reuses its kernel; other shapes in between must not disturb it.
        const Product shapes[] = {{false, true, 128, 256, 784, 0, 1.0f},
                                  {true, false, 256, 784, 128, 0, 0.0f},
                                  {false, false, 33, 47, 65, 3, 1.0f},
                                  {true, true, 301, 20, 517, 1, 0.0f}};
        for (const Product& p : shapes) {
            const Operands in = random_operands(p, 7);
            const std::vector<float> first = run(p, in);
            for (const Product& other : shapes) run(other, random_operands(other, 8));
            for (int repeat = 0; repeat < 3; ++repeat) {
                const std::vector<float> again = run(p, in);
                EXPECT_EQ(std::memcmp(first.data(), again.data(), sizeof(float) * first.size()), 0) << p.name();
            }
        }
    }
}

}  // namespace
}  // namespace onefit::cpu

namespace onefit::cpu {
namespace {

TEST(GemmChoice, EveryCandidateTheSetUpInstallsIsAvailable) {
    EXPECT_TRUE(gemm_library_available(GemmLibrary::openblas)) << gemm_library_version(GemmLibrary::openblas);
    EXPECT_TRUE(gemm_library_available(GemmLibrary::blis)) << gemm_library_version(GemmLibrary::blis);
#if defined(__x86_64__)
    EXPECT_TRUE(gemm_library_available(GemmLibrary::xsmm));
#endif
}

TEST(GemmChoice, GemmRunsTheLibraryChosenForItsClassBitForBit) {
    const Product products[] = {{false, false, 32, 64, 128, 0, 0.0f},   // one thread
                                {true, false, 784, 256, 128, 0, 0.0f},  // the pool
                                {false, true, 128, 784, 256, 0, 1.0f}};
    for (const Product& p : products) {
        const Operands in = random_operands(p, 3);
        Operands chosen = in;
        gemm_f32(p.trans_a, p.trans_b, p.m, p.n, p.k, chosen.a.data(), p.lda(), chosen.b.data(), p.ldb(), p.beta,
                 chosen.c.data(), p.ldc());
        const bool large = 2.0 * double(p.m) * double(p.n) * double(p.k) >= kGemmParallelFlops;
        tested = gemm_library_for(p.trans_a, p.trans_b, large);
        const std::vector<float> direct = run(p, in);
        EXPECT_EQ(std::memcmp(chosen.c.data(), direct.data(), sizeof(float) * direct.size()), 0)
            << p.name() << " on " << gemm_library_name(tested);
    }
    const std::string summary = gemm_choice_summary();
    for (const char* part : {"NN small: ", "TN large: ", "NT large: "})
        EXPECT_NE(summary.find(part), std::string::npos) << summary;
}

}  // namespace
}  // namespace onefit::cpu
