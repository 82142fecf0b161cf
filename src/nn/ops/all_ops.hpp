// The registration of every layer kind that runs as an op (all but the product layers Dense,
// Conv2D and Conv1D, which each device lowers to its own GEMM): the kind, and the struct in its op file that
// declares its spec, attributes and check next to its forward and backward. The kinds' table
// (layer_kinds.cpp) and the CPU step loop read this list; adding a layer adds its line here.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_NN_OPS_ALL_OPS_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_NN_OPS_ALL_OPS_HPP
#undef ONEFIT_NN_OPS_ALL_OPS_HPP
#else
#define ONEFIT_NN_OPS_ALL_OPS_HPP
#endif
#include "nn/ops/activation_layers.hpp"
#include "nn/ops/batch_normalization.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/embedding.hpp"
#include "nn/ops/layer_normalization.hpp"
#include "nn/ops/merge.hpp"
#include "nn/ops/pooling_1d.hpp"
#include "nn/ops/pooling_2d.hpp"
#include "nn/ops/reshape.hpp"
#include "core/simd.hpp"

#ifndef ONEFIT_FOR_EACH_OP
#define ONEFIT_FOR_EACH_OP(X)                           \
    X(Dropout, DropoutOp)                               \
    X(Flatten, FlattenOp)                               \
    X(Reshape, ReshapeOp)                               \
    X(MaxPooling2D, MaxPooling2DOp)                     \
    X(AveragePooling2D, AveragePooling2DOp)             \
    X(GlobalAveragePooling2D, GlobalAveragePooling2DOp) \
    X(BatchNormalization, BatchNormalizationOp)         \
    X(Activation, ActivationOp)                         \
    X(ReLU, ReLUOp)                                     \
    X(LeakyReLU, LeakyReLUOp)                           \
    X(Softmax, SoftmaxOp)                               \
    X(LayerNormalization, LayerNormalizationOp)         \
    X(Embedding, EmbeddingOp)                           \
    X(MaxPooling1D, MaxPooling1DOp)                     \
    X(AveragePooling1D, AveragePooling1DOp)             \
    X(GlobalAveragePooling1D, GlobalAveragePooling1DOp) \
    X(GlobalMaxPooling1D, GlobalMaxPooling1DOp)         \
    X(GlobalMaxPooling2D, GlobalMaxPooling2DOp)         \
    X(Add, AddOp)                                       \
    X(Subtract, SubtractOp)                             \
    X(Multiply, MultiplyOp)                             \
    X(Average, AverageOp)                               \
    X(Maximum, MaximumOp)                               \
    X(Minimum, MinimumOp)                               \
    X(Concatenate, ConcatenateOp)                       \
    X(Dot, DotOp)
#endif

ONEFIT_SIMD_BEGIN(nn)

// The op's forward (backward) for a batch; one switch per op and call, never per element.
template <class T>
void op_forward(const OpArgs<T>& args) {
    switch (args.layer.kind) {
#define ONEFIT_OP_FORWARD(kind, Op) \
    case Layer::Kind::kind: return Op::forward(args);
        ONEFIT_FOR_EACH_OP(ONEFIT_OP_FORWARD)
#undef ONEFIT_OP_FORWARD
        default: return;
    }
}

template <class T>
void op_backward(const OpArgs<T>& args) {
    switch (args.layer.kind) {
#define ONEFIT_OP_BACKWARD(kind, Op) \
    case Layer::Kind::kind: return Op::backward(args);
        ONEFIT_FOR_EACH_OP(ONEFIT_OP_BACKWARD)
#undef ONEFIT_OP_BACKWARD
        default: return;
    }
}

ONEFIT_SIMD_END(nn)
#endif  // ONEFIT_NN_OPS_ALL_OPS_HPP
