// Losses with Keras's definitions and its default reduction, "sum over batch size":
// the per-sample losses (each a mean over the last axis where Keras takes one) summed over
// the batch and divided by the batch size.
#pragma once
#include <string>

namespace onefit {

enum class LossKind {
    log_cosh,                         // mean(x + softplus(-2x) - log 2), x = y_pred - y_true
    mean_squared_error,               // mean((y_pred - y_true)^2)
    mean_absolute_error,              // mean(|y_pred - y_true|)
    huber,                            // mean(0.5 x^2 if |x| <= delta else delta (|x| - 0.5 delta))
    binary_crossentropy,              // mean(-(y log p + (1-y) log(1-p))), p clipped to [1e-7, 1-1e-7]
    categorical_crossentropy,         // -sum(y log p), p normalised and clipped
    sparse_categorical_crossentropy,  // -log p[label]
};

struct Loss {
    LossKind kind = LossKind::mean_squared_error;
    bool from_logits = false;  // crossentropies: predictions are logits
    float delta = 1.0f;        // huber
    // categorical and binary crossentropy: labels moved towards uniform before the loss, as Keras:
    // y (1 - s) + s / classes (binary: + s / 2). Metrics see the labels as given.
    float label_smoothing = 0.0f;
};

// Keras names and aliases: "logcosh"/"log_cosh", "mse", "mae", "huber", "binary_crossentropy", ...
Loss loss_from_name(const std::string& name, bool from_logits = false);
std::string loss_name(LossKind kind);
// Crossentropies compare a distribution with labels; the others compare values elementwise.
bool is_sparse_loss(LossKind kind);

}  // namespace onefit
