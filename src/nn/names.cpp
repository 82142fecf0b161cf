// Keras names for activations, losses and optimizers, and the constructors with Keras's defaults.
#include <string>
#include <utility>
#include <vector>

#include "onefit/error.hpp"
#include "onefit/layers.hpp"
#include "onefit/losses.hpp"
#include "onefit/optimizers.hpp"

namespace onefit {
namespace {

template <class E>
using NameTable = std::vector<std::pair<std::string, E>>;

const NameTable<Activation>& activation_names() {
    static const NameTable<Activation> table = {
        {"linear", Activation::linear},   {"relu", Activation::relu},       {"leaky_relu", Activation::leaky_relu},
        {"elu", Activation::elu},         {"sigmoid", Activation::sigmoid}, {"tanh", Activation::tanh},
        {"softmax", Activation::softmax}, {"gelu", Activation::gelu},       {"swish", Activation::swish},
        {"silu", Activation::swish},      {"None", Activation::linear},     {"", Activation::linear}};
    return table;
}

const NameTable<LossKind>& loss_names() {
    static const NameTable<LossKind> table = {
        {"log_cosh", LossKind::log_cosh},
        {"logcosh", LossKind::log_cosh},
        {"mean_squared_error", LossKind::mean_squared_error},
        {"mse", LossKind::mean_squared_error},
        {"mean_absolute_error", LossKind::mean_absolute_error},
        {"mae", LossKind::mean_absolute_error},
        {"huber", LossKind::huber},
        {"binary_crossentropy", LossKind::binary_crossentropy},
        {"categorical_crossentropy", LossKind::categorical_crossentropy},
        {"sparse_categorical_crossentropy", LossKind::sparse_categorical_crossentropy}};
    return table;
}

const NameTable<OptimizerKind>& optimizer_names() {
    static const NameTable<OptimizerKind> table = {{"sgd", OptimizerKind::sgd},
                                                   {"adam", OptimizerKind::adam},
                                                   {"adamw", OptimizerKind::adamw},
                                                   {"rmsprop", OptimizerKind::rmsprop},
                                                   {"adagrad", OptimizerKind::adagrad}};
    return table;
}

template <class E>
E lookup(const NameTable<E>& table, const std::string& name, const char* what) {
    for (const auto& [n, e] : table)
        if (n == name) return e;
    std::string known;
    for (const auto& [n, e] : table)
        if (!n.empty() && n != "None") known += (known.empty() ? "" : ", ") + n;
    throw Error(std::string("unknown ") + what + " '" + name + "' (known: " + known + ")");
}

template <class E>
std::string name_of(const NameTable<E>& table, E e) {
    for (const auto& [n, v] : table)
        if (v == e) return n;
    return "?";
}

}  // namespace

Activation activation_from_name(const std::string& name) { return lookup(activation_names(), name, "activation"); }
std::string activation_name(Activation a) { return name_of(activation_names(), a); }

Loss loss_from_name(const std::string& name, bool from_logits) {
    Loss loss;
    loss.kind = lookup(loss_names(), name, "loss");
    loss.from_logits = from_logits;
    return loss;
}
std::string loss_name(LossKind kind) { return name_of(loss_names(), kind); }
bool is_sparse_loss(LossKind kind) { return kind == LossKind::sparse_categorical_crossentropy; }

Optimizer SGD(float learning_rate, float momentum, bool nesterov) {
    Optimizer o;
    o.kind = OptimizerKind::sgd;
    o.learning_rate = learning_rate;
    o.momentum = momentum;
    o.nesterov = nesterov;
    return o;
}
Optimizer Adam(float learning_rate, float beta_1, float beta_2, float epsilon, bool amsgrad) {
    Optimizer o;
    o.kind = OptimizerKind::adam;
    o.learning_rate = learning_rate;
    o.beta_1 = beta_1;
    o.beta_2 = beta_2;
    o.epsilon = epsilon;
    o.amsgrad = amsgrad;
    return o;
}
Optimizer AdamW(float learning_rate, float weight_decay, float beta_1, float beta_2, float epsilon, bool amsgrad) {
    Optimizer o = Adam(learning_rate, beta_1, beta_2, epsilon, amsgrad);
    o.kind = OptimizerKind::adamw;
    o.weight_decay = weight_decay;
    return o;
}
Optimizer RMSprop(float learning_rate, float rho, float momentum, float epsilon, bool centered) {
    Optimizer o;
    o.kind = OptimizerKind::rmsprop;
    o.learning_rate = learning_rate;
    o.rho = rho;
    o.momentum = momentum;
    o.epsilon = epsilon;
    o.centered = centered;
    return o;
}
Optimizer Adagrad(float learning_rate, float initial_accumulator_value, float epsilon) {
    Optimizer o;
    o.kind = OptimizerKind::adagrad;
    o.learning_rate = learning_rate;
    o.initial_accumulator_value = initial_accumulator_value;
    o.epsilon = epsilon;
    return o;
}

Optimizer optimizer_from_name(const std::string& name, float learning_rate) {
    Optimizer o;
    switch (lookup(optimizer_names(), name, "optimizer")) {
        case OptimizerKind::sgd: o = SGD(); break;
        case OptimizerKind::adam: o = Adam(); break;
        case OptimizerKind::adamw: o = AdamW(); break;
        case OptimizerKind::rmsprop: o = RMSprop(); break;
        case OptimizerKind::adagrad: o = Adagrad(); break;
    }
    if (learning_rate >= 0) o.learning_rate = learning_rate;
    return o;
}
std::string optimizer_name(OptimizerKind kind) { return name_of(optimizer_names(), kind); }

}  // namespace onefit
