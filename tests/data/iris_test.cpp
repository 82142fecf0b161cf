// load_iris() against scikit-learn's sklearn/datasets/data/iris.csv. Expected sums were
// computed from that file with Python's decimal module (exact), not from onefit's table.
#include <gtest/gtest.h>

#include "onefit/dataset.hpp"

namespace onefit {
namespace {

TEST(LoadIris, Has150RowsOf4FeaturesAndOneLabelEach) {
    const LabeledData iris = load_iris();
    EXPECT_EQ(iris.x.shape(), (Shape{150, 4}));
    EXPECT_EQ(iris.y.shape(), (Shape{150}));
}

TEST(LoadIris, NamesFeaturesAndClassesLikeScikitLearn) {
    const LabeledData iris = load_iris();
    EXPECT_EQ(iris.feature_names, (std::vector<std::string>{"sepal length (cm)", "sepal width (cm)",
                                                           "petal length (cm)", "petal width (cm)"}));
    EXPECT_EQ(iris.class_names, (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
}

TEST(LoadIris, LabelsAreFiftySetosaThenFiftyVersicolorThenFiftyVirginica) {
    const LabeledData iris = load_iris();
    for (int64_t row = 0; row < 150; ++row) EXPECT_EQ(iris.y[row], static_cast<float>(row / 50)) << "row " << row;
}

TEST(LoadIris, FirstAndLastRowsMatchTheCsv) {
    const LabeledData iris = load_iris();
    const float first[4] = {5.1f, 3.5f, 1.4f, 0.2f};
    const float last[4] = {5.9f, 3.0f, 5.1f, 1.8f};
    for (int col = 0; col < 4; ++col) {
        EXPECT_EQ(iris.x.at(0, col), first[col]);
        EXPECT_EQ(iris.x.at(149, col), last[col]);
    }
}

// Rows 35 and 38 (1-based) are where scikit-learn's copy differs from the UCI file.
TEST(LoadIris, HasScikitLearnsCorrectedRows35And38NotUcis) {
    const LabeledData iris = load_iris();
    const float row35[4] = {4.9f, 3.1f, 1.5f, 0.2f};
    const float row38[4] = {4.9f, 3.6f, 1.4f, 0.1f};
    for (int col = 0; col < 4; ++col) {
        EXPECT_EQ(iris.x.at(34, col), row35[col]);
        EXPECT_EQ(iris.x.at(37, col), row38[col]);
    }
}

TEST(LoadIris, PerClassColumnSumsMatchTheCsv) {
    const double expected[3][4] = {
        {250.3, 171.4, 73.1, 12.3}, {296.8, 138.5, 213.0, 66.3}, {329.4, 148.7, 277.6, 101.3}};
    const LabeledData iris = load_iris();
    double sums[3][4] = {};
    for (int64_t row = 0; row < 150; ++row)
        for (int col = 0; col < 4; ++col) sums[static_cast<int>(iris.y[row])][col] += iris.x.at(row, col);
    for (int label = 0; label < 3; ++label)
        for (int col = 0; col < 4; ++col)
            EXPECT_NEAR(sums[label][col], expected[label][col], 1e-4) << "class " << label << ", column " << col;
}

TEST(LoadIris, SumOfSquaresOfAllValuesMatchesTheCsv) {
    const LabeledData iris = load_iris();
    double sum = 0.0;
    for (float v : iris.x.values()) sum += static_cast<double>(v) * v;
    EXPECT_NEAR(sum, 9539.29, 1e-3);
}

}  // namespace
}  // namespace onefit
