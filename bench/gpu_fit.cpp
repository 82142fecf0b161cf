// GPU figures for bench/gpu_check.sh: the seed's fit on the GPU (device time by CUDA events,
// launches per fit as CUPTI observes them), the MNIST-shaped MLP's throughput, and the CPU/GPU
// weight agreement.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "onefit/onefit.hpp"
#include "runtime/cuda/cuda_fit.hpp"
#ifdef ONEFIT_HAVE_CUPTI
#include "runtime/cupti_launches.hpp"
#endif

using namespace onefit;

namespace {

// Kernel and graph launches so far, observed with CUPTI; {-1, -1} when built without it.
std::pair<long long, long long> launches_so_far() {
#ifdef ONEFIT_HAVE_CUPTI
    const test_support::LaunchCounts c = test_support::CuptiLaunches::instance().counts();
    return {c.kernels, c.graphs};
#else
    return {-1, -1};
#endif
}

double median(std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

Sequential seed_model(uint64_t seed) {
    Sequential model({4}, seed);
    model.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(0.1f), loss_from_name("log_cosh"));
    return model;
}

}  // namespace

int main(int argc, char** argv) {
    const int runs = argc > 1 ? std::atoi(argv[1]) : 200;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string gpu = cuda_device_description();  // the first CUDA call creates the context
    const double startup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::string why;
    if (!cuda_available(&why)) {
        std::printf("# no GPU: %s\n", why.c_str());
        return 1;
    }
    std::printf("# gpu: %s\n", gpu.c_str());
    std::printf("gpu_context_startup_ms: %.1f ms\n", startup_ms);

    const LabeledData iris = load_iris();
    const TrainTestSplit d = train_test_split(iris.x, iris.y, 0.30, false);
    FitOptions o;
    o.batch_size = 20;
    o.epochs = 20;
    o.verbose = 0;
    o.shuffle = false;
    o.validation_data = {d.x_test, d.y_test};
    o.device = Device::cuda;

    std::vector<double> device_us, wall_us;
    long long kernels = 0, graphs = 0;
    launches_so_far();  // subscribe before the first fit
    for (int i = 0; i < runs; ++i) {
        Sequential model = seed_model(uint64_t(i));
        const double ms0 = cuda::device_milliseconds();
        const auto [k0, g0] = launches_so_far();
        const auto w0 = std::chrono::steady_clock::now();
        model.fit(d.x_train, d.y_train, o);
        wall_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - w0).count());
        device_us.push_back((cuda::device_milliseconds() - ms0) * 1e3);
        const auto [k1, g1] = launches_so_far();
        kernels = k1 - k0, graphs = g1 - g0;
    }
    std::printf("# seed fit on the GPU: Iris 105/45, 4-32-3, Adam(0.1), log_cosh, batch 20, 20 epochs + validation; %d runs\n", runs);
    std::printf("gpu_iris_fit_us: %.1f us\n", median(device_us));
    std::printf("gpu_iris_fit_wall_us: %.1f us\n", median(wall_us));
    if (launches_so_far().first < 0) {
        std::printf("# gpu_iris_launches: not observed (built without CUPTI)\n");
    } else {
        std::printf("# launches as CUPTI sees them: kernel launches + graph launches\n");
        std::printf("gpu_iris_launches: %lld launches\n", kernels + graphs);
    }

    // The same seeded fit on both devices.
    double worst = 0;
    {
        Sequential cpu = seed_model(42), gpu_model = seed_model(42);
        FitOptions oc = o;
        oc.device = Device::cpu;
        cpu.fit(d.x_train, d.y_train, oc);
        gpu_model.fit(d.x_train, d.y_train, o);
        const std::vector<Tensor> a = cpu.get_weights(), b = gpu_model.get_weights();
        for (size_t t = 0; t < a.size(); ++t)
            for (int64_t i = 0; i < a[t].size(); ++i)
                worst = std::max(worst, std::fabs(double(a[t][i]) - double(b[t][i])) /
                                            std::max(1e-6, std::fabs(double(a[t][i]))));
    }
    std::printf("gpu_cpu_max_rel_diff: %.3g\n", worst);

    // Issue 14's sweep on the GPU: 1000 seed-shaped members (10 learning rates x 100 seeds) in
    // one launch, a block each (target: <= 5 ms of device time), beside the CPU's stacked sweep.
    {
        SweepGrid grid;
        for (int i = 0; i < 10; ++i) grid.learning_rates.push_back(0.001f * float(1 << i));
        for (uint64_t s = 0; s < 100; ++s) grid.seeds.push_back(s);
        Sequential layers({4});
        layers.add(Dense(32, "relu")).add(Dense(3, "softmax"));
        FitOptions oc = o;
        oc.device = Device::cpu;
        std::vector<double> gpu_device_ms, gpu_wall_ms, cpu_wall_ms;
        long long sweep_kernels = -1;
        for (int r = 0; r < 3; ++r) {
            const double ms0 = cuda::device_milliseconds();
            const auto [k0, g0] = launches_so_far();
            auto t0 = std::chrono::steady_clock::now();
            sweep(layers, Adam(), loss_from_name("log_cosh"), {}, d.x_train, d.y_train, o, grid);
            gpu_wall_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            gpu_device_ms.push_back(cuda::device_milliseconds() - ms0);
            if (k0 >= 0) sweep_kernels = launches_so_far().first - k0;
            t0 = std::chrono::steady_clock::now();
            sweep(layers, Adam(), loss_from_name("log_cosh"), {}, d.x_train, d.y_train, oc, grid);
            cpu_wall_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::printf("# sweep: 1000 seed-shaped members (10 learning rates x 100 seeds), 20 epochs + validation, 3 rounds\n");
        std::printf("gpu_sweep_1000_iris_device_ms: %.2f ms (target <= 5)\n", median(gpu_device_ms));
        std::printf("gpu_sweep_1000_iris_wall_ms: %.1f ms (set-up, uploads and read-back included)\n", median(gpu_wall_ms));
        std::printf("cpu_sweep_1000_iris_ms: %.1f ms (stacked, this machine's cores)\n", median(cpu_wall_ms));
        if (sweep_kernels >= 0) std::printf("gpu_sweep_1000_iris_launches: %lld kernel launches\n", sweep_kernels);
    }

    // The MNIST-shaped MLP.
    const int64_t n = 60000;
    Tensor x({n, 784}), y({n});
    uint64_t s = 1;
    for (float& v : x.values()) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = float(s >> 40) * (1.0f / 16777216.0f);
    }
    for (int64_t i = 0; i < n; ++i) y[i] = float(i % 10);
    Sequential mlp({784}, 1);
    mlp.add(Dense(256, "relu")).add(Dense(10, "softmax"));
    mlp.compile(Adam(1e-3f), loss_from_name("sparse_categorical_crossentropy"));
    FitOptions om;
    om.batch_size = 128;
    om.epochs = 6;
    om.verbose = 0;
    om.device = Device::cuda;
    std::vector<double> epoch_s;
    LambdaCallback timer;
    auto last = std::chrono::steady_clock::now();
    timer.epoch_end = [&](int64_t, const Logs&) {
        const auto now = std::chrono::steady_clock::now();
        epoch_s.push_back(std::chrono::duration<double>(now - last).count());
        last = now;
    };
    om.callbacks = {&timer};  // the host looks after every epoch: still one graph launch per epoch
    const auto [mk0, mg0] = launches_so_far();
    last = std::chrono::steady_clock::now();
    mlp.fit(x, y, om);
    const auto [mk1, mg1] = launches_so_far();
    epoch_s.erase(epoch_s.begin());  // the first epoch also captures the graph
    std::printf("# mlp_mnist on the GPU: 784-256-10, sparse CE, Adam(1e-3), batch 128, 60000 samples, median of %zu epochs\n",
                epoch_s.size());
    std::printf("gpu_mlp_mnist_samples_per_s: %.0f samples/s\n", double(n) / median(epoch_s));
    if (mk0 >= 0)
        std::printf("gpu_mlp_mnist_launches_per_epoch: %.1f graphs, %.1f kernels\n", double(mg1 - mg0) / double(om.epochs),
                    double(mk1 - mk0) / double(om.epochs));
    return 0;
}
