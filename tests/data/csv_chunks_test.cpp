// read_csv's chunked parser: at every chunk size it gives what the record tokenizer gives
// (parse_csv with chunk_bytes 0), values and errors alike, whatever the chunk boundaries cut.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "io/parse.hpp"
#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

const std::string kName = "data.csv";

// What parse_csv gives at one chunk size: the values, or the error message.
struct Parsed {
    std::vector<float> x, y;
    Shape x_shape;
    std::vector<std::string> feature_names, class_names;
    std::string error;
};

Parsed parse(const std::string& text, size_t chunk_bytes, const CsvOptions& options = {}) {
    Parsed out;
    try {
        const LabeledData data = parse_csv(text, kName, options, chunk_bytes);
        out.x.assign(data.x.data(), data.x.data() + data.x.size());
        out.y.assign(data.y.data(), data.y.data() + data.y.size());
        out.x_shape = data.x.shape();
        out.feature_names = data.feature_names;
        out.class_names = data.class_names;
    } catch (const Error& e) {
        out.error = e.what();
    }
    return out;
}

// Bitwise, so that NaNs compare equal and -0 differs from 0.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Chunks of 1 byte (every line its own chunk), a few bytes (lines cut anywhere), and more.
const size_t kChunkSizes[] = {1, 2, 3, 5, 7, 16, 61, 256, 4096};

// Checks every chunk size against the tokenizer and returns the tokenizer's result.
Parsed expect_chunks_agree(const std::string& text, const CsvOptions& options = {}) {
    const Parsed reference = parse(text, 0, options);
    for (size_t chunk : kChunkSizes) {
        const Parsed chunked = parse(text, chunk, options);
        EXPECT_EQ(chunked.error, reference.error) << "chunk_bytes " << chunk;
        EXPECT_TRUE(same_bits(chunked.x, reference.x)) << "chunk_bytes " << chunk;
        EXPECT_TRUE(same_bits(chunked.y, reference.y)) << "chunk_bytes " << chunk;
        EXPECT_EQ(chunked.x_shape, reference.x_shape) << "chunk_bytes " << chunk;
        EXPECT_EQ(chunked.feature_names, reference.feature_names) << "chunk_bytes " << chunk;
        EXPECT_EQ(chunked.class_names, reference.class_names) << "chunk_bytes " << chunk;
    }
    return reference;
}

// `rows` rows of `features` numbers and a label, the numbers written in several styles.
std::string numeric_csv(int rows, int features, uint64_t seed, const std::string& line_end = "\n",
                        bool text_labels = false) {
    Rng rng(seed);
    std::string text;
    for (int j = 0; j < features; ++j) text += "f" + std::to_string(j) + ",";
    text += "label" + line_end;
    const char* formats[] = {"%.6f", "%g", "%.3e", "+%.2f", " %.4f ", "%.0f"};
    const char* classes[] = {"setosa", "versicolor", "virginica", "iris nova"};
    for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < features; ++j) {
            char value[48];
            const uint64_t format = rng.below(6);
            const double v = (rng.uniform_double() - 0.5) * 200.0;
            std::snprintf(value, sizeof value, formats[format], format == 3 ? std::fabs(v) : v);
            text += std::string(value) + ",";
        }
        text += text_labels ? classes[rng.below(4)] : std::to_string(rng.below(10));
        text += line_end;
    }
    return text;
}

// ---- Same values ----

TEST(CsvChunks, ReadNumericRowsAsTheTokenizerDoesAtEveryChunkSize) {
    const Parsed reference = expect_chunks_agree(numeric_csv(300, 5, 1));
    ASSERT_TRUE(reference.error.empty()) << reference.error;
    EXPECT_EQ(reference.x_shape, (Shape{300, 5}));
}

TEST(CsvChunks, ReadCrlfLineEndsAndBlankLinesAtEveryChunkSize) {
    std::string text = numeric_csv(100, 3, 2, "\r\n");
    text.insert(text.find("\r\n", 200) + 2, "\r\n  \r\n\t\r\n");  // blank lines between rows
    text += "\r\n\r\n   ";                                          // and after the last one
    const Parsed reference = expect_chunks_agree(text);
    EXPECT_TRUE(reference.error.empty()) << reference.error;
    EXPECT_EQ(reference.x_shape, (Shape{100, 3}));
}

TEST(CsvChunks, ReadLinesLongerThanAChunk) {
    const Parsed reference = expect_chunks_agree(numeric_csv(20, 200, 3));  // ~2 KB lines
    EXPECT_EQ(reference.x_shape, (Shape{20, 200}));
}

