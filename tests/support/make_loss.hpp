// A Loss with every field named at the call site, for the loss and gradient suites.
#pragma once
#include "onefit/losses.hpp"

namespace onefit::testing_support {

inline Loss make_loss(LossKind kind, bool from_logits = false, float delta = 1.0f) {
    Loss loss;
    loss.kind = kind;
    loss.from_logits = from_logits;
    loss.delta = delta;
    return loss;
}

}  // namespace onefit::testing_support
