// The CPU step loop allocates nothing after construction: every global operator new and
// delete is replaced here by a counting version, and epochs 1..19 of a fit (after one warm-up
// epoch) must not call them. The replacement is global for the whole test binary, so counting
// is switched on only inside the measured region.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "nn/metrics.hpp"
#include "onefit/onefit.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"
#include "runtime/cpu/cpu_fit.hpp"
#include "runtime/cpu/cpu_simd.hpp"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_news{0}, g_deletes{0}, g_bytes{0};

void* allocate(std::size_t size) {
    if (g_counting.load(std::memory_order_relaxed)) {
        g_news.fetch_add(1, std::memory_order_relaxed);
        g_bytes.fetch_add(static_cast<long>(size), std::memory_order_relaxed);
    }
    return std::malloc(size == 0 ? 1 : size);
}

void* allocate_aligned(std::size_t size, std::align_val_t alignment) {
    if (g_counting.load(std::memory_order_relaxed)) {
        g_news.fetch_add(1, std::memory_order_relaxed);
        g_bytes.fetch_add(static_cast<long>(size), std::memory_order_relaxed);
    }
    const std::size_t a = static_cast<std::size_t>(alignment);
    const std::size_t rounded = size == 0 ? a : (size + a - 1) / a * a;  // aligned_alloc wants a multiple
    return std::aligned_alloc(a, rounded);
}

void* allocate_or_throw(void* p) {
    if (!p) throw std::bad_alloc();
    return p;
}

void release(void* p) noexcept {
    if (!p) return;
    if (g_counting.load(std::memory_order_relaxed)) g_deletes.fetch_add(1, std::memory_order_relaxed);
    std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return allocate_or_throw(allocate(n)); }
