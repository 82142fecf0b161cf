// sweep_part: one process's share of a sweep split across processes (onefit/distributed.hpp).
#pragma once
#include <vector>

#include "onefit/sweep.hpp"

namespace onefit::train {

// sweep()'s members [total * part / parts, total * (part + 1) / parts) only, in member order,
// each the same bits as in the whole sweep (a member never depends on the others); errors name
// members by their index in the whole sweep. Empty when there are more parts than members.
std::vector<SweepMember> sweep_part(const Sequential& model, const Optimizer& optimizer, const Loss& loss,
                                    const CompileOptions& compile_options, const Tensor& x, const Tensor& y,
                                    FitOptions options, const SweepGrid& grid, int part, int parts);

}  // namespace onefit::train