TEST(CsvChunks, ReadALastLineWithoutLineEnd) {
    EXPECT_EQ(expect_chunks_agree("a,b\n1,2\n3,4").y, (std::vector<float>{2, 4}));
    EXPECT_EQ(expect_chunks_agree("a,b\r\n1,2\r\n3,4").y, (std::vector<float>{2, 4}));
}

TEST(CsvChunks, NumberClassNamesInSortedOrderWhateverChunkMetThemFirst) {
    // "zebra" appears first, "ant" only in the last lines: the indices still follow the names.
    std::string text = "a,label\n";
    for (int i = 0; i < 50; ++i) text += std::to_string(i) + ",zebra\n";
    for (int i = 0; i < 50; ++i) text += std::to_string(i) + ", moth \n";
    text += "1,ant\n";
    const Parsed reference = expect_chunks_agree(text);
    EXPECT_EQ(reference.class_names, (std::vector<std::string>{"ant", "moth", "zebra"}));
    EXPECT_EQ(reference.y.front(), 2.0f);
    EXPECT_EQ(reference.y[60], 1.0f);
    EXPECT_EQ(reference.y.back(), 0.0f);
    expect_chunks_agree(numeric_csv(200, 2, 4, "\r\n", true));
}

TEST(CsvChunks, ReadTabAndSemicolonFilesAndNoHeader) {
    CsvOptions options;
    options.delimiter = '\t';
    std::string tabbed = numeric_csv(50, 3, 5);
    for (char& c : tabbed) c = c == ',' ? '\t' : c;
    EXPECT_TRUE(expect_chunks_agree(tabbed, options).error.empty());
    options.delimiter = ';';
    options.has_header = false;
    EXPECT_EQ(expect_chunks_agree("1;2\n3 ; 4\n", options).x, (std::vector<float>{1, 3}));
}

TEST(CsvChunks, UnderflowingValuesInALaterChunkRoundToZero) {
    // from_chars calls 1e-50 out of range; the chunk goes back to the tokenizer, which keeps it.
    std::string text = numeric_csv(100, 2, 6);
    text += "1e-50,2,3\n";
    const Parsed chunked = parse(text, 16);
    ASSERT_TRUE(chunked.error.empty()) << chunked.error;
    EXPECT_EQ(chunked.x[200], 0.0f);
    expect_chunks_agree(text);
}

TEST(CsvChunks, ShortDecimalsRoundExactlyAsFromChars) {
    // The chunked parser reads these by one division (Clinger's fast path); the tokenizer by
    // from_chars. Digits around float's 2^24 significand, up to 10 after the point, and beyond.
    std::string text = "a,label\n";
    for (const char* v : {"16777216", "16777217", "-16777215", "1677721.7", "0.1", "-0.0", "-.25", "5.", ".5",
                          "0000000000000000001", "00000000000000000001", "0.0000000001", "0.00000000001",
                          "3.4028235", "1.0000001", "9999999.9", "0.3333333", "-123456.7"})
        text += std::string(v) + ",0\n";
    Rng rng(13);
    for (int i = 0; i < 20000; ++i) {
        char value[48];
        const double v = (rng.uniform_double() - 0.5) * std::pow(10.0, static_cast<double>(rng.below(12)) - 4.0);
        std::snprintf(value, sizeof value, "%.*f,0\n", static_cast<int>(rng.below(12)), v);
        text += value;
    }
    const Parsed reference = expect_chunks_agree(text);
    ASSERT_TRUE(reference.error.empty()) << reference.error;
    EXPECT_EQ(reference.x[0], 16777216.0f);
    EXPECT_TRUE(std::signbit(reference.x[5]));
}

TEST(CsvChunks, NanAndInfinityWhenAllowed) {
    CsvOptions options;
    options.allow_nan = true;
    const Parsed reference = expect_chunks_agree("a,b,label\n1,2,3\nnan,-inf,1\n+inf,NaN,2\n", options);
    ASSERT_EQ(reference.x.size(), 6u);
    EXPECT_TRUE(std::isnan(reference.x[2]));
}

TEST(CsvChunks, QuotedFieldsWithNewlinesAreTokenized) {
    const std::string text = numeric_csv(40, 2, 7) + "\"1.5\",2,\"3\"\n4,\"5\n\",6\n";
    const Parsed reference = expect_chunks_agree(text);
    EXPECT_NE(reference.error.find("data.csv:43:3: value \"5\\x0a\" in column \"f1\" is not a number"),
              std::string::npos)
        << reference.error;
    const Parsed quoted = expect_chunks_agree(numeric_csv(40, 2, 7) + "\"1.5\",2,\"3\"\n");
    EXPECT_TRUE(quoted.error.empty()) << quoted.error;
    EXPECT_EQ(quoted.x[80], 1.5f);
}

