// A tiny persistent thread pool for the few cores of a training machine: workers are started
// once, spin briefly after each job and then sleep on a futex, so an idle pool costs nothing.
// parallel_for(n, f) runs f(0) .. f(n - 1), each exactly once, on the workers and the calling
// thread, and returns when all are done. It allocates nothing: f is passed by address through a
// plain function pointer (no std::function). Calls from inside a task, or from a second thread
// while the pool is busy, run serially on the calling thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace onefit {

class ThreadPool {
public:
    // The process-wide pool: one thread per CPU this process may run on (the caller included),
    // or ONEFIT_NUM_THREADS when set (1: no workers, everything runs on the caller).
    static ThreadPool& instance();
    // The size instance() uses, read from the environment now.
    static int configured_threads();

    explicit ThreadPool(int threads);  // threads in all, the caller included; at least 1
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Threads that run tasks: the workers plus the calling thread.
    int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

    // Runs f(task) for task in [0, n_tasks); f must not throw. Tasks may run in any order.
    template <class F>
    void parallel_for(int64_t n_tasks, const F& f) {
        run(n_tasks, [](const void* fn, int64_t task) { (*static_cast<const F*>(fn))(task); }, &f);
    }

private:
    using Trampoline = void (*)(const void* fn, int64_t task);

    void run(int64_t n_tasks, Trampoline call, const void* fn);
    void work(uint32_t generation);  // claims and runs tasks of that job until none are left
    void worker_loop();

    std::vector<std::thread> workers_;
    std::mutex busy_;  // held by the thread whose job the workers are running
    // The current job. Written by the caller before it publishes `claim_`; read by a worker
    // only after it has claimed one of the job's tasks, which keeps the job alive until done.
    Trampoline call_ = nullptr;
    const void* fn_ = nullptr;
    uint32_t generation_ = 0;
    // (generation << 32) | tasks not yet claimed; a task is claimed by a compare-exchange that
    // also checks the generation, so a worker that wakes late can never run a newer job's task.
    alignas(64) std::atomic<uint64_t> claim_{0};
    alignas(64) std::atomic<int64_t> done_{0};  // tasks of the current job finished
    alignas(64) std::atomic<uint32_t> epoch_{0};  // the newest generation; workers wait on it
    std::atomic<int> sleepers_{0};               // workers blocked in epoch_.wait
    std::atomic<bool> stop_{false};
};

}  // namespace onefit
