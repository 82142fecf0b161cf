// Work accounting and the cost model's arithmetic, checked against sums done by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

// A Dense layer as the tests build it: the cost model's counts follow from these shapes alone.
struct DenseShape {
    int64_t in, out;
    std::string activation;
    bool bias = true;
};

Sequential model_of(const std::vector<DenseShape>& layers, const Optimizer& optimizer, float dropout_after_first = 0) {
    Sequential model({layers.front().in}, 0);
    for (size_t i = 0; i < layers.size(); ++i) {
        model.add(Dense(layers[i].out, layers[i].activation, layers[i].bias));
        if (i == 0 && dropout_after_first > 0) model.add(Dropout(dropout_after_first));
    }
    model.compile(optimizer, loss_from_name("mse"));
    return model;
}

const std::vector<DenseShape> kIrisLayers = {{4, 32, "relu"}, {32, 3, "softmax"}};

Sequential iris_model() { return model_of(kIrisLayers, Adam(0.1f)); }

// Floats the update reads and writes per parameter, counted from the arrays it touches: the
// parameter and its gradient read, the parameter written, and each state slot the optimizer
// keeps (observed in the compiled program) read and written.
double update_floats_per_parameter(const Sequential& model) {
    const TrainingProgram& program = model.program();
    const double slots = double(program.optimizer_slots.size()) / double(program.param_count());
    return 3 + 2 * slots;
}

// docs/explain.md's cost model, counted here from the layer shapes and the batch.
struct HandCount {
    double macs = 0, first_layer_macs = 0, params = 0, activation_widths = 0, blas_macs = 0;
    double forward = 0, backward = 0, optimizer = 0, flops = 0, bytes = 0;
};

HandCount hand_count(const std::vector<DenseShape>& layers, double dropout_width, double update_floats, double batch) {
    HandCount c;
    c.first_layer_macs = double(layers.front().in * layers.front().out);
    for (const DenseShape& l : layers) {
        c.macs += double(l.in * l.out);                         // one multiply-add per weight and sample
        c.params += double(l.in * l.out) + (l.bias ? double(l.out) : 0);
        c.activation_widths += double(l.out);
        if (l.in * l.out >= 512) c.blas_macs += double(l.in * l.out);  // README: from 512 weights, LIBXSMM
    }
    c.activation_widths += dropout_width;       // a Dropout layer's output is an activation too
    c.forward = 2 * c.macs * batch;             // a multiply-add is 2 flops
    // dX and dW: two products the size of the forward one, but the first layer needs no dX.
    c.backward = 2 * c.forward - 2 * c.first_layer_macs * batch;
    c.optimizer = 10 * c.params;                // the model's flat figure per parameter
    c.flops = c.forward + c.backward + c.optimizer;
    // Per parameter: read forward and backward and its gradient written, then the update's
    // traffic. Per sample: the input read, each activation written forward, read backward, its
    // gradient written.
    const double input = double(layers.front().in);
    c.bytes = 4 * (c.params * (3 + update_floats) + batch * (input + 3 * c.activation_widths));
    return c;
}

TEST(ExplainWork, StepWorkOfIrisModelMatchesHandCount) {
    const Sequential model = iris_model();
    EXPECT_EQ(update_floats_per_parameter(model), 7);  // Adam: p, g, m, v read; p, m, v written
    const HandCount c = hand_count(kIrisLayers, 0, update_floats_per_parameter(model), 20);
    const StepWork w = step_work(model, 20);
    EXPECT_EQ(w.forward_macs_per_sample, c.macs);
    EXPECT_EQ(w.params, c.params);
    EXPECT_EQ(w.params, model.count_params());
    EXPECT_EQ(w.dense_layers, 2);
    EXPECT_DOUBLE_EQ(w.forward_flops, c.forward);
    EXPECT_DOUBLE_EQ(w.backward_flops, c.backward);
    EXPECT_DOUBLE_EQ(w.optimizer_flops, c.optimizer);
    EXPECT_DOUBLE_EQ(w.flops, c.flops);
    EXPECT_DOUBLE_EQ(w.bytes, c.bytes);
    EXPECT_DOUBLE_EQ(w.blas_fraction, 0.0);  // Iris's layers stay in onefit's own kernels
}

