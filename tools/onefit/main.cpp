// onefit: the command line. Parses the command, runs it, and is the one place errors are
// caught: each becomes one line "onefit: error: ..." on stderr and exit status 2.
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>
#include <string>

#include "explain_command.hpp"
#include "fit_command.hpp"
#include "model_commands.hpp"

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

int fail(const std::string& message) {
    std::cout.flush();
    std::cerr << "onefit: error: " << one_line(message) << std::endl;
    return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app("onefit: Keras-style training of dense networks, the whole fit compiled as one program.\n"
                 "Try: onefit fit (the seed experiment on Iris), or onefit fit --help.",
                 "onefit");
    app.set_version_flag("--version", std::string("onefit ") + kVersion);
    onefit::cli::FitFlags fit_flags;
    CLI::App* fit = onefit::cli::add_fit_command(app, fit_flags);
    onefit::cli::ExplainFlags explain_flags;
    CLI::App* explain = onefit::cli::add_explain_command(app, explain_flags);
    onefit::cli::ModelFlags model_flags;
    const auto [evaluate, predict] = onefit::cli::add_model_commands(app, model_flags);
    try {
        app.parse(argc, argv);
        if (fit->parsed()) return onefit::cli::run_fit(onefit::cli::resolve_fit_config(fit_flags), fit_flags.profile);
        if (explain->parsed()) {
            explain_flags.rest = explain->remaining();
            return onefit::cli::run_explain(explain_flags);
        }
        if (evaluate->parsed()) return onefit::cli::run_evaluate(model_flags);
        if (predict->parsed()) return onefit::cli::run_predict(model_flags);
        return fail("no command given; try 'onefit fit' or 'onefit --help'");
    } catch (const CLI::Success& e) {  // --help, --version
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return fail(std::string(e.what()) + " (see onefit --help)");
    } catch (const onefit::Error& e) {
        return fail(e.what());
    } catch (const std::bad_alloc&) {
        return fail("out of memory; the data or the model is too large for this machine");
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
}
