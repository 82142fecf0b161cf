// The training program: what compile() lowers a Sequential model, its loss and optimizer
// into. Plain data (ggml-style): a list of ops with fixed widths, parameter offsets into one
// flat buffer, and the optimizer state beside it. Device executors (src/runtime/*) run it
// without allocating; shapes were checked here, once, so they trust them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/layer_kinds.hpp"
#include "onefit/layers.hpp"
#include "onefit/losses.hpp"
#include "onefit/optimizers.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

struct DenseOp {
    int64_t in = 0, out = 0;
    Activation activation = Activation::linear;
    bool use_bias = true;
    int64_t weight = 0, bias = 0;  // offsets into TrainingProgram::params
    // Weight layout: (out, in) when in > out, else Keras's (in, out). Either way the small
    // kernels' innermost loop runs over the longer side (Iris: 32, not 4 or 3), contiguous.
    // Exception: a first layer on the BLAS path keeps (in, out); it needs no input gradient, so
    // both its products then run untransposed (the MNIST layer's forward paid a transpose of its
    // 784 x 256 weights every step).
    bool out_major = false;
    // Large products go to the BLAS library; tiny ones stay in our fused loops (bench/gemm_choice).
    bool use_blas = false;
};

// A Conv2D: im2col rows (one per output pixel, kernel_h * kernel_w * channels wide) times the
// kernel in Keras's layout (kh, kw, in, filters), which is that product's (rows, filters) matrix.
struct Conv2DOp {
    Activation activation = Activation::linear;
    bool use_bias = true;
    int64_t weight = 0, bias = 0;
    int64_t patch = 0, filters = 0;  // the product's inner and output widths
    bool use_blas = false;
    bool identity_patches = false;  // 1x1, stride 1, no padding: the input is its own im2col
};

// One parameter array of an op: get_weights's shape (Keras's layout) and where it starts in
// TrainingProgram::params (a non-trainable array: in TrainingProgram::state). Stored in that
// layout, except a Dense kernel (see DenseOp).
struct ParamRef {
    const char* name = "";
    Shape shape;
    int64_t offset = 0;
    bool trainable = true;
    Regularizer regularizer{};  // its penalty on the loss (none by default)
};

struct ProgramOp {
    Layer::Kind kind = Layer::Kind::Dense;
    std::string layer_name;
    Layer layer;         // as the user built it (an op reads its fields)
    nn::LayerSpec spec;  // its kind's declaration of it (shapes, parameters, scratch)
    // The ops whose outputs it takes (-1: the model's input; earlier ops only), one per
    // spec.inputs entry: the previous op in a chain, two or more for a merge.
    std::vector<int32_t> inputs;
    // Per sample (spec.input and spec.output's elements): a batch is rows of in_width (out_width) floats.
    int64_t in_width = 0, out_width = 0;
    std::vector<ParamRef> params;   // trainable arrays, then state, in get_weights's order
    int64_t params_offset = 0;      // where its trainable arrays start in TrainingProgram::params
    int64_t state_offset = 0;       // where its non-trainable arrays start in TrainingProgram::state
    int64_t trainable_count = 0;    // how many trainable values it has (a shared layer's: its first call's)
    // A shared layer's later call (Layer::shares): the op of its first call, whose parameters and
    // state (offsets above, dense, conv) it uses; its own params list is empty. -1: none.
    int32_t shares = -1;
    DenseOp dense;
    Conv2DOp conv;

    // The activation applied after the op's product (linear for ops without one).
    Activation activation() const {
        return kind == Layer::Kind::Dense ? dense.activation : kind == Layer::Kind::Conv2D ? conv.activation
                                                                                          : Activation::linear;
    }
    bool has_product() const { return kind == Layer::Kind::Dense || kind == Layer::Kind::Conv2D; }
    // Its output's penalty (Keras's activity_regularizer; product layers only).
    const Regularizer& activity_regularizer() const { return layer.activity_regularizer; }
};

