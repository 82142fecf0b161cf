// onefit: the command line. Parses the command, runs it, and is the one place errors are
// caught: each becomes one line "onefit: error: ..." on stderr and exit status 2.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "explain_command.hpp"
#include "fit_command.hpp"
#include "model_commands.hpp"
#include "mpi_job.hpp"
#include "sweep_command.hpp"

namespace {

// Keep in step with project(onefit VERSION ...) in CMakeLists.txt.
constexpr const char* kVersion = "0.1.0";
constexpr int kUsageError = 2;

// Messages are one line whatever a file or flag held: line breaks and control bytes escaped.
std::string one_line(const std::string& message) {
    std::string out;
    for (const char c : message) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
            out += hex;
        } else {
            out += c;
        }
    }
    return out;
}

// Levenshtein distance, for suggesting the flag a typo meant.
size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// " (did you mean --epochs?)" for the first --flag in argv that no command knows and that is
// within two edits of one that does; "" otherwise.
std::string flag_suggestion(const CLI::App& app, int argc, char** argv) {
    std::vector<std::string> known;
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
        for (const CLI::Option* option : command->get_options())
            for (const std::string& name : option->get_lnames()) known.push_back(name);
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0 || arg.size() < 3) continue;
        const size_t equals = arg.find('=');
        const std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        const std::string* best = nullptr;
        size_t best_distance = 3;
        for (const std::string& k : known)
            if (const size_t d = edit_distance(name, k); d < best_distance) best = &k, best_distance = d;
        if (best) return " (did you mean --" + *best + "?)";
    }
    return "";
}

// The MPI job `onefit sweep` runs in when an MPI launcher started it.
std::optional<onefit::cli::MpiJob> mpi_job;

int fail(const std::string& message) {
    std::cout.flush();
    const bool ranks = mpi_job && mpi_job->size() > 1;
    // One write of the whole line: another rank's MPI_Abort may end this process mid-message.
    std::string line = "onefit: error";
    if (ranks) line.append(" (rank ").append(std::to_string(mpi_job->rank())).append(")");
    line.append(": ").append(one_line(message)).append("\n");
    std::cerr << line << std::flush;
    if (ranks && !mpi_job->gathered()) mpi_job->abort(kUsageError);  // (the other ranks may be waiting for this one)
    if (ranks && mpi_job->rank() == 0) mpi_job->send_exit_code(kUsageError);
    return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app("onefit: Keras-style training of dense and convolutional networks, the whole fit compiled as one program.\n"
                 "Try: onefit fit (the seed experiment on Iris), or onefit fit --help.",
                 "onefit");
    app.set_version_flag("--version", std::string("onefit ") + kVersion);
    onefit::cli::FitFlags fit_flags;
    CLI::App* fit = onefit::cli::add_fit_command(app, fit_flags);
    onefit::cli::ExplainFlags explain_flags;
    CLI::App* explain = onefit::cli::add_explain_command(app, explain_flags);
    onefit::cli::SweepFlags sweep_flags;
    CLI::App* sweep = onefit::cli::add_sweep_command(app, sweep_flags);
    onefit::cli::ModelFlags model_flags;
    const auto [evaluate, predict] = onefit::cli::add_model_commands(app, model_flags);
    CLI::App* export_command = onefit::cli::add_export_command(app, model_flags);
    try {
        app.parse(argc, argv);
        if (!sweep->parsed() && onefit::cli::launched_processes() > 1)
            return fail("only `onefit sweep` runs across MPI processes; run this command without mpirun");
        if (fit->parsed()) return onefit::cli::run_fit(onefit::cli::resolve_fit_config(fit_flags), fit_flags.profile);
        if (explain->parsed()) {
            explain_flags.rest = explain->remaining();
            return onefit::cli::run_explain(explain_flags);
        }
        if (sweep->parsed()) {
            sweep_flags.rest = sweep->remaining();
            if (onefit::cli::started_by_mpi_launcher()) mpi_job.emplace(argc, argv);
            const int code = onefit::cli::run_sweep(sweep_flags, mpi_job ? &*mpi_job : nullptr);
            if (!mpi_job || mpi_job->size() == 1) return code;
            if (mpi_job->rank() != 0) return mpi_job->receive_exit_code();  // (rank 0 prints)
            mpi_job->send_exit_code(code);
            return code;
        }
        if (evaluate->parsed()) return onefit::cli::run_evaluate(model_flags);
        if (predict->parsed()) return onefit::cli::run_predict(model_flags);
        if (export_command->parsed()) return onefit::cli::run_export(model_flags);
        return fail("no command given; try 'onefit fit' or 'onefit --help'");
    } catch (const CLI::Success& e) {  // --help, --version
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        const std::string suggestion = flag_suggestion(app, argc, argv);
        return fail(std::string(e.what()) + (suggestion.empty() ? " (see onefit --help)" : suggestion));
    } catch (const onefit::Error& e) {
        return fail(e.what());
    } catch (const std::bad_alloc&) {
        return fail("out of memory; the data or the model is too large for this machine");
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
}
