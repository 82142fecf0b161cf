#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/rng.hpp"
#include "nn/initializers.hpp"
#include "nn/optimizer_math.hpp"
#include "onefit/error.hpp"
#include "program/training_program.hpp"

namespace onefit {
namespace {

// Layers with at least this many weights (in x out) go to LIBXSMM (gemm_f32); below it our
// register kernels win. bench/small_kernels, one layer's fwd + dw + dx at 32 rows: 8 x 32 and
// 32 x 8 tie (~600 ns each way), 16 x 32 LIBXSMM 700 vs ours 1,730 ns, MNIST's 256 x 10 at
// 128 rows 12 vs 43 us; Iris's 4 x 32 and 32 x 3 stay ours (350 vs 500 ns, 210 vs 450 ns).
constexpr int64_t kBlasMinWeights = 512;
constexpr int64_t kBlasMinConvMacsPerSample = 1 << 16;

}  // namespace

int64_t TrainingProgram::forward_macs_per_sample() const {
    int64_t macs = 0;
    for (const ProgramOp& op : ops)
        if (op.has_product()) macs += op.spec.macs_per_sample;
    return macs;
}

void check_input_shape(const Shape& input_shape) {
    bool positive = !input_shape.empty() && input_shape.size() <= 3;
    for (int64_t d : input_shape) positive = positive && d >= 1;
    if (!positive)
        throw Error("Sequential: input shape must be (features) or (height, width, channels), all positive, got " +
                    shape_to_string(input_shape));
}

void check_learning_rate(float learning_rate) {
    if (!(learning_rate > 0.0f))
        throw Error("optimizer: learning_rate must be positive, got " + std::to_string(learning_rate));
}

// Keras's rules: each clip is off (0) or positive, and at most one is set.
void check_clipping(const Optimizer& o) {
    int set = 0;
    for (const auto& [name, value] : {std::pair{"clipnorm", o.clipnorm}, std::pair{"global_clipnorm", o.global_clipnorm},
                                      std::pair{"clipvalue", o.clipvalue}}) {
        if (!(value >= 0.0f) || !std::isfinite(value))
            throw Error(std::string("optimizer: ") + name + " must be positive (or 0: off), got " + std::to_string(value));
        set += value > 0.0f;
    }
    if (set > 1)
        throw Error("optimizer: only one of clipnorm, clipvalue and global_clipnorm can be set, as in Keras (clipnorm=" +
                    std::to_string(o.clipnorm) + ", clipvalue=" + std::to_string(o.clipvalue) +
                    ", global_clipnorm=" + std::to_string(o.global_clipnorm) + ")");
}

Shape joined_input_shape(const std::vector<Shape>& input_shapes) {
    if (input_shapes.size() == 1) return input_shapes[0];
    int64_t width = 0;
    for (const Shape& s : input_shapes) width += shape_elements(s);
    return {width};
}

TrainingProgram lower_sequential(const Shape& input_shape, const std::vector<Layer>& layers, const Loss& loss,
                                 const Optimizer& optimizer, const std::vector<std::string>& metrics, uint64_t seed) {
    return lower_model(std::vector<Shape>{input_shape}, layers, loss, optimizer, metrics, seed);
}

TrainingProgram lower_model(const std::vector<Shape>& input_shapes, const std::vector<Layer>& layers, const Loss& loss,
                            const Optimizer& optimizer, const std::vector<std::string>& metrics, uint64_t seed) {
    if (input_shapes.empty()) throw Error("Model: it has no inputs");
    for (const Shape& shape : input_shapes) check_input_shape(shape);
    const Shape input_shape = joined_input_shape(input_shapes);
    if (layers.empty()) throw Error("Sequential: the model has no layers; add a Dense layer");
    if (optimizer.learning_rate_schedule.kind == ScheduleKind::constant) check_learning_rate(optimizer.learning_rate);
    if (optimizer.kind == OptimizerKind::sgd && !(optimizer.momentum >= 0.0f && optimizer.momentum <= 1.0f))
        throw Error("SGD: momentum must be in [0, 1], as Keras requires, got " + std::to_string(optimizer.momentum));
    check_clipping(optimizer);
    if (!(optimizer.weight_decay >= 0.0f && std::isfinite(optimizer.weight_decay)))
        throw Error("optimizer: weight_decay must be a non-negative number, got " + std::to_string(optimizer.weight_decay));
    try {
        check_schedule(optimizer.learning_rate_schedule);
    } catch (const Error& e) {
        throw Error(std::string("optimizer: learning_rate: ") + e.what());
    }
    if (loss.label_smoothing != 0.0f) {  // Keras's CategoricalCrossentropy and BinaryCrossentropy take it
        if (loss.kind != LossKind::categorical_crossentropy && loss.kind != LossKind::binary_crossentropy)
            throw Error("loss: label_smoothing is for categorical_crossentropy and binary_crossentropy, not " +
                        loss_name(loss.kind) + " (Keras's SparseCategoricalCrossentropy has none; use one-hot labels)");
        if (!(loss.label_smoothing >= 0.0f && loss.label_smoothing <= 1.0f))
            throw Error("loss: label_smoothing must be in [0, 1], got " + std::to_string(loss.label_smoothing));
    }
    if (loss.kind == LossKind::huber && !(loss.delta > 0.0f))
        throw Error("huber: delta must be positive, got " + std::to_string(loss.delta));

    TrainingProgram program;
    program.input_shape = input_shape;
    program.input_shapes = input_shapes;
    program.input_width = shape_elements(input_shape);
    program.loss = loss;
    program.optimizer = optimizer;
    program.metric_names = metrics;

    const std::vector<std::string> names = default_layer_names(layers);
    const std::vector<nn::LayerSpec> specs = nn::layer_specs(input_shapes, layers, names);
    int64_t offset = 0, state = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
        const Layer& layer = layers[i];
        ProgramOp op;
        // A Conv1D is a Conv2D of height 1 (its window says so): every device runs it as one.
        op.kind = layer.kind == Layer::Kind::Conv1D ? Layer::Kind::Conv2D : layer.kind;
        op.inputs = nn::layer_sources(layers, i);
        if (op.inputs[0] >= 0 && nn::layer_kind(layer.kind).check_input)
            throw Error("layer '" + names[i] + "' (" + layer_class_name(layer.kind) +
                        ") must read a model input directly (be the first layer, or be called on an Input): it takes integer "
                        "indices");
        op.layer_name = names[i];
        op.layer = layer;
        op.spec = specs[i];
        op.in_width = shape_elements(specs[i].input);
        op.out_width = shape_elements(specs[i].output);
        op.params_offset = offset;
        op.state_offset = state;
        for (const nn::ParamSpec& p : specs[i].params) {
            int64_t& next = p.trainable ? offset : state;
            op.params.push_back({p.name, p.shape, next, p.trainable, p.regularizer});
            next += shape_elements(p.shape);
        }
        op.trainable_count = offset - op.params_offset;
        if (layer.shares >= 0) {  // its first call's parameters, layout and all (checked by layer_specs)
            const ProgramOp& first = program.ops[static_cast<size_t>(layer.shares)];
            op.shares = layer.shares;
            op.params_offset = first.params_offset, op.state_offset = first.state_offset;
            op.trainable_count = first.trainable_count;
            op.dense = first.dense, op.conv = first.conv;
            program.ops.push_back(op);
            continue;
        }
        switch (op.kind) {
            case Layer::Kind::Dense: {
                DenseOp& d = op.dense;
                d.in = op.in_width;
                d.out = op.out_width;
                d.activation = layer.activation;
                d.use_bias = layer.use_bias;
                d.use_blas = d.in * d.out >= kBlasMinWeights;
                d.out_major = d.in > d.out && !(op.inputs[0] < 0 && d.use_blas);
                d.weight = op.params[0].offset;
                d.bias = layer.use_bias ? op.params[1].offset : offset;
                break;
            }
            case Layer::Kind::Conv2D: {
                Conv2DOp& c = op.conv;
                c.activation = layer.activation;
                c.use_bias = layer.use_bias;
                c.weight = op.params[0].offset;
                c.bias = layer.use_bias ? op.params[1].offset : offset;
                const nn::Window2D& w = op.spec.window;
                c.patch = w.k_h * w.k_w * w.channels;
                const int64_t pixels = w.out_h * w.out_w;
                c.filters = layer.filters;
                // A convolution's product has a row per output pixel: its rows, not only its
                // weights, make it worth the GEMM library (which splits it over the cores; the
                // fused kernels run on one). bench/conv_onednn: MNIST's first layer, 26x26 pixels x
                // 3x3 x 32 filters (288 weights), took half the time on the GEMM path.
                c.use_blas = c.patch * c.filters >= kBlasMinWeights ||
                             pixels * c.patch * c.filters >= kBlasMinConvMacsPerSample;
                c.identity_patches = w.k_h == 1 && w.k_w == 1 && w.stride_h == 1 && w.stride_w == 1;
                break;
            }
            default:
                break;
        }
        program.ops.push_back(op);
    }
    program.graph = nn::is_graph(layers);
    program.output_width = program.ops.back().out_width;
    if (specs.back().output.size() != 1)
        throw Error("Sequential: the last layer's output must be flat (the predictions' features), but '" +
                    program.ops.back().layer_name + "' gives " + shape_to_string(specs.back().output) +
                    " per sample; add Flatten() or a global pooling before the last Dense");

