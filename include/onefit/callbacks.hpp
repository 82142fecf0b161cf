// Callbacks run on the host at epoch boundaries, where the training program stops to report.
// (Batch-level hooks would force a host round trip per step, the cost onefit exists to remove.)
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onefit/tensor.hpp"

namespace onefit {

using Logs = std::map<std::string, double>;

// Per-epoch lists of every logged value ("loss", "accuracy", "val_loss", ...), like keras.callbacks.History.
struct History {
    std::map<std::string, std::vector<double>> history;
    std::vector<int64_t> epoch;
    const std::vector<double>& operator[](const std::string& key) const;  // throws Error if absent
};

class Sequential;

class Callback {
public:
    virtual ~Callback() = default;
    virtual void on_train_begin() {}
    virtual void on_epoch_begin(int64_t /*epoch*/) {}
    virtual void on_epoch_end(int64_t /*epoch*/, const Logs& /*logs*/) {}
    virtual void on_train_end(const Logs& /*logs*/) {}
    // Set by fit() before on_train_begin; a callback may set model->stop_training = true.
    Sequential* model = nullptr;
    // Set by fit(): where its epoch lines go (FitOptions::out), so that a callback's messages
    // land beside them (in Python, sys.stdout). print() is std::cout when unset.
    std::ostream* out = nullptr;

protected:
    std::ostream& print() const;
};

// A callback from plain functions, like keras.callbacks.LambdaCallback.
class LambdaCallback : public Callback {
public:
    std::function<void(int64_t, const Logs&)> epoch_end;
    std::function<void(int64_t)> epoch_begin;
    void on_epoch_begin(int64_t epoch) override { if (epoch_begin) epoch_begin(epoch); }
    void on_epoch_end(int64_t epoch, const Logs& logs) override { if (epoch_end) epoch_end(epoch, logs); }
};

// The three below follow keras.callbacks (Keras 3) in defaults and semantics. mode "auto" takes
// "min" for losses and errors (loss, val_loss, mae, mse) and "max" for accuracies; other keys
// need an explicit mode. They read and set the model's weights at epoch ends: fit writes the
// program's state back to the model before on_epoch_end.

// Saves the model with save_model after each epoch (or only when `monitor` improved, with
// save_best_only) into the folder `filepath`, where "{epoch}" / "{epoch:02d}" become the 1-based
// epoch. state.json records the epoch, so `onefit fit --resume` continues from a checkpoint.
// save_weights_only: the layers' weights alone, as Keras 3's .weights.h5 (filepath must end in it,
// as Keras requires), which load_weights_h5 and Keras's load_weights read.
class ModelCheckpoint : public Callback {
public:
    explicit ModelCheckpoint(std::string filepath, std::string monitor = "val_loss", bool save_best_only = false,
                             std::string mode = "auto", int verbose = 0, bool save_weights_only = false);
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    std::string filepath, monitor, mode;
    bool save_best_only;
    bool save_weights_only;
    int verbose;
    std::optional<uint64_t> fit_seed;  // recorded in state.json; default: the model's seed
    double best;                       // the best monitored value so far (+-inf before any)
    std::string last_saved;            // the folder of the last save, "" before any
    std::string path_for(int64_t epoch) const;  // filepath with {epoch...} filled in (0-based epoch given)
};

// Stops training when `monitor` has not improved by more than min_delta for `patience` epochs.
// wait counts epochs since the last improvement (reset only when the value also beats
// `baseline`); stopped_epoch is the 0-based epoch that stopped training (0: it did not stop).
// restore_best_weights sets the best epoch's weights at the end of training, stopped or not.
class EarlyStopping : public Callback {
public:
    explicit EarlyStopping(std::string monitor = "val_loss", double min_delta = 0.0, int64_t patience = 0,
                           std::string mode = "auto", bool restore_best_weights = false,
                           int64_t start_from_epoch = 0, std::optional<double> baseline = std::nullopt);
    void on_train_begin() override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    void on_train_end(const Logs& logs) override;
    std::string monitor, mode;
    double min_delta;
    int64_t patience;
    bool restore_best_weights;
    int64_t start_from_epoch;
    std::optional<double> baseline;
    int verbose = 0;
    // State, reset by on_train_begin.
    int64_t wait = 0, stopped_epoch = 0, best_epoch = 0;
    std::optional<double> best;
    std::vector<Tensor> best_weights;
};

// Appends one row per epoch to a CSV file: "epoch,KEY,..." with the keys sorted, as Keras.
// append=false starts a new file; append=true adds rows (and no second header) to an existing one.
// The file is rewritten atomically after each epoch, so it is never seen half written.
class CSVLogger : public Callback {
public:
    explicit CSVLogger(std::string filename, std::string separator = ",", bool append = false);
    void on_train_begin() override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    std::string filename, separator;
    bool append;

private:
    std::string text_;  // the file's contents so far
    std::vector<std::string> keys_;
};

}  // namespace onefit
