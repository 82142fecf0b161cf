// Metrics as Keras computes them per sample, summed over a batch (fit divides by the sample
// count at the epoch end, which equals Keras's batch-size-weighted running mean).
#ifndef ONEFIT_NN_METRICS_HPP_COLD
#define ONEFIT_NN_METRICS_HPP_COLD
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/hd.hpp"

namespace onefit::nn {

enum class MetricKind { sparse_categorical_accuracy, categorical_accuracy, binary_accuracy, mae, mse };

struct Metric {
    MetricKind kind;
    std::string name;  // the log key: the name the user gave ("accuracy", "mae", ...)
};

// Resolves a Keras metric name for predictions of pred_width columns and labels of y_width
// columns ("accuracy" picks sparse/categorical/binary like Keras does). Throws Error if unknown.
Metric resolve_metric(const std::string& name, int64_t pred_width, int64_t y_width);

}  // namespace onefit::nn
#endif  // ONEFIT_NN_METRICS_HPP_COLD

// The per-sample loop is hot: compiled once per SIMD target (core/simd.hpp).
#if defined(ONEFIT_NN_METRICS_HPP_HOT) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_METRICS_HPP_HOT
#undef ONEFIT_NN_METRICS_HPP_HOT
#else
#define ONEFIT_NN_METRICS_HPP_HOT
#endif
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

template <class T>
ONEFIT_HD double metric_sum(MetricKind kind, const T* p, const T* y, int64_t rows, int64_t width, int64_t y_width) {
    double total = 0;
    const int64_t y_step = y_width == 1 ? 0 : 1;
    auto argmax = [](const T* v, int64_t n) {
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j)
            if (v[j] > v[best]) best = j;
        return best;
    };
    for (int64_t r = 0; r < rows; ++r) {
        const T* pr = p + r * width;
        const T* yr = y + r * y_width;
        switch (kind) {
            case MetricKind::sparse_categorical_accuracy:
                total += argmax(pr, width) == static_cast<int64_t>(yr[0]);
                break;
            case MetricKind::categorical_accuracy:
                total += argmax(pr, width) == argmax(yr, y_width);
                break;
            case MetricKind::binary_accuracy: {
                double hits = 0;
                for (int64_t j = 0; j < width; ++j) hits += (pr[j] > T(0.5)) == (yr[j * y_step] > T(0.5));
                total += hits / static_cast<double>(width);
                break;
            }
            case MetricKind::mae:
            case MetricKind::mse: {
                double s = 0;
                for (int64_t j = 0; j < width; ++j) {
                    const double d = static_cast<double>(pr[j]) - static_cast<double>(yr[j * y_step]);
                    s += kind == MetricKind::mae ? std::fabs(d) : d * d;
                }
                total += s / static_cast<double>(width);
                break;
            }
        }
    }
    return total;
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_METRICS_HPP_HOT
