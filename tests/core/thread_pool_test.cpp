// ThreadPool: every task runs exactly once, whoever calls and however often; nested and
// concurrent calls do not deadlock; tasks really run on the workers.
//
// Not tested here: "no allocation per call". Counting operator new needs a global replacement,
// which tests/runtime/no_allocation_test.cpp already installs for the whole test binary; by
// construction parallel_for only passes the callable's address (see AcceptsMoveOnlyCallables).
#include "core/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace onefit {
namespace {

// Runs n tasks on pool and returns how often each ran.
std::vector<int> run_counts(ThreadPool& pool, int64_t n) {
    std::vector<std::atomic<int>> counts(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t t) { counts[static_cast<size_t>(t)].fetch_add(1); });
    std::vector<int> out;
    for (auto& c : counts) out.push_back(c.load());
    return out;
}

TEST(ThreadPool, EveryTaskRunsExactlyOnce) {
    for (int threads : {1, 2, 4}) {
        ThreadPool pool(threads);
        EXPECT_EQ(pool.num_threads(), threads);
        for (int64_t n : {0, 1, 2, 3, 7, 64, 1000})
            EXPECT_EQ(run_counts(pool, n), std::vector<int>(static_cast<size_t>(n), 1))
                << threads << " threads, " << n << " tasks";
    }
}

TEST(ThreadPool, ManySerialCallsEachRunEveryTaskOnce) {
    ThreadPool pool(3);
    std::atomic<int64_t> sum{0};
    int64_t expected = 0;
    for (int call = 0; call < 20000; ++call) {
        const int64_t n = 1 + call % 5;
        pool.parallel_for(n, [&](int64_t t) { sum.fetch_add(call * 10 + t); });
        for (int64_t t = 0; t < n; ++t) expected += call * 10 + t;
    }
    EXPECT_EQ(sum.load(), expected);
}

TEST(ThreadPool, CallsAfterTheWorkersFellAsleepStillRunEveryTask) {
    ThreadPool pool(2);
    for (int call = 0; call < 5; ++call) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the workers' spin
        EXPECT_EQ(run_counts(pool, 9), std::vector<int>(9, 1));
    }
}

TEST(ThreadPool, NestedCallsRunSeriallyInsideTheTask) {
    ThreadPool pool(2);
    std::vector<std::atomic<int>> counts(6 * 5);
    pool.parallel_for(6, [&](int64_t outer) {
        const std::thread::id me = std::this_thread::get_id();
        pool.parallel_for(5, [&](int64_t inner) {
            EXPECT_EQ(std::this_thread::get_id(), me);
            counts[static_cast<size_t>(outer * 5 + inner)].fetch_add(1);
        });
    });
    for (auto& c : counts) EXPECT_EQ(c.load(), 1);
}

TEST(ThreadPool, ConcurrentCallersFromOtherThreadsEachGetTheirTasksRun) {
    ThreadPool pool(2);
    std::atomic<int64_t> total{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 3; ++c)
        callers.emplace_back([&] {
            for (int call = 0; call < 2000; ++call) pool.parallel_for(4, [&](int64_t t) { total.fetch_add(t + 1); });
        });
    for (std::thread& t : callers) t.join();
    EXPECT_EQ(total.load(), 3 * 2000 * (1 + 2 + 3 + 4));
}

TEST(ThreadPool, TasksRunConcurrentlyOnAWorker) {
    // Each of the two tasks waits for the other to start: only possible if a worker runs one.
    ThreadPool pool(2);
    std::atomic<int> started{0};
    std::atomic<bool> both{true};
    pool.parallel_for(2, [&](int64_t) {
        started.fetch_add(1);
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (started.load() < 2)
            if (std::chrono::steady_clock::now() > give_up) {
                both = false;
                return;
            }
    });
    EXPECT_TRUE(both.load());
}

TEST(ThreadPool, OneThreadRunsEverythingOnTheCaller) {
    ThreadPool pool(1);
    const std::thread::id me = std::this_thread::get_id();
    pool.parallel_for(10, [&](int64_t) { EXPECT_EQ(std::this_thread::get_id(), me); });
}

TEST(ThreadPool, AcceptsMoveOnlyCallables) {
    // Passed by address, never copied into a std::function (which needs a copyable callable).
    ThreadPool pool(2);
    auto owned = std::make_unique<std::atomic<int>>(0);
    std::atomic<int>* count = owned.get();
    const auto f = [p = std::move(owned)](int64_t) { p->fetch_add(1); };
    pool.parallel_for(8, f);
    pool.parallel_for(8, f);
    EXPECT_EQ(count->load(), 16);
}

TEST(ThreadPool, SizeComesFromOnefitNumThreads) {
    const char* saved = std::getenv("ONEFIT_NUM_THREADS");
    const std::string restore = saved ? saved : "";
    setenv("ONEFIT_NUM_THREADS", "3", 1);
    EXPECT_EQ(ThreadPool::configured_threads(), 3);
    setenv("ONEFIT_NUM_THREADS", "1", 1);
    EXPECT_EQ(ThreadPool::configured_threads(), 1);
    unsetenv("ONEFIT_NUM_THREADS");
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    EXPECT_EQ(ThreadPool::configured_threads(), hw > 0 ? hw : 1);
    if (saved) setenv("ONEFIT_NUM_THREADS", restore.c_str(), 1);
}

}  // namespace
}  // namespace onefit
