// read_npy: files built byte by byte as numpy/lib/format.py lays them out, files written by
// NumPy itself when it is installed, and one refusal per kind of damage, each naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "support/test_files.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

using namespace test_files;
using Floats = std::vector<float>;

// An .npy file: magic, version, header length, `header` padded with spaces and '\n' to a
// multiple of 64 as numpy pads it, then `data`.
std::string npy_file(const std::string& header, const std::string& data, int major = 1) {
    const size_t preamble = major == 1 ? 10 : 12;
    std::string text = header;
    while ((preamble + text.size() + 1) % 64 != 0) text += ' ';
    text += '\n';
    std::string out = "\x93NUMPY";
    out += static_cast<char>(major);
    out += '\0';
    if (major == 1)
        append_le<uint16_t>(out, static_cast<uint16_t>(text.size()));
    else
        append_le<uint32_t>(out, static_cast<uint32_t>(text.size()));
    return out + text + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
           ", }";
}

template <class T>
std::string le_values(std::initializer_list<T> values) {
    std::string out;
    for (T v : values) append_le<T>(out, v);
    return out;
}

std::string write_npy(const std::string& bytes) { return write_bytes(bytes, ".npy"); }

// The message for `bytes` saved as this test's .npy file; checks it names the file.
std::string npy_error(const std::string& bytes) {
    const std::string path = write_npy(bytes);
    const std::string message = error_of([&] { read_npy(path); });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    return message;
}

// ---- What it reads ----

TEST(NpyRead, ReadsAFloat32Matrix) {
    const Tensor t = read_npy(write_npy(npy_file(dict("<f4", "(2, 3)"), le_values<float>({1, 2, 3, 4, 5, -6.5f}))));
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.values(), (Floats{1, 2, 3, 4, 5, -6.5f}));
}

TEST(NpyRead, ReadsFormatVersions2And3) {
    for (int major : {2, 3}) {
        const Tensor t = read_npy(write_npy(npy_file(dict("<f4", "(2,)"), le_values<float>({7, 8}), major)));
        EXPECT_EQ(t.shape(), (Shape{2})) << major;
        EXPECT_EQ(t.values(), (Floats{7, 8})) << major;
    }
}

TEST(NpyRead, ConvertsEveryNumericDtypeToFloat32) {
    struct Case {
        std::string descr, data;
        Floats expected;
    };
    const std::vector<Case> cases = {
        {"<f8", le_values<double>({0.5, -1e10}), {0.5f, -1e10f}},
        {"<i4", le_values<int32_t>({-3, 2147483647}), {-3.0f, 2147483647.0f}},
        {"<i8", le_values<int64_t>({-9, int64_t{1} << 40}), {-9.0f, 1099511627776.0f}},
        {"|u1", le_values<uint8_t>({0, 255}), {0.0f, 255.0f}},
        {"<u1", le_values<uint8_t>({3, 4}), {3.0f, 4.0f}},
        {"|i1", le_values<int8_t>({-128, 127}), {-128.0f, 127.0f}},
        {"|b1", le_values<uint8_t>({0, 1}), {0.0f, 1.0f}},
        {"<i2", le_values<int16_t>({-300, 300}), {-300.0f, 300.0f}},
        {"<u2", le_values<uint16_t>({65535, 1}), {65535.0f, 1.0f}},
        {"<u4", le_values<uint32_t>({4000000000u, 2}), {4e9f, 2.0f}},
        {"<u8", le_values<uint64_t>({uint64_t{1} << 63, 5}), {9.223372036854775808e18f, 5.0f}},
        // float16 bits: 0x3C00 = 1, 0xC000 = -2, 0x0001 = 2^-24 (subnormal), 0x7C00 = inf.
        {"<f2", le_values<uint16_t>({0x3C00, 0xC000}), {1.0f, -2.0f}},
        {"<f2", le_values<uint16_t>({0x0001, 0x7C00}), {std::ldexp(1.0f, -24), std::numeric_limits<float>::infinity()}},
        {"=f4", le_values<float>({1.5f, 2.5f}), {1.5f, 2.5f}},  // '=' is the machine's order
    };
    for (const Case& c : cases) {
        const Tensor t = read_npy(write_npy(npy_file(dict(c.descr, "(2,)"), c.data)));
        EXPECT_EQ(t.values(), c.expected) << c.descr;
    }
}

