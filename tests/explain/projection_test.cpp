// The cost model's GPU paths and the phase table's labels: a fit that fits one block runs as one
// persistent kernel and pays no per-step launches; a larger one pays per kernel node; a phase
// that is a measurement minus an estimate says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/thread_pool.hpp"
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

// A CPU whose seed fit costs exactly 100 us and nothing fixed (a step-overhead-only profile).
DeviceProfile hundred_us_cpu() {
    DeviceProfile cpu;
    cpu.name = "cpu";
    cpu.startup_seconds = 0, cpu.transfer_bytes_per_second = 1e30;
    cpu.step_overhead_seconds = 100e-6 / 140, cpu.flops_per_second = 1e30, cpu.bytes_per_second = 1e30;
    return cpu;
}

TEST(ExplainSweep, MembersRunPerThreadOnTheCpuAndPerMultiprocessorOnTheGpuInOneLaunch) {
    const FitWork w = seed_work();
    const DeviceProfile cpu = hundred_us_cpu(), gpu = h200();
    const int64_t threads = ThreadPool::configured_threads();
    // The CPU: ceil(members / threads) fits one after another, nothing fixed.
    EXPECT_NEAR(sweep_seconds(cpu, w, 1), 100e-6, 1e-12);
    EXPECT_NEAR(sweep_seconds(cpu, w, 10 * threads + 1), 11 * 100e-6, 1e-12);
    // The GPU: start-up and transfer once, then one wave of 132 members per member's time.
    const Projection one = project(gpu, w);
    const double member = one.overhead_seconds + one.compute_seconds;
    EXPECT_NEAR(sweep_seconds(gpu, w, 132), one.fixed_seconds + member, 1e-12);
    EXPECT_NEAR(sweep_seconds(gpu, w, 133), one.fixed_seconds + 2 * member, 1e-12);
    // Epoch lines do not count: sweeps are silent, one program call per member.
    FitWork verbose = w;
    verbose.program_calls = 20;
    EXPECT_DOUBLE_EQ(sweep_seconds(gpu, verbose, 1000), sweep_seconds(gpu, w, 1000));
}

TEST(ExplainSweep, TheCrossoverIsTheFirstMemberCountWhereTheGpuIsAhead) {
    const FitWork w = seed_work();
    const DeviceProfile cpu = hundred_us_cpu(), gpu = h200();
    const int64_t n = sweep_crossover(cpu, gpu, w);
    ASSERT_GT(n, 1);
    EXPECT_LT(sweep_seconds(gpu, w, n), sweep_seconds(cpu, w, n));
    EXPECT_GE(sweep_seconds(gpu, w, n - 1), sweep_seconds(cpu, w, n - 1));
    // By hand: the GPU's 200 ms start-up against what the CPU saves per member.
    const double per_member_gap = 100e-6 / double(ThreadPool::configured_threads());
    EXPECT_GT(double(n), 0.2 / per_member_gap);
    // A CPU as fast as the GPU per member never falls behind; the CPU itself has no crossover.
    DeviceProfile instant = cpu;
    instant.step_overhead_seconds = 0;
    EXPECT_EQ(sweep_crossover(instant, gpu, w), -1);
    const std::vector<SweepProjection> p = project_sweep({cpu, gpu}, w, 10000);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].crossover, 0);
    EXPECT_EQ(p[1].crossover, n);
    EXPECT_EQ(p[1].at_once, 132);
    const std::string text = sweep_projection_text(p, 10000);
    EXPECT_NE(text.find("ahead of the CPU from " + std::to_string(n) + " members"), std::string::npos) << text;
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
