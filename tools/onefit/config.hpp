// `onefit fit`'s settings: FitConfig, read from a JSON file and then overridden by flags.
// Every key is optional; on the built-in iris the defaults are the seed experiment
// (examples/iris.json). On a user's own data (any other data.source), a key left out takes
// Keras's default instead of the seed's: no test split, Adam's learning rate 0.001 (each
// optimizer's Keras default), shuffling every epoch, batch size 32, and a loss chosen from the
// labels and the last layer (apply_keras_defaults, choose_loss):
//
// {
//   "data": {
//     "source": "iris",         // "iris" (built in) or a CSV file, relative to the config's folder
//     "label": "species",       // CSV label column: header name or 0-based index; default: the last
//     "test_size": 0.3,         // fraction held out as validation data (0: none, see fit.validation_split)
//     "shuffle_split": false,   // shuffle the rows before splitting (seeded by split_seed)
//     "split_seed": 0
//   },
//   "model": {
//     "layers": [               // the input size comes from the data; "type" defaults to "dense"
//       {"type": "dense", "units": 32, "activation": "relu", "name": "relu", "use_bias": true},
//       {"type": "dropout", "rate": 0.2},
//       {"type": "dense", "units": 3, "activation": "softmax", "name": "softmax"}
//     ]
//     // Image models (data from an .npy of (N, H, W[, C]) or IDX images) take, with Keras's
//     // argument names and defaults: {"type": "conv2d", "filters": 32, "kernel_size": 3,
//     // "strides": 1, "padding": "valid", "activation": "relu", "use_bias": true},
//     // {"type": "max_pooling2d" or "average_pooling2d", "pool_size": 2, "strides": null,
//     // "padding": "valid"}, {"type": "global_average_pooling2d"}, {"type": "flatten"},
//     // {"type": "reshape", "target_shape": [7, 7, 16]} and {"type": "batch_normalization",
//     // "momentum": 0.99, "epsilon": 0.001, "center": true, "scale": true}; a size or stride is
//     // an integer or a pair [h, w]. Every kind's keys are its declared arguments (make_layer,
//     // include/onefit/layers.hpp): an unknown one is named with the ones the kind takes.
//   },
//   "compile": {
//     "optimizer": {"name": "adam", "learning_rate": 0.1},  // or just "adam" (learning rate 0.1);
//     // also "clipnorm", "clipvalue" or "global_clipnorm", and a Keras schedule as the rate:
//     // "learning_rate": {"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.1,
//     // "decay_steps": 100, "decay_rate": 0.9}} (Keras's serialised form)
//     "loss": "log_cosh",       // Keras names: mse, mae, huber, sparse_categorical_crossentropy, ...
//     "metrics": []             // e.g. ["accuracy", "mae"]
//   },
//   "fit": {
//     "batch_size": 20,
//     "epochs": 20,
//     "validation_split": 0.0,  // only with data.test_size 0: the last fraction of the rows
//     "shuffle": false,         // reshuffle the training rows every epoch (off: the seed's pipeline)
//     "seed": 0,                // weight initialisation, shuffling and dropout
//     "verbose": 1,             // 0 silent, 1 progress bar, 2 one line per epoch
//     "steps_per_epoch": null,  // batches per epoch; null: one pass over the training rows
//     "device": "cpu"           // "cpu" or "cuda"
//   }
// }
//
// Comments like these are allowed. Unknown keys, wrong types and values out of range are
// errors that name the file and the key path ("iris.json: unknown key 'compile.optimiser'").
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "onefit/onefit.hpp"

