// Image layers' values against Keras's definitions: a Conv2D against the convolution written out
// as its definition (TensorFlow's "same" padding: out = ceil(in / stride), the smaller half of
// the padding before), pooling against values worked by hand, summary() against Keras's shapes
// and parameter counts. Each model ends in an identity Dense, so predict() shows the layer's output.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "onefit/onefit.hpp"
#include "support/test_files.hpp"

namespace onefit {
namespace {

// The image layers' output for x: the model is `layers`, Flatten, then a linear Dense of weight I.
Tensor output_of(const Shape& input, const std::vector<Layer>& layers, const Tensor& x,
                 const std::vector<Tensor>& weights) {
    Sequential sizing(input);  // the flattened output's width: the rows of a Dense kernel after it
    for (const Layer& l : layers) sizing.add(l);
    sizing.add(Flatten());
    sizing.add(Dense(1));
    const std::vector<Tensor> sizes = sizing.get_weights();
    const int64_t width = sizes[sizes.size() - 2].dim(0);

    Sequential model(input);
    for (const Layer& l : layers) model.add(l);
    model.add(Flatten());
    model.add(Dense(width, "linear"));
    Tensor identity({width, width});
    for (int64_t i = 0; i < width; ++i) identity.at(i, i) = 1.0f;
    std::vector<Tensor> all = weights;
    all.push_back(identity);
    all.push_back(Tensor({width}));
    model.set_weights(all);
    return model.predict(x);
}

Tensor random_tensor(const Shape& shape, Rng& rng) {
    Tensor t(shape);
    for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(rng.uniform_double() * 2 - 1);
    return t;
}

TEST(ImageLayers, Conv2DComputesTheConvolutionsDefinition) {
    struct Case {
        std::array<int64_t, 2> kernel, strides;
        const char* padding;
    };
    for (const Case& c : {Case{{3, 2}, {2, 2}, "same"}, Case{{3, 3}, {1, 2}, "valid"}, Case{{2, 2}, {1, 1}, "same"},
                          Case{{1, 1}, {1, 1}, "valid"}}) {
        const int64_t n = 2, h = 5, w = 6, cin = 2, cout = 3;
        Rng rng(11);
        const Tensor x = random_tensor({n, h, w, cin}, rng);
        const Tensor kernel = random_tensor({c.kernel[0], c.kernel[1], cin, cout}, rng);
        const Tensor bias = random_tensor({cout}, rng);
        const Tensor y = output_of({h, w, cin}, {Conv2D(cout, c.kernel, c.strides, c.padding)}, x, {kernel, bias});

        const bool same = std::string(c.padding) == "same";
        const int64_t oh = same ? (h + c.strides[0] - 1) / c.strides[0] : (h - c.kernel[0]) / c.strides[0] + 1;
        const int64_t ow = same ? (w + c.strides[1] - 1) / c.strides[1] : (w - c.kernel[1]) / c.strides[1] + 1;
        const int64_t pad_top = same ? std::max<int64_t>((oh - 1) * c.strides[0] + c.kernel[0] - h, 0) / 2 : 0;
        const int64_t pad_left = same ? std::max<int64_t>((ow - 1) * c.strides[1] + c.kernel[1] - w, 0) / 2 : 0;
        ASSERT_EQ(y.shape(), (Shape{n, oh * ow * cout}));
        for (int64_t s = 0; s < n; ++s)
            for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j)
                    for (int64_t f = 0; f < cout; ++f) {
                        double sum = bias[f];
                        for (int64_t a = 0; a < c.kernel[0]; ++a)
                            for (int64_t b = 0; b < c.kernel[1]; ++b)
                                for (int64_t k = 0; k < cin; ++k) {
                                    const int64_t yy = i * c.strides[0] + a - pad_top, xx = j * c.strides[1] + b - pad_left;
                                    if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                                    sum += double(x[((s * h + yy) * w + xx) * cin + k]) *
                                           kernel[((a * c.kernel[1] + b) * cin + k) * cout + f];
                                }
                        EXPECT_NEAR(y.at(s, (i * ow + j) * cout + f), sum, 1e-5)
                            << c.padding << " at " << s << "," << i << "," << j << "," << f;
                    }
    }
}

TEST(ImageLayers, PoolingByHand) {
    Tensor x({1, 4, 4, 1});
    for (int64_t i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);  // rows 1..4, 5..8, ...
    EXPECT_EQ(output_of({4, 4, 1}, {MaxPooling2D(2)}, x, {}).values(), (std::vector<float>{6, 8, 14, 16}));
    EXPECT_EQ(output_of({4, 4, 1}, {AveragePooling2D(2)}, x, {}).values(), (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
    // 3x3 with "same" 2x2 windows: the windows at the edge average only the pixels inside.
    Tensor small({1, 3, 3, 1});
    for (int64_t i = 0; i < 9; ++i) small[i] = static_cast<float>(i + 1);
    EXPECT_EQ(output_of({3, 3, 1}, {AveragePooling2D(2, 2, "same")}, small, {}).values(),
              (std::vector<float>{3, 4.5f, 7.5f, 9}));
    EXPECT_EQ(output_of({3, 3, 1}, {MaxPooling2D(2, 2, "same")}, small, {}).values(), (std::vector<float>{5, 6, 8, 9}));
    // Padding never wins a max: all-negative values at the edge stay themselves.
    Tensor negative = small;
    for (int64_t i = 0; i < 9; ++i) negative[i] = -small[i];
    EXPECT_EQ(output_of({3, 3, 1}, {MaxPooling2D(2, 2, "same")}, negative, {}).values(),
              (std::vector<float>{-1, -3, -7, -9}));
    // Two channels pool separately; the global average is per channel.
    Tensor two({1, 2, 2, 2}, std::vector<float>{1, 10, 2, 20, 3, 30, 4, 40});
    EXPECT_EQ(output_of({2, 2, 2}, {MaxPooling2D(2)}, two, {}).values(), (std::vector<float>{4, 40}));
    EXPECT_EQ(output_of({2, 2, 2}, {GlobalAveragePooling2D()}, two, {}).values(), (std::vector<float>{2.5f, 25}));
    // A "same" window far larger than the image takes the whole image at every pixel, in time
    // bounded by the image (its rows outside are skipped, not visited); past 65536 it is refused.
    EXPECT_EQ(output_of({3, 3, 1}, {MaxPooling2D(60001, 1, "same")}, small, {}).values(), std::vector<float>(9, 9));
    EXPECT_EQ(output_of({3, 3, 1}, {AveragePooling2D(60001, 1, "same")}, small, {}).values(), std::vector<float>(9, 5));
    EXPECT_EQ(test_files::error_of([] { MaxPooling2D(99999999999); }),
              "MaxPooling2D: pool_size must be positive and at most 65536, got (99999999999, 99999999999)");
}

TEST(ImageLayers, FlattenAndReshapeKeepChannelsLastOrder) {
    Tensor x({1, 2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
    EXPECT_EQ(output_of({2, 3}, {Reshape({3, 2})}, x, {}).values(), x.values());
    EXPECT_EQ(output_of({2, 3}, {Reshape({-1, 1, 1})}, x, {}).values(), x.values());
}

TEST(ImageLayers, SummaryShowsKerasShapesAndParameterCounts) {
    // Keras's "simple MNIST convnet": 34,826 parameters.
    Sequential model({28, 28, 1});
    model.add(Conv2D(32, 3, 1, "valid", "relu"));
    model.add(MaxPooling2D(2));
    model.add(Conv2D(64, 3, 1, "valid", "relu"));
    model.add(MaxPooling2D(2));
    model.add(Flatten());
    model.add(Dropout(0.5f));
    model.add(Dense(10, "softmax"));
    EXPECT_EQ(model.count_params(), 34826);
    const std::string s = model.summary();
    for (const char* line : {"conv2d (Conv2D)", "(None, 26, 26, 32)", "320", "max_pooling2d (MaxPooling2D)",
                             "(None, 13, 13, 32)", "conv2d_1 (Conv2D)", "(None, 11, 11, 64)", "18496",
                             "max_pooling2d_1", "(None, 5, 5, 64)", "flatten (Flatten)", "(None, 1600)", "16010"})
        EXPECT_NE(s.find(line), std::string::npos) << line << " in\n" << s;
    const std::vector<Tensor> w = model.get_weights();
    ASSERT_EQ(w.size(), 6u);
    EXPECT_EQ(w[0].shape(), (Shape{3, 3, 1, 32}));
    EXPECT_EQ(w[2].shape(), (Shape{3, 3, 32, 64}));
    EXPECT_EQ(w[4].shape(), (Shape{1600, 10}));
}

TEST(ImageLayers, ShapeErrorsNameTheLayer) {
    auto compile_error = [](const Shape& input, std::vector<Layer> layers) {
        return test_files::error_of([&] {
            Sequential m(input);
            for (Layer& l : layers) m.add(std::move(l));
            m.compile("adam", "mse");
        });
    };
    EXPECT_NE(compile_error({4}, {Conv2D(2, 3), Flatten(), Dense(1)}).find("'conv2d' (Conv2D): needs an image input"),
              std::string::npos);
    EXPECT_NE(compile_error({2, 2, 1}, {Conv2D(2, 3), Flatten(), Dense(1)}).find("does not fit"), std::string::npos);
    EXPECT_NE(compile_error({4, 4, 1}, {Dense(2)}).find("add Flatten()"), std::string::npos);
    EXPECT_NE(compile_error({4, 4, 1}, {Reshape({3, 5}), Flatten(), Dense(1)}).find("cannot reshape"), std::string::npos);
    EXPECT_THROW(Conv2D(0, 3), Error);
    EXPECT_THROW(MaxPooling2D(0), Error);
    EXPECT_THROW(Conv2D(1, 3, 1, "full"), Error);
    EXPECT_THROW(Reshape({-1, -1}), Error);
}

}  // namespace
}  // namespace onefit
