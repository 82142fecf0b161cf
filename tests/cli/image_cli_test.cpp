// Image data through the command line alone: an (N, H, W) .npy of images and its labels, a
// convnet given with --layers, saved, evaluated and predicted; bad layer lists exit 2 naming
// the layer.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "support/run_cli.hpp"
#include "support/test_files.hpp"

namespace onefit {
namespace {

using namespace testing_support;

// A little-endian float32 (or int64 labels) .npy of the given shape.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const char* descr, const void* data,
               size_t bytes) {
    std::string dims;
    for (int64_t d : shape) dims += std::to_string(d) + ", ";
    std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const uint16_t length = static_cast<uint16_t>(header.size());
    out.write(reinterpret_cast<const char*>(&length), 2);
    out << header;
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

// 8x8 images of a bright 3x3 square in one of three places (the class), on faint noise.
struct Images {
    std::string x, y;
};
Images square_images() {
    const int64_t n = 240;
    std::vector<float> x(static_cast<size_t>(n * 64));
    std::vector<int64_t> y(static_cast<size_t>(n));
    uint32_t state = 12345;
    for (int64_t i = 0; i < n; ++i) {
        y[i] = i % 3;
        for (int64_t p = 0; p < 64; ++p) {
            state = state * 1664525u + 1013904223u;
            x[i * 64 + p] = 0.2f * static_cast<float>(state >> 8) / 16777216.0f;
        }
        const int64_t top = y[i] == 0 ? 0 : y[i] == 1 ? 5 : 2, left = y[i] == 2 ? 5 : (i / 3) % 5;
        for (int64_t r = top; r < top + 3; ++r)
            for (int64_t c = left; c < left + 3; ++c) x[i * 64 + r * 8 + c] = 1.0f;
    }
    Images files{test_files::temp_path("_images_x.npy"), test_files::temp_path("_images_y.npy")};
    write_npy(files.x, {n, 8, 8}, "<f4", x.data(), x.size() * sizeof(float));
    write_npy(files.y, {n}, "<i8", y.data(), y.size() * sizeof(int64_t));
    return files;
}

TEST(CliImages, AConvnetTrainsSavesEvaluatesAndPredictsFromTheCommandLine) {
    const Images data = square_images();
    const std::string model = test_files::temp_path("_convnet");
    const CliResult fit = run_cli({"fit", "--data", data.x, "--labels", data.y, "--layers",
                                   "conv:8:3:relu:same,maxpool:2,conv:8:3:relu,flatten,dropout:0.1,3:softmax",
                                   "--epochs", "15", "--test-size", "0.25", "--shuffle-split", "--metrics", "accuracy",
                                   "--verbose", "0", "--save", model});
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
    EXPECT_NE(fit.out.find("8x8x1-conv8(3x3)-maxpool(2x2)-conv8(3x3)-flatten-dropout(0.1)-3"), std::string::npos) << fit.out;
    EXPECT_NE(fit.out.find("val_accuracy 1"), std::string::npos) << fit.out;  // the squares are easy to tell apart

    const CliResult evaluate = run_cli({"evaluate", "--model", model, "--data", data.x, "--labels", data.y});
    ASSERT_EQ(evaluate.exit_code, 0) << evaluate.err;
    EXPECT_NE(evaluate.out.find("accuracy: "), std::string::npos);
    const CliResult predict = run_cli({"predict", "--model", model, "--data", data.x});
    ASSERT_EQ(predict.exit_code, 0) << predict.err;
    EXPECT_EQ(predict.out.rfind("pred_0,pred_1,pred_2\n", 0), 0u) << predict.out.substr(0, 80);
}

// An IDX file of u8 values (MNIST's format): magic 00 00 08 NDIMS, big-endian u32 dimensions.
void write_idx_u8(const std::string& path, const std::vector<uint32_t>& shape, const std::vector<uint8_t>& values) {
    std::string bytes = {0, 0, 8, static_cast<char>(shape.size())};
    for (uint32_t d : shape)
        for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((d >> shift) & 0xff);
    bytes.append(values.begin(), values.end());
    std::ofstream(path, std::ios::binary) << bytes;
}

TEST(CliImages, IdxImagesTrainWithNpyLabelsAndTheReverse) {
    const int64_t n = 30;
    std::vector<uint8_t> pixels(static_cast<size_t>(n * 16)), labels(static_cast<size_t>(n));
    std::vector<int64_t> npy_labels(static_cast<size_t>(n));
    std::vector<float> npy_pixels(pixels.size());
    for (int64_t i = 0; i < n; ++i) {
        labels[i] = static_cast<uint8_t>(i % 2), npy_labels[i] = i % 2;
        for (int64_t p = 0; p < 16; ++p)
            pixels[i * 16 + p] = static_cast<uint8_t>((p < 8) == (i % 2 == 0) ? 200 : 10), npy_pixels[i * 16 + p] = pixels[i * 16 + p];
    }
    const std::string idx_x = test_files::temp_path("_x-ubyte"), idx_y = test_files::temp_path("_y-ubyte"),
                      npy_x = test_files::temp_path("_x.npy"), npy_y = test_files::temp_path("_y.npy");
    write_idx_u8(idx_x, {static_cast<uint32_t>(n), 4, 4}, pixels);
    write_idx_u8(idx_y, {static_cast<uint32_t>(n)}, labels);
    write_npy(npy_x, {n, 4, 4}, "<f4", npy_pixels.data(), npy_pixels.size() * sizeof(float));
    write_npy(npy_y, {n}, "<i8", npy_labels.data(), npy_labels.size() * sizeof(int64_t));
    for (const auto& [x, y] : {std::pair(idx_x, npy_y), std::pair(npy_x, idx_y)}) {
        const CliResult fit = run_cli({"fit", "--data", x, "--labels", y, "--layers", "flatten,2:softmax", "--epochs", "2",
                                       "--verbose", "0"});
        EXPECT_EQ(fit.exit_code, 0) << x << " with " << y << ": " << fit.err;
        EXPECT_NE(fit.out.find("30 train"), std::string::npos) << fit.out;
    }
}

TEST(CliImages, BadLayerListsExitTwoNamingTheLayer) {
    const Images data = square_images();
    const auto fit = [&](const char* layers) {
        return run_cli({"fit", "--data", data.x, "--labels", data.y, "--layers", layers, "--verbose", "0"});
    };
    const CliResult too_big = fit("conv:4:9,flatten,3:softmax");
    EXPECT_EQ(too_big.exit_code, 2);
    EXPECT_NE(too_big.err.find("layer 'conv2d' (Conv2D): the window 9x9 does not fit the input (8, 8, 1)"),
              std::string::npos) << too_big.err;
    const CliResult malformed = fit("conv:4,flatten,3:softmax");
    EXPECT_EQ(malformed.exit_code, 2);
    EXPECT_NE(malformed.err.find("--layers 'conv:4': a layer is"), std::string::npos) << malformed.err;
    EXPECT_EQ(fit("conv:0:3:relu,flatten,3:softmax").err,
              "onefit: error: --layers 'conv:0:3:relu': filters must be at least 1, got 0\n");  // named once
    const CliResult dense_on_images = fit("maxpool:2,16:relu,3:softmax");
    EXPECT_EQ(dense_on_images.exit_code, 2);
    EXPECT_NE(dense_on_images.err.find("add Flatten() before it"), std::string::npos) << dense_on_images.err;
    // A Dense model still sees the images flattened, as before, also after a BatchNormalization;
    // a convnet keeps their shape behind a leading Dropout.
    EXPECT_EQ(fit("16:relu,3:softmax").exit_code, 0);
    EXPECT_EQ(fit("batchnorm,16:relu,3:softmax").exit_code, 0);
    const CliResult dropout_first = fit("dropout:0.1,conv:4:3,flatten,3:softmax");
    EXPECT_EQ(dropout_first.exit_code, 0) << dropout_first.err;
}

TEST(CliImages, BatchNormalizationTrainsAndItsMomentumIsChecked) {
    const Images data = square_images();
    const std::string model = test_files::temp_path("_bn");
    const CliResult fit = run_cli({"fit", "--data", data.x, "--labels", data.y, "--layers",
                                   "conv:8:3:relu:same,batchnorm:0.9,maxpool:2,flatten,3:softmax", "--epochs", "15",
                                   "--test-size", "0.25", "--shuffle-split", "--metrics", "accuracy", "--verbose", "0",
                                   "--save", model});
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
    EXPECT_NE(fit.out.find("8x8x1-conv8(3x3)-batchnorm-maxpool(2x2)-flatten-3"), std::string::npos) << fit.out;
    const CliResult evaluate = run_cli({"evaluate", "--model", model, "--data", data.x, "--labels", data.y});
    ASSERT_EQ(evaluate.exit_code, 0) << evaluate.err;
    const CliResult bad = run_cli({"fit", "--data", data.x, "--labels", data.y, "--layers",
                                   "conv:4:3,batchnorm:2,flatten,3:softmax", "--verbose", "0"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--layers 'batchnorm:2': BatchNormalization: momentum must be in [0, 1]"), std::string::npos)
        << bad.err;
}

TEST(CliImages, AConfigFileDescribesAConvnetWithKerassArgumentNames) {
    const Images data = square_images();
    const std::string config = test_files::write_bytes(R"({"model": {"layers": [
        {"type": "conv2d", "filters": 8, "kernel_size": [3, 3], "padding": "same", "activation": "relu"},
        {"type": "batch_normalization", "momentum": 0.9},
        {"type": "max_pooling2d"},
        {"type": "average_pooling2d", "pool_size": 2, "strides": 1, "padding": "same"},
        {"type": "reshape", "target_shape": [4, 32]},
        {"type": "flatten"},
        {"units": 3, "activation": "softmax"}]}})", "_convnet.json");
    const CliResult fit = run_cli({"fit", config, "--data", data.x, "--labels", data.y, "--epochs", "2", "--verbose", "0"});
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
    EXPECT_NE(fit.out.find("8x8x1-conv8(3x3)-batchnorm-maxpool(2x2)-avgpool(2x2)-reshape(4x32)-flatten-3"),
              std::string::npos) << fit.out;

    const auto error_of = [&](const std::string& layers) {
        const std::string bad = test_files::write_bytes(R"({"model": {"layers": [)" + layers + "]}}", "_bad.json");
        const CliResult r = run_cli({"fit", bad, "--data", data.x, "--labels", data.y, "--verbose", "0"});
        EXPECT_EQ(r.exit_code, 2) << layers;
        return r.err;
    };
    EXPECT_NE(error_of(R"({"type": "conv2d", "filters": 4, "kernel": 3}, {"type": "flatten"}, {"units": 3})")
                  .find("model.layers[0]"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"type": "conv2d", "filters": 4, "kernel_size": [3, 0]}, {"type": "flatten"}, {"units": 3})")
                  .find("model.layers[0].kernel_size[1]"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"type": "batch_normalization", "momentum": 2}, {"type": "flatten"}, {"units": 3})")
                  .find("momentum must be in [0, 1]"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"type": "conv3d"}, {"units": 3})").find("unknown layer type 'conv3d'"), std::string::npos);
    // Every kind's arguments come from its declaration: a misspelt one is named with what the kind takes.
    EXPECT_NE(error_of(R"({"type": "batch_normalization", "momentun": 0.9}, {"type": "flatten"}, {"units": 3})")
                  .find("'model.layers[0].momentun': BatchNormalization: unknown argument 'momentun' "
                        "(BatchNormalization takes momentum, epsilon, center, scale)"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"type": "dense"})").find("'model.layers[0]': Dense: units is required"), std::string::npos);
    EXPECT_NE(error_of(R"({"units": 3, "use_bias": 1})").find("'model.layers[0].use_bias': Dense: use_bias must be "
                                                              "true or false"),
              std::string::npos);
}