TEST(NpyRead, TransposesFortranOrderIntoRowMajor) {
    // [[1, 2, 3], [4, 5, 6]] stored column by column.
    const Tensor t = read_npy(write_npy(npy_file(dict("<f4", "(2, 3)", true), le_values<float>({1, 4, 2, 5, 3, 6}))));
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.values(), (Floats{1, 2, 3, 4, 5, 6}));
}

TEST(NpyRead, TransposesThreeDimensionalFortranOrder) {
    // Element (i, j, k) = 100i + 10j + k; Fortran order stores i fastest, then j, then k.
    std::string data;
    for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 2; ++i) append_le<float>(data, static_cast<float>(100 * i + 10 * j + k));
    const Tensor t = read_npy(write_npy(npy_file(dict("<f4", "(2, 3, 4)", true), data)));
    ASSERT_EQ(t.shape(), (Shape{2, 3, 4}));
    for (int i = 0, n = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k, ++n) EXPECT_EQ(t[n], static_cast<float>(100 * i + 10 * j + k));
}

TEST(NpyRead, ReadsScalarsAndEmptyArrays) {
    const Tensor scalar = read_npy(write_npy(npy_file(dict("<f4", "()"), le_values<float>({42}))));
    EXPECT_EQ(scalar.shape(), Shape{});
    EXPECT_EQ(scalar.values(), Floats{42});
    const Tensor empty = read_npy(write_bytes(npy_file(dict("<f4", "(0, 4)"), ""), "_empty.npy"));
    EXPECT_EQ(empty.shape(), (Shape{0, 4}));
    EXPECT_TRUE(empty.empty());
}

TEST(NpyRead, AcceptsDoubleQuotesNoTrailingCommaAndPython2Longs) {
    const Tensor t = read_npy(write_npy(
        npy_file("{\"descr\":\"<f4\",\"shape\":(1L,2L),\"fortran_order\":False}", le_values<float>({1, 2}))));
    EXPECT_EQ(t.shape(), (Shape{1, 2}));
}

// ---- What it refuses ----

TEST(NpyRefuses, ATruncatedFileSayingHowManyBytesAreMissing) {
    std::string data(1200, '\0');
    EXPECT_NE(npy_error(npy_file(dict("<f4", "(150, 4)"), data))
                  .find("header says shape (150, 4) of <f4 = 2400 bytes, file has 1200 after the header; the file "
                        "is truncated"),
              std::string::npos);
}

TEST(NpyRefuses, TrailingBytesAfterTheArray) {
    EXPECT_NE(npy_error(npy_file(dict("<f4", "(2,)"), le_values<float>({1, 2, 3})))
                  .find("of <f4 = 8 bytes, file has 12 after the header; the extra bytes are not part of the array"),
              std::string::npos);
}

TEST(NpyRefuses, BigEndianData) {
    EXPECT_NE(npy_error(npy_file(dict(">f4", "(1,)"), le_values<float>({1}))).find("dtype '>f4' is big-endian"),
              std::string::npos);
}

TEST(NpyRefuses, AHeaderLengthPastTheEnd) {
    std::string bytes = "\x93NUMPY\x01";
    bytes += '\0';
    append_le<uint16_t>(bytes, 118);
    bytes += "{'descr': '<f4'";
    EXPECT_NE(npy_error(bytes).find("the header length field says 118 bytes, but only 15 follow the 10-byte preamble"),
              std::string::npos);
}

TEST(NpyRefuses, AHeaderWithoutShape) {
    EXPECT_NE(npy_error(npy_file("{'descr': '<f4', 'fortran_order': False}", "")).find("has no 'shape' entry"),
              std::string::npos);
}

TEST(NpyRefuses, UnknownAndRepeatedKeys) {
    EXPECT_NE(npy_error(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "xxxx"))
                  .find("unexpected key \"x\""),
              std::string::npos);
    EXPECT_NE(npy_error(npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "xxxx"))
                  .find("has the key 'descr' twice"),
              std::string::npos);
}

