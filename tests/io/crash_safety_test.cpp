// A save interrupted by SIGKILL at a random moment leaves the last complete save loadable:
// a child saves the same folder over and over with changing weights; the parent kills it 30
// times at random delays and loads the folder after each kill.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "support/test_files.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

TEST(CrashSafety, KilledSavesAlwaysLeaveALoadableModel) {
    const std::string dir = test_files::temp_path("_model");
    std::filesystem::remove_all(dir);
    Sequential model({4}, 1);
    model.add(Dense(64, "relu")).add(Dense(3, "softmax"));  // ~2 KB weights, 4 KB Adam state
    model.compile("adam", "sparse_categorical_crossentropy");
    // The kills must land inside saves: a save's duration is measured here, the child reports
    // each finished save through a pipe, and the parent kills it 0..1.5 saves after one finished.
    const auto start = std::chrono::steady_clock::now();
    save_model(model, dir, 0);
    const auto save_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int64_t> delay_us(0, std::max<int64_t>(1, save_us.count() * 3 / 2));
    int rounds_after_a_save = 0;  // the test has teeth only if the child got to save
    for (int round = 0; round < 30; ++round) {
        int done[2];
        ASSERT_EQ(pipe(done), 0);
        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {  // saves as fast as it can, each save with other weights
            close(done[0]);
            std::vector<Tensor> w = model.get_weights();
            for (int64_t i = 1;; ++i) {
                w[0][0] = static_cast<float>(i);
                model.set_weights(w);
                save_model(model, dir, i);
                if (write(done[1], "s", 1) != 1) _exit(1);
            }
        }
        close(done[1]);
        char byte = 0;
        for (int saves = 1 + round % 2; saves > 0; --saves) ASSERT_EQ(read(done[0], &byte, 1), 1);
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        close(done[0]);
        try {
            Sequential loaded = load_model(dir);
            const TrainingState state = load_training_state(dir);
            rounds_after_a_save += state.epoch > 0;
            // The weights and state.json come from the same save.
            EXPECT_EQ(loaded.get_weights()[0][0], static_cast<float>(state.epoch == 0 ? model.get_weights()[0][0] : state.epoch))
                << "round " << round;
        } catch (const Error& e) {
            ADD_FAILURE() << "round " << round << ": " << e.what();
        }
    }
    EXPECT_GT(rounds_after_a_save, 10);
    // Killed saves may leave a hidden temporary folder; the model folder itself holds only its files.
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        EXPECT_EQ(entry.path().filename().string().rfind(".", 0), std::string::npos) << entry.path();
    // The next save removes the temporary folders of killed saves (their processes are gone) and
    // leaves those of a live process alone.
    const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    const std::string base = std::filesystem::path(dir).filename().string();
    const std::filesystem::path live = parent / ("." + base + ".saving." + std::to_string(getpid()) + ".999");
    std::filesystem::create_directory(live);
    const pid_t gone = fork();  // a process that has exited: its PID names a killed save
    if (gone == 0) _exit(0);
    waitpid(gone, nullptr, 0);
    const std::filesystem::path stale = parent / ("." + base + ".saving." + std::to_string(gone) + ".0");
    std::filesystem::create_directory(stale);
    std::ofstream(stale / "model.safetensors") << "partial";
    save_model(model, dir, 0);
    EXPECT_FALSE(std::filesystem::exists(stale));
    int leftovers = 0;
    for (const auto& entry : std::filesystem::directory_iterator(parent))
        leftovers += entry.path().filename().string().rfind("." + base + ".saving.", 0) == 0;
    EXPECT_EQ(leftovers, 1);
    EXPECT_TRUE(std::filesystem::exists(live));
    std::filesystem::remove_all(live);
}

}  // namespace
}  // namespace onefit
