// Sequential: building, compiling, weights, summary, evaluate (of data or of predictions) and predict. fit() is in fit.cpp.
#include <cstdio>
#include <optional>
#include <sstream>

#include "nn/layer_kinds.hpp"
#include "nn/losses.hpp"
#include "nn/metrics.hpp"
#include "onefit/error.hpp"
#include "onefit/model.hpp"
#include "program/fit_plan.hpp"
#include "program/training_program.hpp"
#include "runtime/cpu/cpu_simd.hpp"
#include "data/row_checks.hpp"
#include "train/checks.hpp"

namespace onefit {

Sequential::Sequential(Shape input_shape, uint64_t seed)
    : input_shape_(std::move(input_shape)), input_shapes_{input_shape_}, seed_(seed) {
    check_input_shape(input_shape_);
}

Sequential Sequential::with_inputs(std::vector<Shape> input_shapes, uint64_t seed) {
    if (input_shapes.empty()) throw Error("Model: it has no inputs");
    for (const Shape& shape : input_shapes) check_input_shape(shape);
    Sequential model(joined_input_shape(input_shapes), seed);
    model.input_shapes_ = std::move(input_shapes);
    return model;
}
Sequential::Sequential(Sequential&&) noexcept = default;
Sequential& Sequential::operator=(Sequential&&) noexcept = default;
Sequential::~Sequential() = default;

void Sequential::require_not_fitting(const char* what) const {
    if (fitting_)
        throw Error(std::string(what) + ": not while the model is fitting (called from a callback); "
                    "set stop_training and call it after fit returns");
}

Sequential& Sequential::add(Layer layer) {
    require_not_fitting("add");
    layers_.push_back(std::move(layer));
    if (program_) {  // the architecture changed: the old program and weights no longer apply
        program_.reset();
        weights_.clear();
    }
    return *this;
}

void Sequential::compile(const Optimizer& optimizer, const Loss& loss, const CompileOptions& options) {
    require_not_fitting("compile");
    if (static_cast<int>(options.metrics.size()) > kMaxMetrics)
        throw Error("compile: at most " + std::to_string(kMaxMetrics) + " metrics");
    for (const std::string& m : options.metrics) nn::resolve_metric(m, 2, 1);  // unknown names fail here
    // Recompiling keeps the trained weights, as in Keras; the optimizer state starts afresh.
    std::vector<Tensor> keep = program_ ? program_weights(*program_) : weights_;
    auto program = std::make_unique<TrainingProgram>(
        lower_model(input_shapes_, layers_, loss, optimizer, options.metrics, seed_));
    if (!keep.empty()) set_program_weights(*program, keep);
    program_ = std::move(program);
}

void Sequential::compile(const std::string& optimizer, const std::string& loss, const std::vector<std::string>& metrics) {
    compile(optimizer_from_name(optimizer), loss_from_name(loss), CompileOptions{metrics});
}

const TrainingProgram& Sequential::program() const {
    if (!program_) throw Error("the model is not compiled: call compile(optimizer, loss) first");
    return *program_;
}

const Loss& Sequential::loss() const { return program().loss; }
const Optimizer& Sequential::optimizer() const { return program().optimizer; }
const std::vector<std::string>& Sequential::metrics() const { return program().metric_names; }

void Sequential::set_learning_rate(float learning_rate) {
    check_learning_rate(learning_rate);
    Optimizer& o = program_state().optimizer;
    if (o.learning_rate_schedule.kind != ScheduleKind::constant)  // Keras refuses it too
        throw Error("the optimizer's learning rate follows a " + schedule_name(o.learning_rate_schedule.kind) +
                    " schedule; it cannot be set");
    o.learning_rate = learning_rate;
}

TrainingProgram& Sequential::program_state() {
    if (!program_) throw Error("the model is not compiled: call compile(optimizer, loss) first");
    return *program_;
}

std::vector<Tensor> Sequential::get_weights() const {
    if (program_) return program_weights(*program_);
    if (!weights_.empty()) return weights_;
    // Not compiled yet: the weights the seed gives (Keras builds them with the model).
    return program_weights(lower_model(input_shapes_, layers_, Loss{}, Optimizer{}, {}, seed_));
}

void Sequential::set_weights(const std::vector<Tensor>& weights) {
    if (program_) return set_program_weights(*program_, weights);
    TrainingProgram check = lower_model(input_shapes_, layers_, Loss{}, Optimizer{}, {}, seed_);
    set_program_weights(check, weights);  // validates shapes
    weights_ = weights;
}

int64_t Sequential::count_params() const {
    int64_t n = 0;
    for (const nn::LayerSpec& spec : nn::layer_specs(input_shapes_, layers_, default_layer_names(layers_)))
        for (const nn::ParamSpec& p : spec.params) n += shape_elements(p.shape);
    return n;
}

std::vector<std::string> Sequential::layer_names() const { return default_layer_names(layers_); }

std::string Sequential::display_name() const {
    if (!name.empty()) return name;
    return nn::is_graph(layers_) ? "functional" : "sequential";
}

std::string Sequential::input_name(size_t k) const {
    if (k < input_names.size() && !input_names[k].empty()) return input_names[k];
    return k == 0 ? std::string("input_layer") : "input_layer_" + std::to_string(k);
}

std::vector<std::string> Sequential::all_input_names() const {
    if (!input_names.empty() && input_names.size() != input_shapes_.size())
        throw Error("the model's input_names has " + std::to_string(input_names.size()) + " names for its " +
                    std::to_string(input_shapes_.size()) + " inputs");
    std::vector<std::string> names;
    for (size_t k = 0; k < input_shapes_.size(); ++k) names.push_back(input_name(k));
    return names;
}

Shape Sequential::output_shape() const {
    if (layers_.empty()) return input_shape_;
    return nn::layer_specs(input_shapes_, layers_, default_layer_names(layers_)).back().output;
}

std::string Sequential::summary() const {
    const std::vector<std::string> names = default_layer_names(layers_);
    const std::vector<nn::LayerSpec> specs = nn::layer_specs(input_shapes_, layers_, names);
    // A Functional model's table has Keras's "Connected to" column: each layer's inputs.
    const bool graph = nn::is_graph(layers_);
    const std::string rule(graph ? 90 : 65, '_'), double_rule(graph ? 90 : 65, '=');
    std::ostringstream s;
    auto row = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
        char buf[240];
        std::snprintf(buf, sizeof buf, graph ? " %-28s %-25s %-10s %s" : " %-28s %-25s %s", a.c_str(), b.c_str(),
                      c.c_str(), d.c_str());
        s << buf << "\n";
    };
    s << "Model: \"" << display_name() << "\"\n" << rule << "\n";
    row("Layer (type)", "Output Shape", "Param #", "Connected to");
    s << double_rule << "\n";
    int64_t total = 0, trainable = 0;
    for (size_t i = 0; i < layers_.size(); ++i) {
        if (layers_[i].shares >= 0) continue;  // (a shared layer's row is its first call's)
        if (i > 0) s << "\n";
        int64_t params = 0;
        for (const nn::ParamSpec& p : specs[i].params) {
            params += shape_elements(p.shape);
            if (p.trainable) trainable += shape_elements(p.shape);
        }
        total += params;
        std::string shape = "(None";
        for (int64_t d : specs[i].output) shape += ", " + std::to_string(d);
        std::string connected;  // (an input by its name when the inputs are named, as Keras's)
        for (size_t call = i; call < layers_.size(); ++call) {  // (a shared layer: every call's)
            if (call != i && layers_[call].shares != static_cast<int32_t>(i)) continue;
            for (const int32_t source : nn::layer_sources(layers_, call)) {
                const std::string from = source >= 0 ? names[size_t(source)]
                                         : input_names.empty() ? model_input_name(source)
                                                               : input_name(static_cast<size_t>(-1 - source));
                connected += (connected.empty() ? "" : ", ") + from;
            }
        }
        row(names[i] + " (" + nn::layer_kind(layers_[i].kind).keras_class + ")", shape + ")", std::to_string(params),
            connected);
    }
    s << double_rule << "\nTotal params: " << total << "\nTrainable params: " << trainable
      << "\nNon-trainable params: " << total - trainable << "\n" << rule << "\n";
    return s.str();
}

