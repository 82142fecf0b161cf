#include <algorithm>
#include <map>

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

}  // namespace

std::vector<std::string> default_layer_names(const std::vector<Layer>& layers) {
    std::map<std::string, int> seen;
    std::vector<std::string> names;
    for (const Layer& layer : layers) {
        if (!layer.name.empty()) {
            names.push_back(layer.name);
            continue;
        }
        const std::string base = layer.kind == Layer::Kind::Dense ? "dense" : "dropout";
        const int n = seen[base]++;
        names.push_back(n == 0 ? base : base + "_" + std::to_string(n));
    }
    return names;
}

int64_t TrainingProgram::forward_macs_per_sample() const {
    int64_t macs = 0;
    for (const ProgramOp& op : ops)
        if (op.kind == Layer::Kind::Dense) macs += op.dense.in * op.dense.out;
    return macs;
}

void check_learning_rate(float learning_rate) {
    if (!(learning_rate > 0.0f))
        throw Error("optimizer: learning_rate must be positive, got " + std::to_string(learning_rate));
}

TrainingProgram lower_sequential(const Shape& input_shape, const std::vector<Layer>& layers, const Loss& loss,
                                 const Optimizer& optimizer, const std::vector<std::string>& metrics, uint64_t seed) {
    if (input_shape.size() != 1 || input_shape[0] < 1)
        throw Error("Sequential: input shape must be one positive dimension (features), got " +
                    shape_to_string(input_shape));
    if (layers.empty()) throw Error("Sequential: the model has no layers; add a Dense layer");
    check_learning_rate(optimizer.learning_rate);

    TrainingProgram program;
    program.input_width = input_shape[0];
    program.loss = loss;
    program.optimizer = optimizer;
    program.metric_names = metrics;

    const std::vector<std::string> names = default_layer_names(layers);
    int64_t width = input_shape[0], offset = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
        const Layer& layer = layers[i];
        ProgramOp op;
        op.kind = layer.kind;
        op.layer_name = names[i];
        op.in_width = width;
        if (layer.kind == Layer::Kind::Dense) {
            if (layer.units < 1) throw Error("layer '" + names[i] + "': units must be at least 1");
            DenseOp& d = op.dense;
            d.in = width;
            d.out = layer.units;
            d.activation = layer.activation;
            d.use_bias = layer.use_bias;
            d.use_blas = d.in * d.out >= kBlasMinWeights;
            d.out_major = d.in > d.out && !(i == 0 && d.use_blas);
            d.weight = offset;
            offset += d.in * d.out;
            d.bias = offset;
            if (d.use_bias) offset += d.out;
            width = d.out;
        } else {
            op.dropout_rate = layer.rate;
        }
        op.out_width = width;
        program.ops.push_back(op);
    }
    program.output_width = width;
    if (program.ops.back().kind != Layer::Kind::Dense)
        throw Error("Sequential: the last layer must be Dense (it produces the predictions)");

    const Activation last = program.ops.back().dense.activation;
    const bool crossentropy = loss.kind == LossKind::categorical_crossentropy ||
                              loss.kind == LossKind::sparse_categorical_crossentropy;
    program.loss_takes_logits =
        (crossentropy && (last == Activation::softmax || (loss.from_logits && last == Activation::linear))) ||
        (loss.kind == LossKind::binary_crossentropy &&
         (last == Activation::sigmoid || (loss.from_logits && last == Activation::linear)));
    if (loss.from_logits && last != Activation::linear)
        throw Error("loss: from_logits=true needs a linear last layer, but '" + program.ops.back().layer_name +
                    "' applies " + activation_name(last));

    // Weights in Keras's layout from the seed, then placed in the program's layout.
    program.params.assign(static_cast<size_t>(offset), 0.0f);
    Rng rng(seed);
    std::vector<Tensor> weights;
    for (size_t i = 0; i < layers.size(); ++i) {
        if (layers[i].kind != Layer::Kind::Dense) continue;
        const DenseOp& d = program.ops[i].dense;
        try {
            Tensor kernel({d.in, d.out});
            nn::initialize(layers[i].kernel_initializer, kernel.data(), kernel.size(), d.in, d.out, rng);
            weights.push_back(std::move(kernel));
            if (d.use_bias) {
                Tensor bias({d.out});
                nn::initialize(layers[i].bias_initializer, bias.data(), bias.size(), d.in, d.out, rng);
                weights.push_back(std::move(bias));
            }
        } catch (const Error& e) {
            throw Error("layer '" + program.ops[i].layer_name + "': " + e.what());
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
    for (const ProgramOp& op : program.ops) {
        if (op.kind != Layer::Kind::Dense) continue;
        const DenseOp& d = op.dense;
        for (int64_t k = 0; k < d.in; ++k)
            for (int64_t j = 0; j < d.out; ++j) dst[kernel_index(d, to, k, j)] = src[kernel_index(d, from, k, j)];
        if (d.use_bias) std::copy(src + d.bias, src + d.bias + d.out, dst + d.bias);
    }
}

std::vector<Tensor> program_weights(const TrainingProgram& program) {
    std::vector<Tensor> weights;
    for (const ProgramOp& op : program.ops) {
        if (op.kind != Layer::Kind::Dense) continue;
        const DenseOp& d = op.dense;
        Tensor kernel({d.in, d.out});
        const float* p = program.params.data();
        for (int64_t k = 0; k < d.in; ++k)
            for (int64_t j = 0; j < d.out; ++j) kernel.at(k, j) = p[kernel_index(d, ParamOrder::program, k, j)];
        weights.push_back(std::move(kernel));
        if (d.use_bias) weights.emplace_back(Shape{d.out}, std::vector<float>(p + d.bias, p + d.bias + d.out));
    }
    return weights;
}

void set_program_weights(TrainingProgram& program, const std::vector<Tensor>& weights) {
    // Written into a copy, so a shape error leaves the program's weights as they were.
    std::vector<float> params = program.params;
    size_t next = 0;
    for (const ProgramOp& op : program.ops) {
        if (op.kind != Layer::Kind::Dense) continue;
        const DenseOp& d = op.dense;
        auto take = [&](const Shape& shape, const char* what) -> const Tensor& {
            if (next >= weights.size())
                throw Error("set_weights: missing the " + std::string(what) + " of layer '" + op.layer_name + "'");
            const Tensor& t = weights[next++];
            if (t.shape() != shape)
                throw Error("set_weights: layer '" + op.layer_name + "' " + what + " needs shape " +
                            shape_to_string(shape) + ", got " + shape_to_string(t.shape()));
            return t;
        };
        const Tensor& kernel = take({d.in, d.out}, "kernel");
        float* p = params.data();
        for (int64_t k = 0; k < d.in; ++k)
            for (int64_t j = 0; j < d.out; ++j) p[kernel_index(d, ParamOrder::program, k, j)] = kernel.at(k, j);
        if (d.use_bias) {
            const Tensor& bias = take({d.out}, "bias");
            for (int64_t j = 0; j < d.out; ++j) p[d.bias + j] = bias[j];
        }
    }
    if (next != weights.size())
        throw Error("set_weights: got " + std::to_string(weights.size()) + " arrays, the model has " +
                    std::to_string(next));
    program.params = std::move(params);
    ++program.weights_version;
}

}  // namespace onefit
