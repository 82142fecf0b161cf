// read_idx: MNIST's IDX files built byte by byte (big-endian dims and values), every element
// type, and one refusal per kind of damage, each naming the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/test_files.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

using namespace test_files;
using Floats = std::vector<float>;

// 00 00 TYPE NDIMS, one big-endian u32 per dimension, then `data` as given.
std::string idx_file(unsigned char type, const std::vector<uint32_t>& dims, const std::string& data) {
    std::string out = {'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
    for (uint32_t d : dims) append_be<uint32_t>(out, d);
    return out + data;
}

template <class T>
std::string be_values(std::initializer_list<T> values) {
    std::string out;
    for (T v : values) append_be<T>(out, v);
    return out;
}

std::string idx_error(const std::string& bytes) {
    const std::string path = write_bytes(bytes, ".idx");
    const std::string message = error_of([&] { read_idx(path); });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    return message;
}

// ---- What it reads ----

TEST(IdxRead, ReadsUnsignedByteImagesAsMnistStoresThem) {
    const Tensor t = read_idx(write_bytes(idx_file(0x08, {2, 2, 3}, std::string("\0\1\2\3\4\5\6\7\10\11\12\377", 12)),
                                          "-images-idx3-ubyte"));
    EXPECT_EQ(t.shape(), (Shape{2, 2, 3}));
    EXPECT_EQ(t.values(), (Floats{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255}));
}

TEST(IdxRead, ReadsEveryElementTypeBigEndian) {
    struct Case {
        unsigned char type;
        std::string data;
        Floats expected;
    };
    const std::vector<Case> cases = {
        {0x09, be_values<int8_t>({-128, 127}), {-128, 127}},
        {0x0B, be_values<int16_t>({-2, 1000}), {-2, 1000}},
        {0x0C, be_values<int32_t>({-70000, 123456}), {-70000, 123456}},
        {0x0D, be_values<float>({0.25f, -3.5f}), {0.25f, -3.5f}},
        {0x0E, be_values<double>({0.125, -1e20}), {0.125f, -1e20f}},
    };
    for (const Case& c : cases) {
        const Tensor t = read_idx(write_bytes(idx_file(c.type, {2}, c.data), ".idx"));
        EXPECT_EQ(t.shape(), (Shape{2})) << int{c.type};
        EXPECT_EQ(t.values(), c.expected) << int{c.type};
    }
}

TEST(IdxRead, ReadsAnEmptyArray) {
    EXPECT_EQ(read_idx(write_bytes(idx_file(0x08, {0, 28, 28}, ""), ".idx")).shape(), (Shape{0, 28, 28}));
}

TEST(IdxPair, FlattensImagesAndPairsThemWithLabels) {
    const std::string images = write_bytes(idx_file(0x08, {3, 1, 2}, std::string("\1\2\3\4\5\6", 6)), "_images");
    const std::string labels = write_bytes(idx_file(0x08, {3}, std::string("\7\0\11", 3)), "_labels");
    const LabeledData data = read_idx_pair(images, labels);
    EXPECT_EQ(data.x.shape(), (Shape{3, 2}));
    EXPECT_EQ(data.x.values(), (Floats{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(data.y.values(), (Floats{7, 0, 9}));
    const std::string short_labels = write_bytes(idx_file(0x08, {2}, std::string("\7\0", 2)), "_short");
    EXPECT_EQ(error_of([&] { read_idx_pair(images, short_labels); }),
              short_labels + ": 2 labels, but " + images +
                  " has 3 rows; both files must hold the same samples in the same order");
}

// ---- What it refuses ----

TEST(IdxRefuses, ATruncatedFile) {
    EXPECT_NE(idx_error(idx_file(0x08, {60000, 28, 28}, std::string(1000, '\0')))
                  .find("header says shape (60000, 28, 28) of unsigned byte (1 bytes each) = 47040000 bytes, file has "
                        "1000 after the header; the file is truncated"),
              std::string::npos);
}

TEST(IdxRefuses, TrailingBytes) {
    EXPECT_NE(idx_error(idx_file(0x0C, {1}, std::string(5, '\0'))).find("= 4 bytes, file has 5 after the header; the extra"),
              std::string::npos);
}

TEST(IdxRefuses, DimensionsWhoseByteCountOverflows) {
    EXPECT_NE(idx_error(idx_file(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, ""))
                  .find("the IDX shape (4294967295, 4294967295, 4294967295) is too large: its size overflows 64-bit integers"),
              std::string::npos);
}

TEST(IdxRefuses, AnEmptyShapeWhoseOtherDimensionsOverflow) {
    // Like the input fuzz_idx found (8 dimensions, one of them 0): empty, yet Tensor's int64
    // product of the dimensions overflowed.
    EXPECT_NE(idx_error(idx_file(0x08, {0xFFFFFFFF, 0xFFFFFFFF, 0}, ""))
                  .find("the IDX shape (4294967295, 4294967295, 0) is too large"),
              std::string::npos);
}

TEST(IdxRefuses, AnUnknownElementType) {
    EXPECT_NE(idx_error(idx_file(0x0A, {1}, "x")).find("unknown IDX element type 0x0A"), std::string::npos);
}

TEST(IdxRefuses, HeadersThatAreNotIdx) {
    EXPECT_NE(idx_error("abc").find("the file is 3 bytes, too short for an IDX magic number"), std::string::npos);
    EXPECT_NE(idx_error("P5\n28 28\n255\n").find("not an IDX file: it must start with two zero bytes"),
              std::string::npos);
    EXPECT_NE(idx_error(std::string("\0\0\x08\0", 4)).find("says 0 dimensions"), std::string::npos);
    EXPECT_NE(idx_error(std::string("\0\0\x08\x03\0\0\0\1", 8))
                  .find("says 3 dimensions, which take 16 bytes, but the file has 8; it is truncated"),
              std::string::npos);
    EXPECT_NE(idx_error("\x1f\x8b\x08\x08").find("gzip-compressed"), std::string::npos);
}

TEST(IdxRefuses, DoublesBeyondFloat32) {
    EXPECT_NE(idx_error(idx_file(0x0E, {1}, be_values<double>({-1e39}))).find("element 0 is -1e+39, beyond float32's range"),
              std::string::npos);
}

TEST(IdxRefuses, AMissingFile) {
    EXPECT_NE(error_of([&] { read_idx(temp_path("_missing")); }).find("cannot open the IDX file (No such file"),
              std::string::npos);
}

// ---- Telling formats apart ----

TEST(DetectDataFormat, ByMagicBytesFirst) {
    EXPECT_EQ(detect_data_format(write_bytes("\x93NUMPY\x01", "_npy.csv")), DataFormat::npy);
    EXPECT_EQ(detect_data_format(write_bytes(idx_file(0x08, {1}, "x"), "_idx.csv")), DataFormat::idx);
    EXPECT_EQ(detect_data_format(write_bytes(idx_file(0x0D, {1, 1, 1, 1}, "xxxx"), ".txt")), DataFormat::idx);
}

TEST(DetectDataFormat, ThenByExtensionThenCsv) {
    // Five dimensions or an unknown type are not taken for IDX by their bytes alone.
    EXPECT_EQ(detect_data_format(write_bytes(idx_file(0x08, {1, 1, 1, 1, 1}, "x"), ".csv")), DataFormat::csv);
    EXPECT_EQ(detect_data_format(write_bytes(idx_file(0x07, {1}, "x"), ".data")), DataFormat::csv);
    EXPECT_EQ(detect_data_format(write_bytes("a,b\n1,2\n", ".NPY")), DataFormat::npy);
    EXPECT_EQ(detect_data_format(temp_path("_missing-labels-idx1-ubyte")), DataFormat::idx);
    EXPECT_EQ(detect_data_format(temp_path("_missing.idx")), DataFormat::idx);
    EXPECT_EQ(detect_data_format(write_bytes("a,b\n1,2\n", ".csv")), DataFormat::csv);
    EXPECT_EQ(detect_data_format(temp_path("_missing")), DataFormat::csv);
    EXPECT_STREQ(data_format_name(DataFormat::idx), "idx");
}

}  // namespace
}  // namespace onefit
