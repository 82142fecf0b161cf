// The cost model's GPU paths and the phase table's labels: a fit that fits one block runs as one
// persistent kernel and pays no per-step launches; a larger one pays per kernel node; a phase
// that is a measurement minus an estimate says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

Sequential compiled(const std::vector<int64_t>& widths, const char* optimizer = "adam") {
    Sequential model({widths.front()}, 0);
    for (size_t i = 1; i < widths.size(); ++i) model.add(Dense(widths[i], i + 1 == widths.size() ? "softmax" : "relu"));
    model.compile(optimizer, "sparse_categorical_crossentropy");
    return model;
}

// The seed's fit: 4-32-3, batch 20, 105 train and 45 validation rows, 20 epochs.
FitWork seed_work() { return fit_work(step_work(compiled({4, 32, 3}), 20), 105, 45, 4, 20); }

DeviceProfile h200() { return datasheet_gpu_profiles().front(); }

TEST(ExplainGpuPaths, PersistentStateOfTheSeedFitIsCountedByHand) {
    const FitWork w = seed_work();
    // Adam: params, grads, m, v = 259 * 4 floats; the largest batch is validation's one batch
    // of all 45 rows: 45 * (4 inputs + 1 label + 3 * (32 + 3)); per-thread scratch 256 * 9.
    const double floats = 259.0 * 4 + 45.0 * (4 + 1 + 3 * 35) + 256.0 * 9;
    EXPECT_DOUBLE_EQ(w.persistent_state_bytes, 4 * floats);
    // SGD keeps no slot: two floats per parameter fewer.
    const FitWork sgd = fit_work(step_work(compiled({4, 32, 3}, "sgd"), 20), 105, 45, 4, 20);
    EXPECT_DOUBLE_EQ(w.persistent_state_bytes - sgd.persistent_state_bytes, 4.0 * 259 * 2);
}

TEST(ExplainGpuPaths, TheSeedFitRunsAsOnePersistentKernelWithoutPerStepLaunches) {
    const DeviceProfile gpu = h200();
    const FitWork w = seed_work();
    ASSERT_LT(w.persistent_state_bytes, gpu.block_memory_bytes);
    const Projection p = project(gpu, w);
    EXPECT_EQ(p.path, "one persistent kernel");
    // One launch for the whole fit plus the block's barriers per step and validation batch.
    EXPECT_NEAR(p.overhead_seconds, gpu.launch_seconds + 140 * gpu.block_step_seconds, 1e-12);
    EXPECT_NEAR(p.compute_seconds, w.flops / gpu.block_flops_per_second, 1e-12);
    // Layer calls are not launches there: more of them change nothing.
    FitWork more_layers = w;
    more_layers.layer_calls *= 10;
    EXPECT_DOUBLE_EQ(project(gpu, more_layers).overhead_seconds, p.overhead_seconds);
    // Epoch lines make one launch per epoch.
    FitWork per_epoch = w;
    per_epoch.program_calls = 20;
    EXPECT_NEAR(project(gpu, per_epoch).overhead_seconds - p.overhead_seconds, 19 * gpu.launch_seconds, 1e-12);
}

TEST(ExplainGpuPaths, AFitTooLargeForOneBlockPaysPerKernelNode) {
    const DeviceProfile gpu = h200();
    const FitWork w = fit_work(step_work(compiled({784, 256, 10}), 128), 60000, 0, 784, 1);
    ASSERT_GT(w.persistent_state_bytes, gpu.block_memory_bytes);
    const Projection p = project(gpu, w);
    EXPECT_EQ(p.path, "CUDA graphs");
    EXPECT_NEAR(p.overhead_seconds,
                gpu.launch_seconds + double(w.dispatches) * gpu.step_overhead_seconds +
                    double(w.layer_calls) * gpu.call_overhead_seconds,
                1e-12);
    EXPECT_EQ(w.layer_calls, 3 * 2 * 469);  // ceil(60000 / 128) steps, two dense layers
}

