// Tensor: float32, row-major, with a shape. Carries data in and out of onefit;
// it is not a general array library (the training program works on its own packed buffers).
// Its values live in its own vector, or in storage it shares (an .npy file mapped in place, a
// reader's buffer): copies of such a tensor share that storage, and the first non-const access
// copies the values into the tensor's own vector (copy on write), so a Tensor always behaves as
// a value. Features reach fit() through the const accessors, so they are never copied.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
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
    // A tensor over shape_elements(shape) values it does not allocate, valid while `values`
    // lives (tie them to their owner, e.g. a file mapping, with shared_ptr's aliasing
    // constructor). Nothing is ever written through it.
    Tensor(Shape shape, std::shared_ptr<const float> values);

    const Shape& shape() const { return shape_; }
    int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
    int64_t dim(int64_t axis) const;  // negative axes count from the end
    int64_t size() const { return shared_ ? shared_->size : static_cast<int64_t>(data_.size()); }
    bool empty() const { return size() == 0; }
    // True while the values are shared storage (until a non-const access copies them).
    bool shares_storage() const { return shared_ != nullptr; }

    // Rows = first dimension; row_width = product of the others (1 for rank-1).
    int64_t rows() const { return shape_.empty() ? 0 : shape_[0]; }
    int64_t row_width() const;

    float* data() { own(); return data_.data(); }
    const float* data() const { return shared_ ? shared_->values.get() : data_.data(); }
    std::vector<float>& values() { own(); return data_; }
    // Over shared storage: a copy, made once and kept with the storage (prefer data()).
    const std::vector<float>& values() const { return shared_ ? shared_->as_vector() : data_; }

    float& operator[](int64_t i) { own(); return data_[static_cast<size_t>(i)]; }
    float operator[](int64_t i) const { return data()[i]; }
    float& at(int64_t row, int64_t col) { own(); return data_[static_cast<size_t>(row * row_width() + col)]; }
    float at(int64_t row, int64_t col) const { return data()[row * row_width() + col]; }

    // A copy of rows [begin, end).
    Tensor slice_rows(int64_t begin, int64_t end) const;
    // A copy with the given rows, in order.
    Tensor gather_rows(const std::vector<int64_t>& rows) const;
    Tensor reshaped(Shape shape) const;

private:
    // Storage shared by a tensor's copies: the values, and the vector const values() hands out.
    struct Shared {
        std::shared_ptr<const float> values;
        int64_t size = 0;
        std::once_flag copied;
        std::vector<float> copy;
        const std::vector<float>& as_vector();
    };

    void own() { if (shared_) unshare(); }
    void unshare();  // copies the shared values into data_ and lets go of them

    Shape shape_;
    std::vector<float> data_;
    std::shared_ptr<Shared> shared_;  // null: the values are data_
};

}  // namespace onefit