    // The loss takes the last product's logits when it is followed by nothing (an Activation or
    // Softmax layer after it is the unfused, general path).
    const ProgramOp& output = program.ops.back();
    const Activation last = output.has_product() ? output.activation()
                            : output.kind == Layer::Kind::Activation ? output.layer.activation
                            : output.kind == Layer::Kind::Softmax ? Activation::softmax
                                                                  : Activation::linear;
    const bool crossentropy = loss.kind == LossKind::categorical_crossentropy ||
                              loss.kind == LossKind::sparse_categorical_crossentropy;
    program.loss_takes_logits = output.has_product() && (
        (crossentropy && (last == Activation::softmax || (loss.from_logits && last == Activation::linear))) ||
        (loss.kind == LossKind::binary_crossentropy &&
         (last == Activation::sigmoid || (loss.from_logits && last == Activation::linear))));
    if (program.loss_takes_logits && output.activity_regularizer().active())
        throw Error("layer '" + output.layer_name + "': an activity_regularizer on the output layer whose " +
                    activation_name(last) + " the loss takes fused is not supported; put it on a hidden layer");
    if (loss.from_logits && last != Activation::linear)
        throw Error("loss: from_logits=true needs a linear last layer, but '" + program.ops.back().layer_name +
                    "' applies " + activation_name(last));