Logs Sequential::evaluate(const Tensor& x, const Tensor& y, int64_t batch_size, const Tensor* sample_weight) {
    const TrainingProgram& prog = program();
    if (batch_size < 1) throw Error("evaluate: batch_size must be at least 1");
    train::check_features(prog, x, "x");
    train::check_labels(prog, y, x.rows(), "y");
    if (sample_weight) check_sample_weight(*sample_weight, x.rows(), "sample_weight", "the features have");
    const int64_t y_width = label_width(y);
    std::vector<nn::Metric> metrics;
    for (const std::string& m : prog.metric_names) metrics.push_back(nn::resolve_metric(m, prog.output_width, y_width));
    const LogSums sums = cpu::evaluate_rows(prog, x.data(), x.row_width(), y.data(), y_width, x.rows(), batch_size, metrics,
                                            sample_weight ? sample_weight->data() : nullptr);
    Logs logs{{"loss", sums.loss / static_cast<double>(sums.samples)}};
    for (size_t k = 0; k < metrics.size(); ++k)
        logs[metrics[k].name] = sums.metrics[k] / static_cast<double>(sums.samples);
    return logs;
}

Logs Sequential::evaluate_predictions(const Tensor& predictions, const Tensor& y) const {
    const TrainingProgram& prog = program();
    const int64_t rows = predictions.rows(), width = prog.output_width;
    if (predictions.rank() != 2 || predictions.row_width() != width)
        throw Error("evaluate_predictions: predictions must be (rows, " + std::to_string(width) + "), got " +
                    shape_to_string(predictions.shape()));
    train::check_labels(prog, y, rows, "y");
    if (rows == 0) throw Error("evaluate_predictions: no rows");
    // In double, from the float predictions: one pass, no batches to round between.
    const int64_t y_width = label_width(y);
    const std::vector<double> p(predictions.data(), predictions.data() + predictions.size()),
        t(y.data(), y.data() + y.size());
    const double loss = nn::loss_forward_backward<false>(prog.loss, prog.loss.from_logits, p.data(), t.data(), rows,
                                                         width, y_width, static_cast<double*>(nullptr), 1.0);
    Logs logs{{"loss", loss / static_cast<double>(rows)}};
    for (const std::string& name : prog.metric_names) {
        const nn::Metric m = nn::resolve_metric(name, width, y_width);
        if (m.counts) {
            std::vector<double> counts(static_cast<size_t>(m.counts), 0.0);
            nn::metric_count(m, p.data(), t.data(), rows, width, y_width, counts.data());
            logs[m.name] = nn::metric_result(m, counts.data(), width, rows);
        } else {
            logs[m.name] = nn::metric_sum(m.kind, p.data(), t.data(), rows, width, y_width, m.k) / static_cast<double>(rows);
        }
    }
    return logs;
}

Tensor Sequential::predict(const Tensor& x, int64_t batch_size) {
    // Before compile(), predict with the weights the seed (or set_weights) gives.
    std::optional<TrainingProgram> uncompiled;
    if (!program_) {
        uncompiled = lower_model(input_shapes_, layers_, Loss{}, Optimizer{}, {}, seed_);
        if (!weights_.empty()) set_program_weights(*uncompiled, weights_);
    }
    const TrainingProgram& prog = program_ ? *program_ : *uncompiled;
    if (batch_size < 1) throw Error("predict: batch_size must be at least 1");
    train::check_features(prog, x, "x");
    Tensor out({x.rows(), prog.output_width});
    cpu::predict_rows(prog, x.data(), x.row_width(), x.rows(), batch_size, out.data());
    return out;
}

const std::vector<double>& History::operator[](const std::string& key) const {
    const auto it = history.find(key);
    if (it == history.end()) throw Error("History has no key '" + key + "'");
    return it->second;
}

}  // namespace onefit
