// The fit's data packed as a device reads it: contiguous rows of features and of labels, and
// the validation set in evaluation order with its batch sizes. Device-independent (the CUDA
// backend uploads exactly these arrays).
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "program/fit_plan.hpp"
#include "program/training_program.hpp"

namespace onefit {

// One label per row against a wider output under an elementwise loss (the seed's case) is
// repeated across the row once here, which is what tf.keras 2's broadcast computes, so the step
// loop runs one flat loop over equal shapes.
inline int64_t packed_label_width(const TrainingProgram& program, int64_t y_width) {
    const bool crossentropy = program.loss.kind == LossKind::categorical_crossentropy ||
                              program.loss.kind == LossKind::sparse_categorical_crossentropy;
    return y_width == 1 && !crossentropy ? program.output_width : y_width;
}

// Rows as a device reads them: the caller's float rows themselves where they already are that
// (contiguous float rows: MNIST's 188 MB of features, or a million labels, are not copied again),
// else an owned copy (the double executor of the tests, labels repeated across a row, or
// validation rows gathered from a Dataset).
template <class T>
class PackedRows {
public:
    void view(const float* data, size_t size) {
        if constexpr (std::is_same_v<T, float>) {
            view_ = data, view_size_ = size;
        } else {
            owned_.assign(data, data + size);
        }
    }
    void view(const FeatureView& v) { view(v.data, static_cast<size_t>(v.rows * v.width)); }
    void own(std::vector<T> values) { view_ = nullptr, owned_ = std::move(values); }
    const T* data() const { return view_ ? view_ : owned_.data(); }
    size_t size() const { return view_ ? view_size_ : owned_.size(); }

private:
    const T* view_ = nullptr;  // valid while the fit runs: the plan's tensors outlive it
    size_t view_size_ = 0;
    std::vector<T> owned_;
};

template <class T>
struct PackedData {
    int64_t x_width = 0, y_width = 0, rows = 0;  // y_width: packed label width
    PackedRows<T> x;                              // training rows
    PackedRows<T> y;
    PackedRows<T> val_x;                          // validation rows, in evaluation order
    PackedRows<T> val_y;
    PackedRows<T> w, val_w;                       // sample weights, one per row (empty: none)
    std::vector<int64_t> val_batches;             // validation batch sizes
};

// Labels are the caller's tensor itself unless one label must be repeated across a row.
template <class T>
void pack_labels(PackedRows<T>& out, const Tensor& y, int64_t y_width, int64_t packed_width) {
    if (packed_width == y_width) return out.view(y.data(), static_cast<size_t>(y.size()));
    std::vector<T> repeated(static_cast<size_t>(y.rows() * packed_width));
    const float* labels = y.data();
    for (int64_t r = 0; r < y.rows(); ++r)
        for (int64_t j = 0; j < packed_width; ++j) repeated[static_cast<size_t>(r * packed_width + j)] = T(labels[r]);
    out.own(std::move(repeated));
}

// Validation batches never exceed max_rows (the buffers' size).
template <class T>
PackedData<T> pack_fit_data(const TrainingProgram& program, const FitPlan& plan, int64_t max_rows) {
    PackedData<T> d;
    const FeatureView x = plan.dataset ? FeatureView(plan.dataset->x()) : plan.x;
    const Tensor& y = plan.dataset ? plan.dataset->y() : *plan.y;
    d.x_width = x.width;
    d.y_width = packed_label_width(program, plan.y_width);
    d.rows = x.rows;
    d.x.view(x);
    pack_labels(d.y, y, plan.y_width, d.y_width);
    if (plan.sample_weight) d.w.view(plan.sample_weight, static_cast<size_t>(x.rows));
    if (plan.val_sample_weight) d.val_w.view(plan.val_sample_weight, static_cast<size_t>(plan.val_x.rows));
    if (plan.val_dataset) {
        DatasetPass pass;
        plan.val_dataset->plan(0, -1, pass);
        const Tensor& vx = plan.val_dataset->x();
        PackedRows<T> vy;
        pack_labels(vy, plan.val_dataset->y(), plan.y_width, d.y_width);
        const Tensor* vw = plan.val_dataset->sample_weight();
        std::vector<T> gathered_x, gathered_y, gathered_w;
        for (int64_t r : pass.rows) {
            gathered_x.insert(gathered_x.end(), vx.data() + r * d.x_width, vx.data() + (r + 1) * d.x_width);
            gathered_y.insert(gathered_y.end(), vy.data() + r * d.y_width, vy.data() + (r + 1) * d.y_width);
            if (vw) gathered_w.push_back(T(vw->data()[r]));
        }
        d.val_x.own(std::move(gathered_x));
        d.val_y.own(std::move(gathered_y));
        if (vw) d.val_w.own(std::move(gathered_w));
        for (int64_t b : pass.batch_sizes)
            for (int64_t done = 0; done < b; done += max_rows) d.val_batches.push_back(std::min(max_rows, b - done));
    } else if (plan.val_x) {
        d.val_x.view(plan.val_x);
        pack_labels(d.val_y, *plan.val_y, plan.y_width, d.y_width);
        const int64_t n = plan.val_x.rows, batch = std::min(plan.validation_batch_size, max_rows);
        for (int64_t done = 0; done < n; done += batch) d.val_batches.push_back(std::min(batch, n - done));
    }
    return d;
}

// Largest validation batch: buffers must hold it too.
inline int64_t max_validation_batch(const FitPlan& plan) {
    if (plan.val_dataset) {
        DatasetPass pass;
        plan.val_dataset->plan(0, -1, pass);
        int64_t m = 1;
        for (int64_t b : pass.batch_sizes) m = std::max(m, b);
        return m;
    }
    return plan.val_x ? std::min(plan.validation_batch_size, plan.val_x.rows) : 1;
}

}  // namespace onefit
