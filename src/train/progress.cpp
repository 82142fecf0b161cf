#include "train/progress.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace onefit::train {

std::string format_log_value(double v) {
    char buf[32];
    const double a = std::fabs(v);
    std::snprintf(buf, sizeof buf, (a != 0 && a < 1e-3) ? "%.4e" : "%.4f", v);
    return buf;
}

ProgressPrinter::ProgressPrinter(std::ostream& out, int verbose, bool live, int64_t epochs)
    : out_(out), verbose_(verbose), live_(live && verbose == 1), epochs_(epochs) {}

void ProgressPrinter::epoch_begin(int64_t epoch, int64_t steps) {
    steps_ = steps;
    start_ = std::chrono::steady_clock::now();
    if (verbose_ == 0) return;
    out_ << "Epoch " << epoch + 1 << "/" << epochs_ << "\n";
    if (live_) out_ << bar(0) << std::flush;
}

std::string ProgressPrinter::bar(int64_t done) const {
    const int width = 20;
    const int filled = steps_ > 0 ? static_cast<int>(width * done / steps_) : width;
    std::string s = std::to_string(done) + "/" + std::to_string(steps_) + " ";
    for (int i = 0; i < width; ++i) s += i < filled ? "\u2501" : (i == filled ? "\u257a" : " ");
    return s;
}

std::string ProgressPrinter::timing(int64_t steps_done) const {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double per_step = steps_done > 0 ? seconds / static_cast<double>(steps_done) : 0.0;
    char buf[64];
    if (per_step >= 1.0)
        std::snprintf(buf, sizeof buf, "%.0fs %.0fs/step", seconds, per_step);
    else if (per_step >= 1e-3)
        std::snprintf(buf, sizeof buf, "%.0fs %.0fms/step", seconds, per_step * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.0fs %.0fus/step", seconds, per_step * 1e6);
    return buf;
}

void ProgressPrinter::update(int64_t steps_done, double running_loss) {
    if (!live_) return;
    out_ << "\r" << bar(steps_done) << " " << timing(steps_done) << " - loss: " << format_log_value(running_loss)
         << "\x1b[K" << std::flush;
}

void ProgressPrinter::epoch_end(const Logs& logs) {
    if (verbose_ == 0) return;
    std::string line = verbose_ == 1 ? bar(steps_) + " " + timing(steps_)
                                     : std::to_string(steps_) + "/" + std::to_string(steps_) + " - " + timing(steps_);
    // Keras order: training values first, then val_ values.
    for (int pass = 0; pass < 2; ++pass)
        for (const auto& [key, value] : logs)
            if ((key.rfind("val_", 0) == 0) == (pass == 1)) line += " - " + key + ": " + format_log_value(value);
    out_ << (live_ ? "\r" : "") << line << (live_ ? "\x1b[K" : "") << "\n" << std::flush;
}

}  // namespace onefit::train
