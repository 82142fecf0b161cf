// Callbacks run on the host at epoch boundaries, where the training program stops to report.
// (Batch-level hooks would force a host round trip per step, the cost onefit exists to remove.)
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

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
};

// A callback from plain functions, like keras.callbacks.LambdaCallback.
class LambdaCallback : public Callback {
public:
    std::function<void(int64_t, const Logs&)> epoch_end;
    std::function<void(int64_t)> epoch_begin;
    void on_epoch_begin(int64_t epoch) override { if (epoch_begin) epoch_begin(epoch); }
    void on_epoch_end(int64_t epoch, const Logs& logs) override { if (epoch_end) epoch_end(epoch, logs); }
};

}  // namespace onefit
