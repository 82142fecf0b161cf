// Metrics as Keras computes them per sample, summed over a batch (fit divides by the sample
// count at the epoch end, which equals Keras's batch-size-weighted running mean); and the
// ratio metrics (Precision, Recall, AUC, R2Score), whose value is a ratio of counts over the whole
// epoch, not a mean over samples: each batch adds to the metric's counts (metric_count) and the
// value comes from them (metric_result).
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
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy,  // Metric::k, Keras's default 5
    mape,  // 100 mean(|y - p| / max(|y|, 1e-7))
    msle,  // mean((log(max(p, 1e-7) + 1) - log(max(y, 1e-7) + 1))^2)
    // Ratio metrics, over every value of the epoch (Keras's defaults: threshold 0.5; AUC with 200
    // thresholds and summation_method "interpolation"; R2Score's uniform_average over outputs).
    precision, recall, auc_roc, auc_pr, r2_score,
    f1_micro, f1_macro, f1_weighted,  // F1Score(average=...), each class's at Metric::threshold or argmax
};
inline constexpr int64_t kTopK = 5;  // Keras's default k
inline constexpr int64_t kAucThresholds = 200;

struct Metric {
    MetricKind kind;
    std::string name;    // the log key: the name the user gave ("accuracy", "mae", ...)
    int64_t counts = 0;  // a ratio metric's counts (0: a per-sample metric, summed)
    double threshold = -1;  // F1Score's (-1: None, each row's largest predictions are its positives)
    double beta = 1;        // FBetaScore's (F1Score: 1)
    int64_t k = kTopK;      // the top-k accuracies' k
};

// Resolves a Keras metric name for predictions of pred_width columns and labels of y_width
// columns ("accuracy" picks sparse/categorical/binary like Keras does). "key=name" logs the
// metric `name` under `key` (a Keras metric object's own name: AUC(curve="PR") is "auc=pr_auc");
// F1Score(average, threshold) is "f1_score(macro)" or "f1_score(weighted, 0.5)"; FBetaScore(average,
// beta, threshold) is "fbeta_score(macro, 2)" or "fbeta_score(micro, 0.5, 0.4)". Throws Error if
// unknown.
Metric resolve_metric(const std::string& name, int64_t pred_width, int64_t y_width);

// A ratio metric's value from its counts (metric_count's, over `samples` rows); Keras's
// divide_no_nan: 0 where a ratio's denominator is 0.
double metric_result(const Metric& metric, const double* counts, int64_t width, int64_t samples);

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

// A ratio metric's counts of a batch added to `counts` (Metric::counts values): Precision and
// Recall true positives, false positives, false negatives; AUC those and true negatives at each
// of its thresholds; R2Score each output's sum of labels, of their squares, of squared residuals;
// F1Score each class's (micro: all classes') true and false positives, false negatives and labels.
template <class T>
void metric_count(const Metric& m, const T* p, const T* y, int64_t rows, int64_t width, int64_t y_width, double* counts) {
    const MetricKind kind = m.kind;
    const int64_t y_step = y_width == 1 ? 0 : 1;
    for (int64_t r = 0; r < rows; ++r) {
        const T* pr = p + r * width;
        const T* yr = y + r * y_width;
        T row_max = pr[0];
        for (int64_t j = 1; j < width; ++j) row_max = pr[j] > row_max ? pr[j] : row_max;
        for (int64_t j = 0; j < width; ++j) {
            const double pj = static_cast<double>(pr[j]), yj = static_cast<double>(yr[j * y_step]);
            const bool positive = yj != 0.0;  // (Keras casts the labels to bool)
            switch (kind) {
                case MetricKind::precision:
                case MetricKind::recall: {
                    const bool predicted = pj > 0.5;
                    counts[0] += predicted && positive, counts[1] += predicted && !positive,
                        counts[2] += !predicted && positive;
                    break;
                }
                case MetricKind::auc_roc:
                case MetricKind::auc_pr: {
                    // Thresholds 0 - 1e-7, 1/199, ..., 198/199, 1 + 1e-7: counts[4t + (tp, fp, fn, tn)].
                    // Compared in float32, as Keras's (its thresholds and predictions are float32).
                    for (int64_t t = 0; t < kAucThresholds; ++t) {
                        const double threshold = t == 0 ? -1e-7 : t == kAucThresholds - 1 ? 1.0 + 1e-7
                                                                  : static_cast<double>(t) / double(kAucThresholds - 1);
                        const bool predicted = static_cast<float>(pj) > static_cast<float>(threshold);
                        counts[4 * t + (predicted ? (positive ? 0 : 1) : (positive ? 2 : 3))] += 1;
                    }
                    break;
                }
                case MetricKind::r2_score: {
                    const double d = yj - pj;
                    counts[3 * j] += yj, counts[3 * j + 1] += yj * yj, counts[3 * j + 2] += d * d;
                    break;
                }
                case MetricKind::f1_micro:
                case MetricKind::f1_macro:
                case MetricKind::f1_weighted: {
                    // Keras's: above the threshold, or (None) the row's largest if not ~0; class
                    // indices as labels are their one-hot rows.
                    const double label = y_width == 1 && width > 1 ? double(static_cast<int64_t>(yr[0]) == j) : yj;
                    const double predicted = m.threshold < 0 ? double(pr[j] >= row_max && std::fabs(pj) > 1e-9)
                                                             : double(pj > m.threshold);
                    double* c = counts + (kind == MetricKind::f1_micro ? 0 : 4 * j);
                    c[0] += predicted * label, c[1] += predicted * (1 - label), c[2] += (1 - predicted) * label;
                    c[3] += label;
                    break;
                }
                default:
                    return;
            }
        }
    }
}

template <class T>
ONEFIT_HD double metric_sum(MetricKind kind, const T* p, const T* y, int64_t rows, int64_t width, int64_t y_width,
                            int64_t k = kTopK) {
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
                total += above < k;
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
            default:  // the ratio metrics: counted by metric_count
                break;
        }
    }
    return total;
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_METRICS_HPP_HOT
