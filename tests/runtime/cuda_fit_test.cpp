// The CUDA backend against the CPU reference: same seeded fit, same batches, same weights to
// within float rounding. Skipped (not passed) where no GPU is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "onefit/onefit.hpp"
#include "runtime/cuda/cuda_fit.hpp"

namespace onefit {
namespace {

#define SKIP_WITHOUT_GPU()                                             \
    do {                                                               \
        std::string why;                                               \
        if (!cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;  \
    } while (0)

struct FitResult {
    std::vector<Tensor> weights;
    History history;
};

FitResult fit_on(Device device, const std::vector<Layer>& layers, const Tensor& x, const Tensor& y, const Loss& loss,
                 const Optimizer& optimizer, FitOptions options, std::vector<std::string> metrics = {}) {
    Sequential model({x.row_width()}, 7);
    for (const Layer& l : layers) model.add(l);
    model.compile(optimizer, loss, CompileOptions{metrics});
    options.device = device;
    FitResult r;
    r.history = model.fit(x, y, options);
    r.weights = model.get_weights();
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

TEST(CudaFit, SeedFitMatchesTheCpuWithinFloatRounding) {
    SKIP_WITHOUT_GPU();
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.3, false);
    const std::vector<Layer> layers = {Dense(32, "relu"), Dense(3, "softmax")};
    const FitResult cpu = fit_on(Device::cpu, layers, d.x_train, d.y_train, loss_from_name("log_cosh"), Adam(0.1f),
                                 seed_options(d));
    const FitResult gpu = fit_on(Device::cuda, layers, d.x_train, d.y_train, loss_from_name("log_cosh"), Adam(0.1f),
                                 seed_options(d));
    EXPECT_LE(max_relative_difference(cpu.weights, gpu.weights), 1e-4);
    EXPECT_NEAR(cpu.history["val_loss"].back(), gpu.history["val_loss"].back(), 1e-4);
}

TEST(CudaFit, TheWholeSeedFitIsOneKernelLaunch) {
    SKIP_WITHOUT_GPU();
    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.3, false);
    const long long before = cuda::kernel_launches();
    fit_on(Device::cuda, {Dense(32, "relu"), Dense(3, "softmax")}, d.x_train, d.y_train, loss_from_name("log_cosh"),
           Adam(0.1f), seed_options(d));
    EXPECT_LE(cuda::kernel_launches() - before, 2);
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

TEST(CudaFit, ModelsTooLargeForSharedMemoryUseTheGraphPathAndMatchTheCpu) {
    SKIP_WITHOUT_GPU();
    const int64_t n = 512, features = 784;
    Tensor x({n, features}), y({n});
    for (int64_t i = 0; i < x.size(); ++i) x[i] = float((i * 2654435761u) % 1000) / 1000.0f;
    for (int64_t i = 0; i < n; ++i) y[i] = float(i % 10);
    FitOptions o;
    o.batch_size = 128;
    o.epochs = 2;
    o.verbose = 0;
    const std::vector<Layer> layers = {Dense(256, "relu"), Dense(10, "softmax")};
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    const FitResult cpu = fit_on(Device::cpu, layers, x, y, loss, Adam(1e-3f), o);
    const FitResult gpu = fit_on(Device::cuda, layers, x, y, loss, Adam(1e-3f), o);
    EXPECT_LE(max_relative_difference(cpu.weights, gpu.weights), 1e-3);
    EXPECT_NEAR(cpu.history["loss"].back(), gpu.history["loss"].back(), 1e-4);
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