class TrainingProgram {
public:
    std::vector<ProgramOp> ops;
    Shape input_shape;  // per sample (several inputs: their values side by side, (sum of widths,))
    // Each input's per-sample shape (one, or a Functional model's several: op source -1 - k reads
    // input k, whose values are columns [input_offset(k), + its width) of each input row).
    std::vector<Shape> input_shapes;
    int64_t input_width = 0, output_width = 0;
    int64_t input_offset(size_t k) const {
        int64_t offset = 0;
        for (size_t j = 0; j < k; ++j) offset += shape_elements(input_shapes[j]);
        return offset;
    }
    Loss loss;
    Optimizer optimizer;
    std::vector<std::string> metric_names;
    // The last Dense's softmax (sigmoid) and a crossentropy (binary crossentropy) are fused: the
    // loss takes the logits, as Keras 2 does, so its gradient is p - y with no Jacobian pass.
    bool loss_takes_logits = false;
    // Whether some op takes another input than the previous op's output (a Functional model). The
    // CPU device runs any graph; the devices and paths that run chains only refuse one by name.
    bool graph = false;

    // State that persists across fits: parameters (program layout), optimizer slots, step count.
    std::vector<float> params;
    std::vector<float> state;  // non-trainable arrays (moving statistics): saved, never optimized
    std::vector<float> optimizer_slots;
    int64_t optimizer_step = 0;
    // Counts set_program_weights calls, so a running fit sees weights a callback set.
    int64_t weights_version = 0;

    int64_t param_count() const { return static_cast<int64_t>(params.size()); }
    // Multiply-adds of one forward pass's products (Dense, Conv2D) for one sample (the work of a
    // step is about 3x this). The other ops' window reads are explain's moved values, not flops.
    int64_t forward_macs_per_sample() const;
};

// Lowers layers + loss + optimizer. Checks shapes and names, assigns parameter offsets and
// layouts, initialises weights from the seed. Throws Error naming the layer on any problem.
TrainingProgram lower_sequential(const Shape& input_shape, const std::vector<Layer>& layers, const Loss& loss,
                                 const Optimizer& optimizer, const std::vector<std::string>& metrics, uint64_t seed);
// The same for a model of several inputs (a Functional model's; one is lower_sequential's).
TrainingProgram lower_model(const std::vector<Shape>& input_shapes, const std::vector<Layer>& layers, const Loss& loss,
                            const Optimizer& optimizer, const std::vector<std::string>& metrics, uint64_t seed);
// A model's inputs as one row: one input's shape, or several inputs' values side by side (flat).
Shape joined_input_shape(const std::vector<Shape>& input_shapes);

// Throws Error unless the shape is (features), (height, width) or (height, width, channels), positive.
void check_input_shape(const Shape& input_shape);

// Throws Error unless the learning rate is positive (compile, and a rate changed later).
void check_learning_rate(float learning_rate);

// Keras-layout weights (per layer with parameters, in order: a Dense's kernel (in, out) and bias
// (out,), a Conv2D's kernel (kh, kw, in, filters) and bias) <-> program parameters.
std::vector<Tensor> program_weights(const TrainingProgram& program);
void set_program_weights(TrainingProgram& program, const std::vector<Tensor>& weights);

// Orders of a parameter-shaped array (the parameters, or one optimizer slot): the program's own
// layout; Keras's (get_weights's arrays back to back: each kernel (in, out) row-major, then its
// bias), which saved optimizer state uses so that it does not depend on layout choices; and the
// program layout of onefit 0.1.0 saves (kernels (out, in) exactly when in > out).
enum class ParamOrder { program, keras, legacy_program };
// dst = src reordered; both hold param_count() floats and must not overlap.
void reorder_params(const TrainingProgram& program, ParamOrder from, const float* src, ParamOrder to, float* dst);


}  // namespace onefit
