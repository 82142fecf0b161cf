// The loop shapes of nn/vector_loops.hpp: in_whole_vectors covers every iteration and counts each
// once, and the activation and loss loops built on it (one vector at a time, the last one
// overlapping, small widths as constants) give what a plain per-element loop gives, at every
// size around the vector boundaries. In double, so any difference is a coverage bug, not rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/activation.hpp"
#include "nn/losses.hpp"
#include "nn/vector_loops.hpp"

namespace onefit {
namespace {

constexpr int64_t kRowCounts[] = {1, 2, 5, 15, 16, 17, 20, 31, 32, 33, 45, 70};
constexpr int64_t kWidths[] = {1, 2, 3, 4, 5, 7, 8, 9, 32};

// Deterministic values in about [-3, 3], different for every index and seed.
std::vector<double> values(int64_t n, int seed) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(0.7 * static_cast<double>(i) + seed) * 3.0;
    return v;
}

nn::ValueAndGrad<double> element(LossKind kind, double p, double y) {
    switch (kind) {
        case LossKind::log_cosh: return nn::element_loss<LossKind::log_cosh>(p, y, 1.0);
        case LossKind::mean_squared_error: return nn::element_loss<LossKind::mean_squared_error>(p, y, 1.0);
        default: return nn::element_loss<LossKind::huber>(p, y, 1.0);
    }
}

TEST(InWholeVectors, EveryIterationRunsInWholeVectorsAndCountsOnce) {
    for (int64_t n = 0; n <= 100; ++n) {
        std::vector<int> runs(static_cast<size_t>(n)), counted(static_cast<size_t>(n));
        nn::in_whole_vectors(n, [&](int64_t first, auto count, int64_t skip) {
            const int64_t c = count;
            if (n >= nn::kVectorLanes) {
                EXPECT_EQ(c, nn::kVectorLanes) << "n " << n;
            }
            ASSERT_LE(first + c, n);
            for (int64_t i = 0; i < c; ++i) {
                ++runs[static_cast<size_t>(first + i)];
                if (i >= skip) ++counted[static_cast<size_t>(first + i)];
            }
        });
        for (int64_t i = 0; i < n; ++i) {
            EXPECT_GE(runs[static_cast<size_t>(i)], 1) << "n " << n << " i " << i;
            EXPECT_EQ(counted[static_cast<size_t>(i)], 1) << "n " << n << " i " << i;
        }
    }
}

TEST(VectorLoops, ElementwiseActivationsMatchAPlainLoop) {
    for (Activation act : {Activation::relu, Activation::sigmoid, Activation::elu})
        for (int64_t rows : kRowCounts)
            for (int64_t width : kWidths) {
                const int64_t n = rows * width;
                const std::vector<double> z = values(n, 1), g = values(n, 2);
                std::vector<double> out(static_cast<size_t>(n)), grad = g;
                nn::activation_forward(act, z.data(), out.data(), rows, width);
                nn::activation_backward(act, z.data(), out.data(), grad.data(), rows, width);
                nn::with_activation(act, [&]<Activation A>() {
                    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
                        const double o = nn::activate<A>(z[i]);
                        ASSERT_EQ(out[i], o) << rows << "x" << width << " i " << i;
                        // In place: an element updated twice would be off by a factor of the slope.
                        ASSERT_EQ(grad[i], g[i] * nn::activation_slope<A>(z[i], o)) << rows << "x" << width;
                    }
                });
            }
}

TEST(VectorLoops, SoftmaxForwardAndBackwardMatchAPlainLoop) {
    for (int64_t rows : kRowCounts)
        for (int64_t width : kWidths) {
            const int64_t n = rows * width;
            const std::vector<double> z = values(n, 3), g = values(n, 4);
            std::vector<double> p(static_cast<size_t>(n)), grad = g;
            nn::activation_forward(Activation::softmax, z.data(), p.data(), rows, width);
            nn::activation_backward(Activation::softmax, z.data(), p.data(), grad.data(), rows, width);
            for (int64_t r = 0; r < rows; ++r) {
                const double* zr = z.data() + r * width;
                double m = zr[0], s = 0, dot = 0;
                for (int64_t j = 1; j < width; ++j) m = std::max(m, zr[j]);
                for (int64_t j = 0; j < width; ++j) s += std::exp(zr[j] - m);
                for (int64_t j = 0; j < width; ++j) dot += g[r * width + j] * std::exp(zr[j] - m) / s;
                for (int64_t j = 0; j < width; ++j) {
                    const size_t i = static_cast<size_t>(r * width + j);
                    const double pj = std::exp(zr[j] - m) / s;
                    ASSERT_NEAR(p[i], pj, 1e-15) << rows << "x" << width << " r " << r;
                    ASSERT_NEAR(grad[i], pj * (g[i] - dot), 1e-14) << rows << "x" << width << " r " << r;
                }
            }
        }
}

TEST(VectorLoops, ElementwiseLossesMatchAPlainLoopWithFullAndBroadcastLabels) {
    Loss loss;
    for (LossKind kind : {LossKind::log_cosh, LossKind::mean_squared_error, LossKind::huber}) {
        loss.kind = kind;
        for (int64_t rows : kRowCounts)
            for (int64_t width : kWidths)
                for (int64_t y_width : {width, int64_t{1}}) {
                    const int64_t n = rows * width;
                    const std::vector<double> p = values(n, 5), y = values(rows * y_width, 6);
                    std::vector<double> grad(static_cast<size_t>(n));
                    const double scale = 0.25;
                    const double total = nn::loss_forward_backward<true>(loss, false, p.data(), y.data(), rows, width,
                                                                         y_width, grad.data(), scale);
                    double expected = 0;
                    for (int64_t r = 0; r < rows; ++r) {
                        double row = 0;
                        for (int64_t j = 0; j < width; ++j) {
                            const size_t i = static_cast<size_t>(r * width + j);
                            const double label = y[static_cast<size_t>(y_width == 1 ? r : r * width + j)];
                            const nn::ValueAndGrad<double> f = element(kind, p[i], label);
                            row += f.value;
                            ASSERT_EQ(grad[i], f.grad * (scale / static_cast<double>(width))) << rows << "x" << width;
                        }
                        expected += row / static_cast<double>(width);
                    }
                    EXPECT_NEAR(total, expected, 1e-12 * static_cast<double>(n))
                        << rows << "x" << width << " labels " << y_width;
                }
    }
}

}  // namespace
}  // namespace onefit
