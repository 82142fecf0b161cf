// The model and fit options the resume and save/load suites share: a small Iris classifier with
// dropout, trained with shuffling, so that resuming exactly needs both the batch schedule and the
// dropout masks to pick up where they stopped.
#pragma once
#include <cstdint>

#include "onefit/onefit.hpp"

namespace onefit::testing_support {

inline Sequential shuffled_dropout_model(uint64_t seed = 11) {
    Sequential model({4}, seed);
    model.add(Dense(16, "relu")).add(Dropout(0.2f)).add(Dense(3, "softmax"));
    model.compile(Adam(0.01f), loss_from_name("sparse_categorical_crossentropy"), CompileOptions{{"accuracy"}});
    return model;
}

inline FitOptions shuffled_fit_options(int64_t epochs, int64_t initial_epoch = 0) {
    FitOptions o;
    o.batch_size = 16;
    o.epochs = epochs;
    o.initial_epoch = initial_epoch;
    o.shuffle = true;
    o.verbose = 0;
    o.seed = 5;
    return o;
}

}  // namespace onefit::testing_support
