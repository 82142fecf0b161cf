// Work accounting: flops and bytes of one step and of a whole fit (formulas in explain.hpp).
#include <algorithm>

#include "onefit/explain.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"
#include "runtime/cuda/device_model.hpp"

namespace onefit {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

StepWork step_work(int64_t forward_macs_per_sample, int64_t first_layer_macs_per_sample, int64_t params,
                   int64_t dense_layers, int64_t input_width, int64_t activation_width, int optimizer_slots,
                   int64_t batch_size) {
    StepWork w;
    w.batch_size = batch_size;
    w.params = params;
    w.forward_macs_per_sample = forward_macs_per_sample;
    w.first_layer_macs_per_sample = first_layer_macs_per_sample;
    w.dense_layers = dense_layers;
    w.input_width = input_width;
    w.activation_width = activation_width;
    w.optimizer_slots = optimizer_slots;
    const double b = static_cast<double>(batch_size);
    w.forward_flops = 2.0 * static_cast<double>(forward_macs_per_sample) * b;
    w.backward_flops = 2.0 * w.forward_flops - 2.0 * static_cast<double>(first_layer_macs_per_sample) * b;
    w.optimizer_flops = 10.0 * static_cast<double>(params);
    w.flops = w.forward_flops + w.backward_flops + w.optimizer_flops;
    // Parameters read forward and backward, gradients written (3); the update reads p and g,
    // writes p, and reads and writes each slot (3 + 2 * slots).
    const double param_floats = static_cast<double>(params) * (6.0 + 2.0 * optimizer_slots);
    const double activation_floats = b * static_cast<double>(input_width + 3 * activation_width);
    w.bytes = 4.0 * (param_floats + activation_floats);
    return w;
}

StepWork step_work(const Sequential& model, int64_t batch_size) {
    const TrainingProgram& program = model.program();
    int64_t dense = 0, activations = 0, blas_macs = 0, first_macs = 0;
    std::string gpu_unsupported;
    double moved_forward = 0, moved_backward = 0;
    for (size_t i = 0; i < program.ops.size(); ++i) {
        const ProgramOp& op = program.ops[i];
        activations += op.out_width;
        if (!op.has_product()) {  // its input and output, and a window op's reads (its macs_per_sample)
            moved_forward += static_cast<double>(op.in_width + op.out_width + op.spec.macs_per_sample);
            moved_backward += static_cast<double>(op.in_width + op.out_width);
        } else if (op.kind == Layer::Kind::Conv2D && !op.conv.identity_patches) {  // im2col, col2im
            const double patches = static_cast<double>(op.spec.window.out_h * op.spec.window.out_w * op.conv.patch);
            moved_forward += patches;
            if (i > 0) moved_backward += patches;
        }
        if (op.kind != Layer::Kind::Dense && op.kind != Layer::Kind::Dropout && gpu_unsupported.empty())
            gpu_unsupported = "the CUDA backend runs Dense and Dropout layers only, not " +
                              layer_class_name(op.layer.kind) + " ('" + op.layer_name + "')";
        if (!op.has_product()) continue;  // Dense and Conv2D: pooling and reshaping cost no products
        if (dense++ == 0) first_macs = op.spec.macs_per_sample;
        if (op.kind == Layer::Kind::Dense ? op.dense.use_blas : op.conv.use_blas) blas_macs += op.spec.macs_per_sample;
    }
    const int slots = static_cast<int>(program.optimizer_slots.size() / std::max<size_t>(1, program.params.size()));
    StepWork w = step_work(program.forward_macs_per_sample(), first_macs, program.param_count(), dense,
                           program.input_width, activations, slots, batch_size);
    if (gpu_unsupported.empty() && program.ops.back().kind != Layer::Kind::Dense)
        gpu_unsupported = "the CUDA backend needs a Dense last layer, not '" + program.ops.back().layer_name + "'";
    if (gpu_unsupported.empty() && program.ops.size() > static_cast<size_t>(cuda::kMaxOps))
        gpu_unsupported = "the CUDA backend runs at most " + std::to_string(cuda::kMaxOps) + " layers, the model has " +
                          std::to_string(program.ops.size());
    w.gpu_unsupported = gpu_unsupported;
    w.moved_values_forward = moved_forward;
    w.moved_values_backward = moved_backward;
    w.blas_fraction = static_cast<double>(blas_macs) / static_cast<double>(std::max<int64_t>(1, w.forward_macs_per_sample));
    return w;
}

FitWork fit_work(const StepWork& step, int64_t train_rows, int64_t validation_rows, int64_t input_width,
                 int64_t epochs, int64_t steps_per_epoch, int64_t validation_batch_size) {
    FitWork w;
    w.step = step;
    w.epochs = epochs;
    const int64_t batch = std::max<int64_t>(1, std::min(step.batch_size, train_rows));
    const int64_t per_epoch = steps_per_epoch > 0 ? steps_per_epoch : ceil_div(train_rows, batch);
    w.steps = per_epoch * epochs;
    w.validation_rows = validation_rows;
    const int64_t val_batch = validation_batch_rows(validation_batch_size, step.batch_size);
    w.validation_batches = validation_rows > 0 ? ceil_div(validation_rows, val_batch) * epochs : 0;
    w.validation_flops = 2.0 * static_cast<double>(step.forward_macs_per_sample) * static_cast<double>(validation_rows) *
                         static_cast<double>(epochs);
    w.data_bytes = 4.0 * static_cast<double>(train_rows + validation_rows) * static_cast<double>(input_width + 1);
    // The last batch of a pass may be short; flops follow the rows, not the nominal batch.
    const double rows_trained = steps_per_epoch > 0 ? static_cast<double>(w.steps * batch)
                                                    : static_cast<double>(train_rows * epochs);
    const double fb_per_row = (step.forward_flops + step.backward_flops) / static_cast<double>(std::max<int64_t>(1, step.batch_size));
    w.flops = rows_trained * fb_per_row + static_cast<double>(w.steps) * step.optimizer_flops + w.validation_flops;
    w.blas_flops = step.blas_fraction * (w.flops - static_cast<double>(w.steps) * step.optimizer_flops);
    w.bytes = static_cast<double>(w.steps) * step.bytes;
    w.moved_values = rows_trained * (step.moved_values_forward + step.moved_values_backward) +
                     static_cast<double>(validation_rows * epochs) * step.moved_values_forward;
    w.dispatches = w.steps + w.validation_batches;
    w.layer_calls = 3 * step.dense_layers * w.steps + step.dense_layers * w.validation_batches;
    // As src/runtime/cuda's tiny layout: parameters, gradients and slots; one batch's input,
    // labels (one float a row, as sparse labels) and each op's z, a and da; per-thread scratch.
    const int64_t rows = std::max(batch, validation_rows > 0 ? std::min(val_batch, validation_rows) : 0);
    const double floats = static_cast<double>(step.params) * static_cast<double>(2 + step.optimizer_slots) +
                          static_cast<double>(rows) * static_cast<double>(step.input_width + 1 + 3 * step.activation_width) +
                          256.0 * 9;
    w.persistent_state_bytes = 4.0 * floats;
    return w;
}

}  // namespace onefit
