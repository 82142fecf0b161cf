// The model and fit options the resume and save/load suites share: a small Iris classifier with
// dropout, trained with shuffling, so that resuming exactly needs both the batch schedule and the
// dropout masks to pick up where they stopped.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "onefit/onefit.hpp"
#include "support/weights.hpp"

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

// Fits make() for o.epochs straight, and again for half of them, saved to dir (which
// inspect(dir) may read), loaded and resumed for the rest: the loaded model must equal the saved
// one, and the resumed weights the straight ones, bit for bit.
template <class MakeModel, class Inspect>
void expect_saved_and_resumed_bit_for_bit(MakeModel make, const Tensor& x, const Tensor& y, FitOptions o,
                                          const std::string& dir, Inspect inspect) {
    const int64_t epochs = o.epochs;
    Sequential straight = make();
    straight.fit(x, y, o);

    Sequential first = make();
    o.epochs = epochs / 2;
    first.fit(x, y, o);
    save_model(first, dir, o.epochs, o.seed);
    inspect(dir);
    Sequential resumed = load_model(dir);
    EXPECT_EQ(resumed.summary(), first.summary());
    EXPECT_TRUE(same_bits(first.get_weights(), resumed.get_weights()));
    EXPECT_TRUE(same_bits({first.predict(x)}, {resumed.predict(x)}));
    o.initial_epoch = o.epochs, o.epochs = epochs;
    resumed.fit(x, y, o);
    EXPECT_TRUE(same_bits(straight.get_weights(), resumed.get_weights()));
}

}  // namespace onefit::testing_support
