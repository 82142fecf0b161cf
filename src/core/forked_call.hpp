// A call run in a forked child, for library code that may crash or hang on hostile input
// (libhdf5 on a crafted file): the parent learns how the child ended instead of sharing its fate.
#pragma once
#include <functional>
#include <string>

namespace onefit {

struct ForkedCallEnd {
    enum class Kind { exited, crashed, timed_out } kind = Kind::exited;
    int value = 0;  // exited: the exit status `call` returned; crashed: the signal
    std::string describe() const;  // "exit 3", "signal 11", "no end after the time limit"
};

// Runs `call` in a child process (a copy of this one: call may read anything the caller can) whose
// crash signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) are at their defaults, so a crash is
// the child's death even where the parent installed handlers (Python's faulthandler, a
// sanitizer), and which is killed by SIGALRM after `seconds`. The child ends with _exit(call()),
// running no atexit handler and flushing none of the parent's buffers. Throws Error when the
// child cannot be made. Call it where no other thread holds a lock `call` takes.
ForkedCallEnd forked_call(const std::function<int()>& call, unsigned seconds);

}  // namespace onefit
