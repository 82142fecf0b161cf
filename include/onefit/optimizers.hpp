// Optimizers with Keras's defaults and update rules (keras.optimizers, Keras >= 2.11 / 3).
#pragma once
#include <string>

#include "onefit/schedules.hpp"

namespace onefit {

enum class OptimizerKind { sgd, adam, adamw, rmsprop, adagrad };

struct Optimizer {
    OptimizerKind kind = OptimizerKind::adam;
    float learning_rate = 0.001f;
    float beta_1 = 0.9f, beta_2 = 0.999f;  // adam, adamw
    float epsilon = 1e-7f;                  // adam, adamw, rmsprop, adagrad
    bool amsgrad = false;                   // adam, adamw
    float weight_decay = 0.0f;              // every optimizer (AdamW's default 0.004): decoupled, var -= lr * wd * var
    float momentum = 0.0f;                  // sgd, rmsprop
    bool nesterov = false;                  // sgd
    float rho = 0.9f;                       // rmsprop
    bool centered = false;                  // rmsprop
    float initial_accumulator_value = 0.1f; // adagrad
    // Keras's gradient clipping, every optimizer; 0 is off, at most one is set (Keras's rule):
    // each parameter array's gradient scaled to an L2 norm of at most clipnorm, all of them
    // together to a global norm of at most global_clipnorm, or each value into [-clipvalue, clipvalue].
    float clipnorm = 0.0f, global_clipnorm = 0.0f, clipvalue = 0.0f;
    // A Keras learning-rate schedule in place of the constant rate (kind constant: none). With one,
    // learning_rate is the schedule's rate at step 0, for display; the fit evaluates the schedule
    // at every step.
    LearningRateSchedule learning_rate_schedule;
};

// The optimizer's rate at update `t` (1 for the first, as the step count; the schedule's iteration t - 1).
inline float current_learning_rate(const Optimizer& o, int64_t t) {
    if (o.learning_rate_schedule.kind == ScheduleKind::constant) return o.learning_rate;
    return static_cast<float>(scheduled_learning_rate(o.learning_rate_schedule, t - 1));
}

Optimizer SGD(float learning_rate = 0.01f, float momentum = 0.0f, bool nesterov = false);
Optimizer Adam(float learning_rate = 0.001f, float beta_1 = 0.9f, float beta_2 = 0.999f, float epsilon = 1e-7f,
               bool amsgrad = false);
Optimizer AdamW(float learning_rate = 0.001f, float weight_decay = 0.004f, float beta_1 = 0.9f,
                float beta_2 = 0.999f, float epsilon = 1e-7f, bool amsgrad = false);
Optimizer RMSprop(float learning_rate = 0.001f, float rho = 0.9f, float momentum = 0.0f, float epsilon = 1e-7f,
                  bool centered = false);
Optimizer Adagrad(float learning_rate = 0.001f, float initial_accumulator_value = 0.1f, float epsilon = 1e-7f);

// "sgd", "adam", "adamw", "rmsprop", "adagrad" with Keras's defaults; learning_rate < 0 keeps the default.
Optimizer optimizer_from_name(const std::string& name, float learning_rate = -1.0f);
std::string optimizer_name(OptimizerKind kind);

}  // namespace onefit