TEST(ExplainWork, StepWorkCountsDropoutActivationsBlasLayersAndEachOptimizersState) {
    // 16 -> 64 (1024 weights: BLAS), dropout, 64 -> 4, 4 -> 2 without bias.
    const std::vector<DenseShape> layers = {{16, 64, "relu"}, {64, 4, "tanh"}, {4, 2, "linear", false}};
    for (const Optimizer& optimizer : {SGD(0.1f), SGD(0.1f, 0.9f), Adam(), Adam(0.001f, 0.9f, 0.999f, 1e-7f, true),
                                       AdamW(), RMSprop(), RMSprop(0.001f, 0.9f, 0.5f, 1e-7f, true), Adagrad()}) {
        SCOPED_TRACE(optimizer_name(optimizer.kind));
        const Sequential model = model_of(layers, optimizer, 0.5f);
        const HandCount c = hand_count(layers, 64, update_floats_per_parameter(model), 32);
        const StepWork w = step_work(model, 32);
        EXPECT_EQ(w.forward_macs_per_sample, c.macs);
        EXPECT_EQ(w.params, c.params);
        EXPECT_EQ(w.dense_layers, 3);
        EXPECT_DOUBLE_EQ(w.flops, c.flops);
        EXPECT_DOUBLE_EQ(w.bytes, c.bytes);
        EXPECT_DOUBLE_EQ(w.blas_fraction, c.blas_macs / c.macs);
    }
}

TEST(ExplainWork, FitWorkCountsStepsValidationAndData) {
    const Sequential model = iris_model();
    const HandCount c = hand_count(kIrisLayers, 0, update_floats_per_parameter(model), 20);
    const StepWork s = step_work(model, 20);
    const FitWork w = fit_work(s, 105, 45, 4, 20);
    EXPECT_EQ(w.steps, 6 * 20);               // ceil(105 / 20) = 6 per epoch
    EXPECT_EQ(w.validation_batches, 1 * 20);  // 45 rows: one default validation batch (>= 64 rows)
    EXPECT_EQ(w.dispatches, 120 + 20);
    EXPECT_EQ(w.layer_calls, 3 * 2 * 120 + 2 * 20);
    EXPECT_EQ(fit_work(s, 105, 45, 4, 20, -1, 20).validation_batches, 3 * 20);  // Keras's batches: 20, 20, 5
    EXPECT_DOUBLE_EQ(w.validation_flops, 2.0 * c.macs * 45 * 20);  // forward only
    EXPECT_DOUBLE_EQ(w.data_bytes, 4.0 * 150 * 5);                 // 4 features + 1 label per row
    // Forward + backward follow the 105 rows of each epoch (the last batch has 5), plus Adam per step.
    EXPECT_DOUBLE_EQ(w.flops, 105.0 * 20 * (6 * c.macs - 2 * c.first_layer_macs) + 120 * c.optimizer + w.validation_flops);
    EXPECT_DOUBLE_EQ(w.bytes, 120 * s.bytes);
}

TEST(ExplainWork, StepsPerEpochOverridesOnePass) {
    const FitWork w = fit_work(step_work(iris_model(), 20), 105, 0, 4, 3, 10);
    EXPECT_EQ(w.steps, 30);
    EXPECT_EQ(w.validation_batches, 0);
}

TEST(ExplainProjection, TotalIsFixedPlusOverheadPlusComputeByHand) {
    DeviceProfile p;
    p.startup_seconds = 0.2;
    p.transfer_bytes_per_second = 1e9;
    p.step_overhead_seconds = 5e-6;
    p.call_overhead_seconds = 1e-6;
    p.flops_per_second = 1e9;
    p.blas_flops_per_second = 2e9;
    p.bytes_per_second = 1e10;
    FitWork w;
    w.data_bytes = 1e6;    // 1 ms
    w.dispatches = 100;    // 0.5 ms
    w.layer_calls = 300;   // 0.3 ms
    w.flops = 3e6;         // 2e6 small at 1e9 = 2 ms, 1e6 BLAS at 2e9 = 0.5 ms
    w.blas_flops = 1e6;
    w.bytes = 1e7;         // 1 ms
    const Projection r = project(p, w);
    EXPECT_NEAR(r.fixed_seconds, 0.2 + 1e-3, 1e-12);
    EXPECT_NEAR(r.overhead_seconds, 0.8e-3, 1e-12);
    EXPECT_NEAR(r.compute_seconds, 2e-3 + 0.5e-3 + 1e-3, 1e-12);
    EXPECT_NEAR(r.total_seconds, 0.201 + 0.8e-3 + 3.5e-3, 1e-12);
}

TEST(ExplainProjection, PickDeviceChoosesTheCpuWhenNoGpuIsPresent) {
    DeviceProfile cpu;
    cpu.present = true;
    cpu.flops_per_second = 1e6;  // absurdly slow: still the only device present
    std::vector<DeviceProfile> profiles = {cpu};
    for (DeviceProfile& g : datasheet_gpu_profiles()) {
        g.present = false;
        profiles.push_back(g);
    }
    FitWork big;
    big.flops = 1e15;
    big.steps = 10;
    EXPECT_EQ(pick_device(big, profiles), Device::cpu);
    if (!cuda_available()) {
        EXPECT_EQ(pick_device(big, device_profiles(cpu)), Device::cpu);
    }
}

