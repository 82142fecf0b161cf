// Saved optimizer state is in Keras order (get_weights's arrays back to back), independent of
// the layouts the program picks, and saves of onefit 0.1.0 (program layout, kernels (out, in)
// exactly when in > out, no "slot_order") still load into the right places. The model has a
// BLAS first layer that narrows (128 -> 64), which 0.1.0 stored (out, in) and now is (in, out).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "onefit/onefit.hpp"
#include "program/training_program.hpp"
#include "support/test_files.hpp"

namespace onefit {
namespace {

struct TrainedModel {
    Sequential model;
    std::vector<float> slots;  // program layout, after training
};

TrainedModel trained_model() {
    Sequential model({128}, 3);
    model.add(Dense(64, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(0.01f), loss_from_name("sparse_categorical_crossentropy"));
    Tensor x({32, 128}), y({32});
    for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 11) / 11.0f;
    for (int64_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 3);
    FitOptions o;
    o.epochs = 2;
    o.verbose = 0;
    model.fit(x, y, o);
    std::vector<float> slots = model.program_state().optimizer_slots;
    return {std::move(model), std::move(slots)};
}

std::string fresh_dir() {
    const std::string dir = test_files::temp_path("_model");
    std::filesystem::remove_all(dir);
    return dir;
}

TEST(OptimizerState, TheLayoutOfTheProgramDoesNotReachTheFile) {
    TrainedModel t = trained_model();
    const TrainingProgram& program = t.model.program_state();
    ASSERT_TRUE(program.ops[0].dense.use_blas);
    ASSERT_FALSE(program.ops[0].dense.out_major);
    ASSERT_TRUE(program.ops[1].dense.out_major);
    const std::string dir = fresh_dir();
    save_model(t.model, dir, 2);
    std::map<std::string, std::string> meta;
    const auto slots = read_safetensors(dir + "/optimizer.safetensors", &meta);
    EXPECT_EQ(meta["slot_order"], "keras");
    // Slot 0 (Adam's m) holds, back to back, arrays shaped like get_weights's.
    const int64_t n = program.param_count();
    std::vector<float> keras(static_cast<size_t>(n));
    reorder_params(program, ParamOrder::program, t.slots.data(), ParamOrder::keras, keras.data());
    EXPECT_EQ(slots.at(0).second.values(), keras);
    EXPECT_EQ(load_model(dir).program_state().optimizer_slots, t.slots);
}

TEST(OptimizerState, SavesOfOnefit010LoadIntoTheRightPlaces) {
    TrainedModel t = trained_model();
    const TrainingProgram& program = t.model.program_state();
    const std::string dir = fresh_dir();
    save_model(t.model, dir, 2);
    // Rewrite optimizer.safetensors as 0.1.0 did: program layout of that version, no slot_order.
    const std::string path = dir + "/optimizer.safetensors";
    std::map<std::string, std::string> meta;
    auto slots = read_safetensors(path, &meta);
    meta.erase("slot_order");
    const int64_t n = program.param_count();
    for (size_t k = 0; k < slots.size(); ++k) {
        Tensor legacy({n});
        reorder_params(program, ParamOrder::program, t.slots.data() + k * n, ParamOrder::legacy_program, legacy.data());
        ASSERT_NE(legacy.values(), std::vector<float>(t.slots.begin() + k * n, t.slots.begin() + (k + 1) * n));
        slots[k].second = legacy;
    }
    write_safetensors(path, slots, meta);
    EXPECT_EQ(load_model(dir).program_state().optimizer_slots, t.slots);
}

TEST(OptimizerState, AnUnknownSlotOrderIsNamed) {
    TrainedModel t = trained_model();
    const std::string dir = fresh_dir();
    save_model(t.model, dir, 2);
    const std::string path = dir + "/optimizer.safetensors";
    std::map<std::string, std::string> meta;
    const auto slots = read_safetensors(path, &meta);
    meta["slot_order"] = "columns";
    write_safetensors(path, slots, meta);
    const std::string e = test_files::error_of([&] { load_model(dir); });
    EXPECT_NE(e.find("optimizer.safetensors"), std::string::npos) << e;
    EXPECT_NE(e.find("slot_order \"columns\""), std::string::npos) << e;
}

}  // namespace
}  // namespace onefit