TEST(CliImages, LayersTakeAnyKindByItsConfigWordAndKerassArgumentNames) {
    const Images data = square_images();
    const auto fit = [&](const char* layers) {
        return run_cli({"fit", "--data", data.x, "--labels", data.y, "--layers", layers, "--epochs", "1", "--verbose", "0"});
    };
    const CliResult ok = fit("conv2d:filters=4:kernel_size=3x3:padding=same,"
                             "batch_normalization:momentum=0.9:center=false,max_pooling2d:pool_size=3:strides=2,"
                             "flatten,dense:units=3:activation=softmax");
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_NE(ok.out.find("8x8x1-conv4(3x3)-batchnorm-maxpool(3x3)-flatten-3"), std::string::npos) << ok.out;
    EXPECT_EQ(fit("max_pooling2d:pool_sise=3,flatten,3:softmax").err,
              "onefit: error: --layers 'max_pooling2d:pool_sise=3': MaxPooling2D: unknown argument 'pool_sise' "
              "(MaxPooling2D takes pool_size, strides, padding)\n");
    EXPECT_EQ(fit("dense:activation=relu,3:softmax").err,
              "onefit: error: --layers 'dense:activation=relu': Dense: units is required\n");
    // Kinds declared by their op files alone reach the CLI too: a sequence model over the image's rows.
    const CliResult sequence = fit("reshape:target_shape=8x8,conv1d:filters=3:kernel_size=3,relu:max_value=6,"
                                   "max_pooling1d:pool_size=2,layer_normalization,global_max_pooling1d,"
                                   "dense:units=3,activation:activation=softmax");
    ASSERT_EQ(sequence.exit_code, 0) << sequence.err;
    EXPECT_NE(sequence.out.find("8x8x1-reshape(8x8)-conv1d-relu-max_pooling1d-layer_normalization-global_max_pooling1d-3-"
                                "activation"),
              std::string::npos)
        << sequence.out;
    EXPECT_EQ(fit("flatten,leaky_relu:negative_slope=-1,3:softmax").err,
              "onefit: error: --layers 'leaky_relu:negative_slope=-1': LeakyReLU: negative_slope cannot be negative, "
              "got -1\n");
}

}  // namespace
}  // namespace onefit
