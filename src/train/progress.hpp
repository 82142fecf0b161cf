// Keras-style progress: "Epoch 3/20", a bar (live on a terminal with verbose 1) and the
// epoch line "6/6 ━━━━━━━━━━━━━━━━━━━━ 0s 12us/step - loss: 0.2312 - val_loss: 0.1985".
#pragma once
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "onefit/callbacks.hpp"

namespace onefit::train {

class ProgressPrinter {
public:
    ProgressPrinter(std::ostream& out, int verbose, bool live, int64_t epochs);
    bool live() const { return live_; }
    void epoch_begin(int64_t epoch, int64_t steps);
    void update(int64_t steps_done, double running_loss);  // live bar only
    void epoch_end(const Logs& logs);

private:
    std::string bar(int64_t done) const;
    std::string timing(int64_t steps_done) const;
    std::ostream& out_;
    int verbose_;
    bool live_;
    int64_t epochs_, steps_ = 0;
    std::chrono::steady_clock::time_point start_;
};

// "0.2312", "1.234e-05": Keras prints four decimals, switching to exponent for tiny values.
std::string format_log_value(double v);

}  // namespace onefit::train
