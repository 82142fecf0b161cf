#include "core/forked_call.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "onefit/error.hpp"

namespace onefit {

std::string ForkedCallEnd::describe() const {
    switch (kind) {
        case Kind::exited: return "exit " + std::to_string(value);
        case Kind::crashed: return "signal " + std::to_string(value);
        case Kind::timed_out: return "no end after the time limit";
    }
    return "?";
}

ForkedCallEnd forked_call(const std::function<int()>& call, unsigned seconds) {
    const pid_t child = fork();
    if (child < 0) throw Error("cannot start a checking process (fork failed)");
    if (child == 0) {
        for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(s, SIG_DFL);
        std::signal(SIGALRM, SIG_DFL);
        alarm(seconds);
        int status = 1;
        try {
            status = call();
        } catch (...) {
            status = 1;
        }
        _exit(status);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) throw Error("cannot wait for a checking process (waitpid failed)");
    if (WIFEXITED(status)) return {ForkedCallEnd::Kind::exited, WEXITSTATUS(status)};
    const int signal = WTERMSIG(status);
    return {signal == SIGALRM ? ForkedCallEnd::Kind::timed_out : ForkedCallEnd::Kind::crashed, signal};
}

}  // namespace onefit
