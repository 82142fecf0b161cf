// Test helpers for running the built `onefit` binary as a user would: stdout, stderr and the
// exit status of one invocation, from the repository root.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace onefit::testing_support {

struct CliResult {
    int exit_code = -1;
    std::string out, err;
};

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// A file name unique to this test and process, so tests can run in parallel.
inline std::string temp_path(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return ::testing::TempDir() + "onefit_cli_" + info->test_suite_name() + "_" + info->name() + "_" +
           std::to_string(getpid()) + "_" + name;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs `LAUNCHER... onefit ARGS...` (a launcher such as mpirun, or none) from the repository
// root, with `env` ("NAME=value" each) added to its environment.
inline CliResult run_cli_launched(const std::vector<std::string>& launcher, const std::vector<std::string>& args,
                                  const std::vector<std::string>& env = {}) {
    const std::string err_path = temp_path("stderr.txt");
    std::string command = "cd " + shell_quote(ONEFIT_SOURCE_DIR) + " && env";
    for (const std::string& e : env) command.append(" ").append(shell_quote(e));
    for (const std::string& l : launcher) command.append(" ").append(shell_quote(l));
    command.append(" ").append(shell_quote(ONEFIT_CLI_PATH));
    for (const std::string& a : args) command.append(" ").append(shell_quote(a));
    command.append(" 2>").append(shell_quote(err_path));
    CliResult result;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return result;
    char buffer[4096];
    for (size_t got; (got = fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.out.append(buffer, got);
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.err = read_file(err_path);
    std::remove(err_path.c_str());
    return result;
}

// Runs `onefit ARGS...` from the repository root, with `env` added to its environment.
inline CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    return run_cli_launched({}, args, env);
}

}  // namespace onefit::testing_support
