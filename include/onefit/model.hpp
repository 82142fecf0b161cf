// Sequential: the Keras-shaped model. compile() lowers layers + loss + optimizer into a
// static training program; fit() runs it, stopping on the host only at epoch ends that need
// logs, validation results or callbacks.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onefit/callbacks.hpp"
#include "onefit/dataset.hpp"
#include "onefit/device.hpp"
#include "onefit/layers.hpp"
#include "onefit/losses.hpp"
#include "onefit/optimizers.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

// Where a fit's time went, filled in when FitOptions::profile points at one (free when off).
struct FitProfile {
    std::string device;
    // What ran on the CPU: "SIMD AVX2; GEMM NN 1 thread: xsmm, ..." (the GEMM part only when a
    // layer was large enough to use one).
    std::string kernels;
    double prepare_seconds = 0;     // checks, packing, program build, device upload
    double program_seconds = 0;     // inside the compiled program: training and validation
    double validation_seconds = 0;  // the part of program_seconds spent on validation
    double host_seconds = 0;        // between program calls: logs, progress output, callbacks
    double read_back_seconds = 0;   // parameters and optimizer state back to the host
    int64_t program_calls = 0;      // host -> program calls (1 when nothing looks between epochs)
    int64_t steps = 0;              // optimizer steps run
};

struct FitOptions {
    int64_t batch_size = 32;
    int64_t epochs = 1;
    // The epoch to start at (Keras's initial_epoch), e.g. to resume: epochs [initial_epoch,
    // epochs) run, and shuffling continues exactly as if the earlier epochs had just run.
    int64_t initial_epoch = 0;
    // 0 silent, 1 progress bar (live on a terminal), 2 one line per epoch; -1 = "auto" (1).
    int verbose = -1;
    // Validation: explicit data, or the last fraction of x/y (taken before shuffling, like Keras).
    std::optional<std::pair<Tensor, Tensor>> validation_data;
    // Keras's sample_weight: one weight per row of x (N,), multiplying that row's loss (the batch's
    // loss is still divided by its rows; metrics are unweighted, as Keras's compile metrics); with
    // validation_split its last rows weight the validation rows. validation_sample_weight: one per
    // row of validation_data. Arrays only (not with a Dataset).
    std::optional<Tensor> sample_weight;
    std::optional<Tensor> validation_sample_weight;
    std::optional<Dataset> validation_dataset;
    double validation_split = 0.0;
    int64_t validation_batch_size = -1;  // -1: batch_size, but at least 64 (only float rounding differs)
    // Batches per epoch; -1: one pass over the data. With arrays, batches continue across
    // epochs (a new shuffled pass starts when one runs out), as Keras 3 does.
    int64_t steps_per_epoch = -1;
    bool shuffle = true;
    std::vector<Callback*> callbacks;
    std::optional<uint64_t> seed;  // shuffling and dropout; default: the model's seed
    std::ostream* out = nullptr;   // where progress goes; default std::cout
    // false: warnings are only collected in Sequential::warnings() (the Python module raises
    // them as Python warnings); true: also printed to std::cerr when verbose != 0.
    bool print_warnings = true;
    Device device = Device::cpu;
    FitProfile* profile = nullptr;
};

struct CompileOptions {
    std::vector<std::string> metrics;  // "accuracy"/"acc", "mae", "mse" (Keras names)
};

class TrainingProgram;  // the compiled program (src/program)
struct FitPlan;

class Sequential {
public:
    // input_shape: the features of one sample, e.g. {4}. seed: weight initialisation (and
    // by default shuffling and dropout), so a seed gives bit-identical fits.
    explicit Sequential(Shape input_shape, uint64_t seed = 0);
    // A model of several inputs (a Functional model's, onefit/functional.hpp): layer input -1 - k
    // (Layer::inputs) is input k. Its data's rows hold the inputs' values side by side, each
    // flattened, in this order (input_shape() is that row's (width,)).
    static Sequential with_inputs(std::vector<Shape> input_shapes, uint64_t seed = 0);
    Sequential(Sequential&&) noexcept;
    Sequential& operator=(Sequential&&) noexcept;
    ~Sequential();