TEST(NpyRefuses, HeadersThatAreNotAPythonDict) {
    EXPECT_NE(npy_error(npy_file("garbage", "")).find("must be a Python dict starting with '{'"), std::string::npos);
    EXPECT_NE(npy_error(npy_file(dict("<f4", "(1,)") + " extra", "xxxx")).find("has text after the closing '}'"),
              std::string::npos);
    EXPECT_NE(npy_error(npy_file("{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,)}", "xxxx"))
                  .find("needs True or False"),
              std::string::npos);
    EXPECT_NE(npy_error(npy_file("{'descr': '<f4' 'fortran_order': False}", "")).find("needs ',' or '}'"),
              std::string::npos);
    EXPECT_NE(npy_error(npy_file("{'descr: '<f4'}", "")).find("needs ':' after the key"), std::string::npos);
}

TEST(NpyRefuses, ShapesThatAreNotTuplesOfNaturalNumbers) {
    EXPECT_NE(npy_error(npy_file(dict("<f4", "(3)"), "")).find("the shape (3), which is not a tuple; write (3,)"),
              std::string::npos);
    EXPECT_NE(npy_error(npy_file(dict("<f4", "(-1,)"), "")).find("needs a non-negative integer in the shape"),
              std::string::npos);
    EXPECT_NE(npy_error(npy_file(dict("<f4", "[2, 3]"), "")).find("needs a tuple such as (150, 4)"), std::string::npos);
    EXPECT_NE(npy_error(npy_file(dict("<f4", "(99999999999999999999,)"), "")).find("too large for 64 bits"),
              std::string::npos);
}

TEST(NpyRefuses, AShapeWhoseByteCountOverflows) {
    EXPECT_NE(npy_error(npy_file(dict("<f4", "(4294967296, 4294967296, 4294967296)"), ""))
                  .find("shape (4294967296, 4294967296, 4294967296) is too large: its size overflows 64-bit integers"),
              std::string::npos);
}

// An empty array still may not have dimensions whose product overflows: Tensor multiplies
// them in int64 (found by fuzz_idx).
TEST(NpyRefuses, AnEmptyShapeWhoseOtherDimensionsOverflow) {
    EXPECT_NE(npy_error(npy_file(dict("|u1", "(4294967296, 4294967296, 0)"), ""))
                  .find("shape (4294967296, 4294967296, 0) is too large"),
              std::string::npos);
}

