#include "train/checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "data/row_checks.hpp"
#include "onefit/error.hpp"
#include "program/fit_plan.hpp"

namespace onefit::train {
namespace {

bool integral_labels(const Tensor& y) {
    for (float v : y.values())
        if (v != std::floor(v) || v < 0) return false;
    return true;
}

std::string class_counts(const std::map<int64_t, int64_t>& counts) {
    std::string s;
    for (const auto& [c, n] : counts) s += (s.empty() ? "" : ", ") + std::to_string(c) + ": " + std::to_string(n);
    return "{" + s + "}";
}

}  // namespace

void check_features(const TrainingProgram& program, const Tensor& x, const std::string& what) {
    // Rows of the sample shape, or of it flattened; (N, H, W) for a (H, W, 1) input, as images come.
    Shape sample(x.shape().begin() + (x.rank() > 0 ? 1 : 0), x.shape().end());
    if (sample.size() + 1 == program.input_shape.size() && program.input_shape.back() == 1) sample.push_back(1);
    const bool fits = x.rank() >= 2 && x.row_width() == program.input_width &&
                      (x.rank() == 2 || sample == program.input_shape);
    if (!fits) {
        std::string expected = "(None";
        for (int64_t d : program.input_shape) expected += ", " + std::to_string(d);
        std::string inputs;  // a model of several inputs takes them side by side
        for (size_t k = 0; program.input_shapes.size() > 1 && k < program.input_shapes.size(); ++k)
            inputs += (k == 0 ? ": its inputs " : k + 1 == program.input_shapes.size() ? " and " : ", ") +
                      shape_to_string(program.input_shapes[k]);
        throw Error(what + " has shape " + shape_to_string(x.shape()) + " but the model expects " + expected + ")" +
                    (program.input_shape.size() > 1 ? " or those values flattened" : "") +
                    (inputs.empty() ? "" : inputs + ", each flattened, side by side in each row"));
    }
    if (x.rows() == 0) throw Error(what + " has no rows");
    const int64_t i = first_non_finite(x.data(), x.size());
    if (i < x.size())
        throw Error(what + " holds a non-finite value at row " + std::to_string(i / x.row_width()) + ", column " +
                    std::to_string(i % x.row_width()));
    for (const ProgramOp& op : program.ops) {  // a layer that reads a model input itself (Embedding)
        const auto check_input = nn::layer_kind(op.layer.kind).check_input;
        if (!check_input || op.inputs[0] >= 0) continue;
        const size_t k = static_cast<size_t>(-1 - op.inputs[0]);
        try {
            check_input(op.layer, x.data() + program.input_offset(k), x.rows(), op.in_width, x.row_width());
        } catch (const Error& e) {
            throw Error(what + (program.input_shapes.size() > 1 ? " input " + std::to_string(k) : std::string()) + " " +
                        e.what() + " (layer '" + op.layer_name + "')");
        }
    }
}

std::vector<std::string> check_labels(const TrainingProgram& program, const Tensor& y, int64_t rows,
                                      const std::string& what) {
    std::vector<std::string> warnings;
    if (y.rows() != rows)
        throw Error(what + " has " + std::to_string(y.rows()) + " rows but the features have " + std::to_string(rows));
    if (const int64_t i = first_non_finite(y.data(), y.size()); i < y.size())
        throw Error(what + " holds a non-finite value at row " + std::to_string(i / std::max<int64_t>(1, y.row_width())));
    const int64_t width = label_width(y), k = program.output_width;
    const LossKind loss = program.loss.kind;
    const std::string loss_str = loss_name(loss);
    if (loss == LossKind::sparse_categorical_crossentropy) {
        if (width != 1)
            throw Error(what + " has shape " + shape_to_string(y.shape()) +
                        " but sparse_categorical_crossentropy takes class indices of shape (N,); for one-hot "
                        "labels use categorical_crossentropy");
        for (int64_t i = 0; i < y.rows(); ++i)
            if (y[i] != std::floor(y[i]) || y[i] < 0 || y[i] >= static_cast<float>(k))
                throw Error(what + " row " + std::to_string(i) + " holds label " + std::to_string(y[i]) +
                            ", outside the model's " + std::to_string(k) + " classes [0, " + std::to_string(k - 1) +
                            "]");
        return warnings;
    }
    if (width == k) return warnings;
    if (width == 1 && loss != LossKind::categorical_crossentropy) {
        // tf.keras 2 expands (N,) labels to (N,1) and broadcasts them against (N,K) predictions.
        std::string msg = "labels " + what + " have shape " + shape_to_string(y.shape()) +
                          " but predictions are (None, " + std::to_string(k) + "): loss '" + loss_str +
                          "' compares every output with the label value (broadcast, as tf.keras 2 does)";
        if (integral_labels(y))
            msg += "; these look like class indices, so use loss='sparse_categorical_crossentropy' or one-hot labels";
        warnings.push_back(msg);
        return warnings;
    }
    std::string fix = loss == LossKind::categorical_crossentropy && width == 1
                          ? "; for class indices use sparse_categorical_crossentropy"
                          : "";
    throw Error(what + " has shape " + shape_to_string(y.shape()) + " but the model predicts (None, " +
                std::to_string(k) + ") and loss '" + loss_str + "' needs (N, " + std::to_string(k) + ")" + fix);
}

std::vector<std::string> check_class_coverage(const TrainingProgram& program, const Tensor& y_train,
                                              const Tensor& y_val) {
    std::vector<std::string> warnings;
    if (label_width(y_train) != 1 || label_width(y_val) != 1 || program.output_width < 2) return warnings;
    if (!integral_labels(y_train) || !integral_labels(y_val)) return warnings;
    std::map<int64_t, int64_t> train, val;
    for (float v : y_train.values()) ++train[static_cast<int64_t>(v)];
    for (float v : y_val.values()) ++val[static_cast<int64_t>(v)];
    std::string missing_train, missing_val;
    for (const auto& [c, n] : val)
        if (!train.count(c)) missing_train += (missing_train.empty() ? "" : ", ") + std::to_string(c);
    for (const auto& [c, n] : train)
        if (!val.count(c)) missing_val += (missing_val.empty() ? "" : ", ") + std::to_string(c);
    if (missing_train.empty() && missing_val.empty()) return warnings;
    std::string msg = "training labels " + class_counts(train) + " and validation labels " + class_counts(val) +
                      " do not share classes (";
    if (!missing_train.empty()) msg += "training lacks " + missing_train;
    if (!missing_train.empty() && !missing_val.empty()) msg += "; ";
    if (!missing_val.empty()) msg += "validation lacks " + missing_val;
    msg += "): data sorted by label was probably split without shuffling; shuffle before splitting";
    warnings.push_back(msg);
    return warnings;
}

}  // namespace onefit::train
