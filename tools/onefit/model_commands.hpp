// Saved models on the command line: `onefit evaluate` and `onefit predict` over a folder that
// `onefit fit --save` (or save_model) wrote, the data formats every command reads, and the
// persistence flags of `onefit fit` (--save, --resume, --checkpoint, early stopping, --csv-log).
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "config.hpp"

namespace onefit::cli {

// Features and labels from --data: a CSV file (labels in column `label`, default the last), or an
// .npy / IDX features file with its labels in `labels_path` (the format by magic bytes, then
// extension: detect_data_format). "iris" is the built-in set.
LabeledData load_labeled_data(const std::string& source, const std::string& label, const std::string& labels_path);

// Labels read as names (`classes`, numbered in their sorted order) renumbered as `model` numbers
// its classes (its class_names), in each of `labels`: a file with fewer or reordered classes
// must not shift them. Error naming `source` for a name the model does not know, or for names
// given to a model that records none. Nothing to do for numbered labels (classes empty).
void number_classes_as(const Sequential& model, const std::vector<std::string>& classes, const std::string& source,
                       const std::vector<Tensor*>& labels);

// `onefit fit`'s persistence: made before the model (it loads --resume and checks every output
// folder, so a typo fails before training), then it sets the fit's options and saves at the end.
class Persistence {
public:
    explicit Persistence(const FitConfig& config);
    std::optional<Sequential> resumed;  // the --resume model, compiled, with its optimizer state
    void apply(FitOptions& options);    // initial_epoch and seed of --resume; the callbacks
    void finish(const Sequential& model, const History& history, const FitOptions& options);  // --save

private:
    const FitConfig& config_;
    TrainingState state_;
    std::unique_ptr<ModelCheckpoint> checkpoint_;
    std::unique_ptr<EarlyStopping> early_stopping_;
    std::unique_ptr<CSVLogger> csv_logger_;
};

// The folder a path would be created in must exist: checked up front, before training.
void check_parent_exists(const std::string& path, const std::string& flag);

struct ModelFlags {
    std::string model, data, label, labels, output, onnx;
    int64_t batch_size = 32;
};

// The `evaluate` and `predict` subcommands, both reading `flags`.
std::pair<CLI::App*, CLI::App*> add_model_commands(CLI::App& app, ModelFlags& flags);
int run_evaluate(const ModelFlags& flags);  // prints "loss: L - METRIC: V ..."
int run_predict(const ModelFlags& flags);   // CSV pred_0..pred_K-1 to --output or stdout
// `onefit export --model DIR --onnx FILE.onnx`: the saved model's predict as ONNX.
CLI::App* add_export_command(CLI::App& app, ModelFlags& flags);
int run_export(const ModelFlags& flags);

}  // namespace onefit::cli
