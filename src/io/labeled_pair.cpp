// labeled_pair: two array files (features, labels) as LabeledData, the shapes read_csv gives.
#include "io/parse.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {

LabeledData labeled_pair(Tensor x, Tensor y, const std::string& x_name, const std::string& y_name) {
    if (x.rank() == 0)
        throw file_error(x_name, 0, 0, "the array has shape (), a single value; features need shape (N, F), one row per sample");
    if (y.rank() == 0)
        throw file_error(y_name, 0, 0, "the array has shape (), a single value; labels need shape (N,), one per sample");
    if (y.rank() > 2 || (y.rank() == 2 && y.dim(1) != 1))
        throw file_error(y_name, 0, 0,
                         "labels have shape " + shape_to_string(y.shape()) +
                             "; they need shape (N,) or (N, 1): one class index or target per sample (for one-hot "
                             "labels save np.argmax(y, axis=1))");
    if (x.rows() != y.rows())
        throw file_error(y_name, 0, 0,
                         std::to_string(y.rows()) + " labels, but " + x_name + " has " +
                             std::to_string(x.rows()) + " rows; both files must hold the same samples in the same order");
    LabeledData data;
    const int64_t rows = x.rows();
    // (N,) features are one column; images (N, H, W, ...) are flattened, as Keras' Flatten would,
    // and keep their shape beside them for models that start with image layers.
    if (x.rank() == 3) data.sample_shape = {x.dim(1), x.dim(2), 1};
    else if (x.rank() == 4) data.sample_shape = {x.dim(1), x.dim(2), x.dim(3)};
    else data.sample_shape = {x.rank() == 1 ? 1 : x.row_width()};
    data.x = x.rank() == 2 ? std::move(x) : x.reshaped({rows, x.rank() == 1 ? 1 : x.row_width()});
    data.y = y.rank() == 1 ? std::move(y) : y.reshaped({rows});
    return data;
}

LabeledData read_array_pair(const std::string& x_path, const std::string& y_path) {
    const auto read = [](const std::string& path) {
        return detect_data_format(path) == DataFormat::idx ? read_idx(path) : read_npy(path);
    };
    return labeled_pair(read(x_path), read(y_path), x_path, y_path);
}

}  // namespace onefit
