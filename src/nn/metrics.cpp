#include "nn/metrics.hpp"

#include "onefit/error.hpp"

namespace onefit::nn {

Metric resolve_metric(const std::string& name, int64_t pred_width, int64_t y_width) {
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
    if (name == "top_k_categorical_accuracy") return {MetricKind::top_k_categorical_accuracy, name};
    if (name == "sparse_top_k_categorical_accuracy") return {MetricKind::sparse_top_k_categorical_accuracy, name};
    throw Error("unknown metric '" + name +
                "' (known: accuracy, sparse_categorical_accuracy, categorical_accuracy, binary_accuracy, mae, mse, "
                "mape, msle, top_k_categorical_accuracy, sparse_top_k_categorical_accuracy)");
}

}  // namespace onefit::nn
