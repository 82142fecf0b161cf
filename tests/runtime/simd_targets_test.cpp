// One binary, every SIMD target (src/core/simd.hpp): the same fits on each target this CPU
// supports agree to float rounding (the seed's per-epoch losses within 1e-5 relative), and on
// one target a fit is bit-identical run to run. Forcing a target this CPU lacks is an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "onefit/onefit.hpp"

namespace onefit {
namespace {

// Restores the best target when a test ends.
struct TargetGuard {
    ~TargetGuard() { set_cpu_simd_target(cpu_simd_targets().front()); }
};

// The seed: Dense 32 relu, Dense 3 softmax, Adam 0.1, log_cosh, batch 20, 20 epochs, the
// first 70% of iris for training and the rest for validation.
History seed_fit(std::vector<Tensor>* weights) {
    const LabeledData iris = load_iris();
    const TrainTestSplit s = train_test_split(iris.x, iris.y, 0.3, false);
    Sequential model({4}, 0);
    model.add(Dense(32, "relu"));
    model.add(Dense(3, "softmax"));
    model.compile(Adam(0.1f), loss_from_name("log_cosh"));
    FitOptions o;
    o.batch_size = 20, o.epochs = 20, o.shuffle = false, o.verbose = 0;
    o.validation_data = std::make_pair(s.x_test, s.y_test);
    History h = model.fit(s.x_train, s.y_train, o);
    if (weights) *weights = model.get_weights();
    return h;
}

// Wider layers, shuffling, dropout and a metric: the register kernels' other shapes, the
// per-row loops and the GEMM path (the first layer is 48 x 40).
struct Wide {
    History history;
    Logs evaluated;
    Tensor predicted;
};
Wide wide_fit() {
    Tensor x({200, 48}), y({200});
    for (int64_t i = 0; i < 200; ++i) {
        for (int64_t j = 0; j < 48; ++j) x.at(i, j) = static_cast<float>(std::sin(0.37 * double(i) + 0.11 * double(j * j)));
        y[i] = static_cast<float>((i * 7) % 10);
    }
    Sequential model({48}, 3);
    model.add(Dense(40, "relu"));
    model.add(Dropout(0.2f));
    model.add(Dense(10, "softmax"));
    model.compile(RMSprop(0.01f), loss_from_name("sparse_categorical_crossentropy"), CompileOptions{{"accuracy"}});
    FitOptions o;
    o.batch_size = 32, o.epochs = 5, o.verbose = 0, o.validation_split = 0.2;
    Wide w;
    w.history = model.fit(x, y, o);
    w.evaluated = model.evaluate(x, y);
    w.predicted = model.predict(x);
    return w;
}

double relative(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-30); }

TEST(SimdTargets, TheSeedFitAgreesOnEveryTargetThisCpuHas) {
    TargetGuard guard;
    const std::vector<std::string> targets = cpu_simd_targets();
    ASSERT_FALSE(targets.empty());
    EXPECT_EQ(cpu_simd_target(), targets.front());  // the best one unless told otherwise
    set_cpu_simd_target(targets.front());
    const History best = seed_fit(nullptr);
    for (const std::string& target : targets) {
        SCOPED_TRACE(target);
        set_cpu_simd_target(target);
        EXPECT_EQ(cpu_simd_target(), target);
        const History h = seed_fit(nullptr);
        for (const char* key : {"loss", "val_loss"})
            for (size_t e = 0; e < h[key].size(); ++e)
                EXPECT_LE(relative(h[key][e], best[key][e]), 1e-5) << key << " epoch " << e;
    }
}

TEST(SimdTargets, WiderModelsAgreeOnEveryTargetIncludingEvaluateAndPredict) {
    TargetGuard guard;
    const std::vector<std::string> targets = cpu_simd_targets();
    set_cpu_simd_target(targets.front());
    const Wide best = wide_fit();
    for (const std::string& target : targets) {
        SCOPED_TRACE(target);
        set_cpu_simd_target(target);
        const Wide w = wide_fit();
        for (size_t e = 0; e < w.history["loss"].size(); ++e)
            EXPECT_LE(relative(w.history["loss"][e], best.history["loss"][e]), 1e-4) << "epoch " << e;
        EXPECT_LE(relative(w.evaluated.at("loss"), best.evaluated.at("loss")), 1e-4);
        double worst = 0;
        for (int64_t i = 0; i < w.predicted.size(); ++i)
            worst = std::max(worst, std::fabs(double(w.predicted.data()[i]) - double(best.predicted.data()[i])));
        EXPECT_LE(worst, 1e-4);
    }
}

TEST(SimdTargets, OneTargetIsBitIdenticalRunToRun) {
    TargetGuard guard;
    for (const std::string& target : cpu_simd_targets()) {
        SCOPED_TRACE(target);
        set_cpu_simd_target(target);
        std::vector<Tensor> a, b;
        const History ha = seed_fit(&a), hb = seed_fit(&b);
        EXPECT_EQ(ha["loss"], hb["loss"]);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i)
            EXPECT_TRUE(std::equal(a[i].data(), a[i].data() + a[i].size(), b[i].data()));
    }
}

TEST(SimdTargets, ATargetThisBuildOrCpuLacksIsAnErrorNamingTheChoices) {
    TargetGuard guard;
    try {
        set_cpu_simd_target("AVX9000");
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("AVX9000"), std::string::npos) << what;
        EXPECT_NE(what.find(cpu_simd_targets().front()), std::string::npos) << what;
    }
}

}  // namespace
}  // namespace onefit