    // Weights in Keras's layout from the seed, layer by layer, then placed in the program's layout.
    program.params.assign(static_cast<size_t>(offset), 0.0f);
    program.state.assign(static_cast<size_t>(state), 0.0f);
    Rng rng(seed);
    std::vector<Tensor> weights;
    for (size_t i = 0; i < layers.size(); ++i) {
        for (const nn::ParamSpec& p : specs[i].params) {
            try {
                Tensor values(p.shape);
                nn::initialize(p.initializer, values.data(), values.size(), p.fan_in, p.fan_out, rng);
                weights.push_back(std::move(values));
            } catch (const Error& e) {
                throw Error("layer '" + program.ops[i].layer_name + "': " + e.what());
            }
        }
    }
    set_program_weights(program, weights);
    program.optimizer_slots.assign(static_cast<size_t>(offset * nn::optimizer_slot_count(optimizer)), 0.0f);
    nn::optimizer_init_slots(optimizer, program.optimizer_slots.data(), offset);
    return program;
}

namespace {

// Where element (k, j) of a Dense kernel (k < in, j < out) sits in an array of the given order.
int64_t kernel_index(const DenseOp& d, ParamOrder order, int64_t k, int64_t j) {
    const bool out_major = order == ParamOrder::program          ? d.out_major
                           : order == ParamOrder::legacy_program ? d.in > d.out
                                                                 : false;
    return d.weight + (out_major ? j * d.in + k : k * d.out + j);
}

}  // namespace

