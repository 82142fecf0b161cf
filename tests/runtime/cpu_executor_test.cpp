// CpuExecutor's tail: which trailing layers run as two halves of the batch, and that the float
// step loop, whose halves run on two pool threads, computes what the double one does (the
// double executor's gradients are checked against finite differences in tests/nn).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "program/training_program.hpp"
#include "runtime/cpu/cpu_executor.hpp"

namespace onefit {
namespace {

TrainingProgram program_for(int64_t in, const std::vector<Layer>& layers, const char* loss) {
    return lower_sequential({in}, layers, loss_from_name(loss), Adam(), {}, 3);
}

size_t tail_of(const TrainingProgram& p, int64_t rows) {
    return cpu::CpuExecutor<float>(p, rows, {}, 1, 0).tail_begin();
}

TEST(CpuExecutorTail, IsTheSmallLayersAfterTheLastOneThatUsesThePool) {
    // MNIST's MLP: 784 x 256 products use the pool, the 256 -> 10 head does not.
    const TrainingProgram mnist = program_for(784, {Dense(256, "relu"), Dense(10, "softmax")}, "sparse_categorical_crossentropy");
    EXPECT_EQ(tail_of(mnist, 128), 1u);
    EXPECT_EQ(tail_of(mnist, 31), 2u) << "below 32 rows nothing splits";
    // A dropout after the big layer belongs to the tail.
    const TrainingProgram dropout =
        program_for(784, {Dense(256, "relu"), Dropout(0.5f), Dense(10, "softmax")}, "sparse_categorical_crossentropy");
    EXPECT_EQ(tail_of(dropout, 128), 1u);
}

TEST(CpuExecutorTail, IsNeverTakenWhereASecondThreadCannotPay) {
    // The seed's model: ~30 kflop per step at batch 20, ~170 kflop even at 128 rows.
    const TrainingProgram seed = program_for(4, {Dense(32, "relu"), Dense(3, "softmax")}, "log_cosh");
    EXPECT_EQ(tail_of(seed, 20), 2u);
    EXPECT_EQ(tail_of(seed, 128), 2u);
    // Every layer large: no tail.
    const TrainingProgram large = program_for(512, {Dense(512, "relu"), Dense(512)}, "mse");
    EXPECT_EQ(tail_of(large, 128), 2u);
}

// The float executor's gradients and loss against the double executor's, for one batch.
void expect_float_matches_double(const TrainingProgram& program, int64_t max_rows, int64_t rows) {
    const int64_t in = program.input_width;
    Rng rng(11);
    std::vector<double> x(static_cast<size_t>(rows * in)), y(static_cast<size_t>(rows));
    for (double& v : x) v = rng.uniform_double();
    for (double& v : y) v = static_cast<double>(rng.below(static_cast<uint64_t>(program.output_width)));
    const std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());

    cpu::CpuExecutor<float> f(program, max_rows, {}, 1, 5);
    cpu::CpuExecutor<double> d(program, max_rows, {}, 1, 5);
    const double loss_f = f.loss_and_gradients(xf.data(), yf.data(), rows);
    const double loss_d = d.loss_and_gradients(x.data(), y.data(), rows);
    EXPECT_NEAR(loss_f, loss_d, 1e-5 * std::fabs(loss_d));
    double largest = 0, worst = 0;
    for (size_t i = 0; i < program.params.size(); ++i) largest = std::max(largest, std::fabs(d.grads()[i]));
    for (size_t i = 0; i < program.params.size(); ++i)
        worst = std::max(worst, std::fabs(double(f.grads()[i]) - d.grads()[i]) / largest);
    EXPECT_LT(worst, 1e-5);
    EXPECT_GT(largest, 1e-3);
}

TEST(CpuExecutorTail, FloatHalvesOnThePoolComputeWhatDoubleDoes) {
    const TrainingProgram p =
        program_for(64, {Dense(72, "relu"), Dropout(0.3f), Dense(10, "softmax")}, "sparse_categorical_crossentropy");
    ASSERT_EQ(tail_of(p, 250), 1u);
    expect_float_matches_double(p, 250, 250);  // halves of 128 and 122 rows
    expect_float_matches_double(p, 250, 20);   // a last batch too short to split, same executor
}

}  // namespace
}  // namespace onefit