TEST(ExplainProjection, PickDevicePrefersAPresentGpuForLargeWorkAndTheCpuForTiny) {
    DeviceProfile cpu;
    cpu.present = true;
    cpu.flops_per_second = cpu.blas_flops_per_second = 1e11;
    DeviceProfile gpu = datasheet_gpu_profiles().front();
    gpu.present = true;
    FitWork tiny;
    tiny.flops = 3.6e6;
    tiny.steps = tiny.dispatches = 120;
    EXPECT_EQ(pick_device(tiny, {cpu, gpu}), Device::cpu);
    FitWork large = tiny;
    large.flops = 1e14;
    EXPECT_EQ(pick_device(large, {cpu, gpu}), Device::cuda);
    const std::string reason = projection_reason(tiny, {project(cpu, tiny), project(gpu, tiny)});
    EXPECT_NE(reason.find("3.6 MFLOP in 120 steps"), std::string::npos) << reason;
    EXPECT_NE(reason.find("the CPU finishes in"), std::string::npos) << reason;
}

TEST(ExplainProjection, AGpuWhoseBackendCannotRunTheModelIsNeverPickedAndTheReasonSaysWhy) {
    Sequential convnet(Shape{8, 8, 1});
    convnet.add(Conv2D(4, 3, 1, "valid", "relu"));
    convnet.add(Flatten());
    convnet.add(Dense(3, "softmax"));
    convnet.compile("adam", "sparse_categorical_crossentropy");
    FitWork large = fit_work(step_work(convnet, 32), 1'000'000, 0, 64, 100);
    EXPECT_EQ(large.step.gpu_unsupported, "the CUDA backend runs Dense and Dropout layers only, not Conv2D ('conv2d')");
    DeviceProfile cpu;
    cpu.present = true;
    cpu.flops_per_second = cpu.blas_flops_per_second = 1e6;  // slow enough that a GPU would win
    DeviceProfile gpu = datasheet_gpu_profiles().front();
    gpu.present = true;
    const Projection on_gpu = project(gpu, large);
    EXPECT_FALSE(on_gpu.supported);
    EXPECT_NE(on_gpu.path.find("not supported"), std::string::npos);
    EXPECT_EQ(pick_device(large, {cpu, gpu}), Device::cpu);
    const std::string reason = projection_reason(large, {project(cpu, large), on_gpu});
    EXPECT_NE(reason.find("the CPU runs it"), std::string::npos) << reason;
    // The same work on a Dense model goes to the GPU.
    large.step.gpu_unsupported.clear();
    EXPECT_EQ(pick_device(large, {cpu, gpu}), Device::cuda);
    // ... unless it has more layers than the CUDA backend runs.
    Sequential deep(Shape{4});
    for (int i = 0; i < 17; ++i) deep.add(Dense(4, "relu"));
    deep.compile("adam", "mse");
    EXPECT_EQ(step_work(deep, 8).gpu_unsupported, "the CUDA backend runs at most 16 layers, the model has 17");
}

TEST(ExplainWork, TheNonProductOpsMovedValuesAreCountedPerSampleAndCostTheirCalibratedRate) {
    Sequential convnet(Shape{6, 6, 1});
    convnet.add(Conv2D(4, 3));        // im2col: 4x4 pixels x 9 values; the first op has no col2im
    convnet.add(MaxPooling2D(2));     // in 64 + out 16 + 64 window reads; backward in + out
    convnet.add(Flatten());           // 16 in, 16 out, both ways
    convnet.add(Dense(2, "softmax"));
    convnet.compile("sgd", "sparse_categorical_crossentropy");
    const StepWork step = step_work(convnet, 8);
    EXPECT_EQ(step.moved_values_forward, 144 + 144 + 32);
    EXPECT_EQ(step.moved_values_backward, 80 + 32);
    const FitWork work = fit_work(step, 40, 10, 36, 3);
    EXPECT_EQ(work.moved_values, 40.0 * 3 * (320 + 112) + 10.0 * 3 * 320);
    DeviceProfile cpu;
    cpu.flops_per_second = cpu.blas_flops_per_second = cpu.bytes_per_second = 1e30;  // only moved values cost
    cpu.moved_values_per_second = 1e6;
    EXPECT_NEAR(project(cpu, work).compute_seconds, work.moved_values / 1e6, 1e-9);
    // A Dense model moves nothing of the kind.
    EXPECT_EQ(step_work(iris_model(), 20).moved_values_forward, 0);
}

TEST(ExplainProjection, DatasheetProfilesAreMarkedAsEstimatesWithASource) {
    for (const DeviceProfile& g : datasheet_gpu_profiles()) {
        EXPECT_TRUE(g.estimate);
        EXPECT_EQ(g.device, Device::cuda);
        EXPECT_NE(g.source.find("datasheet"), std::string::npos);
    }
}

}  // namespace
}  // namespace onefit
