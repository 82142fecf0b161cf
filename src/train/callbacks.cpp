// ModelCheckpoint, EarlyStopping and CSVLogger: keras.callbacks' semantics (Keras 3.x source),
// run by fit at epoch ends.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <sys/stat.h>

#include "onefit/callbacks.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"
#include "onefit/model.hpp"

namespace onefit {

std::ostream& Callback::print() const { return out ? *out : std::cout; }
namespace {

// true: larger is better. "auto" as Keras: losses and errors fall, accuracies rise.
bool maximizes(const std::string& monitor, const std::string& mode, const char* who) {
    if (mode == "max") return true;
    if (mode == "min") return false;
    if (mode != "auto") throw Error(std::string(who) + ": mode must be \"auto\", \"min\" or \"max\", got \"" + mode + "\"");
    const std::string name = monitor.rfind("val_", 0) == 0 ? monitor.substr(4) : monitor;
    if (name.find("loss") != std::string::npos || name == "mae" || name == "mse" ||
        name.find("error") != std::string::npos)
        return false;
    if (name.find("acc") != std::string::npos) return true;
    throw Error(std::string(who) + ": cannot tell whether '" + monitor +
                "' should rise or fall; pass mode \"min\" or \"max\"");
}

const double* find_value(const Logs& logs, const std::string& key) {
    const auto it = logs.find(key);
    return it == logs.end() ? nullptr : &it->second;
}

std::string available_keys(const Logs& logs) {
    std::string keys;
    for (const auto& [k, v] : logs) keys += (keys.empty() ? "" : ", ") + k;
    return keys;
}

// A double as Python's repr writes it (shortest round trip, "1.0" not "1"), as Keras's CSV has it.
std::string python_repr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char text[40];
    std::string s(text, std::to_chars(text, text + sizeof text, v).ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

}  // namespace

// ---- ModelCheckpoint ----

ModelCheckpoint::ModelCheckpoint(std::string filepath_, std::string monitor_, bool save_best_only_, std::string mode_,
                                 int verbose_, bool save_weights_only_)
    : filepath(std::move(filepath_)), monitor(std::move(monitor_)), mode(std::move(mode_)),
      save_best_only(save_best_only_), save_weights_only(save_weights_only_), verbose(verbose_) {
    if (filepath.empty()) throw Error("ModelCheckpoint: filepath is empty; give a folder name");
    if (save_weights_only && !filepath.ends_with(".weights.h5"))
        throw Error("ModelCheckpoint: with save_weights_only the filepath must end in .weights.h5 (Keras 3's weights "
                    "file), not '" + filepath + "'");
    best = maximizes(monitor, mode, "ModelCheckpoint") ? -std::numeric_limits<double>::infinity()
                                                        : std::numeric_limits<double>::infinity();
    path_for(0);  // a malformed {epoch...} fails here, before training
}

std::string ModelCheckpoint::path_for(int64_t epoch) const {
    std::string out;
    for (size_t i = 0; i < filepath.size();) {
        const size_t open = filepath.find("{epoch", i);
        if (open == std::string::npos) {
            out += filepath.substr(i);
            break;
        }
        out += filepath.substr(i, open - i);
        const size_t close = filepath.find('}', open);
        const std::string spec = close == std::string::npos ? "" : filepath.substr(open + 6, close - open - 6);
        int width = 0;
        // "{epoch}" or "{epoch:Nd}" / "{epoch:0Nd}" (zero padded to N digits).
        const bool plain = spec.empty();
        const bool padded = spec.size() >= 3 && spec[0] == ':' && spec.back() == 'd' &&
                            std::from_chars(spec.data() + 1, spec.data() + spec.size() - 1, width).ptr ==
                                spec.data() + spec.size() - 1;
        if (close == std::string::npos || (!plain && !padded))
            throw Error("ModelCheckpoint: filepath '" + filepath +
                        "' has a placeholder onefit does not know; use {epoch} or {epoch:02d}");
        char number[32];
        std::snprintf(number, sizeof number, "%0*lld", width, static_cast<long long>(epoch + 1));
        out += number;
        i = close + 1;
    }
    return out;
}

void ModelCheckpoint::on_epoch_end(int64_t epoch, const Logs& logs) {
    if (!model) throw Error("ModelCheckpoint: no model (pass it in FitOptions::callbacks)");
    const std::string path = path_for(epoch);
    if (save_best_only) {
        const double* current = find_value(logs, monitor);
        if (!current) {  // as Keras: a warning, no save
            std::cerr << "onefit: warning: ModelCheckpoint: can save the best model only with '" << monitor
                      << "' in the logs (available: " << available_keys(logs) << "); skipping\n";
            return;
        }
        const bool better = maximizes(monitor, mode, "ModelCheckpoint") ? *current > best : *current < best;
        if (!better) {
            if (verbose > 0)
                print() << "\nEpoch " << epoch + 1 << ": " << monitor << " did not improve from " << best << "\n";
            return;
        }
        if (verbose > 0)
            print() << "\nEpoch " << epoch + 1 << ": " << monitor << " improved from " << best << " to " << *current
                      << ", saving model to " << path << "\n";
        best = *current;
    } else if (verbose > 0) {
        print() << "\nEpoch " << epoch + 1 << ": saving model to " << path << "\n";
    }
    if (save_weights_only) save_weights_h5(*model, path);
    else save_model(*model, path, epoch + 1, fit_seed);
    last_saved = path;
}

// ---- EarlyStopping ----

EarlyStopping::EarlyStopping(std::string monitor_, double min_delta_, int64_t patience_, std::string mode_,
                             bool restore_best_weights_, int64_t start_from_epoch_, std::optional<double> baseline_)
    : monitor(std::move(monitor_)), mode(std::move(mode_)), min_delta(std::fabs(min_delta_)), patience(patience_),
      restore_best_weights(restore_best_weights_), start_from_epoch(start_from_epoch_), baseline(baseline_) {
    maximizes(monitor, mode, "EarlyStopping");  // an unknown direction fails here, before training
    if (patience < 0) throw Error("EarlyStopping: patience must be >= 0");
}

void EarlyStopping::on_train_begin() {
    wait = 0, stopped_epoch = 0, best_epoch = 0;
    best.reset();
    best_weights.clear();
}

void EarlyStopping::on_epoch_end(int64_t epoch, const Logs& logs) {
    const double* current = find_value(logs, monitor);
    if (!current) {
        std::cerr << "onefit: warning: EarlyStopping is conditioned on '" << monitor
                  << "', which is not in the logs (available: " << available_keys(logs) << ")\n";
        return;
    }
    if (epoch < start_from_epoch) return;
    if (restore_best_weights && best_weights.empty()) {  // never set: the current weights are the best
        best_weights = model->get_weights();
        best_epoch = epoch;
    }
    const bool up = maximizes(monitor, mode, "EarlyStopping");
    // Keras: monitor_op(current - min_delta, reference), min_delta negated when minimising.
    auto improves = [&](double value, const std::optional<double>& reference) {
        if (!reference) return true;
        return up ? value - min_delta > *reference : value + min_delta < *reference;
    };
    ++wait;
    if (improves(*current, best)) {
        best = *current;
        best_epoch = epoch;
        if (restore_best_weights) best_weights = model->get_weights();
        if (!baseline || improves(*current, baseline)) wait = 0;  // beat both the baseline and the best
        return;
    }
    if (wait >= patience && epoch > 0) {
        stopped_epoch = epoch;
        model->stop_training = true;
    }
}

void EarlyStopping::on_train_end(const Logs&) {
    if (stopped_epoch > 0 && verbose > 0) print() << "Epoch " << stopped_epoch + 1 << ": early stopping\n";
    if (restore_best_weights && !best_weights.empty()) {
        if (verbose > 0)
            print() << "Restoring model weights from the end of the best epoch: " << best_epoch + 1 << ".\n";
        model->set_weights(best_weights);
    }
}

// ---- CSVLogger ----

CSVLogger::CSVLogger(std::string filename_, std::string separator_, bool append_)
    : filename(std::move(filename_)), separator(std::move(separator_)), append(append_) {}

void CSVLogger::on_train_begin() {
    text_.clear();
    keys_.clear();
    if (append) {
        std::ifstream in(filename, std::ios::binary);
        std::stringstream s;
        s << in.rdbuf();
        text_ = s.str();
        if (!text_.empty() && text_.back() != '\n') text_ += '\n';
    }
    write_file_atomically(filename, text_);  // fails now, before training, when the folder is missing
}

void CSVLogger::on_epoch_end(int64_t epoch, const Logs& logs) {
    if (keys_.empty()) {
        for (const auto& [key, value] : logs) keys_.push_back(key);  // std::map: sorted, as Keras sorts
        if (text_.empty()) {
            text_ += "epoch";
            for (const std::string& key : keys_) text_ += separator + key;
            text_ += "\n";
        }
    }
    text_ += std::to_string(epoch);
    for (const std::string& key : keys_) {
        const double* value = find_value(logs, key);
        text_ += separator + (value ? python_repr(*value) : "NA");  // Keras writes "NA" for a missing key
    }
    text_ += "\n";
    write_file_atomically(filename, text_);
}

}  // namespace onefit