    Sequential& add(Layer layer);
    const std::vector<Layer>& layers() const { return layers_; }
    const Shape& input_shape() const { return input_shape_; }
    const std::vector<Shape>& input_shapes() const { return input_shapes_; }  // one, or each input's

    void compile(const Optimizer& optimizer, const Loss& loss, const CompileOptions& options = {});
    void compile(const std::string& optimizer, const std::string& loss, const std::vector<std::string>& metrics = {});

    History fit(const Tensor& x, const Tensor& y, const FitOptions& options = {});
    History fit(const Dataset& train, const FitOptions& options = {});

    // Loss and metrics over the data, in batches, as Keras's evaluate; sample_weight (N,) weights
    // each row's loss (not the metrics), as Keras's.
    Logs evaluate(const Tensor& x, const Tensor& y, int64_t batch_size = 32, const Tensor* sample_weight = nullptr);
    Tensor predict(const Tensor& x, int64_t batch_size = 32);
    // The compiled loss and metrics of given predictions (rows of the output's width) against y,
    // as Keras's model.compute_loss / compute_metrics: a softmax or sigmoid output's
    // crossentropy from the probabilities (clipped), a from_logits loss from the values as
    // logits. evaluate() is this over predict()'s output but for that: it takes the fused logits.
    Logs evaluate_predictions(const Tensor& predictions, const Tensor& y) const;

    // A Keras-like table: layer (type), output shape, parameter count; totals.
    std::string summary() const;
    int64_t count_params() const;
    // One sample's output shape (the last layer's; the input's for a model without layers).
    Shape output_shape() const;
    // Each layer's name: the one given, else Keras's default (dense, dense_1, ...; summary()'s).
    std::vector<std::string> layer_names() const;

    // Kernels in Keras's layout (in, out) and biases, layer by layer.
    std::vector<Tensor> get_weights() const;
    void set_weights(const std::vector<Tensor>& weights);
    void save(const std::string& dir) const;  // save_model(*this, dir) (onefit/io.hpp)

    // Warnings compile/fit found (also printed by fit when verbose != 0).
    const std::vector<std::string>& warnings() const { return warnings_; }

    // What compile() was given (Keras's model.loss and model.optimizer); throw Error before compile().
    const Loss& loss() const;
    const Optimizer& optimizer() const;
    const std::vector<std::string>& metrics() const;
    // A new learning rate for the compiled optimizer, keeping its state (slots and step count),
    // as Keras users change model.optimizer.learning_rate between fits. Throws Error before compile().
    void set_learning_rate(float learning_rate);

    // The model's name (Keras's model.name), saved in its files; empty: Keras's default for the
    // model's kind, "sequential" or (a graph) "functional" (display_name()).
    std::string name;
    std::string display_name() const;
    // Each input's name (Keras's Input(name=...)), saved in the model's files; empty: Keras's
    // defaults, input_layer, input_layer_1, ... (input_name(k)).
    std::vector<std::string> input_names;
    std::string input_name(size_t k) const;
    // Every input's name, defaults filled in; throws Error when input_names is set with another
    // count than the inputs' (the files' writers call it, so no file is written that cannot load).
    std::vector<std::string> all_input_names() const;
    bool stop_training = false;  // a callback may set it to end fit after the current epoch
    // The label classes' names in output order, when the model learnt from named labels (a CSV's
    // "setosa", ...: output i is class_names[i]); saved with the model, so data read later can
    // be numbered as it was. Empty for numbered labels.
    std::vector<std::string> class_names;
    const TrainingProgram& program() const;  // throws Error before compile()
    // The compiled program's mutable state (parameters, optimizer slots and step count), for
    // saving and restoring a training position (src/io). Throws Error before compile().
    TrainingProgram& program_state();
    uint64_t seed() const { return seed_; }

private:
    History run_fit(FitPlan& plan, const FitOptions& options);
    Shape input_shape_;
    std::vector<Shape> input_shapes_;
    uint64_t seed_;
    std::vector<Layer> layers_;
    std::vector<Tensor> weights_;  // Keras layout; the source of truth between fits
    std::unique_ptr<TrainingProgram> program_;
    std::vector<std::string> warnings_;
    // Inside fit: add, compile and fit from a callback would free the program that is running.
    bool fitting_ = false;
    void require_not_fitting(const char* what) const;
};

}  // namespace onefit
