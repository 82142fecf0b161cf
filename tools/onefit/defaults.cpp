// The defaults for a user's own data: Keras's, where the seed experiment's would repeat the
// seed's mistakes (an unshuffled 30% split, log_cosh on class labels, Adam at 0.1, no shuffling).
#include <cmath>

#include "config.hpp"

namespace onefit::cli {
namespace {

bool is_integer(float v) { return std::isfinite(v) && std::floor(v) == v; }

// Activation of the last Dense layer and its width (0 when there is none).
std::pair<Activation, int64_t> output_layer(const std::vector<Layer>& layers) {
    for (auto it = layers.rbegin(); it != layers.rend(); ++it)
        if (it->kind == Layer::Kind::Dense) return {it->activation, it->units};
    return {Activation::linear, 0};
}

}  // namespace

double keras_learning_rate(const std::string& optimizer) { return optimizer == "sgd" ? 0.01 : 0.001; }

Optimizer config_optimizer(const FitConfig& config) {
    Optimizer o = optimizer_from_name(config.optimizer, static_cast<float>(config.learning_rate));
    o.learning_rate_schedule = config.learning_rate_schedule;
    o.clipnorm = config.clipnorm, o.clipvalue = config.clipvalue, o.global_clipnorm = config.global_clipnorm;
    return o;
}

void apply_keras_defaults(FitConfig& config) {
    // Keras's validation_split on its own: a test split only when asked for (both is an error).
    if (config.has("fit.validation_split") && !config.has("data.test_size")) config.test_size = 0;
    if (config.seed_run()) return;
    if (!config.has("data.test_size")) config.test_size = 0;
    if (!config.has("compile.optimizer.learning_rate")) config.learning_rate = keras_learning_rate(config.optimizer);
    if (!config.has("fit.shuffle")) config.shuffle = true;
    if (!config.has("fit.batch_size")) config.batch_size = 32;
    if (!config.has("compile.loss")) config.loss.clear();  // choose_loss, once the labels are loaded
}

std::pair<std::string, std::string> choose_loss(const std::vector<Layer>& layers, const Tensor& labels) {
    const auto [activation, units] = output_layer(layers);
    // The CLI's labels are one value per row (a CSV column, an (N,) or (N, 1) array).
    bool integers = true, zero_one = true;
    float highest = 0;
    const float* values = labels.data();  // data(): a mapped tensor is read in place, never copied
    for (int64_t i = 0; i < labels.size(); ++i) {
        const float v = values[i];
        integers = integers && is_integer(v) && v >= 0;
        zero_one = zero_one && (v == 0 || v == 1);
        highest = std::max(highest, v);
    }
    const std::string out = std::to_string(units) + "-unit " + activation_name(activation) + " output";
    if (integers && activation == Activation::softmax && units > 1 && highest < float(units))
        return {"sparse_categorical_crossentropy", "integer class labels and a " + out};
    if (zero_one && activation == Activation::sigmoid && units == 1)
        return {"binary_crossentropy", "0/1 labels and a " + out};
    return {"mean_squared_error", "labels that are not classes of a " + out};
}

}  // namespace onefit::cli
