// read_npy over a mapped file: float32 C-order arrays are the mapping itself (equal to the copied
// read, alive as long as a tensor holds them, copied before any write); every other layout is
// converted in chunks, equal to the copied read; damage is still an error naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "io/parse.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"
#include "support/test_files.hpp"

namespace onefit {
namespace {

using namespace test_files;

// An .npy file as np.save writes it: header padded to a multiple of 64, then `data`.
std::string npy_file(const std::string& descr, const std::string& shape, const std::string& data,
                     bool fortran = false) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                         ", 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY\x01";
    out += '\0';
    append_le<uint16_t>(out, static_cast<uint16_t>(header.size()));
    return out + header + data;
}

// `count` values of T: (i mod 20000) * 0.25 - 1000 as T (within every dtype tested).
template <class T>
std::string values_of(int64_t count) {
    std::string out;
    for (int64_t i = 0; i < count; ++i) append_le<T>(out, static_cast<T>(static_cast<double>(i % 20000) * 0.25 - 1000.0));
    return out;
}

// read_npy of the bytes saved as a file, against parse_npy of the same bytes in memory.
void expect_equals_copied_read(const std::string& bytes, bool in_place, const std::string& what) {
    const std::string path = write_bytes(bytes, ".npy");
    const Tensor mapped = read_npy(path);
    const Tensor copied = parse_npy(bytes, path);
    EXPECT_EQ(mapped.shares_storage(), in_place) << what;
    EXPECT_FALSE(copied.shares_storage()) << what;
    EXPECT_EQ(mapped.shape(), copied.shape()) << what;
    ASSERT_EQ(mapped.size(), copied.size()) << what;
    for (int64_t i = 0; i < mapped.size(); ++i)
        if (std::memcmp(mapped.data() + i, copied.data() + i, sizeof(float)) != 0) {  // NaNs too
            ADD_FAILURE() << what << ": element " << i << " is " << mapped.data()[i] << ", copied " << copied.data()[i];
            return;
        }
}

TEST(NpyMapped, Float32InCOrderIsReadInPlaceAndEqualsTheCopiedRead) {
    expect_equals_copied_read(npy_file("<f4", "(1000, 20)", values_of<float>(20000)), true, "<f4 (1000, 20)");
    expect_equals_copied_read(npy_file("<f4", "(7,)", values_of<float>(7), true), true, "<f4 (7,) fortran");
}

TEST(NpyMapped, OtherDtypesAndFortranOrderAreConvertedOnceInChunks) {
    // 2.5 M elements: three conversion chunks of 1 M, the last one short.
    const int64_t n = 2500000;
    expect_equals_copied_read(npy_file("<f8", "(2500000,)", values_of<double>(n)), false, "<f8");
    expect_equals_copied_read(npy_file("<i8", "(2500, 1000)", values_of<int64_t>(n)), false, "<i8");
    expect_equals_copied_read(npy_file("<i2", "(1000, 2500)", values_of<int16_t>(n)), false, "<i2");
    expect_equals_copied_read(npy_file("<f4", "(2500, 1000)", values_of<float>(n), true), false, "<f4 fortran");
    std::string halves;  // float16 bits: 1.0 and up, then inf and NaN
    for (uint16_t bits = 0x3C00; bits < 0x3C00 + 13; ++bits) append_le<uint16_t>(halves, bits);
    append_le<uint16_t>(halves, uint16_t{0x7C00});
    append_le<uint16_t>(halves, uint16_t{0x7E00});
    expect_equals_copied_read(npy_file("<f2", "(3, 5)", halves), false, "<f2");
}

TEST(NpyMapped, AMisalignedFloat32ArrayIsCopied) {
    // A header numpy never writes (not padded to 64 bytes): the data starts at an odd offset.
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
    while ((10 + header.size() + 1) % 4 != 1) header += ' ';
    header += '\n';
    std::string bytes = "\x93NUMPY\x01";
    bytes += '\0';
    append_le<uint16_t>(bytes, static_cast<uint16_t>(header.size()));
    bytes += header + values_of<float>(3);
    ASSERT_NE((10 + header.size()) % 4, 0u);
    expect_equals_copied_read(bytes, false, "misaligned");
}

TEST(NpyMapped, TheMappingOutlivesTheFileNameAndIsCopiedBeforeAWrite) {
    const std::string path = write_bytes(npy_file("<f4", "(4, 2)", values_of<float>(8)), ".npy");
    Tensor t = read_npy(path);
    ASSERT_TRUE(t.shares_storage());
    std::remove(path.c_str());  // the mapping keeps the file's data
    const Tensor copy = t;
    EXPECT_EQ(copy.data(), std::as_const(t).data()) << "copies share the mapping";
    EXPECT_EQ(copy.values(), (std::vector<float>{-1000, -999.75f, -999.5f, -999.25f, -999, -998.75f, -998.5f, -998.25f}));
    t.at(1, 1) = 5.0f;  // a write copies first
    EXPECT_FALSE(t.shares_storage());
    EXPECT_EQ(t[3], 5.0f);
    EXPECT_EQ(copy[3], -999.25f);
    const Tensor reshaped = copy.reshaped({8});
    EXPECT_TRUE(reshaped.shares_storage());
    EXPECT_EQ(reshaped.data(), copy.data());
    EXPECT_EQ(copy.slice_rows(1, 3).values(), (std::vector<float>{-999.5f, -999.25f, -999, -998.75f}));
}

TEST(NpyMapped, APairFlattensMappedImagesWithoutCopying) {
    const std::string x = write_bytes(npy_file("<f4", "(3, 2, 2)", values_of<float>(12)), "_x.npy");
    const std::string y = write_bytes(npy_file("<i8", "(3, 1)", values_of<int64_t>(3)), "_y.npy");
    const LabeledData data = read_npy_pair(x, y);
    EXPECT_EQ(data.x.shape(), (Shape{3, 4}));
    EXPECT_TRUE(data.x.shares_storage());
    EXPECT_EQ(data.x.at(2, 3), -997.25f);
    EXPECT_EQ(data.y.shape(), (Shape{3}));
    EXPECT_EQ(data.y[2], -999.0f);  // int64 -999.5 truncated when written
}

TEST(NpyMapped, ATruncatedFileIsStillAnErrorNamingTheFile) {
    std::string bytes = npy_file("<f4", "(1000, 20)", values_of<float>(20000));
    bytes.resize(bytes.size() - 3);
    const std::string path = write_bytes(bytes, ".npy");
    const std::string message = error_of([&] { read_npy(path); });
    EXPECT_EQ(message.rfind(path + ": header says shape (1000, 20) of <f4 = 80000 bytes, file has 79997", 0), 0u)
        << message;
    EXPECT_NE(message.find("the file is truncated"), std::string::npos) << message;
}

TEST(NpyMapped, AnEmptyFileOrADirectoryIsReadInsteadAndRefusedByName) {
    const std::string empty = write_bytes("", ".npy");
    EXPECT_EQ(error_of([&] { read_npy(empty); }).rfind(empty + ": not an .npy file", 0), 0u);
    const std::string directory = ::testing::TempDir();
    EXPECT_NE(error_of([&] { read_npy(directory); }).find("cannot read the .npy file"), std::string::npos);
}

TEST(NpyMapped, Float64BeyondFloat32NamesTheFirstSuchElementAcrossChunks) {
    std::string data = values_of<double>(2500000);
    const auto put = [&](int64_t i, double v) {
        std::string bits;
        append_le<double>(bits, v);
        data.replace(static_cast<size_t>(i) * 8, 8, bits);
    };
    put(2400000, 1e300);  // in the last chunk
    put(1500000, -1e39);  // in the second: this is the one named
    const std::string path = write_bytes(npy_file("<f8", "(2500000,)", data), ".npy");
    const std::string message = error_of([&] { read_npy(path); });
    EXPECT_NE(message.find("element 1500000 is -1e+39, beyond float32's range"), std::string::npos) << message;
}

TEST(IdxMapped, ConvertsBigEndianValuesInChunksAsTheCopiedRead) {
    std::string bytes = {'\0', '\0', '\x0B', '\x01'};
    append_be<uint32_t>(bytes, 1500000);
    for (int i = 0; i < 1500000; ++i) append_be<int16_t>(bytes, static_cast<int16_t>(i % 60000 - 30000));
    const std::string path = write_bytes(bytes, ".idx");
    const Tensor mapped = read_idx(path);
    const Tensor copied = parse_idx(bytes, path);
    ASSERT_EQ(mapped.size(), 1500000);
    EXPECT_EQ(mapped.values(), copied.values());
    EXPECT_EQ(mapped[1499999], static_cast<float>(1499999 % 60000 - 30000));
}

}  // namespace
}  // namespace onefit
