// What one layer kind's op gets to run a batch: plain pointers into buffers the executor made
// when the program was built, so an op allocates nothing and knows nothing of the device that
// calls it. Each op file (src/nn/ops/*.hpp) declares its kind's shapes, parameters, attributes
// and saved state (a LayerSpec) next to its forward and backward; src/nn/ops/all_ops.hpp
// registers it.
#pragma once
#include <cstdint>

#include "nn/layer_kinds.hpp"
#include "onefit/layers.hpp"

namespace onefit::nn {

template <class T>
struct OpArgs {
    const Layer& layer;
    const LayerSpec& spec;
    int64_t rows = 0;        // samples in this call
    int64_t first_row = 0;   // their first row's index in the batch (a part of a split batch)
    bool training = false;
    uint64_t random_key = 0;  // this op's and step's (dropout masks hash it with the element's index)
    const T* params = nullptr;  // the layer's trainable arrays, back to back in its spec's order
    T* grads = nullptr;         // their gradients (backward writes them; null in forward)
    T* state = nullptr;         // its non-trainable arrays (moving statistics), back to back
    T* scratch = nullptr;       // scratch_per_sample values per sample, from this call's first row
    int32_t* indices = nullptr;  // indices_per_sample per sample, from this call's first row
    T* op_scratch = nullptr;     // op_scratch values for the whole batch
    const T* in = nullptr;       // rows x the input's elements
    T* out = nullptr;            // forward: rows x the output's elements (backward: what forward wrote)
    const T* dout = nullptr;     // backward: dL/d(output)
    T* din = nullptr;            // backward: dL/d(input), overwritten (null for the model's first op)
    // A merge layer's (nn/ops/merge.hpp) inputs, each rows x spec.inputs[k]'s elements (in is
    // ins[0]); its backward writes the gradient of input input_slot only, to din.
    const T* const* ins = nullptr;
    int n_inputs = 1;
    int input_slot = 0;
};

}  // namespace onefit::nn
