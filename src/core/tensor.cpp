#include "onefit/tensor.hpp"

#include <cstring>

#include "onefit/error.hpp"

namespace onefit {

std::string shape_to_string(const Shape& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += shape[i] < 0 ? std::string("None") : std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

int64_t shape_elements(const Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

Tensor::Tensor(Shape shape, float fill)
    : shape_(std::move(shape)), data_(static_cast<size_t>(shape_elements(shape_)), fill) {}

Tensor::Tensor(Shape shape, std::vector<float> values) : shape_(std::move(shape)), data_(std::move(values)) {
    if (static_cast<int64_t>(data_.size()) != shape_elements(shape_))
        throw Error("tensor of shape " + shape_to_string(shape_) + " needs " +
                    std::to_string(shape_elements(shape_)) + " values, got " + std::to_string(data_.size()));
}

Tensor::Tensor(Shape shape, std::shared_ptr<const float> values) : shape_(std::move(shape)) {
    const int64_t size = shape_elements(shape_);
    if (size > 0 && !values) throw Error("tensor of shape " + shape_to_string(shape_) + " needs values, got none");
    shared_ = std::make_shared<Shared>();
    shared_->values = std::move(values);
    shared_->size = size;
}

const std::vector<float>& Tensor::Shared::as_vector() {
    std::call_once(copied, [this] { copy.assign(values.get(), values.get() + size); });
    return copy;
}

void Tensor::unshare() {
    const float* values = shared_->values.get();
    data_.assign(values, values + shared_->size);
    shared_.reset();
}

int64_t Tensor::dim(int64_t axis) const {
    if (axis < 0) axis += rank();
    if (axis < 0 || axis >= rank()) throw Error("axis out of range for shape " + shape_to_string(shape_));
    return shape_[static_cast<size_t>(axis)];
}

int64_t Tensor::row_width() const {
    int64_t w = 1;
    for (size_t i = 1; i < shape_.size(); ++i) w *= shape_[i];
    return w;
}

Tensor Tensor::slice_rows(int64_t begin, int64_t end) const {
    Shape s = shape_;
    s[0] = end - begin;
    const int64_t w = row_width();
    return Tensor(s, std::vector<float>(data() + begin * w, data() + end * w));
}

Tensor Tensor::gather_rows(const std::vector<int64_t>& rows) const {
    Shape s = shape_;
    s[0] = static_cast<int64_t>(rows.size());
    Tensor out(s);
    const int64_t w = row_width();
    for (size_t i = 0; i < rows.size(); ++i)
        std::memcpy(out.data() + static_cast<int64_t>(i) * w, data() + rows[i] * w, sizeof(float) * static_cast<size_t>(w));
    return out;
}

Tensor Tensor::reshaped(Shape shape) const {
    if (!shared_) return Tensor(std::move(shape), data_);
    if (shape_elements(shape) != shared_->size)
        throw Error("tensor of shape " + shape_to_string(shape) + " needs " + std::to_string(shape_elements(shape)) +
                    " values, got " + std::to_string(shared_->size));
    Tensor out;  // the same storage under another shape
    out.shape_ = std::move(shape);
    out.shared_ = shared_;
    return out;
}

}  // namespace onefit
