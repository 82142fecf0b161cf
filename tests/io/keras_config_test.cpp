// Keras 3's config.json: every layer kind comes back from a .keras file with the arguments it was
// made with (initializers aside: the file's weights replace what they would draw), and a config
// onefit cannot hold is refused with an Error naming the file and the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/keras_compile.hpp"
#include "io/keras_config.hpp"
#include "nn/optimizer_math.hpp"
#include "io/zip_archive.hpp"
#include "nn/layer_kinds.hpp"
#include "onefit/onefit.hpp"
#include "support/layer_examples.hpp"
#include "support/python_check.hpp"
#include "support/test_files.hpp"

namespace onefit {
namespace {

using test_files::error_of;
namespace fs = std::filesystem;

LayerArguments without_initializers(LayerArguments arguments) {
    std::erase_if(arguments, [](const auto& a) { return a.first.ends_with("_initializer"); });
    return arguments;
}

// onefit's file of each kind comes back with the layer as it was made, and Keras 3 itself loads
// it and predicts what onefit predicts.
TEST(KerasConfig, EveryLayerKindComesBackFromAKerasFileAsItWasMadeAndKerasLoadsIt) {
    ASSERT_TRUE(test_files::python_has("import os; os.environ.setdefault(\"KERAS_BACKEND\", \"jax\"); import keras, numpy"));
    python_check::CaseFolder folder("_kinds");
    std::set<std::string> covered;
    uint64_t seed = 0;
    for (Layer layer : layer_examples::one_of_each_kind()) {
        const std::string type = layer_type(layer.kind);
        SCOPED_TRACE(type);
        covered.insert(type);
        if (nn::layer_kind(layer.kind).merge_spec) layer.inputs = {-1, -1};  // a merge: the input with itself
        Sequential model(layer_examples::input_shape_for(layer), 3);
        model.add(layer).add(Flatten());  // (a model's output is flat)
        layer_examples::randomise_weights(model, ++seed);
        const std::string path = folder.path(type + ".keras");
        save_keras(model, path);
        const Sequential loaded = load_keras(path);
        EXPECT_EQ(loaded.input_shape(), model.input_shape());
        ASSERT_EQ(loaded.layers().size(), 2u);
        const Layer& back = loaded.layers()[0];
        EXPECT_EQ(back.kind, layer.kind);
        EXPECT_EQ(back.inputs, layer.inputs);
        EXPECT_EQ(without_initializers(layer_arguments(back)), without_initializers(layer_arguments(layer)));
        const std::vector<Tensor> wa = model.get_weights(), wb = loaded.get_weights();
        ASSERT_EQ(wa.size(), wb.size());
        for (size_t i = 0; i < wa.size(); ++i) {
            ASSERT_EQ(wa[i].shape(), wb[i].shape());
            for (int64_t k = 0; k < wa[i].size(); ++k) ASSERT_EQ(wa[i].data()[k], wb[i].data()[k]);
        }
        const Tensor x = layer_examples::test_inputs(model, 5, layer.kind == Layer::Kind::Embedding, 50 + seed);
        folder.add(type, model.input_shape(), x, model.predict(x));
    }
    for (const LayerKindDescription& kind : layer_kinds()) EXPECT_EQ(covered.count(kind.type), 1u) << kind.type;
    EXPECT_EQ(folder.run(R"(
import os
os.environ.setdefault("KERAS_BACKEND", "jax")
import keras
def check(base, x):
    return keras.saving.load_model(base + ".keras").predict(x, verbose=0)
)"), 0) << "Keras's predictions from onefit's files differ from onefit's (printed above)";
}

Sequential compiled_model() {
    Sequential model({4}, 1);
    model.add(Dense(8, "relu")).add(Dense(3, "softmax"));
    model.compile(Adam(0.01f), loss_from_name("categorical_crossentropy"), CompileOptions{{"accuracy"}});
    return model;
}

// A compiled two-layer model's config.json, which each case below changes in one place.
nlohmann::ordered_json compiled_config() {
    const Sequential model = compiled_model();
    return io::keras_model_json(model, io::keras_layer_order(model.layers()));
}

// load_keras's error for the model's .keras file with `config` for its config.json.
std::string load_error(const nlohmann::ordered_json& config) {
    const std::string saved = test_files::temp_path("_saved.keras");
    save_keras(compiled_model(), saved);
    std::map<std::string, std::string> entries = io::read_zip(saved, size_t{1} << 20);
    entries["config.json"] = config.dump();
    const std::string changed =
        test_files::write_bytes(io::zip_bytes({entries.begin(), entries.end()}), "_changed.keras");
    const std::string message = error_of([&] { load_keras(changed); });
    for (const std::string& p : {saved, changed}) fs::remove(p);
    return message;
}

TEST(KerasConfig, TheUnchangedConfigReadsBack) {
    const io::KerasModelConfig read = io::read_keras_model_json(io::JsonFile("config.json", compiled_config().dump()));
    EXPECT_EQ(read.input_shapes, (std::vector<Shape>{{4}}));
    ASSERT_EQ(read.layers.size(), 2u);
    EXPECT_FALSE(read.functional);
    ASSERT_TRUE(read.compile.has_value());
    EXPECT_EQ(read.compile->optimizer.kind, OptimizerKind::adam);
    EXPECT_EQ(read.compile->metrics, (std::vector<std::string>{"accuracy"}));
}

TEST(KerasConfig, AnUncompiledModelsEmptyCompileConfigAndCompileFalseReadNoCompile) {
    nlohmann::ordered_json config = compiled_config();
    config["compile_config"] = nlohmann::ordered_json::object();  // what Keras writes before compile()
    EXPECT_FALSE(io::read_keras_model_json(io::JsonFile("config.json", config.dump())).compile.has_value());
    config["compile_config"] = compiled_config()["compile_config"];
    config["compile_config"]["loss"] = "ctc";  // not read at all with compile=False
    EXPECT_FALSE(io::read_keras_model_json(io::JsonFile("config.json", config.dump()), false).compile.has_value());
    EXPECT_TRUE(io::read_keras_model_json(io::JsonFile("config.json", compiled_config().dump()), true).compile.has_value());
}

TEST(KerasConfig, WhatOnefitCannotHoldIsRefusedNamingTheField) {
    using Json = nlohmann::ordered_json;
    struct Case {
        const char* change;
        std::function<void(Json&)> apply;
        std::vector<std::string> expected;  // each must be in the message
    };
    // config.layers[0] is the InputLayer; [1] and [2] the Dense layers.
    const std::vector<Case> cases = {
        {"a subclassed model", [](Json& c) { c["class_name"] = "MyModel"; }, {"class_name", "MyModel"}},
        {"a layer class onefit lacks", [](Json& c) { c["config"]["layers"][1]["class_name"] = "LSTM"; }, {"LSTM"}},
        {"units not an integer", [](Json& c) { c["config"]["layers"][1]["config"]["units"] = "eight"; }, {"units"}},
        {"a float16 layer", [](Json& c) { c["config"]["layers"][1]["config"]["dtype"] = "float16"; }, {"dtype", "float16"}},
        {"a frozen layer", [](Json& c) { c["config"]["layers"][2]["config"]["trainable"] = false; }, {"trainable"}},
        {"a kernel constraint",
         [](Json& c) { c["config"]["layers"][1]["config"]["kernel_constraint"] = {{"class_name", "MaxNorm"}, {"config", Json::object()}}; },
         {"kernel_constraint"}},
        {"an unknown argument", [](Json& c) { c["config"]["layers"][1]["config"]["colour"] = 3; }, {"colour"}},
        {"a Keras-only argument away from its default",
         [](Json& c) { c["config"]["layers"][1]["config"]["quantization_config"] = {{"mode", "int8"}}; },
         {"quantization_config", "supports only None"}},
        {"a Keras-only flag set", [](Json& c) { c["config"]["layers"][2]["config"]["lora_rank"] = 4; }, {"lora_rank"}},
        {"a loss onefit lacks", [](Json& c) { c["compile_config"]["loss"] = "ctc"; }, {"loss", "ctc"}},
        {"an optimizer onefit lacks",
         [](Json& c) { c["compile_config"]["optimizer"]["class_name"] = "Lion"; }, {"optimizer", "lion"}},
        {"a metric onefit lacks", [](Json& c) { c["compile_config"]["metrics"] = Json::array({"iou"}); }, {"iou"}},
        {"no layers", [](Json& c) { c["config"].erase("layers"); }, {"layers", "is missing"}},
        {"compiled without a loss", [](Json& c) { c["compile_config"]["loss"] = nullptr; }, {"compile_config.loss", "compile=False"}},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(k.change);
        Json config = compiled_config();
        k.apply(config);
        const std::string message = load_error(config);
        EXPECT_NE(message.find("_changed.keras/config.json"), std::string::npos) << message;
        for (const std::string& part : k.expected) EXPECT_NE(message.find(part), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // one line
    }
}

TEST(KerasConfig, KerasOptimizerVariablesHoldEverySlotOnce) {
    // model.weights.h5's optimizer variables are the program's slots regrouped: every slot of
    // every optimizer setting, exactly once (a new slot must be given its Keras variable).
    for (const OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adam, OptimizerKind::adamw,
                                     OptimizerKind::rmsprop, OptimizerKind::adagrad})
        for (const bool flag : {false, true})
            for (const float momentum : {0.0f, 0.9f}) {
                Optimizer o = optimizer_from_name(optimizer_name(kind));
                o.amsgrad = kind == OptimizerKind::adam || kind == OptimizerKind::adamw ? flag : false;
                o.centered = kind == OptimizerKind::rmsprop && flag;
                o.momentum = kind == OptimizerKind::sgd || kind == OptimizerKind::rmsprop ? momentum : o.momentum;
                std::vector<int> slots;
                for (const std::vector<int>& group : io::keras_slot_groups(o)) slots.insert(slots.end(), group.begin(), group.end());
                std::sort(slots.begin(), slots.end());
                std::vector<int> expected(static_cast<size_t>(nn::optimizer_slot_count(o)));
                for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<int>(i);
                EXPECT_EQ(slots, expected) << optimizer_name(kind) << " flag " << flag << " momentum " << momentum;
            }
}

}  // namespace
}  // namespace onefit