namespace onefit::cli {

// Limits that keep a mistyped number from exhausting memory or running for days.
inline constexpr int64_t kMaxUnits = 1'000'000;
inline constexpr int64_t kMaxEpochs = 1'000'000;
inline constexpr int64_t kMaxSteps = 1'000'000'000;
inline constexpr int64_t kMaxParams = 100'000'000;

struct FitConfig {
    // data
    std::string source = "iris";  // "iris" or a CSV path (relative to the working directory)
    std::string label;            // CSV label column; empty: the last column
    double test_size = 0.3;
    bool shuffle_split = false;
    uint64_t split_seed = 0;
    // model
    std::vector<Layer> layers = {Dense(32, "relu", true, "relu"), Dense(3, "softmax", true, "softmax")};
    // model.inputs: a Functional model's several inputs, each one's shape ([4] or 4); a data row
    // holds their values side by side. Empty: one input, the data's features.
    std::vector<Shape> input_shapes;
    // compile
    std::string optimizer = "adam";
    double learning_rate = 0.1;
    LearningRateSchedule learning_rate_schedule;  // "learning_rate": {"class_name": ..., "config": {...}}
    float clipnorm = 0.0f, clipvalue = 0.0f, global_clipnorm = 0.0f;  // Keras's gradient clipping (0: off)
    std::string loss = "log_cosh";
    std::vector<std::string> metrics;
    // fit
    int64_t batch_size = 20;
    int64_t epochs = 20;
    double validation_split = 0.0;
    bool shuffle = false;  // the seed feeds an unshuffled tf.data pipeline; Keras's array default is true
    uint64_t seed = 0;
    int verbose = 1;
    int64_t steps_per_epoch = -1;  // -1: one pass over the training rows
    std::string device = "cpu";    // "cpu" or "cuda"
    // Flags only (not in the config file): labels of an .npy/IDX --data, and persistence.
    std::string labels;                  // --labels: the label array beside an .npy or IDX --data
    std::string save_dir;                // --save: save_model at the end
    std::string resume_dir;              // --resume: load the model and state, continue to epochs
    std::string checkpoint_dir;          // --checkpoint: ModelCheckpoint folder ({epoch} allowed)
    bool checkpoint_best = false;        // --checkpoint-best: save_best_only
    int64_t early_stopping_patience = -1;  // --early-stopping-patience; -1: off
    std::string monitor = "val_loss";    // --monitor: what checkpoint and early stopping watch
    std::string csv_log;                 // --csv-log: CSVLogger file
    // Keys the config file or a flag set, by config key path ("compile.loss", "model.layers"):
    // what the user's-data defaults and --resume's checks must leave alone or compare.
    std::set<std::string> given;
    bool has(const std::string& key) const { return given.count(key) > 0; }
    bool seed_run() const { return source == "iris"; }
};

// On a user's own data, every seed default the user did not give becomes Keras's (see the top
// of this file); on the built-in iris nothing changes. The loss becomes "" (chosen from the
// labels once they are loaded, by choose_loss).
void apply_keras_defaults(FitConfig& config);

// The optimizer the config describes: its name and rate (or schedule) and clipping.
Optimizer config_optimizer(const FitConfig& config);

// Keras's default learning rate for an optimizer: SGD 0.01, the others 0.001.
double keras_learning_rate(const std::string& optimizer);

// The loss a Keras user would pick for these labels (one value per row) and this last layer,
// and why (one line): integer labels in [0, K) and a K-unit softmax:
// sparse_categorical_crossentropy; one sigmoid unit and 0/1 labels: binary_crossentropy;
// otherwise mean_squared_error.
std::pair<std::string, std::string> choose_loss(const std::vector<Layer>& layers, const Tensor& labels);

// Reads a config file over the defaults. Throws Error "PATH: ..." for anything wrong with it.
FitConfig read_config(const std::string& path);

// Checks shared by the config file and the flags. `where` starts each message: "iris.json:
// 'fit.epochs'" or "--epochs".
void check_int(int64_t value, int64_t min, int64_t max, const std::string& where);
void check_fraction(double value, const std::string& where);  // [0, 1)
void check_learning_rate(double value, const std::string& where);
void check_loss(const std::string& name, const std::string& where);
void check_device(const std::string& name, const std::string& where);
void check_optimizer(const std::string& name, const std::string& where);
void check_metrics(const std::vector<std::string>& names, const std::string& where);
Layer make_dense(int64_t units, const std::string& activation, bool use_bias, const std::string& name,
                 const std::string& where);
Layer make_dropout(double rate, const std::string& name, const std::string& where);
// The model in a line: "4-32-3", "28x28x1-conv32(3x3)-maxpool(2x2)-flatten-dropout(0.5)-10".
std::string layers_text(const Shape& input_shape, const std::vector<Layer>& layers);

// A message fragment safe to print on one line: control and non-ASCII bytes escaped, cut
// after max_chars.
std::string printable(const std::string& text, size_t max_chars = 60);

}  // namespace onefit::cli