TEST(CsvChunks, LoneCarriageReturnLineEndsAreTokenized) {
    const Parsed reference = expect_chunks_agree("a,b\r1,2\r3,4\r\r5,x\r");
    EXPECT_NE(reference.error.find("data.csv:5:3: label \"x\" is not a number"), std::string::npos)
        << reference.error;
}

TEST(CsvChunks, DelimitersANumberCouldContainAreTokenized) {
    CsvOptions options;
    options.delimiter = 'e';
    EXPECT_EQ(expect_chunks_agree("aeb\n1e2\n", options).y, (std::vector<float>{2}));
    options.delimiter = '.';
    EXPECT_EQ(expect_chunks_agree("a.b\n1.5\n", options).x, (std::vector<float>{1}));
}

// ---- Same errors ----

TEST(CsvChunks, AnErrorInALaterChunkNamesItsLineAndColumn) {
    std::string text = numeric_csv(500, 4, 8);
    const size_t line_400 = [&] {
        size_t at = 0;
        for (int line = 1; line < 400; ++line) at = text.find('\n', at) + 1;
        return at;
    }();
    const size_t comma = text.find(',', line_400);
    text.replace(comma + 1, text.find(',', comma + 1) - comma - 1, "12x");  // column f1 of line 400
    const Parsed chunked = parse(text, 64);
    const std::string where = "data.csv:400:" + std::to_string(comma - line_400 + 2) + ": value \"12x\" in column \"f1\"";
    EXPECT_EQ(chunked.error.rfind(where, 0), 0u) << chunked.error;
    expect_chunks_agree(text);
}

TEST(CsvChunks, TheFirstErrorInTheFileWinsWhicheverChunkFinishesFirst) {
    std::string text = numeric_csv(300, 3, 9);
    text += "1,2\n";   // line 302: too few fields
    text += numeric_csv(300, 3, 10).substr(text.find('\n') + 1);
    text += "1,,3,4\n";  // line 603: an empty value
    const Parsed chunked = parse(text, 32);
    EXPECT_EQ(chunked.error.rfind("data.csv:302:4: line 302 has 2 fields, the header has 4", 0), 0u) << chunked.error;
    expect_chunks_agree(text);
}

TEST(CsvChunks, EveryKindOfRowErrorMatchesTheTokenizer) {
    const std::string rows = numeric_csv(60, 2, 11);
    for (const std::string bad : {"1,2,3,4\n", "1,2\n", ",1,2\n", "1, ,2\n", "1,2,\n", "1,nan,2\n", "1,-inf,2\n",
                                  "1e39,2,3\n", "1,2,cat\n", "1 2,3,4\n", "1,2,3 x\n", "+,1,2\n", "++1,2,3\n",
                                  "1,2,3,\n", "\t1,2\t,3\t\n", "1,2,3\r\n", "0x10,1,2\n", "1.5e,2,3\n"})
        expect_chunks_agree(rows + bad + "4,5,6\n");
}

TEST(CsvChunks, ALabelKindChangeInALaterChunkNamesTheFirstLabelsLine) {
    std::string text = "a,label\n\n1,cat\n";
    for (int i = 0; i < 100; ++i) text += std::to_string(i) + ",dog\n";
    text += "5,7\n";
    const Parsed chunked = parse(text, 40);
    EXPECT_EQ(chunked.error.rfind("data.csv:104:3: label \"7\" is a number, but the first label (line 3) is not", 0), 0u)
        << chunked.error;
    expect_chunks_agree(text);
}

// ---- The file reader ----

TEST(CsvChunks, ReadCsvSharesItsFeaturesUntilTheyAreWritten) {
    const std::string path = ::testing::TempDir() + "onefit_csv_chunks_shared.csv";
    std::ofstream(path, std::ios::binary) << numeric_csv(1000, 4, 12);
    LabeledData data = read_csv(path);
    EXPECT_EQ(data.x.shape(), (Shape{1000, 4}));
    EXPECT_TRUE(data.x.shares_storage());
    const Tensor copy = data.x;  // what onefit fit does before training: no copy of the values
    EXPECT_EQ(copy.data(), std::as_const(data.x).data());
    const float first = copy[0];
    data.x[0] = first + 1.0f;  // a write copies first
    EXPECT_FALSE(data.x.shares_storage());
    EXPECT_EQ(copy[0], first);
    EXPECT_EQ(data.x[0], first + 1.0f);
    EXPECT_TRUE(same_bits(copy.values(), parse(numeric_csv(1000, 4, 12), 0).x));
}

}  // namespace
}  // namespace onefit
