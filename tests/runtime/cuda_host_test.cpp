// The CUDA backend's host-side decisions, checked without a GPU: where each buffer lives (every
// cuBLASLt operand 256-byte aligned, nothing overlapping), which graph a stretch of steps
// replays and how many graphs a fit can hold, the schedule lookups both kernel paths share,
// and the per-row loss the kernels compute against the CPU's batch loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/losses.hpp"
#include "program/batch_schedule.hpp"
#include "runtime/cuda/device_layout.hpp"
#include "runtime/cuda/device_model.hpp"
#include "runtime/cuda/graph_cache.hpp"

namespace onefit::cuda {
namespace {

// Every region starts at a multiple of 256 bytes, no two overlap, and all lie inside the total.
void expect_aligned_and_disjoint(const DeviceLayout& layout) {
    std::vector<LayoutRegion> r = layout.regions();
    for (const LayoutRegion& a : r) {
        EXPECT_EQ(a.offset % kDeviceAlignment, 0u) << a.name << " (op " << a.op << ") at " << a.offset;
        EXPECT_LE(a.offset + a.bytes, layout.total_bytes()) << a.name;
    }
    std::sort(r.begin(), r.end(), [](const LayoutRegion& a, const LayoutRegion& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < r.size(); ++i)
        EXPECT_LE(r[i - 1].offset + r[i - 1].bytes, r[i].offset) << r[i - 1].name << " overlaps " << r[i].name;
}

struct Shape {
    int64_t params, max_rows, x_width, y_width;
    std::vector<int64_t> widths;
};

// MNIST's 784-256-10 (203,530 parameters: the old unrounded layout left its activations 8-byte
// aligned), Iris, odd widths everywhere, and a Dropout between equal widths.
const Shape kShapes[] = {{784 * 256 + 256 + 256 * 10 + 10, 128, 784, 1, {256, 10}},
                         {4 * 32 + 32 + 32 * 3 + 3, 20, 4, 1, {32, 3}},
                         {13 * 7 + 7 + 7 * 5 + 5, 33, 13, 5, {7, 7, 5}},
                         {1, 1, 1, 1, {1}},
                         {3 * 1001 + 1001 + 1001 * 3 + 3, 97, 3, 3, {1001, 1001, 3}}};

TEST(CudaLayout, GraphBuffersAreEach256ByteAlignedAndDisjoint) {
    for (const Shape& s : kShapes) {
        const GraphBufferLayout g = graph_buffer_layout(s.params, s.max_rows, s.x_width, s.y_width, s.widths);
        SCOPED_TRACE("x width " + std::to_string(s.x_width));
        expect_aligned_and_disjoint(g.layout);
        ASSERT_EQ(g.z.size(), s.widths.size());
        EXPECT_EQ(g.layout.regions().size(), 3 + 3 * s.widths.size());
        for (const LayoutRegion& r : g.layout.regions()) {  // each buffer as large as its contents
            const int64_t width = r.op >= 0 ? s.widths[size_t(r.op)] : 0;
            const std::string name = r.name;
            const int64_t floats = name == "grads"     ? s.params
                                   : name == "batch_x" ? s.max_rows * s.x_width
                                   : name == "batch_y" ? s.max_rows * s.y_width
                                                       : s.max_rows * width;
            EXPECT_EQ(r.bytes, size_t(floats) * sizeof(float)) << name;
        }
    }
}

TEST(CudaLayout, TheArenaIsEach256ByteAlignedAndDisjoint) {
    const ArenaCounts counts[] = {{60000 * 784, 60000, 6 * 60000, 6 * 469, 6 * 469, 7, 0, 0, 0, 203530, 2 * 203530, 6},
                                  {105 * 4, 105, 20 * 105, 20 * 6, 20 * 6, 21, 45 * 4, 45, 1, 259, 518, 20},
                                  {3, 1, 1, 1, 1, 2, 0, 0, 0, 1, 0, 1}};
    for (const ArenaCounts& c : counts) {
        const ArenaLayout a = arena_layout(c, sizeof(EpochLog));
        expect_aligned_and_disjoint(a.layout);
        EXPECT_EQ(a.layout.regions().size(), 13u);
        for (size_t offset : {a.x, a.y, a.order, a.params, a.slots, a.step, a.logs}) EXPECT_EQ(offset % 256, 0u);
    }
}

TEST(CudaLayout, AnAddressAlignmentIsItsLargestPowerOfTwoUpTo256) {
    alignas(256) static float block[512];
    EXPECT_EQ(address_alignment(block), 256u);
    EXPECT_EQ(address_alignment(block + 1), 4u);
    EXPECT_EQ(address_alignment(block + 2), 8u);
    EXPECT_EQ(address_alignment(block + 4), 16u);
    EXPECT_EQ(address_alignment(block + 128), 256u);  // 512 bytes: capped at 256
    EXPECT_EQ(address_alignment(block + 784 * 256 % 512), 256u);
}

// Keys for each epoch of a fit's schedule, as CudaFit builds them.
std::vector<GraphKey> epoch_keys(const FitPlan& plan, int64_t rows) {
    BatchSchedule schedule(plan, rows);
    std::vector<GraphKey> keys;
    for (int64_t e = 0; e < plan.epochs; ++e) {
        GraphKey k{{}, true};
        for (int64_t s = schedule.begin_epoch(); s > 0; --s) k.batch_rows.push_back(int32_t(schedule.next_batch().count));
        keys.push_back(k);
    }
    return keys;
}

TEST(CudaGraphs, ShuffledEpochsOfAnArrayShareOneGraph) {
    const Tensor x({1000, 2}), y({1000});
    FitPlan plan;
    plan.x = FeatureView(x);
    plan.y = &y;
    plan.batch_size = 128;
    plan.epochs = 6;
    plan.shuffle = true;
    const std::vector<GraphKey> keys = epoch_keys(plan, 1000);
    for (const GraphKey& k : keys) EXPECT_EQ(k, keys[0]);
    EXPECT_EQ(keys[0].batch_rows.size(), 8u);
    EXPECT_EQ(keys[0].batch_rows.back(), 1000 - 7 * 128);
}

TEST(CudaGraphs, AProgressBarsChunksNeedAtMostThreeGraphs) {
    std::vector<int32_t> rows(10 * 469, 128);  // MNIST: 469 steps per epoch, the last of 96 rows
    for (size_t e = 0; e < 10; ++e) rows[e * 469 + 468] = 96;
    std::vector<GraphKey> distinct;
    for (int64_t e = 0; e < 10; ++e) {
        const int64_t first = e * 469, steps = 469, chunk = std::max<int64_t>(1, steps / 30);  // as fit.cpp
        for (int64_t done = 0; done < steps; done += chunk) {
            const GraphKey k = graph_key(rows, first + done, first + std::min(steps, done + chunk), false);
            if (std::find(distinct.begin(), distinct.end(), k) == distinct.end()) distinct.push_back(k);
        }
    }
    EXPECT_LE(distinct.size(), 3u);
}

TEST(CudaGraphs, TheCacheHoldsAtMostItsCapacityAndEvictsTheLeastRecentlyUsed) {
    GraphCache<int> cache(2);
    auto key = [](int32_t rows) { return GraphKey{{rows, rows}, false}; };
    EXPECT_EQ(cache.find(key(1)), nullptr);
    EXPECT_FALSE(cache.insert(key(1), 10).has_value());
    EXPECT_FALSE(cache.insert(key(2), 20).has_value());
    ASSERT_NE(cache.find(key(1)), nullptr);  // 1 used after 2: 2 is the least recent
    EXPECT_EQ(*cache.find(key(1)), 10);
    const std::optional<int> evicted = cache.insert(key(3), 30);
    ASSERT_TRUE(evicted.has_value());
    EXPECT_EQ(*evicted, 20);
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(cache.find(key(2)), nullptr);
    for (int32_t i = 4; i < 100; ++i) cache.insert(key(i), i);  // a Dataset whose every epoch differs
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_NE(cache.find(GraphKey{{99, 99}, false}), nullptr);
    EXPECT_EQ(cache.find(GraphKey{{99, 99}, true}), nullptr);  // validation is part of the key
}

TEST(CudaSchedule, EpochOfStepSkipsTheEpochsBeforeTheInitialOne) {
    const int64_t first_step[] = {0, 0, 0, 3, 5, 9};  // initial_epoch 2; epochs of 3, 2, 4 steps
    EXPECT_EQ(epoch_of_step(first_step, 0), 2);
    EXPECT_EQ(epoch_of_step(first_step, 2), 2);
    EXPECT_EQ(epoch_of_step(first_step, 3), 3);
    EXPECT_EQ(epoch_of_step(first_step, 4), 3);
    EXPECT_EQ(epoch_of_step(first_step, 8), 4);
}

TEST(CudaSchedule, BatchElementGathersRowsInTheScheduledOrder) {
    const float data[] = {0, 1, 10, 11, 20, 21, 30, 31};  // 4 rows of 2
    const int32_t order[] = {3, 0, 2};
    const float want[] = {30, 31, 0, 1, 20, 21};
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(batch_element(data, 2, order, i), want[i]);
}

// The kernels' per-row loss (nn::sample_loss, one row per thread) against the CPU's batch
// function, in double: every kind, probabilities and logits.
TEST(CudaLoss, SampleLossAgreesWithTheCpusBatchLossForEveryKind) {
    const int64_t rows = 5, w = 3;
    std::vector<double> p(rows * w), onehot(rows * w, 0.0), labels(rows);
    for (int64_t i = 0; i < rows * w; ++i) p[size_t(i)] = 0.1 + 0.8 * double((i * 7) % 11) / 11.0;
    for (int64_t r = 0; r < rows; ++r) labels[size_t(r)] = double(r % w), onehot[size_t(r * w + r % w)] = 1.0;
    const LossKind kinds[] = {LossKind::log_cosh, LossKind::mean_squared_error, LossKind::mean_absolute_error,
                              LossKind::huber, LossKind::binary_crossentropy, LossKind::categorical_crossentropy,
                              LossKind::sparse_categorical_crossentropy};
    for (const LossKind kind : kinds)
        for (const bool logits : {false, true}) {
            if (logits && kind != LossKind::binary_crossentropy && !nn::is_row_loss(kind)) continue;
            Loss loss;
            loss.kind = kind;
            loss.delta = 0.3f;
            const bool sparse = kind == LossKind::sparse_categorical_crossentropy;
            const std::vector<double>& y = sparse ? labels : onehot;
            const int64_t y_width = sparse ? 1 : w;
            std::vector<double> g_cpu(rows * w), g_row(rows * w);
            const double cpu = nn::loss_forward_backward<true>(loss, logits, p.data(), y.data(), rows, w, y_width,
                                                               g_cpu.data(), 1.0 / rows);
            double sum = 0;
            for (int64_t r = 0; r < rows; ++r)
                sum += nn::sample_loss(loss, logits, p.data() + r * w, y.data() + r * y_width, w, g_row.data() + r * w,
                                       1.0 / rows);
            SCOPED_TRACE(loss_name(kind) + (logits ? " (logits)" : ""));
            EXPECT_NEAR(sum, cpu, 1e-12);
            for (size_t i = 0; i < g_cpu.size(); ++i) EXPECT_NEAR(g_row[i], g_cpu[i], 1e-12) << i;
        }
}

TEST(CudaLoss, ARowLossIsNotAnElementwiseLoss) {
    Loss loss;
    loss.kind = LossKind::categorical_crossentropy;
    EXPECT_TRUE(std::isnan(nn::elementwise_loss(loss, false, 0.5, 1.0).value));
}

TEST(CudaDropout, RateZeroAndInferenceKeepEveryElementUnscaled) {
    for (uint64_t i = 0; i < 1000; ++i) {
        EXPECT_EQ(nn::dropout_mask(true, 0.0f, nn::dropout_keep_scale<float>(0.0f), 42, i), 1.0f);
        EXPECT_EQ(nn::dropout_mask(false, 0.5f, nn::dropout_keep_scale<float>(0.5f), 42, i), 1.0f);
        const float m = nn::dropout_mask(true, 0.5f, nn::dropout_keep_scale<float>(0.5f), 42, i);
        EXPECT_TRUE(m == 0.0f || m == 2.0f);
    }
}

TEST(CudaSoftmax, TheRowFunctionsAreTheBatchFunctionsRowByRow) {
    const double z[] = {0.5, -1.0, 2.0, 3.0, 3.0, -7.0};
    double batch[6], row[6], g_batch[6] = {1, 2, 3, -1, 0, 4}, g_row[6] = {1, 2, 3, -1, 0, 4};
    nn::activation_forward(Activation::softmax, z, batch, 2, 3);
    for (int r = 0; r < 2; ++r) nn::softmax_row(z + 3 * r, row + 3 * r, int64_t(3));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(row[i], batch[i]);
    nn::activation_backward(Activation::softmax, z, batch, g_batch, 2, 3);
    for (int r = 0; r < 2; ++r) nn::softmax_backward_row(row + 3 * r, g_row + 3 * r, int64_t(3));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(g_row[i], g_batch[i]);
}

}  // namespace
}  // namespace onefit::cuda
