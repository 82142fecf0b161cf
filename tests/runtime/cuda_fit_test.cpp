// The CUDA backend against the CPU reference: same seeded fit, same batches, same weights to
// within float rounding; launch counts observed with CUPTI. Skipped (not passed) where no GPU
// is visible. Host-side parts that need no GPU are in cuda_host_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "onefit/onefit.hpp"
#include "runtime/cuda/cuda_fit.hpp"
#ifdef ONEFIT_HAVE_CUPTI
#include "runtime/cupti_launches.hpp"
#endif

namespace onefit {
namespace {

#define SKIP_WITHOUT_GPU()                                             \
    do {                                                               \
        std::string why;                                               \
        if (!cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;  \
    } while (0)

#ifdef ONEFIT_HAVE_CUPTI
using test_support::CuptiLaunches;
using test_support::LaunchCounts;
#define SKIP_WITHOUT_CUPTI() (void)0
#else
struct LaunchCounts {
    long long kernels = 0, graphs = 0;
    LaunchCounts operator-(const LaunchCounts&) const { return {}; }
};
struct CuptiLaunches {
    static CuptiLaunches& instance() { static CuptiLaunches c; return c; }
    LaunchCounts counts() const { return {}; }
};
#define SKIP_WITHOUT_CUPTI() GTEST_SKIP() << "built without CUPTI (CUDA::cupti not found)"
#endif

struct FitResult {
    std::vector<Tensor> weights;
    History history;
    int64_t optimizer_step = 0;
};

Sequential make_model(const std::vector<Layer>& layers, int64_t features, const Loss& loss, const Optimizer& optimizer,
                      std::vector<std::string> metrics = {}) {
    Sequential model({features}, 7);
    for (const Layer& l : layers) model.add(l);
    model.compile(optimizer, loss, CompileOptions{metrics});
    return model;
}

FitResult fit_on(Device device, const std::vector<Layer>& layers, const Tensor& x, const Tensor& y, const Loss& loss,
                 const Optimizer& optimizer, FitOptions options, std::vector<std::string> metrics = {}) {
    Sequential model = make_model(layers, x.row_width(), loss, optimizer, metrics);
    options.device = device;
    FitResult r;
    r.history = model.fit(x, y, options);
    r.weights = model.get_weights();
    r.optimizer_step = model.program().optimizer_step;
    return r;
}

double max_relative_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    double worst = 0;
    for (size_t t = 0; t < a.size(); ++t)
        for (int64_t i = 0; i < a[t].size(); ++i) {
            const double d = std::fabs(double(a[t][i]) - double(b[t][i]));
            worst = std::max(worst, d / std::max(1e-3, std::fabs(double(a[t][i]))));
        }
    return worst;
}

FitOptions seed_options(const TrainTestSplit& d) {
    FitOptions o;
    o.batch_size = 20;
    o.epochs = 20;
    o.verbose = 0;
    o.shuffle = false;
    o.validation_data = {d.x_test, d.y_test};
    return o;
}

TrainTestSplit iris_split() {
    const LabeledData iris = load_iris();
    return train_test_split(iris.x, iris.y, 0.3, false);
}

// MNIST-shaped data, 784 features, 10 classes: the 784-256-10 model does not fit in one
// block's shared memory, so it runs on the graph path.
struct Mnistish {
    Tensor x{{512, 784}}, y{{512}};
    Mnistish() {
        for (int64_t i = 0; i < x.size(); ++i) x[i] = float((i * 2654435761u) % 1000) / 1000.0f;
        for (int64_t i = 0; i < y.size(); ++i) y[i] = float(i % 10);
    }
};
const std::vector<Layer> kMnistLayers = {Dense(256, "relu"), Dense(10, "softmax")};

FitOptions mnist_options() {
    FitOptions o;
    o.batch_size = 128;
    o.epochs = 2;
    o.verbose = 0;
    return o;
}

TEST(CudaFit, SeedFitMatchesTheCpuWithinFloatRounding) {
    SKIP_WITHOUT_GPU();
    const TrainTestSplit d = iris_split();
    const std::vector<Layer> layers = {Dense(32, "relu"), Dense(3, "softmax")};
    const FitResult cpu = fit_on(Device::cpu, layers, d.x_train, d.y_train, loss_from_name("log_cosh"), Adam(0.1f),
                                 seed_options(d));
    const FitResult gpu = fit_on(Device::cuda, layers, d.x_train, d.y_train, loss_from_name("log_cosh"), Adam(0.1f),
                                 seed_options(d));
    EXPECT_LE(max_relative_difference(cpu.weights, gpu.weights), 1e-4);
    EXPECT_NEAR(cpu.history["val_loss"].back(), gpu.history["val_loss"].back(), 1e-4);
}

TEST(CudaFit, TheWholeSeedFitIsOneKernelLaunchAsCuptiSeesIt) {
    SKIP_WITHOUT_GPU();
    SKIP_WITHOUT_CUPTI();
    const TrainTestSplit d = iris_split();
    Sequential model = make_model({Dense(32, "relu"), Dense(3, "softmax")}, 4, loss_from_name("log_cosh"), Adam(0.1f));
    FitOptions o = seed_options(d);
    o.device = Device::cuda;
    const LaunchCounts before = CuptiLaunches::instance().counts();
    model.fit(d.x_train, d.y_train, o);
    const LaunchCounts n = CuptiLaunches::instance().counts() - before;
    EXPECT_EQ(n.kernels, 1);
    EXPECT_EQ(n.graphs, 0);
}

TEST(CudaFit, SweepMembersRunInOneLaunchEachAsItsFitAlone) {
    // Learning rates x seeds of the seed's model, each member shuffling by its own seed, with
    // dropout and validation: one kernel launch for all of them (a block each), and every
    // member's weights and History the bits of its configuration fitted alone on the GPU.
    SKIP_WITHOUT_GPU();
    const TrainTestSplit d = iris_split();
    FitOptions o = seed_options(d);
    o.shuffle = true, o.epochs = 6, o.device = Device::cuda;
    Sequential layers({4});
    layers.add(Dense(32, "relu")).add(Dropout(0.1f)).add(Dense(3, "softmax"));
    const SweepGrid grid{{0.01f, 0.1f}, {1, 2, 3}};
    const LaunchCounts before = CuptiLaunches::instance().counts();
    const std::vector<SweepMember> members = sweep(layers, Adam(), loss_from_name("log_cosh"),
                                                   CompileOptions{{"accuracy"}}, d.x_train, d.y_train, o, grid);
    [[maybe_unused]] const LaunchCounts n = CuptiLaunches::instance().counts() - before;
#ifdef ONEFIT_HAVE_CUPTI
    EXPECT_EQ(n.kernels, 1);
#endif
    ASSERT_EQ(members.size(), 6u);
    for (const SweepMember& m : members) {
        Sequential alone({4}, m.seed);
        alone.add(Dense(32, "relu")).add(Dropout(0.1f)).add(Dense(3, "softmax"));
        alone.compile(Adam(m.learning_rate), loss_from_name("log_cosh"), CompileOptions{{"accuracy"}});
        const History h = alone.fit(d.x_train, d.y_train, o);
        EXPECT_EQ(h.history, m.history.history) << m.learning_rate << " " << m.seed;
        const std::vector<Tensor> w = alone.get_weights();
        ASSERT_EQ(w.size(), m.weights.size());
        for (size_t t = 0; t < w.size(); ++t)
            EXPECT_EQ(std::memcmp(w[t].data(), m.weights[t].data(), size_t(w[t].size()) * sizeof(float)), 0)
                << m.learning_rate << " " << m.seed << " tensor " << t;
    }
}

TEST(CudaFit, ShuffledDropoutFitWithMetricsMatchesTheCpu) {
    SKIP_WITHOUT_GPU();
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.3, true, 3);
    FitOptions o = seed_options(d);
    o.shuffle = true;
    o.verbose = 2;  // one launch per epoch, logs read back each time
    const std::vector<Layer> layers = {Dense(16, "tanh"), Dropout(0.25f), Dense(3, "softmax")};
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    std::ostringstream quiet;
    o.out = &quiet;
    const FitResult cpu = fit_on(Device::cpu, layers, d.x_train, d.y_train, loss, RMSprop(0.01f), o, {"accuracy"});
    const FitResult gpu = fit_on(Device::cuda, layers, d.x_train, d.y_train, loss, RMSprop(0.01f), o, {"accuracy"});
    EXPECT_LE(max_relative_difference(cpu.weights, gpu.weights), 1e-4);
    EXPECT_EQ(cpu.history["val_accuracy"], gpu.history["val_accuracy"]);
}

TEST(CudaFit, TheMnistShapedModelOnTheGraphPathMatchesTheCpu) {
    SKIP_WITHOUT_GPU();
    const Mnistish m;
    FitOptions o = mnist_options();
    o.validation_data = {m.x, m.y};
    o.validation_batch_size = 100;  // a last validation batch of 12 rows: operands at odd offsets
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    const FitResult cpu = fit_on(Device::cpu, kMnistLayers, m.x, m.y, loss, Adam(1e-3f), o, {"accuracy"});
    const FitResult gpu = fit_on(Device::cuda, kMnistLayers, m.x, m.y, loss, Adam(1e-3f), o, {"accuracy"});
    EXPECT_LE(max_relative_difference(cpu.weights, gpu.weights), 1e-3);
    EXPECT_NEAR(cpu.history["loss"].back(), gpu.history["loss"].back(), 1e-4);
    EXPECT_NEAR(cpu.history["val_loss"].back(), gpu.history["val_loss"].back(), 1e-4);
    EXPECT_EQ(cpu.optimizer_step, gpu.optimizer_step);
}

TEST(CudaFit, TheGraphPathIsOneGraphLaunchPerEpochAndNoKernelLaunches) {
    SKIP_WITHOUT_GPU();
    SKIP_WITHOUT_CUPTI();
    const Mnistish m;
    FitOptions o = mnist_options();
    o.epochs = 3;
    o.validation_data = {m.x, m.y};  // the epoch's graph validates too
    o.device = Device::cuda;
    Sequential model = make_model(kMnistLayers, 784, loss_from_name("sparse_categorical_crossentropy"), Adam(1e-3f));
    const LaunchCounts before = CuptiLaunches::instance().counts();
    model.fit(m.x, m.y, o);
    const LaunchCounts n = CuptiLaunches::instance().counts() - before;
    EXPECT_EQ(n.graphs, o.epochs);
    EXPECT_EQ(n.kernels, 0);
}

// Verbose 1 and a callback make the host look after every epoch: still graphs, one for the
// epoch's steps (and one for the validation, when there is one), never eager kernels.
TEST(CudaFit, AProgressBarAndACallbackStillRunGraphs) {
    SKIP_WITHOUT_GPU();
    SKIP_WITHOUT_CUPTI();
    const Mnistish m;
    for (const bool validation : {false, true}) {
        FitOptions o = mnist_options();
        o.epochs = 3;
        o.verbose = 1;
        std::ostringstream quiet;  // not a terminal: one chunk per epoch
        o.out = &quiet;
        LambdaCallback looks;
        looks.epoch_end = [](int64_t, const Logs&) {};
        o.callbacks = {&looks};
        if (validation) o.validation_data = {m.x, m.y};
        o.device = Device::cuda;
        Sequential model =
            make_model(kMnistLayers, 784, loss_from_name("sparse_categorical_crossentropy"), Adam(1e-3f));
        const LaunchCounts before = CuptiLaunches::instance().counts();
        model.fit(m.x, m.y, o);
        const LaunchCounts n = CuptiLaunches::instance().counts() - before;
        EXPECT_EQ(n.graphs, o.epochs * (validation ? 2 : 1)) << "validation " << validation;
        EXPECT_EQ(n.kernels, 0) << "validation " << validation;
    }
}

// Dropout(0.0) on the graph path: the backward multiplies by the mask, which must be written
// (all ones), not left as whatever the buffer held.
TEST(CudaFit, DropoutOfRateZeroOnTheGraphPathMatchesTheCpu) {
    SKIP_WITHOUT_GPU();
    const Mnistish m;
    const std::vector<Layer> layers = {Dense(256, "relu"), Dropout(0.0f), Dense(10, "softmax")};
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    const FitResult cpu = fit_on(Device::cpu, layers, m.x, m.y, loss, Adam(1e-3f), mnist_options());
    const FitResult gpu = fit_on(Device::cuda, layers, m.x, m.y, loss, Adam(1e-3f), mnist_options());
    EXPECT_LE(max_relative_difference(cpu.weights, gpu.weights), 1e-3);
    EXPECT_NEAR(cpu.history["loss"].back(), gpu.history["loss"].back(), 1e-4);
}

TEST(CudaFit, DropoutOnTheGraphPathDrawsTheCpusMask) {
    SKIP_WITHOUT_GPU();
    const Mnistish m;
    const std::vector<Layer> layers = {Dense(256, "relu"), Dropout(0.3f), Dense(10, "softmax")};
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    FitOptions o = mnist_options();
    o.shuffle = true;
    const FitResult cpu = fit_on(Device::cpu, layers, m.x, m.y, loss, Adam(1e-3f), o);
    const FitResult gpu = fit_on(Device::cuda, layers, m.x, m.y, loss, Adam(1e-3f), o);
    EXPECT_LE(max_relative_difference(cpu.weights, gpu.weights), 1e-3);
}

// SGD with a huge learning rate overflows: the fit stops after the first epoch whose loss is
// not finite, on both paths, and the History, the step count and the CPU's agree.
TEST(CudaFit, ANonFiniteLossStopsTheFitAfterThatEpochAsOnTheCpu) {
    SKIP_WITHOUT_GPU();
    const TrainTestSplit d = iris_split();
    const Mnistish m;
    struct Case {
        const char* path;
        std::vector<Layer> layers;
        const Tensor &x, &y;
        int64_t batch_size;
    };
    const Case cases[] = {{"persistent kernel", {Dense(32, "relu"), Dense(3, "linear")}, d.x_train, d.y_train, 20},
                          {"graph", {Dense(256, "relu"), Dense(10, "linear")}, m.x, m.y, 128}};
    for (const Case& c : cases)
        for (const int verbose : {0, 2}) {  // one call for the fit, or one per epoch
            FitOptions o;
            o.batch_size = c.batch_size;
            o.epochs = 8;
            o.verbose = verbose;
            std::ostringstream quiet;
            o.out = &quiet;
            const FitResult cpu = fit_on(Device::cpu, c.layers, c.x, c.y, loss_from_name("mse"), SGD(1e6f), o);
            const FitResult gpu = fit_on(Device::cuda, c.layers, c.x, c.y, loss_from_name("mse"), SGD(1e6f), o);
            SCOPED_TRACE(std::string(c.path) + ", verbose " + std::to_string(verbose));
            ASSERT_LT(cpu.history["loss"].size(), size_t(o.epochs)) << "the CPU fit should have stopped";
            EXPECT_EQ(gpu.history["loss"].size(), cpu.history["loss"].size());
            EXPECT_FALSE(std::isfinite(gpu.history["loss"].back()));
            EXPECT_EQ(gpu.history.epoch, cpu.history.epoch);
            EXPECT_EQ(gpu.optimizer_step, cpu.optimizer_step);
        }
}

// A callback's set_weights at an epoch's end reaches the device before the next epoch.
TEST(CudaFit, WeightsACallbackSetsTakeEffectAsOnTheCpu) {
    SKIP_WITHOUT_GPU();
    const TrainTestSplit d = iris_split();
    const Mnistish m;
    struct Case {
        std::vector<Layer> layers;
        const Tensor &x, &y;
        int64_t batch_size;
    };
    const Case cases[] = {{{Dense(32, "relu"), Dense(3, "softmax")}, d.x_train, d.y_train, 20},
                          {kMnistLayers, m.x, m.y, 128}};
    for (const Case& c : cases) {
        auto fit = [&](Device device) {
            Sequential model =
                make_model(c.layers, c.x.row_width(), loss_from_name("sparse_categorical_crossentropy"), Adam(1e-3f));
            LambdaCallback halve;
            halve.epoch_end = [&model](int64_t epoch, const Logs&) {
                if (epoch != 1) return;
                std::vector<Tensor> w = model.get_weights();
                for (Tensor& t : w)
                    for (float& v : t.values()) v *= 0.5f;
                model.set_weights(w);
            };
            FitOptions o;
            o.batch_size = c.batch_size;
            o.epochs = 4;
            o.verbose = 0;
            o.callbacks = {&halve};
            o.device = device;
            const History h = model.fit(c.x, c.y, o);
            return std::pair(model.get_weights(), h["loss"]);
        };
        const auto [cpu_weights, cpu_loss] = fit(Device::cpu);
        const auto [gpu_weights, gpu_loss] = fit(Device::cuda);
        EXPECT_LE(max_relative_difference(cpu_weights, gpu_weights), 1e-3) << "input width " << c.x.row_width();
        for (size_t e = 0; e < cpu_loss.size(); ++e) EXPECT_NEAR(cpu_loss[e], gpu_loss[e], 1e-3) << "epoch " << e;
    }
}

// The device refuses a loss it does not compute when the fit is set up, before it looks for a
// GPU, instead of computing another loss.
TEST(CudaFit, ALossTheDeviceDoesNotComputeIsAnErrorAtConstruction) {
#ifndef ONEFIT_HAVE_CUDA
    GTEST_SKIP() << "built without the CUDA backend";
#else
    Sequential model = make_model({Dense(3, "linear")}, 4, loss_from_name("mse"), Adam(1e-3f));
    TrainingProgram& program = model.program_state();
    program.loss.kind = static_cast<LossKind>(99);  // a kind this build's kernels do not know
    const Tensor x({8, 4}, 0.5f), y({8, 3}, 1.0f);
    FitPlan plan;
    plan.x = FeatureView(x);
    plan.y = &y;
    plan.y_width = 3;
    try {
        cuda::make_cuda_fit(program, plan, {});
        FAIL() << "an unknown loss must be refused";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("loss"), std::string::npos) << e.what();
    }
#endif
}

