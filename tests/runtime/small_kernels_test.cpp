// The float small-layer kernels (AVX-512 register paths where the shape allows, generic loops
// otherwise) against the same products in double precision (the generic loops), for every
// layout and for shapes on both sides of each fast path's limits.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "runtime/cpu/dense_kernels.hpp"

namespace onefit {
namespace {

struct Case {
    int64_t rows, in, out;
};

std::vector<float> random_values(Rng& rng, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = rng.uniform_float() * 2.0f - 1.0f;
    return v;
}

std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const char* what, const Case& c) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i])))
            << what << " element " << i << " rows " << c.rows << " in " << c.in << " out " << c.out;
}

TEST(SmallKernels, FloatPathsMatchDoublePrecisionForEveryLayoutAndShape) {
    Rng rng(3);
    std::vector<Case> cases;
    for (int64_t rows : {1, 5, 20})
        for (int64_t in : {1, 3, 4, 8, 9, 16, 17, 32, 33, 64})
            for (int64_t out : {1, 3, 4, 5, 8, 16, 17, 32, 33})
                cases.push_back({rows, in, out});
    int fused = 0;
    for (const Case& c : cases) {
        const bool out_major = c.in > c.out;  // as lower.cpp chooses
        const auto x = random_values(rng, c.rows * c.in), w = random_values(rng, c.in * c.out),
                   b = random_values(rng, c.out), dz = random_values(rng, c.rows * c.out);
        std::vector<float> z(c.rows * c.out), dw(c.in * c.out), db(c.out), dx(c.rows * c.in);
        std::vector<double> zd(z.size()), dwd(dw.size()), dbd(db.size()), dxd(dx.size());
        const auto xd = widen(x), wd = widen(w), bd = widen(b), dzd = widen(dz);
        // With a relu output the kernel may fuse relu(z) into the same pass: exactly max(z, 0).
        std::vector<float> relu(z.size(), -1.0f);
        if (cpu::dense_forward(z.data(), x.data(), w.data(), b.data(), c.rows, c.in, c.out, out_major, false,
                               relu.data())) {
            ++fused;
            for (size_t i = 0; i < z.size(); ++i) ASSERT_EQ(relu[i], z[i] > 0.0f ? z[i] : 0.0f) << "relu " << i;
        }
        cpu::dense_forward(zd.data(), xd.data(), wd.data(), bd.data(), c.rows, c.in, c.out, out_major, false);
        expect_close(z, zd, "z", c);
        cpu::dense_backward(dw.data(), db.data(), dx.data(), dz.data(), x.data(), w.data(), c.rows, c.in, c.out,
                            out_major, false);
        cpu::dense_backward(dwd.data(), dbd.data(), dxd.data(), dzd.data(), xd.data(), wd.data(), c.rows, c.in, c.out,
                            out_major, false);
        expect_close(dw, dwd, "dw", c);
        expect_close(db, dbd, "db", c);
        expect_close(dx, dxd, "dx", c);
    }
#if defined(__AVX512F__)
    EXPECT_GT(fused, 0);  // the register path fused relu for the shapes it covers
#endif
}

}  // namespace
}  // namespace onefit
