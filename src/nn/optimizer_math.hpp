// Optimizer update rules (Keras >= 2.11 / Keras 3 formulas). The per-parameter update is one
// ONEFIT_HD function shared with the CUDA kernels; the scalars that change per step (Adam's bias
// correction) are computed once per step into OptimizerStep. The CPU applies it in one fused pass
// over all parameters (they are contiguous in the program). t is the 1-based step count.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPTIMIZER_MATH_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPTIMIZER_MATH_HPP
#undef ONEFIT_NN_OPTIMIZER_MATH_HPP
#else
#define ONEFIT_NN_OPTIMIZER_MATH_HPP
#endif
#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "onefit/optimizers.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(nn)

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

// Everything an update needs, as plain scalars (copyable to a GPU kernel's arguments).
template <class T>
struct OptimizerStep {
    OptimizerKind kind;
    bool amsgrad, nesterov, centered, momentum_on;
    T lr, b1, b2, eps, mu, rho, decay;
    T alpha;  // Adam: lr sqrt(1 - b2^t) / (1 - b1^t)
};

// At update t (1-based) with this learning rate (a schedule's at that step; the CUDA kernels,
// which take no schedule, the optimizer's own).
template <class T>
ONEFIT_HD OptimizerStep<T> optimizer_step_constants(const Optimizer& o, int64_t t, float learning_rate) {
    OptimizerStep<T> c{};
    c.kind = o.kind;
    c.amsgrad = o.amsgrad;
    c.nesterov = o.nesterov;
    c.centered = o.centered;
    c.momentum_on = o.momentum != 0.0f;
    c.lr = T(learning_rate);
    c.b1 = T(o.beta_1);
    c.b2 = T(o.beta_2);
    c.eps = T(o.epsilon);
    c.mu = T(o.momentum);
    c.rho = T(o.rho);
    c.decay = T(learning_rate) * T(o.weight_decay);  // every optimizer's (Keras 3: BaseOptimizer's)
    c.alpha = c.lr * std::sqrt(T(1) - std::pow(c.b2, T(t))) / (T(1) - std::pow(c.b1, T(t)));
    return c;
}

template <class T>
ONEFIT_HD OptimizerStep<T> optimizer_step_constants(const Optimizer& o, int64_t t) {
    return optimizer_step_constants<T>(o, t, o.learning_rate);
}

// Updates parameter i. Slots are n apart (slot k of parameter i is slots[k * n + i]). lr, alpha
// and decay are c's, passed apart so members stacked in lanes (runtime/cpu/stacked_fit.hpp) can
// give each lane its own while c stays loop-invariant.
template <OptimizerKind K, class T>
ONEFIT_HD void update_parameter(const OptimizerStep<T>& c, T lr, T alpha, T decay, T& w, T g, T* slots, int64_t i,
                                int64_t n) {
    // Weight decay first, decoupled from the gradient: w -= lr wd w (Keras 3's _apply_weight_decay,
    // every optimizer and weight; AdamW's default 0.004, the others' 0: w unchanged).
    w -= w * decay;
    if constexpr (K == OptimizerKind::sgd) {
        if (!c.momentum_on) {  // w -= lr g
            w -= lr * g;
            return;
        }
        // m = momentum m - lr g; w += m (nesterov: w += momentum m - lr g)
        T& m = slots[i];
        m = c.mu * m - lr * g;
        w += c.nesterov ? c.mu * m - lr * g : m;
    } else if constexpr (K == OptimizerKind::adam || K == OptimizerKind::adamw) {
        // "epsilon hat" form: w -= alpha m / (sqrt(v) + eps)
        T& m = slots[i];
        T& v = slots[n + i];
        m += (g - m) * (T(1) - c.b1);
        v += (g * g - v) * (T(1) - c.b2);
        T vhat = v;
        if (c.amsgrad) {
            T& vmax = slots[2 * n + i];
            vmax = vmax > v ? vmax : v;
            vhat = vmax;
        }
        w -= alpha * m / (std::sqrt(vhat) + c.eps);
    } else if constexpr (K == OptimizerKind::rmsprop) {
        // v = rho v + (1-rho) g^2; [centered: a = rho a + (1-rho) g; v' = v - a^2]
        // step = lr g / sqrt(v' + eps); [momentum: b = momentum b + step; w -= b] else w -= step
        T& v = slots[i];
        v = c.rho * v + (T(1) - c.rho) * g * g;
        T denom = v;
        if (c.centered) {
            T& a = slots[(c.momentum_on ? 2 : 1) * n + i];
            a = c.rho * a + (T(1) - c.rho) * g;
            denom -= a * a;
        }
        const T step = lr * g / std::sqrt(denom + c.eps);
        if (c.momentum_on) {
            T& b = slots[n + i];
            b = c.mu * b + step;
            w -= b;
        } else {
            w -= step;
        }
    } else {  // adagrad: acc += g^2; w -= lr g / sqrt(acc + eps)
        T& acc = slots[i];
        acc += g * g;
        w -= lr * g / std::sqrt(acc + c.eps);
    }
}

