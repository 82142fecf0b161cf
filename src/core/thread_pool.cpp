#include "core/thread_pool.hpp"

#include <sched.h>

#include <chrono>
#include <cstdlib>

namespace onefit {
namespace {

// How long an idle worker polls for the next job before it sleeps. Waking a sleeping worker
// takes ~30 us here (a VM), 7% of an MNIST step; the longest gap between a step's parallel
// products (optimizer, next batch's gather) is ~110 us, so a worker that stays awake 500 us
// does not sleep during a fit, and stops costing CPU 0.5 ms after it.
constexpr auto kSpin = std::chrono::microseconds(500);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

thread_local bool t_inside_task = false;  // nested parallel_for calls run serially

uint64_t pack(uint32_t generation, uint32_t remaining) { return (uint64_t{generation} << 32) | remaining; }

}  // namespace

int ThreadPool::configured_threads() {
    if (const char* s = std::getenv("ONEFIT_NUM_THREADS")) {
        const int n = std::atoi(s);
        if (n >= 1) return n;
    }
#ifdef __linux__
    // The CPUs this process may run on (taskset, a container's cpuset, an MPI launcher's
    // binding), not every CPU the machine has: more threads than those only take turns.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0) return CPU_COUNT(&allowed);
#endif
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
}

ThreadPool& ThreadPool::instance() {
    static ThreadPool pool(configured_threads());
    return pool;
}

ThreadPool::ThreadPool(int threads) {
    workers_.reserve(static_cast<size_t>(threads > 1 ? threads - 1 : 0));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    epoch_.fetch_add(1);
    epoch_.notify_all();
    for (std::thread& w : workers_) w.join();
}

void ThreadPool::run(int64_t n_tasks, Trampoline call, const void* fn) {
    if (n_tasks <= 0) return;
    std::unique_lock<std::mutex> lock(busy_, std::defer_lock);
    if (workers_.empty() || n_tasks == 1 || t_inside_task || n_tasks > UINT32_MAX || !lock.try_lock()) {
        for (int64_t t = 0; t < n_tasks; ++t) call(fn, t);
        return;
    }
    call_ = call;
    fn_ = fn;
    done_.store(0, std::memory_order_relaxed);
    const uint32_t generation = ++generation_;
    claim_.store(pack(generation, static_cast<uint32_t>(n_tasks)), std::memory_order_release);
    // seq_cst pairs with the worker's sleepers_ increment and re-check: either the worker sees
    // the new epoch before it blocks, or we see it asleep and wake it.
    epoch_.store(generation);
    if (sleepers_.load() > 0) epoch_.notify_all();

    t_inside_task = true;
    work(generation);
    t_inside_task = false;
    // Wait for tasks the workers claimed; yield now and then in case a worker was preempted.
    for (int spins = 0; done_.load(std::memory_order_acquire) != n_tasks; ++spins) {
        if (spins % 1024 == 1023) std::this_thread::yield();
        else cpu_relax();
    }
}

void ThreadPool::work(uint32_t generation) {
    uint64_t c = claim_.load(std::memory_order_acquire);
    for (;;) {
        if (static_cast<uint32_t>(c >> 32) != generation || static_cast<uint32_t>(c) == 0) return;
        if (!claim_.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
        call_(fn_, static_cast<int64_t>(static_cast<uint32_t>(c) - 1));
        done_.fetch_add(1, std::memory_order_release);
        c = claim_.load(std::memory_order_acquire);
    }
}

void ThreadPool::worker_loop() {
    t_inside_task = true;
    uint32_t seen = 0;
    for (;;) {
        // Poll for a while, then sleep until the caller publishes a new epoch.
        const auto spin_until = std::chrono::steady_clock::now() + kSpin;
        uint32_t e = epoch_.load(std::memory_order_acquire);
        for (int i = 0; e == seen; ++i) {
            if (i % 64 == 63 && std::chrono::steady_clock::now() > spin_until) {
                sleepers_.fetch_add(1);
                if (epoch_.load() == seen) epoch_.wait(seen);
                sleepers_.fetch_sub(1);
            } else {
                cpu_relax();
            }
            e = epoch_.load(std::memory_order_acquire);
        }
        seen = e;
        if (stop_.load()) return;
        work(e);
    }
}

}  // namespace onefit
