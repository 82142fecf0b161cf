// ONNX export against onnxruntime: a model of every layer kind, a Functional graph and the seed's
// model, each exported and run by onnxruntime (the interop Python, scripts/python-env.sh) on the
// inputs predict saw, give predict's outputs within float rounding.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "nn/layer_kinds.hpp"
#include "onefit/onefit.hpp"
#include "support/layer_examples.hpp"
#include "support/python_check.hpp"
#include "support/test_files.hpp"

namespace onefit {
namespace {

struct Case {
    std::string name;
    Sequential model;
    bool indices = false;  // the input is an Embedding's indices
};

TEST(OnnxExport, OnnxruntimeGivesPredictsOutputsForEveryKindAGraphAndTheSeedModel) {
    ASSERT_TRUE(test_files::python_has("import onnxruntime, numpy"));
    std::vector<Case> cases;
    std::set<std::string> covered;
    for (Layer layer : layer_examples::one_of_each_kind()) {
        const std::string type = layer_type(layer.kind);
        covered.insert(type);
        if (nn::layer_kind(layer.kind).merge_spec) layer.inputs = {-1, -1};
        Sequential model(layer_examples::input_shape_for(layer), 3);
        model.add(layer).add(Flatten());
        cases.push_back({type, std::move(model), layer.kind == Layer::Kind::Embedding});
    }
    for (const LayerKindDescription& kind : layer_kinds()) EXPECT_EQ(covered.count(kind.type), 1u) << kind.type;
    {
        Node in = Input({6, 6, 2});
        Node c = Conv2D(4, 3, 1, "same", "gelu")(in);
        Node b = BatchNormalization()(c);
        Node a = make_layer("add")({b, Conv2D(4, 1, 1, "valid", "swish")(in)});
        Node p = MaxPooling2D(2)(a);
        Node f = Flatten()(p);
        Node out = Dense(3, "softmax")(make_layer("concatenate")({f, Dense(5, "elu")(f)}));
        cases.push_back({"graph", Model(in, out, 7)});
    }
    {
        Sequential seed({4}, 1);
        seed.add(Dense(32, "relu")).add(Dense(3, "softmax"));
        cases.push_back({"seed", std::move(seed)});
    }
    python_check::CaseFolder folder("_onnx");
    for (size_t k = 0; k < cases.size(); ++k) {
        Case& c = cases[k];
        layer_examples::randomise_weights(c.model, 11 + k);
        const Tensor x = layer_examples::test_inputs(c.model, 7, c.indices, 100 + k);
        export_onnx(c.model, folder.path(c.name + ".onnx"));
        folder.add(c.name, c.model.input_shape(), x, c.model.predict(x));
    }
    EXPECT_EQ(folder.run(R"(
import onnxruntime as ort
def check(base, x):
    return ort.InferenceSession(base + ".onnx", providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
)"), 0) << "onnxruntime's outputs differ from predict's (printed above)";
}

TEST(OnnxExport, AnUnwritablePathIsAnErrorNamingIt) {
    Sequential model({4});
    model.add(Dense(2));
    const std::string message = test_files::error_of([&] { export_onnx(model, "/no/such/folder/m.onnx"); });
    EXPECT_NE(message.find("/no/such/folder/m.onnx"), std::string::npos) << message;
}

}  // namespace
}  // namespace onefit
