#include "nn/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "onefit/error.hpp"

namespace onefit::nn {

namespace {

double ratio(double a, double b) { return b == 0.0 ? 0.0 : a / b; }

Metric resolve_named(const std::string& name, int64_t pred_width, int64_t y_width);

// "f1_score(average[, threshold])" or "fbeta_score(average, beta[, threshold])".
Metric f_score_metric(const std::string& name, int64_t pred_width) {
    const bool fbeta = name.rfind("fbeta_score(", 0) == 0;
    const std::string what = fbeta ? "FBetaScore" : "F1Score";
    std::vector<std::string> parts;
    std::string inside = name.substr(name.find('(') + 1);
    inside.pop_back();
    for (size_t start = 0;;) {
        const size_t comma = inside.find(',', start);
        std::string part = inside.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        part.erase(0, part.find_first_not_of(' '));
        part.erase(part.find_last_not_of(' ') + 1);
        parts.push_back(part);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    const size_t most = fbeta ? 3 : 2;
    if (parts.size() > most || (fbeta && parts.size() < 2))
        throw Error("metric '" + name + "': " + what + " takes (average" + (fbeta ? ", beta" : "") + "[, threshold])");
    const std::string& average = parts[0];
    Metric m{MetricKind::f1_macro, name, 4 * pred_width};
    if (average == "micro") m.kind = MetricKind::f1_micro, m.counts = 4;
    else if (average == "weighted") m.kind = MetricKind::f1_weighted;
    else if (average != "macro")
        throw Error("metric '" + name + "': " + what + "'s average must be micro, macro or weighted, got '" + average + "'");
    const auto number = [&](const std::string& text, const char* field, auto valid) {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !valid(v))
            throw Error("metric '" + name + "': " + what + "'s " + field + " must be " +
                        (std::string(field) == "beta" ? "a positive number" : "in (0, 1], as Keras requires") + ", got '" +
                        text + "'");
        return v;
    };
    if (fbeta) m.beta = number(parts[1], "beta", [](double v) { return v > 0 && std::isfinite(v); });
    const size_t t = fbeta ? 2 : 1;
    if (parts.size() > t && parts[t] != "None") m.threshold = number(parts[t], "threshold", [](double v) { return v > 0 && v <= 1; });
    return m;
}

}  // namespace

Metric resolve_metric(const std::string& given, int64_t pred_width, int64_t y_width) {
    const size_t eq = given.find('=');
    if (eq == std::string::npos) return resolve_named(given, pred_width, y_width);
    if (eq == 0) throw Error("metric '" + given + "': the log key before '=' is empty");
    Metric m = resolve_named(given.substr(eq + 1), pred_width, y_width);
    m.name = given.substr(0, eq);
    return m;
}

double metric_result(const Metric& metric, const double* c, int64_t width, int64_t samples) {
    const MetricKind kind = metric.kind;
    switch (kind) {
        case MetricKind::precision: return ratio(c[0], c[0] + c[1]);
        case MetricKind::recall: return ratio(c[0], c[0] + c[2]);
        case MetricKind::auc_roc: {  // trapezoids over (fpr, tpr), thresholds ascending
            double area = 0;
            for (int64_t t = 0; t + 1 < kAucThresholds; ++t) {
                const double* a = c + 4 * t;
                const double* b = c + 4 * (t + 1);
                const double tpr_a = ratio(a[0], a[0] + a[2]), tpr_b = ratio(b[0], b[0] + b[2]);
                const double fpr_a = ratio(a[1], a[1] + a[3]), fpr_b = ratio(b[1], b[1] + b[3]);
                area += (fpr_a - fpr_b) * (tpr_a + tpr_b) / 2;
            }
            return area;
        }
        case MetricKind::auc_pr: {  // Davis & Goadrich's interpolation, as Keras's interpolate_pr_auc
            double area = 0;
            for (int64_t t = 0; t + 1 < kAucThresholds; ++t) {
                const double* a = c + 4 * t;
                const double* b = c + 4 * (t + 1);
                const double dtp = a[0] - b[0], p_a = a[0] + a[1], p_b = b[0] + b[1];
                const double slope = ratio(dtp, std::max(p_a - p_b, 0.0));
                const double intercept = b[0] - slope * p_b;
                const double p_ratio = p_a > 0 && p_b > 0 ? ratio(p_a, std::max(p_b, 0.0)) : 1.0;
                area += ratio(slope * (dtp + intercept * std::log(p_ratio)), std::max(b[0] + b[2], 0.0));
            }
            return area;
        }
        case MetricKind::r2_score: {  // each output's 1 - SS_res / SS_tot (0 where infinite), averaged
            double total = 0;
            const double n = static_cast<double>(samples);
            for (int64_t j = 0; j < width; ++j) {
                const double sum = c[3 * j], squares = c[3 * j + 1], residual = c[3 * j + 2];
                const double r2 = 1.0 - residual / (squares - sum * sum / n);
                total += std::isinf(r2) ? 0.0 : r2;
            }
            return total / static_cast<double>(width);
        }
        case MetricKind::f1_micro:
        case MetricKind::f1_macro:
        case MetricKind::f1_weighted: {  // Keras's FBetaScore.result, its epsilons included
            constexpr double eps = 1e-7;
            const double b2 = metric.beta * metric.beta;
            const int64_t classes = kind == MetricKind::f1_micro ? 1 : width;
            double mean = 0, support = 0, weighted = 0;
            for (int64_t j = 0; j < classes; ++j) support += c[4 * j + 3];
            for (int64_t j = 0; j < classes; ++j) {
                const double* k = c + 4 * j;
                const double precision = k[0] / (k[0] + k[1] + eps), recall = k[0] / (k[0] + k[2] + eps);
                const double f1 = precision * recall / (b2 * precision + recall + eps) * (1 + b2);
                mean += f1 / static_cast<double>(classes);
                weighted += f1 * k[3] / (support + eps);
            }
            return kind == MetricKind::f1_weighted ? weighted : mean;
        }
        default:
            return 0;
    }
}

namespace {

Metric resolve_named(const std::string& name, int64_t pred_width, int64_t y_width) {
    if (name == "precision") return {MetricKind::precision, name, 3};
    if (name == "recall") return {MetricKind::recall, name, 3};
    if (name == "auc") return {MetricKind::auc_roc, name, 4 * kAucThresholds};
    if (name == "pr_auc") return {MetricKind::auc_pr, name, 4 * kAucThresholds};
    if (name == "r2_score") return {MetricKind::r2_score, name, 3 * pred_width};
    if (name == "f1_score")
        throw Error("metric 'f1_score': Keras's F1Score() gives one value per class (average=None), which onefit's "
                    "logs (one number per metric) do not hold; use F1Score(average=\"macro\"), \"micro\" or \"weighted\" "
                    "(natively \"f1_score(macro)\")");
    if ((name.rfind("f1_score(", 0) == 0 || name.rfind("fbeta_score(", 0) == 0) && name.back() == ')')
        return f_score_metric(name, pred_width);
    if (name == "fbeta_score")
        throw Error("metric 'fbeta_score': Keras's FBetaScore() gives one value per class (average=None), which onefit's "
                    "logs (one number per metric) do not hold; use FBetaScore(average=\"macro\", beta=...) "
                    "(natively \"fbeta_score(macro, 2)\")");
    if (name == "accuracy" || name == "acc") {
        // Keras: binary when the prediction has one column; sparse when labels are indices.
        if (pred_width == 1) return {MetricKind::binary_accuracy, name};
        if (y_width == 1) return {MetricKind::sparse_categorical_accuracy, name};
        return {MetricKind::categorical_accuracy, name};
    }
    if (name == "sparse_categorical_accuracy") return {MetricKind::sparse_categorical_accuracy, name};
    if (name == "categorical_accuracy") return {MetricKind::categorical_accuracy, name};
    if (name == "binary_accuracy") return {MetricKind::binary_accuracy, name};
    if (name == "mae" || name == "mean_absolute_error") return {MetricKind::mae, name};
    if (name == "mse" || name == "mean_squared_error") return {MetricKind::mse, name};
    if (name == "mape" || name == "mean_absolute_percentage_error") return {MetricKind::mape, name};
    if (name == "msle" || name == "mean_squared_logarithmic_error") return {MetricKind::msle, name};
    for (const auto& [word, kind] : {std::pair{"top_k_categorical_accuracy", MetricKind::top_k_categorical_accuracy},
                                     std::pair{"sparse_top_k_categorical_accuracy", MetricKind::sparse_top_k_categorical_accuracy}}) {
        const std::string open = std::string(word) + "(";
        if (name.rfind(open, 0) != 0 || name.back() != ')') continue;
        const std::string inside = name.substr(open.size(), name.size() - open.size() - 1);
        char* end = nullptr;
        const long long k = std::strtoll(inside.c_str(), &end, 10);
        if (inside.empty() || *end != '\0' || k < 1)
            throw Error("metric '" + name + "': k must be a positive integer, got '" + inside + "'");
        Metric m{kind, name};
        m.k = k;
        return m;
    }
    if (name == "top_k_categorical_accuracy") return {MetricKind::top_k_categorical_accuracy, name};
    if (name == "sparse_top_k_categorical_accuracy") return {MetricKind::sparse_top_k_categorical_accuracy, name};
    throw Error("unknown metric '" + name +
                "' (known: accuracy, sparse_categorical_accuracy, categorical_accuracy, binary_accuracy, mae, mse, "
                "mape, msle, top_k_categorical_accuracy, sparse_top_k_categorical_accuracy, precision, recall, auc, "
                "pr_auc, r2_score, f1_score(AVERAGE), fbeta_score(AVERAGE, BETA), top_k_categorical_accuracy(K))");
}

}  // namespace

}  // namespace onefit::nn
