// `onefit fit [CONFIG.json] [flags]`: trains the model a config describes (the seed
// experiment by default) and reports the final metrics and the time of model.fit.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "config.hpp"

namespace onefit::cli {

// What the fit flags set; an empty optional keeps the config file's value.
struct FitFlags {
    std::string config_path;  // empty: the defaults (the seed experiment)
    std::optional<std::string> data, label, layers, loss, optimizer, metrics, device;
    std::optional<int64_t> epochs, batch_size, steps_per_epoch, verbose, seed, split_seed;
    std::optional<double> learning_rate, validation_split, test_size;
    std::optional<bool> shuffle, shuffle_split;
    bool profile = false;  // --profile: print where the fit's time went
    // Persistence (fit_command.cpp): --labels, --save, --resume, --checkpoint[-best],
    // --early-stopping-patience, --monitor, --csv-log.
    std::optional<std::string> labels, save, resume, checkpoint, monitor, csv_log;
    std::optional<int64_t> early_stopping_patience;
    bool checkpoint_best = false;
};

// The data a config names, loaded (iris, CSV, .npy or IDX) and split into training and
// validation rows the way `onefit fit` does (a test split, or Keras's validation_split).
struct SplitData {
    std::string name;  // "iris" or the data path, for the report and for errors
    Tensor x_train, y_train;
    std::optional<std::pair<Tensor, Tensor>> validation;  // the test split, when test_size > 0
    int64_t train_rows = 0, validation_rows = 0;          // as fit will use them
    Shape sample_shape;  // one sample's shape as read: (height, width, channels) for images
    std::vector<std::string> class_names;  // the labels' names when they are names (a CSV's)
};
SplitData split_data(const FitConfig& config);

// The fit options a config gives for its split data (batch, epochs, verbosity, shuffling, steps,
// validation); the device, profile and callbacks are the caller's.
FitOptions fit_options(const FitConfig& config, const SplitData& data);

// The bytes of the files --data and --labels name (0 for the built-in iris), for --profile.
double data_file_bytes(const FitConfig& config);

// A loss left to choose (a user's data without --loss) chosen from the labels and the last
// layer, and said in one line; a given or resumed loss stays.
void settle_loss(FitConfig& config, const Tensor& labels, std::ostream* say);

// fit_flags.cpp: the subcommand and its flags, and the config they produce.
CLI::App* add_fit_command(CLI::App& app, FitFlags& flags);
FitConfig resolve_fit_config(const FitFlags& flags);  // the config file, then the flags over it

// The `onefit fit` flags among another subcommand's arguments (explain, sweep), over the config
// file they name.
FitConfig fit_config_from(const std::vector<std::string>& args, const std::string& command);

// The config's layers on `features` inputs with its seed; compile_from compiles them with its
// optimizer, learning rate, loss and metrics.
// The config's model on the data's samples: images keep their shape when the first layer is an
// image layer (Conv2D, pooling, Flatten, Reshape), a Dense model sees them flattened.
Sequential model_from(const FitConfig& config, const Shape& sample_shape);
void compile_from(Sequential& model, const FitConfig& config);

// fit_command.cpp: loads the data, builds and trains the model, prints the report; returns
// the exit status.
int run_fit(const FitConfig& config, bool profile = false);

}  // namespace onefit::cli