TEST(NpyRefuses, DtypesItCannotConvert) {
    for (const char* descr : {"<c8", "<U5", "|S3", "<M8[ns]", "<f16", "|V8", "<f1", "|b2", "xf4"})
        EXPECT_NE(npy_error(npy_file(dict(descr, "(1,)"), "xxxxxxxx")).find("is not supported; onefit reads float"),
                  std::string::npos)
            << descr;
    EXPECT_NE(npy_error(npy_file(dict("|O", "(1,)"), "xxxxxxxx")).find("holds pickled Python objects"),
              std::string::npos);
    EXPECT_NE(npy_error(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", "xxxx"))
                  .find("structured dtype"),
              std::string::npos);
}

TEST(NpyRefuses, Float64ValuesBeyondFloat32) {
    EXPECT_NE(npy_error(npy_file(dict("<f8", "(2,)"), le_values<double>({1.0, 1e300})))
                  .find("element 1 is 1e+300, beyond float32's range"),
              std::string::npos);
}

TEST(NpyRefuses, FilesThatAreNotNpy) {
    EXPECT_NE(npy_error("a,b\n1,2\n").find("not an .npy file: it does not start with \"\\x93NUMPY\""),
              std::string::npos);
    EXPECT_NE(npy_error("").find("not an .npy file"), std::string::npos);
    EXPECT_NE(npy_error("\x93NUMPY\x01").find("too short for an .npy preamble"), std::string::npos);
    EXPECT_NE(npy_error(std::string("\x93NUMPY\x04\x00\x10\x00", 10)).find("unsupported .npy format version 4.0"),
              std::string::npos);
    EXPECT_NE(npy_error(std::string("PK\x03\x04rest", 8)).find("is an .npz archive"), std::string::npos);
    EXPECT_NE(npy_error("\x1f\x8b\x08").find("gzip-compressed"), std::string::npos);
}

TEST(NpyRefuses, AMissingFile) {
    const std::string path = temp_path("_missing.npy");
    std::remove(path.c_str());
    EXPECT_EQ(error_of([&] { read_npy(path); }),
              path + ": cannot open the .npy file (No such file or directory); check the path and the permissions");
}

// ---- Pairs of files ----

TEST(NpyPair, ReadsFeaturesAndLabelsFlatteningImagesAndColumnLabels) {
    const std::string x = write_bytes(npy_file(dict("|u1", "(2, 2, 2)"), std::string("\1\2\3\4\5\6\7\10", 8)), "_x.npy");
    const std::string y = write_bytes(npy_file(dict("<i8", "(2, 1)"), le_values<int64_t>({1, 0})), "_y.npy");
    const LabeledData data = read_npy_pair(x, y);
    EXPECT_EQ(data.x.shape(), (Shape{2, 4}));
    EXPECT_EQ(data.x.values(), (Floats{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(data.y.shape(), (Shape{2}));
    EXPECT_EQ(data.y.values(), (Floats{1, 0}));
}

TEST(NpyPair, MakesOneDimensionalFeaturesAColumn) {
    const std::string x = write_bytes(npy_file(dict("<f4", "(3,)"), le_values<float>({1, 2, 3})), "_x.npy");
    const std::string y = write_bytes(npy_file(dict("<f4", "(3,)"), le_values<float>({0, 1, 0})), "_y.npy");
    EXPECT_EQ(read_npy_pair(x, y).x.shape(), (Shape{3, 1}));
}

TEST(NpyPair, RefusesRowCountsThatDisagreeAndOneHotLabels) {
    const std::string x = write_bytes(npy_file(dict("<f4", "(3, 1)"), le_values<float>({1, 2, 3})), "_x.npy");
    const std::string y2 = write_bytes(npy_file(dict("<f4", "(2,)"), le_values<float>({0, 1})), "_y2.npy");
    EXPECT_EQ(error_of([&] { read_npy_pair(x, y2); }),
              y2 + ": 2 labels, but " + x + " has 3 rows; both files must hold the same samples in the same order");
    const std::string onehot = write_bytes(npy_file(dict("<f4", "(3, 2)"), std::string(24, '\0')), "_onehot.npy");
    EXPECT_NE(error_of([&] { read_npy_pair(x, onehot); }).find(onehot + ": labels have shape (3, 2)"), std::string::npos);
}

// ---- Files written by NumPy ----

TEST(NpyNumpy, ReadsWhatNumpySaves) {
    ASSERT_TRUE(python_has("import numpy"));
    const std::string dir = temp_path("_");
    const std::string script = dir + "write.py";
    std::ofstream(script) << "import sys, numpy as np\n"
                             "d = sys.argv[1]\n"
                             "a = np.arange(12, dtype=np.float32).reshape(3, 4) / 4\n"
                             "np.save(d + 'f4.npy', a)\n"
                             "np.save(d + 'f8.npy', a.astype(np.float64))\n"
                             "np.save(d + 'i8.npy', (a * 4).astype(np.int64) - 5)\n"
                             "np.save(d + 'u1.npy', (a * 4).astype(np.uint8))\n"
                             "np.save(d + 'b1.npy', a > 1)\n"
                             "np.save(d + 'fortran.npy', np.asfortranarray(a))\n"
                             "with open(d + 'v2.npy', 'wb') as f: np.lib.format.write_array(f, a, version=(2, 0))\n"
                             "with open(d + 'v3.npy', 'wb') as f: np.lib.format.write_array(f, a, version=(3, 0))\n"
                             "np.save(d + 'big.npy', a.astype('>f4'))\n";
    ASSERT_EQ(std::system((python() + " " + script + " " + dir).c_str()), 0);
    Floats quarters, ints, bytes, bools;
    for (int i = 0; i < 12; ++i) {
        quarters.push_back(static_cast<float>(i) / 4);
        ints.push_back(static_cast<float>(i - 5));
        bytes.push_back(static_cast<float>(i));
        bools.push_back(i > 4 ? 1.0f : 0.0f);
    }
    for (const char* name : {"f4", "f8", "fortran", "v2", "v3"}) {
        const Tensor t = read_npy(dir + name + ".npy");
        EXPECT_EQ(t.shape(), (Shape{3, 4})) << name;
        EXPECT_EQ(t.values(), quarters) << name;
    }
    EXPECT_EQ(read_npy(dir + "i8.npy").values(), ints);
    EXPECT_EQ(read_npy(dir + "u1.npy").values(), bytes);
    EXPECT_EQ(read_npy(dir + "b1.npy").values(), bools);
    EXPECT_NE(error_of([&] { read_npy(dir + "big.npy"); }).find("big-endian"), std::string::npos);
}

}  // namespace
}  // namespace onefit
