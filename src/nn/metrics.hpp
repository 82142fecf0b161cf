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

enum class MetricKind {
    sparse_categorical_accuracy, categorical_accuracy, binary_accuracy, mae, mse,
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy,  // k = 5, Keras's default
    mape,  // 100 mean(|y - p| / max(|y|, 1e-7))
    msle,  // mean((log(max(p, 1e-7) + 1) - log(max(y, 1e-7) + 1))^2)
};
inline constexpr int64_t kTopK = 5;

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
            case MetricKind::top_k_categorical_accuracy:
            case MetricKind::sparse_top_k_categorical_accuracy: {
                // Keras's in_top_k: the label's prediction is at least the k-th largest, i.e.
                // fewer than k predictions exceed it (ties count as hits).
                const int64_t label = kind == MetricKind::sparse_top_k_categorical_accuracy ? static_cast<int64_t>(yr[0])
                                                                                            : argmax(yr, y_width);
                int64_t above = 0;
                for (int64_t j = 0; j < width; ++j) above += pr[j] > pr[label];
                total += above < kTopK;
                break;
            }
            case MetricKind::mae:
            case MetricKind::mse:
            case MetricKind::mape:
            case MetricKind::msle: {
                double s = 0;
                for (int64_t j = 0; j < width; ++j) {
                    const double p_j = static_cast<double>(pr[j]), y_j = static_cast<double>(yr[j * y_step]);
                    const double d = p_j - y_j;
                    if (kind == MetricKind::mae) s += std::fabs(d);
                    else if (kind == MetricKind::mse) s += d * d;
                    else if (kind == MetricKind::mape) s += 100.0 * std::fabs(d) / std::fmax(std::fabs(y_j), 1e-7);
                    else {
                        const double l = std::log(std::fmax(p_j, 1e-7) + 1.0) - std::log(std::fmax(y_j, 1e-7) + 1.0);
                        s += l * l;
                    }
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