TEST(CudaFit, WithoutAGpuASweepOnCudaIsAnErrorNamingAMember) {
    std::string why;
    if (cuda_available(&why)) GTEST_SKIP() << "a GPU is visible";
    Sequential layers({4});
    layers.add(Dense(3, "softmax"));
    FitOptions o;
    o.device = Device::cuda;
    o.verbose = 0;
    try {
        sweep(layers, Adam(), loss_from_name("mse"), {}, Tensor({2, 4}, 0.5f), Tensor({2}, 1.0f), o,
              SweepGrid{{0.01f, 0.1f}, {}});
        FAIL() << "a sweep on a missing GPU must throw";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("sweep member 0 ("), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
    }
}

TEST(CudaFit, WithoutAGpuTheErrorSaysSoAndNamesTheCpuDevice) {
    std::string why;
    if (cuda_available(&why)) GTEST_SKIP() << "a GPU is visible";
    Sequential model({4});
    model.add(Dense(3, "softmax"));
    model.compile("adam", "sparse_categorical_crossentropy");
    FitOptions o;
    o.device = Device::cuda;
    o.verbose = 0;
    try {
        model.fit(Tensor({2, 4}, 0.5f), Tensor({2}, 1.0f), o);
        FAIL() << "fit on a missing GPU must throw";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace onefit
