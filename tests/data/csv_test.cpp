// read_csv: what it accepts, and that every refusal names the file, line and column.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

// Writes `content` byte for byte to a file named after the running test.
std::string write_csv(const std::string& content, const std::string& suffix = "") {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::string path = ::testing::TempDir() + "onefit_csv_" + name + suffix + ".csv";
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

// The message read_csv throws, or "" (and a test failure) when it does not throw.
std::string error_of(const std::string& path, const CsvOptions& options = {}) {
    try {
        read_csv(path, options);
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "read_csv(" << path << ") did not throw";
    return "";
}

using Strings = std::vector<std::string>;

// ---- What it reads ----

TEST(ReadCsv, ReadsNumericFeaturesAndTakesTheLastColumnAsLabel) {
    const LabeledData data = read_csv(write_csv("a,b,target\n1,2,0\n3.5,-4,1\n"));
    EXPECT_EQ(data.x.shape(), (Shape{2, 2}));
    EXPECT_EQ(data.x.values(), (std::vector<float>{1.0f, 2.0f, 3.5f, -4.0f}));
    EXPECT_EQ(data.y.values(), (std::vector<float>{0.0f, 1.0f}));
    EXPECT_EQ(data.feature_names, (Strings{"a", "b"}));
    EXPECT_TRUE(data.class_names.empty());
}

TEST(ReadCsv, KeepsNumericLabelsAsRegressionTargets) {
    const LabeledData data = read_csv(write_csv("a,price\n1,2.25\n2,-7.5\n"));
    EXPECT_EQ(data.y.values(), (std::vector<float>{2.25f, -7.5f}));
    EXPECT_TRUE(data.class_names.empty());
}

TEST(ReadCsv, MapsStringLabelsToClassIndicesInSortedOrder) {
    const LabeledData data = read_csv(write_csv("a,species\n1,virginica\n2,setosa\n3,versicolor\n4,setosa\n"));
    EXPECT_EQ(data.class_names, (Strings{"setosa", "versicolor", "virginica"}));
    EXPECT_EQ(data.y.values(), (std::vector<float>{2.0f, 0.0f, 1.0f, 0.0f}));
}

TEST(ReadCsv, FindsTheLabelColumnByName) {
    CsvOptions options;
    options.label_column = "y";
    const LabeledData data = read_csv(write_csv("a,y,b\n1,9,2\n3,8,4\n"), options);
    EXPECT_EQ(data.feature_names, (Strings{"a", "b"}));
    EXPECT_EQ(data.x.values(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(data.y.values(), (std::vector<float>{9, 8}));
}

TEST(ReadCsv, FindsTheLabelColumnByZeroBasedIndex) {
    CsvOptions options;
    options.label_column = "0";
    const LabeledData data = read_csv(write_csv("y,a,b\n9,1,2\n8,3,4\n"), options);
    EXPECT_EQ(data.feature_names, (Strings{"a", "b"}));
    EXPECT_EQ(data.y.values(), (std::vector<float>{9, 8}));
}

TEST(ReadCsv, PrefersAHeaderNameOverAnIndexWhenTheyClash) {
    CsvOptions options;
    options.label_column = "2";
    const LabeledData data = read_csv(write_csv("a,2,b\n1,9,2\n"), options);
    EXPECT_EQ(data.feature_names, (Strings{"a", "b"}));
    EXPECT_EQ(data.y.values(), (std::vector<float>{9}));
}

TEST(ReadCsv, SkipsAUtf8ByteOrderMarkAndReadsCrlfLineEnds) {
    const LabeledData data = read_csv(write_csv("\xEF\xBB\xBF" "a,b,label\r\n1,2,x\r\n3,4,y\r\n"));
    EXPECT_EQ(data.feature_names, (Strings{"a", "b"}));
    EXPECT_EQ(data.x.values(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(data.class_names, (Strings{"x", "y"}));
}

TEST(ReadCsv, ReadsALastLineWithoutNewlineAndSkipsBlankLines) {
    const LabeledData data = read_csv(write_csv("a,label\n\n1,0\n   \n2,1\n\n\n3,0"));
    EXPECT_EQ(data.x.values(), (std::vector<float>{1, 2, 3}));
}

TEST(ReadCsv, AllowsSpacesAroundValuesAndNames) {
    const LabeledData data = read_csv(write_csv(" a , b ,label\n 1.5 ,\t2 , cat \n"));
    EXPECT_EQ(data.feature_names, (Strings{"a", "b"}));
    EXPECT_EQ(data.x.values(), (std::vector<float>{1.5f, 2.0f}));
    EXPECT_EQ(data.class_names, (Strings{"cat"}));
}

TEST(ReadCsv, AcceptsExponentsALeadingPlusAndBareDecimalPoints) {
    const LabeledData data = read_csv(write_csv("a,b,c,d,label\n1e3,+2.5,-2.5E-1,.5,0\n"));
    EXPECT_EQ(data.x.values(), (std::vector<float>{1000.0f, 2.5f, -0.25f, 0.5f}));
}

TEST(ReadCsv, RoundsTinyValuesTowardZeroInsteadOfRefusingThem) {
    const LabeledData data = read_csv(write_csv("a,label\n1e-50,0\n"));
    EXPECT_EQ(data.x[0], 0.0f);
}

TEST(ReadCsv, ReadsQuotedFieldsWithDelimitersEscapedQuotesAndNewlines) {
    const LabeledData data = read_csv(write_csv("\"a,1\",\"b \"\"x\"\"\",label\n\"1.5\",2,\"two\nlines\"\n"));
    EXPECT_EQ(data.feature_names, (Strings{"a,1", "b \"x\""}));
    EXPECT_EQ(data.x.values(), (std::vector<float>{1.5f, 2.0f}));
    EXPECT_EQ(data.class_names, (Strings{"two\nlines"}));
}

TEST(ReadCsv, AcceptsDuplicateHeaderNames) {
    const LabeledData data = read_csv(write_csv("a,a,label\n1,2,0\n"));
    EXPECT_EQ(data.feature_names, (Strings{"a", "a"}));
}

TEST(ReadCsv, ReadsOtherDelimiters) {
    CsvOptions options;
    options.delimiter = ';';
    EXPECT_EQ(read_csv(write_csv("a,b;label\n1;0\n", "semicolon"), options).feature_names, (Strings{"a,b"}))
        << "a ',' inside a ';' file is not a separator";
    options.delimiter = '\t';
    EXPECT_EQ(read_csv(write_csv("a\tb\tlabel\n1\t2\t0\n", "tab"), options).x.values(), (std::vector<float>{1, 2}));
}

TEST(ReadCsv, ReadsAFileWithoutHeaderAndNamesColumnsByIndex) {
    CsvOptions options;
    options.has_header = false;
    const LabeledData data = read_csv(write_csv("1,2,0\n3,4,1\n"), options);
    EXPECT_EQ(data.x.values(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(data.y.values(), (std::vector<float>{0, 1}));
    EXPECT_EQ(data.feature_names, (Strings{"column 0", "column 1"}));
}

TEST(ReadCsv, KeepsNanAndInfinityWhenAllowed) {
    CsvOptions options;
    options.allow_nan = true;
    const LabeledData data = read_csv(write_csv("a,b,label\nnan,-inf,1\n"), options);
    EXPECT_TRUE(std::isnan(data.x[0]));
    EXPECT_TRUE(std::isinf(data.x[1]) && data.x[1] < 0);
}

// ---- What it refuses, and where ----

TEST(ReadCsvError, MissingFileNamesThePath) {
    const std::string path = ::testing::TempDir() + "onefit_csv_no_such_file.csv";
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ": cannot open"), std::string::npos) << message;
}

TEST(ReadCsvError, DirectoryIsNotAFile) {
    const std::string path = ::testing::TempDir();
    EXPECT_NE(error_of(path).find(path + ": cannot"), std::string::npos);
}

TEST(ReadCsvError, QuoteOrNewlineCannotBeTheDelimiter) {
    CsvOptions options;
    options.delimiter = '"';
    const std::string path = write_csv("a\"label\n1\"0\n");
    EXPECT_NE(error_of(path, options).find(path + ": the delimiter"), std::string::npos);
}

TEST(ReadCsvError, EmptyFile) {
    const std::string path = write_csv("");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":1: the file is empty"), std::string::npos) << message;
}

TEST(ReadCsvError, FileWithOnlyAByteOrderMarkAndBlankLinesIsEmpty) {
    const std::string path = write_csv("\xEF\xBB\xBF\r\n  \n");
    EXPECT_NE(error_of(path).find(path + ":1: the file is empty"), std::string::npos);
}

TEST(ReadCsvError, HeaderWithoutDataRows) {
    const std::string path = write_csv("a,b,label\n\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":1: the file has a header but no data rows"), std::string::npos) << message;
}

TEST(ReadCsvError, RowWithTooFewFieldsPointsAtTheEndOfTheLine) {
    const std::string path = write_csv("a,b,c,d,e\n1,2,3,4,5\n1,2,3,4,5\n1,2,3,4,5\n1,2,3,4,5\n1,2,3,4,5\n1,2,3\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":7:6: line 7 has 3 fields, the header has 5"), std::string::npos) << message;
}

TEST(ReadCsvError, RowWithTooManyFieldsPointsAtTheFirstExtraField) {
    const std::string path = write_csv("a,b\n1,2\n10,20,30\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":3:7: line 3 has 3 fields, the header has 2"), std::string::npos) << message;
}

TEST(ReadCsvError, CountsCrlfLinesAndNewlinesInsideQuotes) {
    const std::string path = write_csv("a,\"multi\r\nline\",label\r\n1,2,0\r\n1,2\r\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":4:4: line 4 has 2 fields"), std::string::npos) << message;
}

TEST(ReadCsvError, EmptyFeatureValue) {
    const std::string path = write_csv("a,b,label\n1,,0\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":2:3: empty value in column \"b\""), std::string::npos) << message;
}

TEST(ReadCsvError, EmptyLabel) {
    const std::string path = write_csv("a,label\n1,0\n2, \n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":3:4: empty value in column \"label\""), std::string::npos) << message;
}

TEST(ReadCsvError, NonNumericFeatureIsQuotedInTheMessage) {
    const std::string path = write_csv("a,b,label\n1,2,0\n1, abc ,0\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":3:4: value \"abc\" in column \"b\" is not a number"), std::string::npos) << message;
}

TEST(ReadCsvError, NumberFollowedByTextIsNotANumber) {
    const std::string path = write_csv("a,label\n1.5kg,0\n");
    EXPECT_NE(error_of(path).find(path + ":2:1: value \"1.5kg\""), std::string::npos);
}

TEST(ReadCsvError, NanIsRefusedUnlessAllowed) {
    const std::string path = write_csv("a,b,label\n1,NaN,0\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":2:3: value \"NaN\" in column \"b\" is NaN"), std::string::npos) << message;
    EXPECT_NE(message.find("allow_nan"), std::string::npos) << message;
}

TEST(ReadCsvError, InfinityIsRefusedUnlessAllowed) {
    const std::string path = write_csv("a,label\n-inf,0\n");
    EXPECT_NE(error_of(path).find(path + ":2:1: value \"-inf\" in column \"a\" is infinite"), std::string::npos);
}

TEST(ReadCsvError, NanLabelIsRefusedUnlessAllowed) {
    const std::string path = write_csv("a,label\n1,0.5\n2,nan\n");
    EXPECT_NE(error_of(path).find(path + ":3:3: value \"nan\" in column \"label\" is NaN"), std::string::npos);
}

TEST(ReadCsvError, ValueTooLargeForFloat) {
    const std::string path = write_csv("a,label\n1e39,0\n");
    EXPECT_NE(error_of(path).find(path + ":2:1: value \"1e39\" in column \"a\" does not fit"), std::string::npos);
}

TEST(ReadCsvError, LabelsMixingNumbersAndNames) {
    const std::string path = write_csv("a,label\n1,0\n2,cat\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":3:3: label \"cat\" is not a number, but the first label (line 2) is"),
              std::string::npos)
        << message;
}

TEST(ReadCsvError, UnknownLabelColumnListsTheAvailableNames) {
    CsvOptions options;
    options.label_column = "species";
    const std::string path = write_csv("sepal,petal,class\n1,2,0\n");
    const std::string message = error_of(path, options);
    EXPECT_NE(message.find(path + ":1: no column named \"species\""), std::string::npos) << message;
    EXPECT_NE(message.find("\"sepal\", \"petal\", \"class\""), std::string::npos) << message;
}

TEST(ReadCsvError, LabelColumnIndexOutOfRange) {
    CsvOptions options;
    options.label_column = "3";
    const std::string path = write_csv("a,b,c\n1,2,0\n");
    const std::string message = error_of(path, options);
    EXPECT_NE(message.find(path + ":1: label column index 3 is out of range"), std::string::npos) << message;
    EXPECT_NE(message.find("indices 0 to 2"), std::string::npos) << message;
}

TEST(ReadCsvError, LabelColumnNameThatAppearsTwiceAsksForAnIndex) {
    CsvOptions options;
    options.label_column = "y";
    const std::string path = write_csv("y,a,y\n1,2,0\n");
    const std::string message = error_of(path, options);
    EXPECT_NE(message.find(path + ":1: the label column \"y\" appears 2 times"), std::string::npos) << message;
}

TEST(ReadCsvError, SingleColumnFileHasNoFeatures) {
    const std::string path = write_csv("label\n1\n");
    EXPECT_NE(error_of(path).find(path + ":1: the header has 1 column"), std::string::npos);
}

TEST(ReadCsvError, UnclosedQuotePointsAtTheOpeningQuote) {
    const std::string path = write_csv("a,label\n1,\"cat\n2,dog\n");
    const std::string message = error_of(path);
    EXPECT_NE(message.find(path + ":2:3: this quoted field is never closed"), std::string::npos) << message;
}

TEST(ReadCsvError, TextAfterAClosingQuote) {
    const std::string path = write_csv("a,label\n\"1\"2,0\n");
    EXPECT_NE(error_of(path).find(path + ":2:4: unexpected text after a closing quote"), std::string::npos);
}

TEST(ReadCsvError, ControlBytesInValuesAreEscapedInTheMessage) {
    const std::string path = write_csv(std::string("a,label\nx\x01y,0\n"));
    EXPECT_NE(error_of(path).find("value \"x\\x01y\""), std::string::npos);
}

// Random bytes drawn from CSV-ish characters: read_csv must return or throw onefit::Error,
// never crash, hang or read out of bounds (run under -fsanitize=address,undefined).
TEST(ReadCsvRobustness, RandomInputEitherParsesOrThrowsError) {
    const std::string alphabet = "0123456789.,,,\"\"\n\n\r -+eEnaifxy\t;\xEF\xBB\xBF";
    Rng rng(42);
    int parsed = 0;
    for (int round = 0; round < 500; ++round) {
        std::string content;
        const uint64_t length = rng.below(60);
        for (uint64_t i = 0; i < length; ++i) content += alphabet[rng.below(alphabet.size())];
        CsvOptions options;
        options.has_header = rng.below(2) == 0;
        options.allow_nan = rng.below(2) == 0;
        if (rng.below(3) == 0) options.label_column = std::to_string(rng.below(4));
        try {
            const LabeledData data = read_csv(write_csv(content), options);
            EXPECT_EQ(data.x.rows(), data.y.rows());
            ++parsed;
        } catch (const Error&) {
        }
    }
    EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace onefit