void reorder_params(const TrainingProgram& program, ParamOrder from, const float* src, ParamOrder to, float* dst) {
    // Every array but a Dense kernel sits in Keras's layout in every order.
    std::copy(src, src + program.param_count(), dst);
    for (const ProgramOp& op : program.ops) {
        if (op.kind != Layer::Kind::Dense || op.shares >= 0) continue;
        const DenseOp& d = op.dense;
        for (int64_t k = 0; k < d.in; ++k)
            for (int64_t j = 0; j < d.out; ++j) dst[kernel_index(d, to, k, j)] = src[kernel_index(d, from, k, j)];
    }
}

std::vector<Tensor> program_weights(const TrainingProgram& program) {
    std::vector<Tensor> weights;
    const float* p = program.params.data();
    for (const ProgramOp& op : program.ops)
        for (size_t a = 0; a < op.params.size(); ++a) {
            const ParamRef& ref = op.params[a];
            Tensor values(ref.shape);
            if (!ref.trainable) {
                const float* s = program.state.data() + ref.offset;
                std::copy(s, s + values.size(), values.data());
            } else if (op.kind == Layer::Kind::Dense && a == 0) {
                const DenseOp& d = op.dense;
                for (int64_t k = 0; k < d.in; ++k)
                    for (int64_t j = 0; j < d.out; ++j) values.at(k, j) = p[kernel_index(d, ParamOrder::program, k, j)];
            } else {
                std::copy(p + ref.offset, p + ref.offset + values.size(), values.data());
            }
            weights.push_back(std::move(values));
        }
    return weights;
}

void set_program_weights(TrainingProgram& program, const std::vector<Tensor>& weights) {
    // Written into a copy, so a shape error leaves the program's weights as they were.
    std::vector<float> params = program.params, state = program.state;
    size_t next = 0;
    for (const ProgramOp& op : program.ops)
        for (size_t a = 0; a < op.params.size(); ++a) {
            const ParamRef& ref = op.params[a];
            if (next >= weights.size())
                throw Error("set_weights: missing the " + std::string(ref.name) + " of layer '" + op.layer_name + "'");
            const Tensor& t = weights[next++];
            if (t.shape() != ref.shape)
                throw Error("set_weights: layer '" + op.layer_name + "' " + ref.name + " needs shape " +
                            shape_to_string(ref.shape) + ", got " + shape_to_string(t.shape()));
            float* p = params.data();
            if (!ref.trainable) {
                std::copy(t.data(), t.data() + t.size(), state.data() + ref.offset);
            } else if (op.kind == Layer::Kind::Dense && a == 0) {
                const DenseOp& d = op.dense;
                for (int64_t k = 0; k < d.in; ++k)
                    for (int64_t j = 0; j < d.out; ++j) p[kernel_index(d, ParamOrder::program, k, j)] = t.at(k, j);
            } else {
                std::copy(t.data(), t.data() + t.size(), p + ref.offset);
            }
        }
    if (next != weights.size())
        throw Error("set_weights: got " + std::to_string(weights.size()) + " arrays, the model has " +
                    std::to_string(next));
    program.params = std::move(params);
    program.state = std::move(state);
    ++program.weights_version;
}

}  // namespace onefit
