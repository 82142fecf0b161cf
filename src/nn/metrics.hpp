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
// Calls f(j, p_j, y_j, row_max, the row's first label) for each output j of each row (y_j the label
// there: a class index repeated across a row of one label).
template <class T, class F>
void for_each_output(const T* p, const T* y, int64_t rows, int64_t width, int64_t y_width, F&& f) {
    const int64_t y_step = y_width == 1 ? 0 : 1;
    for (int64_t r = 0; r < rows; ++r) {
        const T* pr = p + r * width;
        const T* yr = y + r * y_width;
        T row_max = pr[0];
        for (int64_t j = 1; j < width; ++j) row_max = pr[j] > row_max ? pr[j] : row_max;
        for (int64_t j = 0; j < width; ++j) f(j, pr[j], yr[j * y_step], row_max, yr[0]);
    }
}

// AUC's threshold t (0 - 1e-7, 1/199, ..., 198/199, 1 + 1e-7), as float32, as Keras's.
inline float auc_threshold(int64_t t) {
    const double threshold = t == 0 ? -1e-7 : t == kAucThresholds - 1 ? 1.0 + 1e-7 : static_cast<double>(t) / double(kAucThresholds - 1);
    return static_cast<float>(threshold);
}

// A ratio metric's counts of a batch added to `counts` (Metric::counts values): Precision and
// Recall true positives, false positives, false negatives; AUC those and true negatives at each
// of its thresholds; R2Score each output's sum of labels, of their squares, of squared residuals;
// F1Score each class's (micro: all classes') true and false positives, false negatives and labels.
// One switch per call, never per value.
template <class T>
void metric_count(const Metric& m, const T* p, const T* y, int64_t rows, int64_t width, int64_t y_width, double* counts) {
    switch (m.kind) {
        case MetricKind::precision:
        case MetricKind::recall:
            return for_each_output(p, y, rows, width, y_width, [&](int64_t, T pj, T yj, T, T) {
                const bool predicted = static_cast<double>(pj) > 0.5, positive = yj != T(0);  // (Keras casts labels to bool)
                counts[0] += predicted && positive, counts[1] += predicted && !positive, counts[2] += !predicted && positive;
            });
        case MetricKind::auc_roc:
        case MetricKind::auc_pr: {
            // counts[4t + (tp, fp, fn, tn)]. A value is predicted positive at the thresholds below
            // it, which are the first `above` of the sorted thresholds: each value is counted once
            // in a histogram of `above`, and the thresholds' counts are its partial sums.
            double positives[kAucThresholds + 1] = {}, negatives[kAucThresholds + 1] = {};
            for_each_output(p, y, rows, width, y_width, [&](int64_t, T pj, T yj, T, T) {
                const float v = static_cast<float>(pj);  // compared in float32, as Keras's
                int64_t above = 0, hi = kAucThresholds;  // thresholds t with v > threshold t (a prefix: they increase)
                while (above < hi) {
                    const int64_t mid = (above + hi) / 2;
                    if (v > auc_threshold(mid)) above = mid + 1;
                    else hi = mid;
                }
                (yj != T(0) ? positives : negatives)[above] += 1;
            });
            double pos_above = 0, neg_above = 0, pos_total = 0, neg_total = 0;
            for (int64_t c = 0; c <= kAucThresholds; ++c) pos_total += positives[c], neg_total += negatives[c];
            // Threshold t predicts positive for the values whose `above` exceeds t.
            for (int64_t c = kAucThresholds; c >= 1; --c) {
                pos_above += positives[c], neg_above += negatives[c];
                double* k = counts + 4 * (c - 1);
                k[0] += pos_above, k[1] += neg_above, k[2] += pos_total - pos_above, k[3] += neg_total - neg_above;
            }
            return;
        }
        case MetricKind::r2_score:
            return for_each_output(p, y, rows, width, y_width, [&](int64_t j, T pj, T yj, T, T) {
                const double label = static_cast<double>(yj), d = label - static_cast<double>(pj);
                counts[3 * j] += label, counts[3 * j + 1] += label * label, counts[3 * j + 2] += d * d;
            });
        case MetricKind::f1_micro:
        case MetricKind::f1_macro:
        case MetricKind::f1_weighted: {
            const bool micro = m.kind == MetricKind::f1_micro;
            return for_each_output(p, y, rows, width, y_width, [&](int64_t j, T pj, T yj, T row_max, T first_label) {
                // Keras's: above the threshold, or (None) the row's largest if not ~0; class
                // indices as labels are their one-hot rows.
                const double label = y_width == 1 && width > 1 ? double(static_cast<int64_t>(first_label) == j) : double(yj);
                const double predicted = m.threshold < 0 ? double(pj >= row_max && std::fabs(double(pj)) > 1e-9)
                                                         : double(double(pj) > m.threshold);
                double* c = counts + (micro ? 0 : 4 * j);
                c[0] += predicted * label, c[1] += predicted * (1 - label), c[2] += (1 - predicted) * label;
                c[3] += label;
            });
        }
        default:
            return;
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
