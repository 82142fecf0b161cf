// Work accounting and the cost model's arithmetic, checked against sums done by hand.
#include <gtest/gtest.h>

#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

Sequential iris_model() {
    Sequential model({4}, 0);
    model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(0.1f), loss_from_name("log_cosh"));
    return model;
}

TEST(ExplainWork, StepWorkOfIrisModelMatchesHandCount) {
    // MACs/sample = 4*32 + 32*3 = 224; params = 4*32+32 + 32*3+3 = 259; batch 20.
    const StepWork w = step_work(iris_model(), 20);
    EXPECT_EQ(w.forward_macs_per_sample, 224);
    EXPECT_EQ(w.params, 259);
    EXPECT_EQ(w.dense_layers, 2);
    EXPECT_DOUBLE_EQ(w.forward_flops, 2.0 * 224 * 20);   // 8960
    EXPECT_DOUBLE_EQ(w.backward_flops, 2.0 * 8960);      // 17920
    EXPECT_DOUBLE_EQ(w.optimizer_flops, 10.0 * 259);     // 2590
    EXPECT_DOUBLE_EQ(w.flops, 8960 + 17920 + 2590);
    // Adam: params * (2 + 7) floats; activations: batch * (4 inputs + 3 * (32 + 3)).
    EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (259 * 9 + 20 * (4 + 3 * 35)));
    EXPECT_DOUBLE_EQ(w.blas_fraction, 0.0);  // Iris's layers stay in onefit's own kernels
}

TEST(ExplainWork, FitWorkCountsStepsValidationAndData) {
    const StepWork s = step_work(iris_model(), 20);
    const FitWork w = fit_work(s, 105, 45, 4, 20);
    EXPECT_EQ(w.steps, 6 * 20);               // ceil(105 / 20) = 6 per epoch
    EXPECT_EQ(w.validation_batches, 1 * 20);  // 45 rows: one default validation batch (>= 64 rows)
    EXPECT_EQ(w.dispatches, 120 + 20);
    EXPECT_EQ(w.layer_calls, 3 * 2 * 120 + 2 * 20);
    EXPECT_EQ(fit_work(s, 105, 45, 4, 20, -1, 20).validation_batches, 3 * 20);  // Keras's batches: 20, 20, 5
    EXPECT_DOUBLE_EQ(w.validation_flops, 2.0 * 224 * 45 * 20);
    EXPECT_DOUBLE_EQ(w.data_bytes, 4.0 * 150 * 5);
    // Forward + backward follow the 105 rows of each epoch (the last batch has 5), plus Adam per step.
    EXPECT_DOUBLE_EQ(w.flops, 105.0 * 20 * 6 * 224 + 120 * 2590.0 + w.validation_flops);
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

TEST(ExplainProjection, DatasheetProfilesAreMarkedAsEstimatesWithASource) {
    for (const DeviceProfile& g : datasheet_gpu_profiles()) {
        EXPECT_TRUE(g.estimate);
        EXPECT_EQ(g.device, Device::cuda);
        EXPECT_NE(g.source.find("datasheet"), std::string::npos);
    }
}

}  // namespace
}  // namespace onefit
