// forked_call: how a child ended, whatever it did — returned, crashed, hung or threw — and that
// nothing it did reaches the parent.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "core/forked_call.hpp"

namespace onefit {
namespace {

using Kind = ForkedCallEnd::Kind;

TEST(ForkedCall, AReturnIsTheExitStatusAndTheParentsMemoryIsUntouched) {
    int shared = 1;
    const ForkedCallEnd end = forked_call([&] {
        shared = 99;
        return 7;
    }, 10);
    EXPECT_EQ(end.kind, Kind::exited);
    EXPECT_EQ(end.value, 7);
    EXPECT_EQ(end.describe(), "exit 7");
    EXPECT_EQ(shared, 1);
}

TEST(ForkedCall, ACrashIsTheSignalEvenWhereTheParentHandlesIt) {
    // The parent's handler (as Python's faulthandler or a sanitizer installs one) is reset in the child.
    const auto previous = std::signal(SIGSEGV, [](int) { _exit(0); });
    const ForkedCallEnd segv = forked_call([] { return std::raise(SIGSEGV); }, 10);
    std::signal(SIGSEGV, previous);
    EXPECT_EQ(segv.kind, Kind::crashed);
    EXPECT_EQ(segv.value, SIGSEGV);
    EXPECT_EQ(segv.describe(), "signal " + std::to_string(SIGSEGV));
    const ForkedCallEnd abort = forked_call([]() -> int { std::abort(); }, 10);
    EXPECT_EQ(abort.kind, Kind::crashed);
    EXPECT_EQ(abort.value, SIGABRT);
}

TEST(ForkedCall, AHangEndsAtTheTimeLimit) {
    const ForkedCallEnd end = forked_call([] {
        for (;;) pause();
        return 0;
    }, 1);
    EXPECT_EQ(end.kind, Kind::timed_out);
}

TEST(ForkedCall, AnExceptionIsExitOne) {
    const ForkedCallEnd end = forked_call([]() -> int { throw 3; }, 10);
    EXPECT_EQ(end.kind, Kind::exited);
    EXPECT_EQ(end.value, 1);
}

}  // namespace
}  // namespace onefit
