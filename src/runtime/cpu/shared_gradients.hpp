// A shared layer's gradient on the CPU: each of its calls (ProgramOp::shares) has a gradient of
// the same parameters, and each op's backward overwrites what it writes. Backward runs from the
// last op down, so every later call runs before the first: the last call writes sum_, each other
// later call part_ (then added to sum_), and the first call, which writes the gradients as any
// op does, gets sum_ added. Both buffers are made once, when the executor is built.
#pragma once
#include <cstdint>
#include <vector>

#include "program/training_program.hpp"

namespace onefit::cpu {

template <class T>
class SharedGradients {
public:
    void plan(const std::vector<ProgramOp>& ops, size_t param_count) {
        role_.assign(ops.size(), Role::none);
        std::vector<bool> has_later(ops.size(), false);
        bool any = false, parts = false;
        for (size_t i = ops.size(); i-- > 0;) {
            if (ops[i].shares < 0 || ops[i].trainable_count == 0) continue;
            const size_t first = static_cast<size_t>(ops[i].shares);
            role_[i] = has_later[first] ? Role::adds_part : Role::writes_sum;
            parts = parts || has_later[first];
            has_later[first] = any = true;
            role_[first] = Role::adds_sum;
        }
        if (any) sum_.assign(param_count, T(0));
        if (parts) part_.assign(param_count, T(0));
    }
    // Where op i's backward writes its parameters' gradients (indexed as the parameters are).
    T* target(size_t i, T* grads) {
        return role_[i] == Role::writes_sum ? sum_.data() : role_[i] == Role::adds_part ? part_.data() : grads;
    }
    // After op i's backward: its part into the sum, or (the first call) the sum into the gradients.
    void add(const ProgramOp& op, size_t i, T* grads) {
        if (role_[i] != Role::adds_part && role_[i] != Role::adds_sum) return;
        T* to = role_[i] == Role::adds_sum ? grads + op.params_offset : sum_.data() + op.params_offset;
        const T* from = (role_[i] == Role::adds_sum ? sum_ : part_).data() + op.params_offset;
        for (int64_t e = 0; e < op.trainable_count; ++e) to[e] += from[e];
    }

private:
    enum class Role : uint8_t { none, writes_sum, adds_part, adds_sum };
    std::vector<Role> role_;
    std::vector<T> sum_, part_;
};

}  // namespace onefit::cpu
