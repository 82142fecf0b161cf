// Tensor: float32, row-major, with a shape. Carries data in and out of onefit;
// it is not a general array library (the training program works on its own packed buffers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace onefit {

using Shape = std::vector<int64_t>;

std::string shape_to_string(const Shape& shape);  // "(150, 4)"
int64_t shape_elements(const Shape& shape);

class Tensor {
public:
    Tensor() = default;
    explicit Tensor(Shape shape, float fill = 0.0f);
    Tensor(Shape shape, std::vector<float> values);  // throws onefit::Error if sizes disagree

    const Shape& shape() const { return shape_; }
    int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
    int64_t dim(int64_t axis) const;  // negative axes count from the end
    int64_t size() const { return static_cast<int64_t>(data_.size()); }
    bool empty() const { return data_.empty(); }

    // Rows = first dimension; row_width = product of the others (1 for rank-1).
    int64_t rows() const { return shape_.empty() ? 0 : shape_[0]; }
    int64_t row_width() const;

    float* data() { return data_.data(); }
    const float* data() const { return data_.data(); }
    std::vector<float>& values() { return data_; }
    const std::vector<float>& values() const { return data_; }

    float& operator[](int64_t i) { return data_[static_cast<size_t>(i)]; }
    float operator[](int64_t i) const { return data_[static_cast<size_t>(i)]; }
    float& at(int64_t row, int64_t col) { return data_[static_cast<size_t>(row * row_width() + col)]; }
    float at(int64_t row, int64_t col) const { return data_[static_cast<size_t>(row * row_width() + col)]; }

    // A copy of rows [begin, end).
    Tensor slice_rows(int64_t begin, int64_t end) const;
    // A copy with the given rows, in order.
    Tensor gather_rows(const std::vector<int64_t>& rows) const;
    Tensor reshaped(Shape shape) const;

private:
    Shape shape_;
    std::vector<float> data_;
};

}  // namespace onefit
