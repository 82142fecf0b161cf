// sweep(): every member bit-identical to its configuration built, compiled and fitted alone,
// with shuffling, dropout and validation on; the grid's order; errors that name the member.
#include <gtest/gtest.h>

#include "support/weights.hpp"
#include "onefit/onefit.hpp"

namespace onefit {
namespace {

Sequential layers_only(uint64_t seed) {
    Sequential model({4}, seed);
    model.add(Dense(16, "relu")).add(Dropout(0.2f)).add(Dense(3, "softmax"));
    return model;
}

FitOptions fit_options() {
    FitOptions o;
    o.batch_size = 16, o.epochs = 4, o.validation_split = 0.2, o.verbose = 0;
    return o;
}

TEST(Sweep, EveryMemberEqualsItsConfigurationFittedAlone) {
    const LabeledData iris = load_iris();
    const Loss loss = loss_from_name("sparse_categorical_crossentropy");
    const SweepGrid grid{{0.001f, 0.01f, 0.1f}, {3, 4}};
    const std::vector<SweepMember> members =
        sweep(layers_only(0), Adam(), loss, CompileOptions{{"accuracy"}}, iris.x, iris.y, fit_options(), grid);
    ASSERT_EQ(members.size(), 6u);
    for (size_t i = 0; i < members.size(); ++i) {
        const SweepMember& m = members[i];
        EXPECT_EQ(m.learning_rate, grid.learning_rates[i / 2]) << i;  // learning rate major
        EXPECT_EQ(m.seed, grid.seeds[i % 2]) << i;
        Sequential alone = layers_only(m.seed);
        alone.compile(Adam(m.learning_rate), loss, CompileOptions{{"accuracy"}});
        const History h = alone.fit(iris.x, iris.y, fit_options());
        EXPECT_TRUE(testing_support::same_bits(m.weights, alone.get_weights())) << i;
        EXPECT_EQ(m.history.history, h.history) << i;
        EXPECT_EQ(m.history.epoch, h.epoch) << i;
    }
    // The grid's points differ: a sweep that fitted one configuration six times would not.
    EXPECT_FALSE(testing_support::same_bits(members[0].weights, members[1].weights));
    EXPECT_FALSE(testing_support::same_bits(members[0].weights, members[2].weights));
}

TEST(Sweep, AnEmptyAxisIsTheModelsOwnValue) {
    const LabeledData iris = load_iris();
    const std::vector<SweepMember> members = sweep(layers_only(7), SGD(0.05f), loss_from_name("mse"), {}, iris.x,
                                                   iris.y, fit_options(), SweepGrid{});
    ASSERT_EQ(members.size(), 1u);
    EXPECT_EQ(members[0].learning_rate, 0.05f);
    EXPECT_EQ(members[0].seed, 7u);
}

TEST(Sweep, AFailingMemberIsNamedAndCallbacksAreRefused) {
    const LabeledData iris = load_iris();
    try {
        sweep(layers_only(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(),
              SweepGrid{{0.01f, -1.0f}, {5}});
        FAIL() << "a negative learning rate must fail";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("sweep member 1 (learning_rate -1.000000, seed 5)"), std::string::npos)
            << e.what();
    }
    EarlyStopping stop;
    FitOptions o = fit_options();
    o.callbacks = {&stop};
    EXPECT_THROW(sweep(layers_only(0), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, o, SweepGrid{}), Error);
    EXPECT_THROW(sweep(Sequential({4}), Adam(), loss_from_name("mse"), {}, iris.x, iris.y, fit_options(), SweepGrid{}),
                 Error);
}

}  // namespace
}  // namespace onefit
