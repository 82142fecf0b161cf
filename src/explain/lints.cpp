// Lints: set-ups that train but probably do not do what the user meant, or that waste the
// device. Each has a one-line fix. The label checks reuse fit's own warnings (train/checks.cpp).
#include <algorithm>
#include <cmath>
#include <set>

#include "explain/format.hpp"
#include "onefit/explain.hpp"

namespace onefit {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A fix in the words of whoever explains: the command line's flags or fit's and compile's arguments.
std::string fix(const LintInput& in, const std::string& flags, const std::string& arguments) {
    return in.command_line ? flags : arguments;
}

bool class_indices(const Tensor& y) {
    if (y.rank() > 1 && y.row_width() != 1) return false;
    for (float v : y.values())
        if (v != std::floor(v) || v < 0) return false;
    return true;
}

}  // namespace

std::vector<Lint> lint_fit(const LintInput& in) {
    std::vector<Lint> lints;
    for (const std::string& w : in.warnings) {
        if (contains(w, "compares every output with the label value"))
            lints.push_back({"label_broadcast", "warning", w,
                             contains(w, "class indices")
                                 ? fix(in, "use loss sparse_categorical_crossentropy (--loss "
                                           "sparse_categorical_crossentropy) or one-hot labels",
                                       "use loss='sparse_categorical_crossentropy' or one-hot labels")
                                 : "give labels as wide as the model's output"});
        else if (contains(w, "do not share classes"))
            lints.push_back({"class_coverage", "warning", w,
                             fix(in, "shuffle before splitting: data.shuffle_split true (--shuffle-split)",
                                 "shuffle the rows before splitting (validation_split takes the last rows as they are)")});
    }
    const bool classification = in.output_width >= 2 || in.loss == LossKind::binary_crossentropy;
    if (in.y_validation && classification && class_indices(*in.y_validation) && in.y_validation->size() > 0) {
        const std::set<float> classes(in.y_validation->values().begin(), in.y_validation->values().end());
        if (classes.size() == 1)
            lints.push_back({"single_class_validation", "warning",
                             "every validation label is class " + std::to_string(static_cast<int64_t>(*classes.begin())) +
                                 ": validation accuracy only says how often the model predicts that one class",
                             fix(in, "shuffle before splitting (--shuffle-split), so validation holds every class",
                                 "shuffle the rows before splitting, so validation holds every class")});
    }
    if (in.x_train && in.x_train->rank() == 2 && in.x_train->rows() > 1) {
        const int64_t n = in.x_train->rows(), f = in.x_train->row_width();
        double lo = 0, hi = 0;
        int64_t lo_col = 0, hi_col = 0;
        for (int64_t j = 0; j < f; ++j) {
            double sum = 0, sum2 = 0;
            for (int64_t i = 0; i < n; ++i) sum += in.x_train->at(i, j);
            const double mean = sum / static_cast<double>(n);
            for (int64_t i = 0; i < n; ++i) sum2 += (in.x_train->at(i, j) - mean) * (in.x_train->at(i, j) - mean);
            const double sd = std::sqrt(sum2 / static_cast<double>(n));
            if (sd <= 0) continue;  // a constant column has no scale to compare
            if (lo == 0 || sd < lo) lo = sd, lo_col = j;
            if (sd > hi) hi = sd, hi_col = j;
        }
        if (lo > 0 && hi / lo > 100) {
            char text[200];
            std::snprintf(text, sizeof text,
                          "feature scales differ %.0fx: column %lld has std %.3g, column %lld has std %.3g; the wide "
                          "column dominates the gradients",
                          hi / lo, static_cast<long long>(hi_col), hi, static_cast<long long>(lo_col), lo);
            lints.push_back({"feature_scales", "warning", text,
                             "standardise each feature (subtract its mean, divide by its std) before fitting"});
        }
    }
    if (in.history) {
        const auto it = in.history->history.find("loss");
        if (it != in.history->history.end() && !it->second.empty()) {
            const std::vector<double>& loss = it->second;
            const auto bad = std::find_if(loss.begin(), loss.end(), [](double v) { return !std::isfinite(v); });
            if (bad != loss.end()) {
                lints.push_back({"loss_diverged", "warning",
                                 "the loss became " + std::to_string(*bad) + " at epoch " +
                                     std::to_string(bad - loss.begin() + 1),
                                 fix(in, "lower the learning rate (e.g. --lr 0.01)",
                                     "lower the learning rate (e.g. learning_rate=0.01)")});
            } else if (loss.size() >= 2) {
                const double lowest = *std::min_element(loss.begin(), loss.end());
                if (loss.back() > loss.front() || (loss.size() >= 3 && loss.back() > 1.5 * lowest && loss.back() - lowest > 1e-6)) {
                    char text[160];
                    std::snprintf(text, sizeof text, "the loss rose: %.4g at epoch 1, lowest %.4g, %.4g at epoch %zu",
                                  loss.front(), lowest, loss.back(), loss.size());
                    lints.push_back({"loss_rising", "warning", text,
                                     fix(in, "lower the learning rate (e.g. --lr 0.01)",
                                         "lower the learning rate (e.g. learning_rate=0.01)")});
                }
            }
        }
    }
    if (in.step_overhead_seconds > 0 && in.step_compute_seconds < in.step_overhead_seconds)
        lints.push_back({"overhead_bound", "performance",
                         "each step computes for " + explain_format::seconds(in.step_compute_seconds) +
                             " but costs " + explain_format::seconds(in.step_overhead_seconds) +
                             " to dispatch: the device mostly waits",
                         fix(in, "use a larger batch (--batch-size) or the CPU (--device cpu) for a model this small",
                             "use a larger batch (batch_size=) or the CPU (device='cpu') for a model this small")});
    if (in.steps_per_epoch < 0 && in.batch_size > 0 && in.train_rows > in.batch_size) {
        const int64_t last = in.train_rows % in.batch_size;
        if (last > 0 && last * 10 < in.batch_size)
            lints.push_back({"tiny_last_batch", "warning",
                             "each epoch ends with a batch of " + std::to_string(last) + " rows (batch size " +
                                 std::to_string(in.batch_size) + "): its noisy gradient gets a full step",
                             "choose a batch size that divides " + std::to_string(in.train_rows) +
                                 " rows more evenly, or drop the remainder"});
    }
    return lints;
}

}  // namespace onefit