void* operator new[](std::size_t n) { return allocate_or_throw(allocate(n)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate_or_throw(allocate_aligned(n, a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_or_throw(allocate_aligned(n, a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate_aligned(n, a);
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }

namespace onefit {
namespace {

struct Counts {
    long news = 0, deletes = 0, bytes = 0;
};

// Runs f with counting on and returns what it allocated and freed.
template <class F>
Counts count_allocations(F f) {
    g_news = 0;
    g_deletes = 0;
    g_bytes = 0;
    g_counting = true;
    f();
    g_counting = false;
    return {g_news.load(), g_deletes.load(), g_bytes.load()};
}

void* volatile g_sink = nullptr;

TEST(NoAllocation, TheCounterSeesAllocationsOfEveryKind) {
    const Counts c = count_allocations([] {
        g_sink = new int(1);
        delete static_cast<int*>(g_sink);
        g_sink = new (std::align_val_t{64}) double[3];
        ::operator delete[](g_sink, std::align_val_t{64});
        g_sink = new (std::nothrow) char[5];
        delete[] static_cast<char*>(g_sink);
        std::vector<float> v(100);
        g_sink = v.data();
    });
    EXPECT_EQ(c.news, 4);
    EXPECT_EQ(c.deletes, 4);
}

struct Case {
    Shape input;
    std::vector<Layer> layers;
    const char* loss;
    Optimizer optimizer;
    int64_t rows, batch_size;
    bool shuffle;
    int64_t steps_per_epoch = -1;
    bool weighted = false;  // sample weights on the training and validation rows
    std::vector<const char*> metrics = {"accuracy", "mae"};
    float label_smoothing = 0.0f;
    std::vector<Shape> inputs{};  // several inputs instead of `input` (layer input -1 - k: input k)
};

// Features from a smooth formula; class labels (N,) in [0, classes).
Tensor features(int64_t rows, int64_t width) {
    Tensor x({rows, width});
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * double(i)) + 0.1);
    return x;
}
Tensor labels(int64_t rows, int64_t classes) {
    Tensor y({rows});
    for (int64_t i = 0; i < rows; ++i) y[i] = static_cast<float>((i * 7) % classes);
    return y;
}

// Epochs 1..19 of a CpuFit built directly (as fit() builds it), after a warm-up epoch 0.
Counts steady_state_allocations(const Case& c) {
    Loss loss = loss_from_name(c.loss);
    loss.label_smoothing = c.label_smoothing;
    TrainingProgram program =
        lower_model(c.inputs.empty() ? std::vector<Shape>{c.input} : c.inputs, c.layers, loss, c.optimizer, {"accuracy", "mae"}, 1);
    const int64_t classes = program.output_width;
    const int64_t width = program.input_width;
    const Tensor x = features(c.rows, width), y = labels(c.rows, classes);
    const Tensor val_x = features(c.rows / 3 + 1, width), val_y = labels(c.rows / 3 + 1, classes);
    FitPlan plan;
    plan.x = FeatureView(x);
    plan.y = &y;
    plan.batch_size = c.batch_size;
    plan.shuffle = c.shuffle;
    plan.steps_per_epoch = c.steps_per_epoch;
    plan.epochs = 20;
    plan.seed = 5;
    plan.val_x = FeatureView(val_x);
    plan.val_y = &val_y;
    std::vector<float> weights(static_cast<size_t>(c.rows), 0.5f), val_weights(static_cast<size_t>(val_x.rows()), 2.0f);
    if (c.weighted) plan.sample_weight = weights.data(), plan.val_sample_weight = val_weights.data();
    plan.validation_batch_size = c.batch_size;
    plan.y_width = label_width(y);
    std::vector<nn::Metric> metrics;
    for (const char* name : c.metrics) metrics.push_back(nn::resolve_metric(name, classes, plan.y_width));
    cpu::CpuFit<float> fit(program, plan, metrics);
    fit.run_epochs(0, 1);
    const Counts counts = count_allocations([&] {
        fit.run_epochs(1, 10);
        // The pieces a live progress bar calls.
        for (int64_t epoch = 10; epoch < 20; ++epoch) {
            fit.begin_epoch(epoch);
            for (int64_t done = 0; done < fit.steps_in_epoch(); ++done) fit.train_steps(1);
            fit.end_epoch();
            g_sink = const_cast<EpochLog*>(&fit.logs()[static_cast<size_t>(epoch)]);
        }
    });
    // The measured epochs did the whole work: epoch 19 saw the rows its schedule holds (one pass,
    // or steps_per_epoch batches continuing across passes whose last batch is short) and every
    // validation row.
    int64_t expected_samples = c.rows;
    if (c.steps_per_epoch > 0) {
        const int64_t per_pass = (c.rows + c.batch_size - 1) / c.batch_size;
        expected_samples = 0;
        for (int64_t step = 19 * c.steps_per_epoch; step < 20 * c.steps_per_epoch; ++step)
            expected_samples += step % per_pass == per_pass - 1 ? c.rows - (per_pass - 1) * c.batch_size : c.batch_size;
    }
    EXPECT_EQ(fit.logs()[19].train.samples, expected_samples);
    EXPECT_EQ(fit.logs()[19].validation.samples, val_x.rows());
    return counts;
}

void expect_no_allocation(const Case& c) {
    const Counts counts = steady_state_allocations(c);
    EXPECT_EQ(counts.news, 0);
    EXPECT_EQ(counts.deletes, 0);
}

TEST(NoAllocation, SeedModelTrainsAndValidatesWithoutAllocating) {
    expect_no_allocation({.input = {4},
                          .layers = {Dense(32, "relu"), Dense(3, "softmax")},
                          .loss = "logcosh",
                          .optimizer = Adam(0.1f),
                          .rows = 105,
                          .batch_size = 20,
                          .shuffle = false});
}

TEST(NoAllocation, DropoutAndShufflingAllocateNothing) {
    expect_no_allocation({.input = {4},
                          .layers = {Dense(16, "relu"), Dropout(0.3f), Dense(3, "softmax")},
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = RMSprop(0.01f, 0.9f, 0.5f, 1e-7f, true),
                          .rows = 100,
                          .batch_size = 16,
                          .shuffle = true});
}

TEST(NoAllocation, StepsPerEpochAcrossShuffledPassesAllocatesNothing) {
    expect_no_allocation({.input = {4},
                          .layers = {Dense(8, "tanh"), Dense(3, "softmax")},
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = SGD(0.1f, 0.9f, true),
                          .rows = 50,
                          .batch_size = 8,
                          .shuffle = true,
                          .steps_per_epoch = 5});
}

TEST(NoAllocation, GradientClippingAllocatesNothing) {
    for (int rule = 0; rule < 3; ++rule) {
        Optimizer o = Adam(0.01f);
        (rule == 0 ? o.clipnorm : rule == 1 ? o.global_clipnorm : o.clipvalue) = 0.05f;
        expect_no_allocation({.input = {4},
                              .layers = {Dense(16, "relu"), Dense(3, "softmax")},
                              .loss = "sparse_categorical_crossentropy",
                              .optimizer = o,
                              .rows = 60,
                              .batch_size = 10,
                              .shuffle = true});
    }
}

TEST(NoAllocation, SampleWeightsAllocateNothing) {
    // Shuffled, so the batch's weights are gathered with its rows.
    expect_no_allocation({.input = {4},
                          .layers = {Dense(16, "relu"), Dense(3, "softmax")},
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = Adam(0.01f),
                          .rows = 60,
                          .batch_size = 10,
                          .shuffle = true,
                          .weighted = true});
}

TEST(NoAllocation, ALearningRateScheduleAllocatesNothing) {
    // The rate is worked out at every step from the schedule's plain values.
    Optimizer o = Adam();
    o.learning_rate_schedule = make_schedule("PiecewiseConstantDecay", {{"boundaries", std::vector<double>{10, 30}},
                                                                        {"values", std::vector<double>{0.01, 0.005, 0.001}}});
    Optimizer cosine = SGD();
    cosine.learning_rate_schedule = make_schedule("CosineDecay", {{"initial_learning_rate", 0.0}, {"decay_steps", int64_t{50}},
                                                                  {"warmup_target", 0.1}, {"warmup_steps", int64_t{5}}});
    for (const Optimizer& optimizer : {o, cosine})
        expect_no_allocation({.input = {4},
                              .layers = {Dense(16, "relu"), Dense(3, "softmax")},
                              .loss = "sparse_categorical_crossentropy",
                              .optimizer = optimizer,
                              .rows = 60,
                              .batch_size = 10,
                              .shuffle = true});
}

TEST(NoAllocation, BlasSizedLayersAllocateNothing) {
    const Case c{.input = {64},
                 .layers = {Dense(256, "relu"), Dense(10, "softmax")},
                 .loss = "sparse_categorical_crossentropy",
                 .optimizer = Adam(0.001f, 0.9f, 0.999f, 1e-7f, true),
                 .rows = 200,
                 .batch_size = 32,
                 .shuffle = true};
    ASSERT_TRUE(lower_sequential(c.input, c.layers, loss_from_name(c.loss), c.optimizer, {}, 0).ops[0].dense.use_blas);
    expect_no_allocation(c);
}

TEST(NoAllocation, ImageLayersAllocateNothing) {
    // im2col rows (small and BLAS-sized convolutions, a 1x1 one reading its input in place),
    // pooling's argmax, BatchNormalization's statistics, Flatten and Reshape all live in buffers
    // made at construction.
    const Case c{.input = {10, 10, 2},
                 .layers = {Conv2D(8, 3, 1, "same", "relu"), BatchNormalization(), MaxPooling2D(2),
                            Conv2D(16, 3, 1, "valid", "tanh"),
                            Conv2D(4, 1), AveragePooling2D(2, 1, "same"), Reshape({-1}), Flatten(), Dropout(0.2f),
                            Dense(3, "softmax")},
                 .loss = "sparse_categorical_crossentropy",
                 .optimizer = Adam(0.001f),
                 .rows = 120,
                 .batch_size = 48,  // enough images for im2col and pooling to split over the pool
                 .shuffle = true};
    ASSERT_TRUE(lower_sequential(c.input, c.layers, loss_from_name(c.loss), c.optimizer, {}, 0).ops[3].conv.use_blas);
    expect_no_allocation(c);
}

TEST(NoAllocation, LayersMadeFromTheirDeclarationsAllocateNothing) {
    // Conv1D (a Conv2D of height 1), the 1-D and global poolings, LayerNormalization and the
    // activation layers; then an Embedding (these features cast to indices 0 and 1).
    const auto made = [](const char* type, const LayerArguments& arguments = {}) { return make_layer(type, arguments); };
    expect_no_allocation({.input = {12, 3},
                          .layers = {made("conv1d", {{"filters", int64_t{8}}, {"kernel_size", int64_t{3}}}),
                                     made("leaky_relu"), made("layer_normalization"),
                                     made("max_pooling1d", {{"padding", std::string("same")}}),
                                     made("average_pooling1d", {{"pool_size", int64_t{2}}, {"strides", int64_t{1}}}),
                                     made("global_max_pooling1d"),
                                     made("relu", {{"max_value", 6.0}}), Dense(3), made("softmax")},
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = Adam(0.001f),
                          .rows = 60,
                          .batch_size = 16,
                          .shuffle = true});
    expect_no_allocation({.input = {6},
                          .layers = {made("embedding", {{"input_dim", int64_t{4}}, {"output_dim", int64_t{5}}}),
                                     made("global_average_pooling1d"),
                                     made("activation", {{"activation", std::string("tanh")}}), Dense(3, "softmax")},
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = Adam(0.001f),
                          .rows = 50,
                          .batch_size = 16,
                          .shuffle = true});
}

TEST(NoAllocation, RatioMetricsAllocateNothing) {
    // Precision, Recall, both AUCs and R2Score count into buffers the executor made.
    expect_no_allocation({.input = {4},
                          .layers = {Dense(8, "relu"), Dense(3, "softmax")},
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = Adam(0.01f),
                          .rows = 90,
                          .batch_size = 16,
                          .shuffle = true,
                          .metrics = {"precision", "recall", "auc", "pr=pr_auc", "r2_score", "f1_score(weighted)",
                                      "accuracy"}});
}

TEST(NoAllocation, EveryTrainingControlAtOnceAllocatesNothing) {
    // One model with all of issue 30's controls: a graph of two inputs, weight and activity
    // penalties, dropout, a schedule, clipping, weight decay, label smoothing, sample weights and the
    // ratio metrics.
    Optimizer o = AdamW();
    o.global_clipnorm = 1.0f;
    o.learning_rate_schedule = make_schedule("ExponentialDecay", {{"initial_learning_rate", 0.01},
                                                                   {"decay_steps", int64_t{10}}, {"decay_rate", 0.9}});
    Layer hidden = Dense(12, "relu");
    hidden.kernel_regularizer = {0.001f, 0.01f};
    hidden.activity_regularizer = {0.0f, 0.01f};
    Layer second = Flatten();
    second.inputs = {-2};  // input 1, (2, 2)
    Layer branch = Dense(12, "tanh");
    branch.inputs = {2};
    Layer sum = make_layer("add");
    sum.inputs = {1, 3};
    expect_no_allocation({.input = {6},
                          .layers = {hidden, Dropout(0.2f), second, branch, sum, Dense(1, "sigmoid")},
                          .loss = "binary_crossentropy",
                          .optimizer = o,
                          .rows = 80,
                          .batch_size = 16,
                          .shuffle = true,
                          .weighted = true,
                          .metrics = {"precision", "auc", "f1_score(macro, 0.5)", "accuracy"},
                          .label_smoothing = 0.1f,
                          .inputs = {{6}, {2, 2}}});
}

// A Functional graph: an output read by several ops (its gradient summed), a residual Add, a
// Concatenate with the model's input, Multiply, and a BLAS-sized product.
Layer with_inputs(Layer layer, std::vector<int32_t> inputs) {
    layer.inputs = std::move(inputs);
    return layer;
}

TEST(NoAllocation, FunctionalGraphsAllocateNothing) {
    expect_no_allocation({.input = {16},
                          .layers = {Dense(64, "relu"), Dense(64, "tanh"), with_inputs(make_layer("add"), {0, 1}),
                                     with_inputs(make_layer("concatenate"), {2, -1}), Dense(8, "sigmoid"),
                                     with_inputs(Dense(8), {-1}), with_inputs(make_layer("multiply"), {4, 5}),
                                     Dense(3, "softmax")},
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = Adam(0.001f),
                          .rows = 70,
                          .batch_size = 32,
                          .shuffle = true});
}

TEST(NoAllocation, SharedLayersAllocateNothing) {
    // One Dense called three times (two inputs and a chain link): its calls' gradients summed.
    std::vector<Layer> layers = {with_inputs(Dense(8, "tanh"), {-1})};
    layers.push_back(shared_call(layers, 0, {-2}));
    layers.push_back(shared_call(layers, 0, {1}));
    layers.push_back(with_inputs(make_layer("concatenate"), {0, 2}));
    layers.push_back(Dense(3, "softmax"));
    expect_no_allocation({.input = {},
                          .layers = layers,
                          .loss = "sparse_categorical_crossentropy",
                          .optimizer = Adam(0.001f),
                          .rows = 70,
                          .batch_size = 32,
                          .shuffle = true,
                          .inputs = {{8}, {8}}});
}

// The features are the bulk of a fit's data (MNIST: 188 MB): the whole fit, set-up included,
// reads the caller's x in place instead of copying it, validation_split's part too.
TEST(NoAllocation, StackedMembersAllocateNothingPerStep) {
    // Members in lanes (a sweep's stack) with dropout, each shuffling by its own seed, two of them
    // on other data (a k-fold's other fold), metrics and validation: 2 epochs and 20 allocate
    // the same (set-up and results only).
    const std::vector<Layer> layers = {Dense(16, "relu"), Dropout(0.3f), Dense(3, "softmax")};
    std::vector<TrainingProgram> programs;
    for (uint64_t seed = 0; seed < 5; ++seed)
        programs.push_back(lower_sequential({4}, layers, loss_from_name("sparse_categorical_crossentropy"), Adam(),
                                            {"accuracy"}, seed));
    const Tensor x = features(90, 4), y = labels(90, 3), val_x = features(31, 4), val_y = labels(31, 3);
    FitPlan plan;
    plan.x = FeatureView(x), plan.y = &y, plan.batch_size = 16, plan.shuffle = true, plan.epochs = 20;
    plan.val_x = FeatureView(val_x), plan.val_y = &val_y, plan.validation_batch_size = 16, plan.y_width = 1;
    ASSERT_TRUE(cpu::can_stack(programs[0], plan));
    const std::vector<nn::Metric> metrics = {nn::resolve_metric("accuracy", 3, 1)};
    std::vector<TrainingProgram*> members;
    for (TrainingProgram& p : programs) members.push_back(&p);
    const Tensor x2 = features(90, 4), y2 = labels(90, 3), val_x2 = features(31, 4), val_y2 = labels(31, 3);
    std::vector<FitPlan> plans(members.size(), plan);
    for (size_t i = 0; i < plans.size(); ++i) {
        plans[i].seed = i;
        if (i < 3) continue;
        plans[i].x = FeatureView(x2), plans[i].y = &y2, plans[i].val_x = FeatureView(val_x2), plans[i].val_y = &val_y2;
    }
    cpu::fit_stacked(members, plans, metrics, 0, 1);  // warm-up (the dispatch table, ...)
    const Counts two = count_allocations([&] { g_sink = cpu::fit_stacked(members, plans, metrics, 0, 2).data(); });
    const Counts twenty = count_allocations([&] { g_sink = cpu::fit_stacked(members, plans, metrics, 0, 20).data(); });
    EXPECT_GT(two.news, 0);  // the counter sees the set-up
    EXPECT_EQ(twenty.news, two.news);
    EXPECT_EQ(twenty.deletes, two.deletes);
}

TEST(NoAllocation, AFitDoesNotCopyTheCallersFeatures) {
    Tensor x({20000, 100}), y({20000});
    for (int64_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k % 97) / 97.0f;
    for (int64_t i = 0; i < y.rows(); ++i) y[i] = static_cast<float>(i % 3);
    Sequential model({100}, 1);
    model.add(Dense(8, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(), loss_from_name("sparse_categorical_crossentropy"));
    FitOptions o;
    o.batch_size = 500;
    o.verbose = 0;
    const long x_bytes = static_cast<long>(x.size() * sizeof(float));
    const Counts shuffled = count_allocations([&] { model.fit(x, y, o); });
    EXPECT_LT(shuffled.bytes, x_bytes / 4) << "allocated " << shuffled.bytes << " bytes for " << x_bytes << " of x";
    o.shuffle = false;
    const Counts in_order = count_allocations([&] { model.fit(x, y, o); });
    EXPECT_LT(in_order.bytes, x_bytes / 4);
    o.validation_split = 0.2;
    const Counts split = count_allocations([&] { model.fit(x, y, o); });
    EXPECT_LT(split.bytes, x_bytes / 4);
}

}  // namespace
}  // namespace onefit
