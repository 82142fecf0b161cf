// `mpirun -np 2 onefit sweep ...` (a CLI built with MPI): the two processes print exactly what
// one process prints (every member's configuration, history and final logs); a member failing
// on the second rank fails the job with the error one process gives; a rank killed mid-sweep
// ends the job with an error, never a hang; other commands refuse to run once per rank.
#include <gtest/gtest.h>

#if ONEFIT_HAVE_MPI

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace {

using namespace onefit::testing_support;

// Processes on this machine, as root too (CI), wherever its cores are; shared memory without
// the kernel's cross-process copy, which containers without ptrace rights refuse. `timeout`
// turns a hung job into exit 124 (and KILLs an mpirun that ignores TERM) instead of a hung suite.
// Each job its own session folder: two mpiruns started together (ctest -j) race to create the
// shared default, /tmp/ompi.HOST.UID, and the loser fails in orte_init ("File exists").
std::vector<std::string> mpirun(int processes = 2, int seconds = 120) {
    static int jobs = 0;
    const std::string session = ::testing::TempDir() + "onefit_mpi_" + std::to_string(getpid()) + "_" + std::to_string(++jobs);
    std::filesystem::create_directories(session);
    return {"timeout", "-k", "10", std::to_string(seconds), ONEFIT_MPIEXEC, "--allow-run-as-root",
            "--oversubscribe", "--bind-to", "none", "--mca", "btl_vader_single_copy_mechanism", "none",
            "--mca", "orte_tmpdir_base", session, "-np", std::to_string(processes)};
}

TEST(MpiSweep, TwoProcessesPrintWhatOneProcessPrints) {
    const std::vector<std::string> sweep = {"sweep", "--grid", "learning_rate=0.01,0.1", "--grid", "seed=0..9",
                                            "--kfold", "3", "--epochs", "5"};
    for (const char* format : {"--json", "--csv"}) {
        std::vector<std::string> args = sweep;
        args.push_back(format);
        const CliResult alone = run_cli(args);
        const CliResult two = run_cli_launched(mpirun(), args);
        ASSERT_EQ(alone.exit_code, 0) << alone.err;
        ASSERT_EQ(two.exit_code, 0) << two.err;
        if (std::string(format) == "--csv") {
            EXPECT_EQ(two.out, alone.out);
            continue;
        }
        nlohmann::json a = nlohmann::json::parse(alone.out), b = nlohmann::json::parse(two.out);
        ASSERT_EQ(a["members"].size(), 60u);
        a.erase("seconds"), b.erase("seconds");
        EXPECT_EQ(a, b);
    }
    const CliResult text = run_cli_launched(mpirun(3), {"sweep", "--grid", "seed=0..4", "--epochs", "3"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("5 members on iris in "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(" on 3 processes, ranked by"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("5 members", text.out.find("5 members") + 1), std::string::npos) << "printed once: " << text.out;
}

TEST(MpiSweep, AMemberFailingOnAnotherRankFailsTheJobWithOneProcesssError) {
    // Members 4..7 (learning rate -1) are the second rank's. (Ending this job with MPI_Abort
    // once left mpirun waiting forever on its two exited ranks, about one run in five on a
    // loaded machine: rank 0 now hands every rank the exit code instead.)
    const std::vector<std::string> args = {"sweep", "--grid", "learning_rate=0.01,-1", "--grid", "seed=0..3", "--epochs", "2"};
    const CliResult alone = run_cli(args);
    ASSERT_EQ(alone.exit_code, 2);
    const std::string message = alone.err.substr(alone.err.find("sweep member 4 ("));
    ASSERT_NE(message.find("learning_rate -1"), std::string::npos) << alone.err;
    const CliResult two = run_cli_launched(mpirun(), args);
    EXPECT_EQ(two.exit_code, 2) << two.err;
    EXPECT_NE(two.err.find("onefit: error (rank 0): " + message), std::string::npos) << two.err;
    EXPECT_EQ(two.err.find("onefit: error (rank 1)"), std::string::npos) << two.err;

    const CliResult fit = run_cli_launched(mpirun(), {"fit", "--epochs", "1"});
    EXPECT_EQ(fit.exit_code, 2) << fit.err;
    EXPECT_NE(fit.err.find("only `onefit sweep` runs across MPI processes"), std::string::npos) << fit.err;
    EXPECT_EQ(fit.out.find("Epoch"), std::string::npos) << "no rank fits: " << fit.out;
}

TEST(MpiSweep, ARankKilledMidSweepEndsTheJobWithAnErrorNotAHang) {
    // Rank 1's onefit is killed a second into a sweep that takes each rank many seconds; rank 0
    // is then training or waiting for rank 1's members. `timeout` turns a hang into exit 124.
    std::vector<std::string> launcher = mpirun(2, 240);
    for (const char* a : {"sh", "-c",
                          "\"$@\" & pid=$!; if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then sleep 1; kill -9 $pid; fi; "
                          "wait $pid",
                          "sh"})
        launcher.push_back(a);
    const auto start = std::chrono::steady_clock::now();
    const CliResult r = run_cli_launched(launcher, {"sweep", "--grid", "seed=0..999", "--epochs", "3000", "--csv"});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_NE(r.exit_code, 124) << "the job hung: " << r.err;
    EXPECT_LT(seconds, 200.0);
    EXPECT_NE(r.err.find("aborted"), std::string::npos) << "mpirun says it ended the job: " << r.err;
    EXPECT_EQ(r.out, "") << "no partial table";
}

}  // namespace

#endif  // ONEFIT_HAVE_MPI
