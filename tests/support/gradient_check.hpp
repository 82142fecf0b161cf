// The finite-difference check of the CPU step loop's gradients (tests/nn/gradient_test.cpp, and
// the Functional graphs' tests): the executor runs the very same templated kernels as training, in
// double precision (CpuExecutor<double>); each analytic gradient is compared with a central
// difference of the loss the executor reports.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/make_loss.hpp"
#include "core/rng.hpp"
#include "program/training_program.hpp"
#include "runtime/cpu/cpu_executor.hpp"

namespace onefit::gradient_check {

constexpr double kStep = 1e-6;       // central-difference step
constexpr double kTolerance = 1e-6;  // |analytic - numeric| / (max(|analytic|, |numeric|) + floor)
constexpr uint64_t kDropoutSeed = 7;

enum class Labels { values, probabilities, one_hot, class_index, binary };

struct Problem {
    int64_t in = 4;
    std::vector<Layer> layers;
    Loss loss;
    Labels labels = Labels::values;
    int64_t rows = 5;
    int64_t y_width = -1;           // -1: the output width (1 for class indices)
    double last_bias = std::nan("");  // overrides the last layer's biases (keeps relu outputs positive)
    Shape image{};                    // an image input (height, width, channels) instead of `in` features
    int64_t indices = 0;              // > 0: the input values are integer indices in [0, indices) (Embedding)
    bool weighted = false;            // each row's loss weighted by a sample weight in [0.2, 3)
    std::vector<Shape> inputs{};      // several inputs (layer input -1 - k is input k) instead of one

    Shape input_shape() const { return image.empty() ? Shape{in} : image; }
    std::vector<Shape> input_shapes() const { return inputs.empty() ? std::vector<Shape>{input_shape()} : inputs; }
};

struct Result {
    double worst_error = 0;
    double largest_gradient = 0;
    int64_t checked = 0;
};


// The mean loss over the batch and its gradient, from a fresh executor: every evaluation draws
// the same dropout mask (same seed, same optimizer step, same op).
inline double mean_loss(const TrainingProgram& program, const std::vector<double>& params, const std::vector<double>& x,
                 const std::vector<double>& y, int64_t rows, int64_t y_width, std::vector<double>* grads,
                 const std::vector<double>& weights = {}) {
    cpu::CpuExecutor<double> executor(program, rows, {}, y_width, kDropoutSeed);
    std::copy(params.begin(), params.end(), executor.params());
    // loss_and_gradients returns the sum over rows; gradients are of the mean (sum over batch size).
    const double loss = executor.loss_and_gradients(x.data(), y.data(), rows, weights.empty() ? nullptr : weights.data()) /
                        static_cast<double>(rows);
    if (grads) grads->assign(executor.grads(), executor.grads() + params.size());
    return loss;
}

inline Result check(const Problem& p, uint64_t seed = 1) {
    const TrainingProgram program = lower_model(p.input_shapes(), p.layers, p.loss, Adam(), {}, seed);
    const int64_t k = program.output_width;
    const int64_t y_width = p.y_width > 0 ? p.y_width : (p.labels == Labels::class_index ? 1 : k);
    Rng rng(seed * 7919 + 13);
    auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.uniform_double(); };

    std::vector<double> x(static_cast<size_t>(p.rows * program.input_width)), y(static_cast<size_t>(p.rows * y_width));
    for (double& v : x) v = p.indices > 0 ? static_cast<double>(rng.below(static_cast<uint64_t>(p.indices))) : uniform(-1, 1);
    for (int64_t r = 0; r < p.rows; ++r) {
        double* yr = y.data() + r * y_width;
        const int64_t cls = static_cast<int64_t>(rng.below(static_cast<uint64_t>(k)));
        double sum = 0;
        for (int64_t j = 0; j < y_width; ++j) {
            switch (p.labels) {
                case Labels::values: yr[j] = uniform(-1, 1); break;
                case Labels::probabilities: sum += (yr[j] = uniform(0.1, 1)); break;
                case Labels::one_hot: yr[j] = j == cls ? 1 : 0; break;
                case Labels::class_index: yr[j] = static_cast<double>(cls); break;
                case Labels::binary: yr[j] = rng.below(2) ? 1 : 0; break;
            }
        }
        if (p.labels == Labels::probabilities)
            for (int64_t j = 0; j < y_width; ++j) yr[j] /= sum;
    }

    std::vector<double> params(program.params.size());
    for (double& v : params) v = uniform(-0.5, 0.5);
    if (!std::isnan(p.last_bias)) {
        const DenseOp& last = program.ops.back().dense;
        for (int64_t j = 0; j < last.out; ++j) params[static_cast<size_t>(last.bias + j)] = p.last_bias;
    }

    std::vector<double> weights;
    if (p.weighted)
        for (int64_t r = 0; r < p.rows; ++r) weights.push_back(uniform(0.2, 3.0));
    std::vector<double> analytic;
    const double loss = mean_loss(program, params, x, y, p.rows, y_width, &analytic, weights);
    // A central difference carries rounding noise of about 1e-16 |loss| / kStep: the floor scales with it.
    const double floor = 1e-3 * std::max(1.0, std::fabs(loss));
    Result result;
    // Large (BLAS-sized) layers: every 7th parameter is plenty and keeps the test fast.
    const size_t stride = params.size() > 2000 ? 7 : 1;
    for (size_t i = 0; i < params.size(); i += stride) {
        std::vector<double> moved = params;
        moved[i] = params[i] + kStep;
        const double up = mean_loss(program, moved, x, y, p.rows, y_width, nullptr, weights);
        moved[i] = params[i] - kStep;
        const double down = mean_loss(program, moved, x, y, p.rows, y_width, nullptr, weights);
        const double numeric = (up - down) / (2 * kStep);
        const double scale = std::max(std::fabs(analytic[i]), std::fabs(numeric)) + floor;
        result.worst_error = std::max(result.worst_error, std::fabs(analytic[i] - numeric) / scale);
        result.largest_gradient = std::max(result.largest_gradient, std::fabs(analytic[i]));
        ++result.checked;
    }
    return result;
}

inline void expect_gradients_match(const Problem& p) {
    const Result r = check(p);
    EXPECT_LT(r.worst_error, kTolerance);
    EXPECT_GT(r.largest_gradient, 1e-3) << "the check is vacuous: every gradient is (nearly) zero";
    EXPECT_GT(r.checked, 0);
}

}  // namespace onefit::gradient_check