TEST(ExplainGpuPaths, TheCpuIsAStepLoopWhateverTheWorkSize) {
    DeviceProfile cpu;
    cpu.step_overhead_seconds = 1e-6;
    const FitWork w = seed_work();
    const Projection p = project(cpu, w);
    EXPECT_EQ(p.path, "step loop");
    EXPECT_NEAR(p.overhead_seconds, 140 * 1e-6, 1e-15);
}

TEST(ExplainGpuPaths, ATinyFitIsNoLongerChargedPerStepLaunchesAgainstTheGpu) {
    // The seed's fit repeated over many epochs: with a per-step launch of 5 us (the old model)
    // the GPU could never catch up; with one launch and the block's barriers it costs
    // 2 us a dispatch, far under 3 launches per layer per step.
    const DeviceProfile gpu = h200();
    const FitWork w = fit_work(step_work(compiled({4, 32, 3}), 20), 105, 45, 4, 2000);
    const Projection p = project(gpu, w);
    const double old_overhead = double(w.dispatches) * 5e-6 + double(w.layer_calls) * 2e-6;
    EXPECT_LT(p.overhead_seconds, 0.5 * old_overhead);
}

TEST(ExplainPhases, EachPhaseSaysHowItsTimeWasObtained) {
    FitProfile fp;
    fp.device = "cpu";
    fp.prepare_seconds = 1e-3, fp.program_seconds = 5e-3, fp.validation_seconds = 1e-3, fp.steps = 120;
    DeviceProfile cpu;
    cpu.step_overhead_seconds = 1e-6;
    cpu.transfer_bytes_per_second = 1e9;
    const FitWork w = seed_work();
    const std::vector<Phase> phases = fit_phases(fp, CommandTimes{1e-3, 1e-3, 0, 8e-3}, w, cpu);
    auto find = [&](const std::string& name) {
        for (const Phase& p : phases)
            if (p.name == name) return p;
        ADD_FAILURE() << "no phase " << name;
        return Phase{};
    };
    EXPECT_EQ(find("program build").basis, PhaseBasis::measured_minus_estimate);
    EXPECT_EQ(find("compute").basis, PhaseBasis::measured_minus_estimate);
    EXPECT_EQ(find("dispatch overhead").basis, PhaseBasis::estimated);
    EXPECT_EQ(find("host->device transfer").basis, PhaseBasis::estimated);
    EXPECT_EQ(find("validation").basis, PhaseBasis::measured);
    // The remainders are what their names say: measured minus estimated.
    const double transfer = w.data_bytes / 1e9;
    EXPECT_NEAR(find("program build").seconds, 1e-3 - transfer, 1e-15);
    EXPECT_NEAR(find("compute").seconds, (5e-3 - 1e-3) - 120 * 1e-6, 1e-15);
    const std::string table = format_phase_table(phases);
    EXPECT_NE(table.find("measured minus estimate: training steps"), std::string::npos) << table;
}

TEST(ExplainPhases, JsonCarriesTheBasisAndTheProjectionPath) {
    ExplainReport r;
    FitProfile fp;
    fp.device = "cpu";
    fp.program_seconds = 1e-3;
    r.work = seed_work();
    r.phases = fit_phases(fp, CommandTimes{}, r.work, r.ran_on);
    r.projections = {project(h200(), r.work)};
    const nlohmann::json j = nlohmann::json::parse(explain_json(r));
    bool saw_remainder = false;
    for (const auto& phase : j["phases"]) {
        EXPECT_EQ(phase["measured"].get<bool>(), phase["basis"] == "measured") << phase.dump();
        saw_remainder |= phase["basis"] == "measured minus estimate";
    }
    EXPECT_TRUE(saw_remainder);
    EXPECT_EQ(j["projections"][0]["path"], "one persistent kernel");
}

}  // namespace
}  // namespace onefit
