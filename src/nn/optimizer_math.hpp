// Optimizer update rules, one fused pass over all parameters (they are contiguous in the
// program). Keras >= 2.11 / Keras 3 formulas; t is the 1-based step count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "onefit/optimizers.hpp"

namespace onefit::nn {

// How many state vectors of the parameters' size the optimizer keeps.
inline int optimizer_slot_count(const Optimizer& o) {
    switch (o.kind) {
        case OptimizerKind::sgd: return o.momentum != 0.0f ? 1 : 0;
        case OptimizerKind::adam:
        case OptimizerKind::adamw: return o.amsgrad ? 3 : 2;
        case OptimizerKind::rmsprop: return 1 + (o.momentum != 0.0f) + o.centered;
        case OptimizerKind::adagrad: return 1;
    }
    return 0;
}

// Initial slot values (Adagrad's accumulator starts at initial_accumulator_value).
template <class T>
void optimizer_init_slots(const Optimizer& o, T* slots, int64_t n) {
    const int64_t total = n * optimizer_slot_count(o);
    const T init = o.kind == OptimizerKind::adagrad ? T(o.initial_accumulator_value) : T(0);
    for (int64_t i = 0; i < total; ++i) slots[i] = init;
}

template <class T>
void optimizer_step(const Optimizer& o, T* __restrict w, const T* __restrict g, T* __restrict slots, int64_t n,
                    int64_t t) {
    const T lr = T(o.learning_rate);
    switch (o.kind) {
        case OptimizerKind::sgd: {
            if (o.momentum == 0.0f) {  // w -= lr g
                for (int64_t i = 0; i < n; ++i) w[i] -= lr * g[i];
                return;
            }
            // m = momentum m - lr g; w += m (nesterov: w += momentum m - lr g)
            const T mu = T(o.momentum);
            T* m = slots;
            if (o.nesterov)
                for (int64_t i = 0; i < n; ++i) {
                    m[i] = mu * m[i] - lr * g[i];
                    w[i] += mu * m[i] - lr * g[i];
                }
            else
                for (int64_t i = 0; i < n; ++i) {
                    m[i] = mu * m[i] - lr * g[i];
                    w[i] += m[i];
                }
            return;
        }
        case OptimizerKind::adam:
        case OptimizerKind::adamw: {
            // AdamW first decays decoupled from the gradient: w -= lr wd w (Keras applies it to every weight).
            if (o.kind == OptimizerKind::adamw && o.weight_decay != 0.0f) {
                const T decay = lr * T(o.weight_decay);
                for (int64_t i = 0; i < n; ++i) w[i] -= w[i] * decay;
            }
            // "epsilon hat" form: alpha = lr sqrt(1 - b2^t) / (1 - b1^t); w -= alpha m / (sqrt(v) + eps)
            const T b1 = T(o.beta_1), b2 = T(o.beta_2), eps = T(o.epsilon);
            const T alpha = lr * std::sqrt(T(1) - std::pow(b2, T(t))) / (T(1) - std::pow(b1, T(t)));
            T* m = slots;
            T* v = slots + n;
            if (o.amsgrad) {
                T* vhat = slots + 2 * n;
                for (int64_t i = 0; i < n; ++i) {
                    m[i] += (g[i] - m[i]) * (T(1) - b1);
                    v[i] += (g[i] * g[i] - v[i]) * (T(1) - b2);
                    vhat[i] = std::max(vhat[i], v[i]);
                    w[i] -= alpha * m[i] / (std::sqrt(vhat[i]) + eps);
                }
            } else {
                for (int64_t i = 0; i < n; ++i) {
                    m[i] += (g[i] - m[i]) * (T(1) - b1);
                    v[i] += (g[i] * g[i] - v[i]) * (T(1) - b2);
                    w[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
                }
            }
            return;
        }
        case OptimizerKind::rmsprop: {
            // v = rho v + (1-rho) g^2; [centered: a = rho a + (1-rho) g; v' = v - a^2]
            // step = lr g / sqrt(v' + eps); [momentum: b = momentum b + step; w -= b] else w -= step
            const T rho = T(o.rho), eps = T(o.epsilon), mu = T(o.momentum);
            T* v = slots;
            T* buf = o.momentum != 0.0f ? slots + n : nullptr;
            T* avg = o.centered ? slots + n * (buf ? 2 : 1) : nullptr;
            for (int64_t i = 0; i < n; ++i) {
                v[i] = rho * v[i] + (T(1) - rho) * g[i] * g[i];
                T denom = v[i];
                if (avg) {
                    avg[i] = rho * avg[i] + (T(1) - rho) * g[i];
                    denom -= avg[i] * avg[i];
                }
                const T step = lr * g[i] / std::sqrt(denom + eps);
                if (buf) {
                    buf[i] = mu * buf[i] + step;
                    w[i] -= buf[i];
                } else {
                    w[i] -= step;
                }
            }
            return;
        }
        case OptimizerKind::adagrad: {  // acc += g^2; w -= lr g / sqrt(acc + eps)
            const T eps = T(o.epsilon);
            T* acc = slots;
            for (int64_t i = 0; i < n; ++i) {
                acc[i] += g[i] * g[i];
                w[i] -= lr * g[i] / std::sqrt(acc[i] + eps);
            }
            return;
        }
    }
}

}  // namespace onefit::nn
