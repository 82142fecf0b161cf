// Models of several inputs (keras.Model([a, b], output)): their gradients, that a row holding the
// inputs side by side trains exactly as the one-input model of the same layers, their files, and
// their mistakes named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onefit/functional.hpp"
#include "onefit/io.hpp"
#include "program/training_program.hpp"
#include "support/gradient_check.hpp"
#include "support/graph_models.hpp"
#include "support/make_loss.hpp"

namespace onefit {
namespace {

using testing_support::error_of;
using testing_support::make_loss;
using testing_support::ramp;
using testing_support::reading;

TEST(MultiInputGradients, EachInputReadByItsOwnBranchThenMerged) {
    // Input 0 (4,) and input 1 (2, 3): each branch reads its own columns of the row.
    gradient_check::expect_gradients_match(
        {.layers = {Dense(5, "tanh"), reading(Flatten(), {-2}), reading(Dense(3, "sigmoid"), {1}),
                    reading(make_layer("concatenate", {}), {0, 2, -1}), Dense(2)},
         .loss = make_loss(LossKind::mean_squared_error),
         .rows = 6,
         .inputs = {{4}, {2, 3}}});
}

TEST(MultiInputModel, InputsAreNumberedInTheirGivenOrder) {
    const Node a = Input({4}), b = Input({3});
    const Node out = Dense(2)(make_layer("concatenate", {})({Dense(5)(a), b}));
    Sequential ab = Model({a, b}, out), ba = Model({b, a}, out);
    EXPECT_EQ(ab.input_shapes(), (std::vector<Shape>{{4}, {3}}));
    EXPECT_EQ(ab.input_shape(), (Shape{7}));
    EXPECT_EQ(ba.input_shapes(), (std::vector<Shape>{{3}, {4}}));
    EXPECT_EQ(ab.layers()[1].inputs, (std::vector<int32_t>{0, -2}));
    EXPECT_EQ(ba.layers()[0].inputs, (std::vector<int32_t>{-2}));
    EXPECT_EQ(ba.layers()[1].inputs, (std::vector<int32_t>{0, -1}));
    EXPECT_NE(ab.summary().find("dense, input_1"), std::string::npos) << ab.summary();
    ab.input_names = {"numbers", "extra"};  // named inputs are shown by name
    EXPECT_NE(ab.summary().find("dense, extra"), std::string::npos) << ab.summary();
}

TEST(MultiInputModel, TrainsExactlyAsTheOneInputModelOfItsJoinedRows) {
    // Dense(2) on Concatenate(a, b) is Dense(2) on the row [a | b]: same weights, same fit.
    const Node a = Input({4}), b = Input({3});
    Sequential two = Model({a, b}, Dense(2, "softmax")(make_layer("concatenate", {})({a, b})), 9);
    Sequential one({7}, 9);
    one.add(Dense(2, "softmax"));
    one.set_weights(two.get_weights());
    for (Sequential* m : {&two, &one}) m->compile(Adam(0.05f), make_loss(LossKind::categorical_crossentropy));
    const Tensor x = ramp(40, 7, 1);
    Tensor y({40, 2});
    for (int64_t r = 0; r < 40; ++r) y.at(r, x.at(r, 0) + x.at(r, 5) > 0 ? 1 : 0) = 1.0f;
    FitOptions options;
    options.epochs = 5, options.batch_size = 8, options.verbose = 0;
    const History h2 = two.fit(x, y, options), h1 = one.fit(x, y, options);
    EXPECT_EQ(h2["loss"], h1["loss"]);
    const Tensor p2 = two.predict(x), p1 = one.predict(x);
    for (int64_t i = 0; i < p1.size(); ++i) ASSERT_EQ(p2[i], p1[i]) << i;
}

TEST(MultiInputModel, AnEmbeddingReadsItsOwnInputsIndicesAndNamesTheInputOfABadOne) {
    const Node numbers = Input({2}), codes = Input({3});
    const Layer embedding = make_layer("embedding", {{"input_dim", int64_t{5}}, {"output_dim", int64_t{2}}});
    const Node joined = make_layer("concatenate", {})({Flatten()(embedding(codes)), numbers});
    Sequential model = Model({numbers, codes}, Dense(1)(joined), 2);
    model.compile(Adam(0.01f), make_loss(LossKind::mean_squared_error));
    Tensor x = ramp(6, 5, 2), y({6, 1});
    for (int64_t r = 0; r < 6; ++r)
        for (int64_t c = 2; c < 5; ++c) x.at(r, c) = static_cast<float>((r + c) % 5);
    FitOptions options;
    options.epochs = 2, options.verbose = 0;
    EXPECT_NO_THROW(model.fit(x, y, options));  // (the numbers are not indices; only the codes are checked)
    x.at(4, 3) = 7.0f;
    EXPECT_EQ(error_of([&] { model.predict(x); }),
              "x input 1 row 4, column 1 holds 7; an Embedding takes integer indices in [0, 5) (layer 'embedding')");
}

TEST(MultiInputModel, MistakesAreNamed) {
    const Node a = Input({4}), b = Input({3}), c = Input({2});
    const Node out = Dense(2)(make_layer("add", {})({Dense(3)(a), b}));
    EXPECT_NE(error_of([&] { Model({a, b, c}, out); }).find("input 2 (2,) is read by no layer"), std::string::npos)
        << error_of([&] { Model({a, b, c}, out); });
    EXPECT_NE(error_of([&] { Model({a, a}, out); }).find("given twice"), std::string::npos);
    EXPECT_NE(error_of([&] { Model({a}, out); }).find("not among the model's inputs"), std::string::npos);
    EXPECT_NE(error_of([&] { Sequential::with_inputs({}); }).find("no inputs"), std::string::npos);
    Sequential model = Model({a, b}, out);
    model.compile("adam", "mse");
    EXPECT_EQ(error_of([&] { model.predict(ramp(3, 4, 0)); }),
              "x has shape (3, 4) but the model expects (None, 7): its inputs (4,) and (3,), each flattened, side by "
              "side in each row");
}

TEST(MultiInputModel, SavedAndLoadedWithItsInputsInEveryFormat) {
    const Node a = Input({2, 2}), b = Input({3});
    const Node out = Dense(2)(make_layer("concatenate", {})({Flatten()(a), Dense(3, "relu")(b)}));
    Sequential model = Model({a, b}, out, 4);
    model.input_names = {"pixels", "extra"};
    model.compile(Adam(0.01f), make_loss(LossKind::mean_squared_error));
    const Tensor x = ramp(5, 7, 3);
    const Tensor expected = model.predict(x);
    const std::string dir = testing::TempDir() + "/multi_input_model", keras = testing::TempDir() + "/multi_input.keras";
    model.save(dir);
    std::vector<std::string> paths{dir};
#if ONEFIT_HAVE_KERAS_FILES  // (a build without HDF5 and libzip has no .keras files)
    save_model(model, keras);
    paths.push_back(keras);
#endif
    for (const std::string& path : paths) {
        SCOPED_TRACE(path);
        Sequential loaded = load_model(path);
        EXPECT_EQ(loaded.input_shapes(), model.input_shapes());
        EXPECT_EQ(loaded.input_names, model.input_names);
        const Tensor got = loaded.predict(x);
        for (int64_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << i;
    }
    model.input_names = {"pixels"};  // (one name for two inputs: refused before anything is written)
    EXPECT_EQ(error_of([&] { model.save(dir + "_names"); }), "the model's input_names has 1 names for its 2 inputs");
    model.input_names = {"", "extra"};  // (an empty name is the default's)
    model.save(dir + "_default");
    EXPECT_EQ(load_model(dir + "_default").input_names, (std::vector<std::string>{"input_layer", "extra"}));
#if ONEFIT_HAVE_KERAS_FILES
    model.input_names = {"dense", "extra"};  // (a layer's name: Keras finds tensors' layers by name)
    EXPECT_NE(error_of([&] { save_keras(model, keras); }).find("as another input or a layer is"), std::string::npos);
#endif
}

}  // namespace
}  // namespace onefit
