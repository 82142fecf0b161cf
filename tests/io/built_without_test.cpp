// A build configured without Keras files (ONEFIT_KERAS_FILES=OFF) or ONNX export
// (ONEFIT_ONNX=OFF), as the arm64 cross-build and the GPU bundle are: each entry point raises one
// Error naming the path and the option, never a crash or a silent no-op. (Builds with the
// features test them in keras_file_test.cpp, keras_config_test.cpp and onnx_export_test.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "onefit/onefit.hpp"
#include "support/test_files.hpp"

namespace onefit {
namespace {

[[maybe_unused]] Sequential small_model() {
    Sequential model({4});
    model.add(Dense(2));
    return model;
}

#if !ONEFIT_HAVE_KERAS_FILES
TEST(BuiltWithout, KerasFilesEachEntryPointSaysSo) {
    Sequential model = small_model();
    const std::string path = test_files::temp_path(".keras"), weights = test_files::temp_path(".weights.h5");
    for (const std::string& message :
         {test_files::error_of([&] { save_keras(model, path); }), test_files::error_of([&] { load_keras(path); }),
          test_files::error_of([&] { save_model(model, path); }), test_files::error_of([&] { save_weights_h5(model, weights); }),
          test_files::error_of([&] { load_weights_h5(model, weights); })}) {
        EXPECT_NE(message.find("ONEFIT_KERAS_FILES"), std::string::npos) << message;
        EXPECT_TRUE(message.find(path) != std::string::npos || message.find(weights) != std::string::npos) << message;
    }
}
#endif

#if !ONEFIT_HAVE_ONNX
TEST(BuiltWithout, OnnxExportSaysSo) {
    const std::string message = test_files::error_of([] { export_onnx(small_model(), "m.onnx"); });
    EXPECT_NE(message.find("ONEFIT_ONNX"), std::string::npos) << message;
    EXPECT_NE(message.find("m.onnx"), std::string::npos) << message;
}
#endif

}  // namespace
}  // namespace onefit