template <OptimizerKind K, class T>
ONEFIT_HD void update_parameter(const OptimizerStep<T>& c, T& w, T g, T* slots, int64_t i, int64_t n) {
    update_parameter<K>(c, c.lr, c.alpha, c.decay, w, g, slots, i, n);
}

// Host and device code both call this with their own lambdas.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class F>
ONEFIT_HD void with_optimizer(OptimizerKind k, F&& f) {
    switch (k) {
        case OptimizerKind::sgd: f.template operator()<OptimizerKind::sgd>(); return;
        case OptimizerKind::adam: f.template operator()<OptimizerKind::adam>(); return;
        case OptimizerKind::adamw: f.template operator()<OptimizerKind::adamw>(); return;
        case OptimizerKind::rmsprop: f.template operator()<OptimizerKind::rmsprop>(); return;
        case OptimizerKind::adagrad: f.template operator()<OptimizerKind::adagrad>(); return;
    }
}

// One fused pass over parameters [begin, end) of n (a range, so callers can split the pass).
template <class T>
void optimizer_step_range(const Optimizer& o, T* __restrict w, const T* __restrict g, T* __restrict slots, int64_t n,
                          int64_t t, int64_t begin, int64_t end) {
    const OptimizerStep<T> c = optimizer_step_constants<T>(o, t, current_learning_rate(o, t));
    with_optimizer(o.kind, [&]<OptimizerKind K>() {
#pragma omp simd
        for (int64_t i = begin; i < end; ++i) update_parameter<K>(c, w[i], g[i], slots, i, n);
    });
}

// Keras's gradient clipping (BaseOptimizer._clip_gradients), in place, before the update:
// clipnorm scales each parameter array's gradient by c / max(norm, c), global_clipnorm all of them
// by c min(1/norm, 1/c) (NaN where the norm is not finite, as Keras), clipvalue clamps each value.
// `arrays` are the trainable arrays' [begin, end) in g. Sums in double, the scaling in T.
struct GradientArray {
    int64_t begin, end;
};

template <class T>
void clip_gradients(const Optimizer& o, T* g, const GradientArray* arrays, size_t count) {
    const auto squares = [&](const GradientArray& a) {
        double sum = 0;
        for (int64_t i = a.begin; i < a.end; ++i) sum += double(g[i]) * double(g[i]);
        return sum;
    };
    if (o.clipnorm > 0.0f) {
        const T c = T(o.clipnorm);
        for (size_t k = 0; k < count; ++k) {
            const double sum = squares(arrays[k]);
            const T norm = sum > 0 ? T(std::sqrt(sum)) : T(sum);
            const T divisor = norm > c ? norm : c;
            for (int64_t i = arrays[k].begin; i < arrays[k].end; ++i) g[i] = g[i] * c / divisor;
        }
    } else if (o.global_clipnorm > 0.0f) {
        const T c = T(o.global_clipnorm);
        double sum = 0;
        for (size_t k = 0; k < count; ++k) sum += squares(arrays[k]);
        const T norm = T(std::sqrt(sum)), inverse = T(1) / norm;
        const T scale = c * (inverse < T(1) / c ? inverse : T(1) / c) + (norm - norm);
        for (size_t k = 0; k < count; ++k)
            for (int64_t i = arrays[k].begin; i < arrays[k].end; ++i) g[i] *= scale;
    } else if (o.clipvalue > 0.0f) {
        const T v = T(o.clipvalue);
        for (size_t k = 0; k < count; ++k)
            for (int64_t i = arrays[k].begin; i < arrays[k].end; ++i) g[i] = g[i] < -v ? -v : g[i] > v ? v : g[i];
    }
}

inline bool clips_gradients(const Optimizer& o) {
    return o.clipnorm > 0.0f || o.global_clipnorm > 0.0f || o.clipvalue > 0.0f;
}

template <class T>
void optimizer_step(const Optimizer& o, T* __restrict w, const T* __restrict g, T* __restrict slots, int64_t n,
                    int64_t t) {
    optimizer_step_range(o, w, g, slots, n, t, int64_t{0}, n);
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPTIMIZER_MATH_HPP
