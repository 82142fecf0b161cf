// safetensors: files built by hand from the format's description, the writer's exact bytes,
// round trips, the Python safetensors package when installed, and one refusal per kind of
// damage, each naming the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/test_files.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

using namespace test_files;
using Floats = std::vector<float>;
using Named = std::vector<std::pair<std::string, Tensor>>;

// u64 LE header length, the header padded with spaces to a multiple of 8, then `data`.
std::string safetensors_file(const std::string& header, const std::string& data) {
    std::string text = header;
    while (text.size() % 8 != 0) text += ' ';
    std::string out;
    append_le<uint64_t>(out, text.size());
    return out + text + data;
}

std::string floats_le(std::initializer_list<float> values) {
    std::string out;
    for (float v : values) append_le<float>(out, v);
    return out;
}

std::string st_error(const std::string& bytes) {
    const std::string path = write_bytes(bytes, ".safetensors");
    const std::string message = error_of([&] { read_safetensors(path); });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    return message;
}

// One F32 tensor "w" with the given shape and offsets, and `data_bytes` bytes of data.
std::string one_tensor(const std::string& shape, const std::string& offsets, size_t data_bytes) {
    return safetensors_file("{\"w\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}}",
                            std::string(data_bytes, '\0'));
}

// ---- What it reads and writes ----

TEST(SafetensorsRead, ReadsAHandBuiltFileInDataOrder) {
    const std::string header =
        "{\"__metadata__\":{\"format\":\"pt\"},"
        "\"z_bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
        "\"a_kernel\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[8,24]}}";
    std::map<std::string, std::string> metadata;
    const Named tensors = read_safetensors(
        write_bytes(safetensors_file(header, floats_le({0.5f, -1, 1, 2, 3, 4})), ".safetensors"), &metadata);
    ASSERT_EQ(tensors.size(), 2u);
    EXPECT_EQ(tensors[0].first, "z_bias");
    EXPECT_EQ(tensors[0].second.shape(), (Shape{2}));
    EXPECT_EQ(tensors[0].second.values(), (Floats{0.5f, -1}));
    EXPECT_EQ(tensors[1].first, "a_kernel");
    EXPECT_EQ(tensors[1].second.shape(), (Shape{2, 2}));
    EXPECT_EQ(tensors[1].second.values(), (Floats{1, 2, 3, 4}));
    EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
}

TEST(SafetensorsRead, ConvertsOtherDtypesToFloat32) {
    std::string data;
    append_le<double>(data, -2.5);           // F64   [0, 8)
    append_le<uint16_t>(data, 0x3C00);       // F16 1 [8, 10)
    append_le<uint16_t>(data, 0xC040);       // BF16 -3 [10, 12)
    append_le<int64_t>(data, -7);            // I64   [12, 20)
    data += '\xff';                          // U8 255 [20, 21)
    data += '\1';                            // BOOL  [21, 22)
    const std::string header =
        "{\"f64\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
        "\"f16\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[8,10]},"
        "\"bf16\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[10,12]},"
        "\"i64\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[12,20]},"
        "\"u8\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[20,21]},"
        "\"b\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[21,22]}}";
    const Named tensors = read_safetensors(write_bytes(safetensors_file(header, data), ".safetensors"));
    ASSERT_EQ(tensors.size(), 6u);
    const Floats expected = {-2.5f, 1.0f, -3.0f, -7.0f, 255.0f, 1.0f};
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(tensors[i].second.values(), Floats{expected[i]}) << tensors[i].first;
}

TEST(SafetensorsRead, ReadsScalarsEmptyTensorsAndAnEmptyFile) {
    const std::string header =
        "{\"empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[0,0]},"
        "\"scalar\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}";
    const Named tensors = read_safetensors(write_bytes(safetensors_file(header, floats_le({9})), ".safetensors"));
    ASSERT_EQ(tensors.size(), 2u);
    EXPECT_EQ(tensors[0].second.shape(), (Shape{0, 3}));
    EXPECT_EQ(tensors[1].second.shape(), Shape{});
    EXPECT_EQ(tensors[1].second.values(), Floats{9});
    EXPECT_TRUE(read_safetensors(write_bytes(safetensors_file("{}", ""), "_none.safetensors")).empty());
}

TEST(SafetensorsWrite, WritesTheExactLayout) {
    const std::string path = temp_path(".safetensors");
    write_safetensors(path, {{"kernel", Tensor({1, 2}, Floats{1.0f, -2.0f})}, {"bias", Tensor({1}, Floats{0.5f})}},
                      {{"framework", "onefit"}});
    const std::string json =
        "{\"__metadata__\":{\"framework\":\"onefit\"},"
        "\"kernel\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]},"
        "\"bias\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
    const std::string expected = safetensors_file(json, floats_le({1.0f, -2.0f, 0.5f}));
    EXPECT_EQ(read_bytes(path), expected);
}

TEST(SafetensorsWrite, RoundTripsNamesShapesValuesOrderAndMetadata) {
    Tensor big({3, 5, 7});
    for (int64_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.1f - 3.0f;
    const Named written = {{"dense_1/kernel", big}, {"dense_1/bias", Tensor({7}, 0.25f)}, {"s", Tensor(Shape{}, 2.0f)}};
    const std::string path = temp_path(".safetensors");
    write_safetensors(path, written, {{"a", "1"}, {"b", "two"}});
    std::map<std::string, std::string> metadata;
    const Named read = read_safetensors(path, &metadata);
    ASSERT_EQ(read.size(), written.size());
    for (size_t i = 0; i < read.size(); ++i) {
        EXPECT_EQ(read[i].first, written[i].first);
        EXPECT_EQ(read[i].second.shape(), written[i].second.shape());
        EXPECT_EQ(read[i].second.values(), written[i].second.values());
    }
    EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"a", "1"}, {"b", "two"}}));
}

TEST(SafetensorsWrite, RefusesNamesItCannotStore) {
    const std::string path = temp_path(".safetensors");
    const Tensor t({1}, 1.0f);
    EXPECT_EQ(error_of([&] { write_safetensors(path, {{"w", t}, {"w", t}}); }),
              path + ": two tensors are named \"w\"; names must be unique");
    EXPECT_EQ(error_of([&] { write_safetensors(path, {{"__metadata__", t}}); }),
              path + ": cannot save a tensor named \"__metadata__\"; choose another name");
    EXPECT_EQ(error_of([&] { write_safetensors(path, {{"", t}}); }),
              path + ": cannot save a tensor named \"\"; choose another name");
    EXPECT_EQ(error_of([&] { write_safetensors(path, {{"empty", Tensor()}}); }),
              path + ": tensor \"empty\" has shape () but 0 values");
    EXPECT_NE(error_of([&] { write_safetensors(path, {{"bad\xff", t}}); }).find("is not valid UTF-8"), std::string::npos);
}

// ---- What it refuses ----

TEST(SafetensorsRefuses, AFileShorterThanTheLengthField) {
    EXPECT_NE(st_error("abc").find("the file is 3 bytes; a safetensors file starts with an 8-byte header length"),
              std::string::npos);
}

TEST(SafetensorsRefuses, AHeaderLongerThanTheFile) {
    std::string bytes;
    append_le<uint64_t>(bytes, 64);
    bytes += "{}";
    EXPECT_NE(st_error(bytes).find("the header length says 64 bytes, but the file has only 2 after the 8-byte length"),
              std::string::npos);
}

TEST(SafetensorsRefuses, AnAbsurdHeaderLengthWithoutAllocatingIt) {
    std::string bytes;
    append_le<uint64_t>(bytes, 100'000'000'000ull);  // 100 GB
    bytes += "{}";
    EXPECT_NE(st_error(bytes).find("says 100000000000 bytes, but the file has only 2"), std::string::npos);
    std::string max;
    append_le<uint64_t>(max, UINT64_MAX);
    EXPECT_NE(st_error(max).find("says 18446744073709551615 bytes, but the file has only 0"), std::string::npos);
}

TEST(SafetensorsRefuses, HeadersThatAreNotAJsonObject) {
    EXPECT_NE(st_error(safetensors_file("{\"w\": ", "")).find("the safetensors header is not valid JSON: "),
              std::string::npos);
    EXPECT_NE(st_error(safetensors_file("\xff\xfe", "")).find("is not valid JSON"), std::string::npos);
    EXPECT_NE(st_error(safetensors_file("[1, 2]", "")).find("must be a JSON object {...}, it is array"),
              std::string::npos);
    EXPECT_NE(st_error(safetensors_file("{\"w\": 3}", "")).find("tensor \"w\" must be an object"), std::string::npos);
}

TEST(SafetensorsRefuses, DtypesItCannotConvertNamingThem) {
    EXPECT_NE(st_error(safetensors_file("{\"w\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", "x"))
                  .find("tensor \"w\" has dtype \"F8_E4M3\", which onefit does not read"),
              std::string::npos);
    EXPECT_NE(st_error(safetensors_file("{\"w\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", "xxxx"))
                  .find("\"dtype\" must be a string"),
              std::string::npos);
}

TEST(SafetensorsRefuses, AShapeThatDisagreesWithTheByteCount) {
    EXPECT_NE(st_error(one_tensor("[2,3]", "[0,20]", 20))
                  .find("tensor \"w\": shape (2, 3) of F32 needs 24 bytes, but \"data_offsets\" [0, 20] hold 20"),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("[4294967296,4294967296]", "[0,4]", 4)).find("shape (4294967296, 4294967296) is too large: its size overflows 64-bit integers"),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("[2,-3]", "[0,4]", 4)).find("every dimension in \"shape\" must be a non-negative"),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("7", "[0,4]", 4)).find("\"shape\" must be an array"), std::string::npos);
}

TEST(SafetensorsRefuses, OffsetsPastTheEnd) {
    EXPECT_NE(st_error(one_tensor("[2]", "[0,8]", 4))
                  .find("tensor \"w\" has data_offsets [0, 8], past the end of the 4-byte data region; the file is "
                        "truncated"),
              std::string::npos);
}

TEST(SafetensorsRefuses, OverlappingTensors) {
    const std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                               "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
    EXPECT_NE(st_error(safetensors_file(header, std::string(12, '\0')))
                  .find("tensor \"b\" (data_offsets [4, 12]) overlaps tensor \"a\", which ends at 8"),
              std::string::npos);
}

TEST(SafetensorsRefuses, GapsBetweenOrBeforeTensors) {
    const std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                               "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
    EXPECT_NE(st_error(safetensors_file(header, std::string(12, '\0')))
                  .find("bytes [4, 8) of the data region belong to no tensor (before tensor \"b\")"),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("[1]", "[4,8]", 8)).find("bytes [0, 4) of the data region belong to no tensor"),
              std::string::npos);
}

TEST(SafetensorsRefuses, BytesAfterTheLastTensor) {
    EXPECT_NE(st_error(one_tensor("[1]", "[0,4]", 6))
                  .find("the tensors end at byte 4 of the data region, but it has 6 bytes"),
              std::string::npos);
}

TEST(SafetensorsRefuses, DuplicateNamesAndKeys) {
    const std::string twice = "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                              "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
    EXPECT_NE(st_error(safetensors_file(twice, std::string(8, '\0')))
                  .find("the tensor name \"w\" appears twice in the header; names must be unique"),
              std::string::npos);
    const std::string key_twice = "{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,4]}}";
    EXPECT_NE(st_error(safetensors_file(key_twice, std::string(4, '\0'))).find("the key \"dtype\" appears twice"),
              std::string::npos);
}

TEST(SafetensorsRefuses, OffsetsThatAreNotTwoNaturalNumbers) {
    EXPECT_NE(st_error(one_tensor("[1]", "[0,4.0]", 4))
                  .find("tensor \"w\": \"data_offsets\" end must be a non-negative integer, got 4.0"),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("[1]", "[-4,0]", 4)).find("\"data_offsets\" begin must be a non-negative integer"),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("[1]", "[\"0\",4]", 4)).find("begin must be a non-negative integer, got \"0\""),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("[1]", "[0,4,8]", 4)).find("\"data_offsets\" must be [begin, end]"),
              std::string::npos);
    EXPECT_NE(st_error(one_tensor("[0]", "[4,0]", 4)).find("[4, 0] ends before it begins"), std::string::npos);
    EXPECT_NE(st_error(one_tensor("[1]", "[0,99999999999999999999999]", 4)).find("end must be a non-negative integer"),
              std::string::npos);
}

TEST(SafetensorsRefuses, EntriesWithMissingOrUnknownKeys) {
    EXPECT_NE(st_error(safetensors_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", "xxxx"))
                  .find("tensor \"w\" has no \"data_offsets\""),
              std::string::npos);
    EXPECT_NE(st_error(safetensors_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", "xxxx"))
                  .find("tensor \"w\" has an unexpected key \"x\""),
              std::string::npos);
}

TEST(SafetensorsRefuses, MetadataThatIsNotStrings) {
    EXPECT_NE(st_error(safetensors_file("{\"__metadata__\":{\"epochs\":5}}", ""))
                  .find("\"__metadata__\" value for \"epochs\" must be a string, got 5"),
              std::string::npos);
    EXPECT_NE(st_error(safetensors_file("{\"__metadata__\":[1]}", "")).find("\"__metadata__\" must be an object"),
              std::string::npos);
}

TEST(SafetensorsRefuses, Float64ValuesBeyondFloat32) {
    std::string data;
    append_le<double>(data, 1e300);
    EXPECT_NE(st_error(safetensors_file("{\"w\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", data))
                  .find("tensor \"w\": element 0 is 1e+300, beyond float32's range"),
              std::string::npos);
}

TEST(SafetensorsRefuses, AMissingFile) {
    EXPECT_NE(error_of([&] { read_safetensors(temp_path("_missing.safetensors")); })
                  .find("cannot open the safetensors file (No such file"),
              std::string::npos);
}

// ---- The Python safetensors package ----

TEST(SafetensorsPython, LoadFileReadsWhatOnefitWrites) {
    ASSERT_TRUE(python_has("import safetensors.numpy"));
    const std::string path = temp_path(".safetensors");
    Tensor kernel({2, 3});
    for (int64_t i = 0; i < 6; ++i) kernel[i] = static_cast<float>(i) - 2.5f;
    write_safetensors(path, {{"dense/kernel", kernel}, {"dense/bias", Tensor({3}, 0.125f)}}, {{"format", "np"}});
    const std::string script = temp_path(".py");
    std::ofstream(script) << "import sys, numpy as np\n"
                             "from safetensors.numpy import load_file\n"
                             "from safetensors import safe_open\n"
                             "t = load_file(sys.argv[1])\n"
                             "assert sorted(t) == ['dense/bias', 'dense/kernel'], sorted(t)\n"
                             "k = t['dense/kernel']\n"
                             "assert k.dtype == np.float32 and k.shape == (2, 3), (k.dtype, k.shape)\n"
                             "assert (k == np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5).all(), k\n"
                             "assert (t['dense/bias'] == np.full(3, 0.125, np.float32)).all()\n"
                             "with safe_open(sys.argv[1], 'np') as f: assert f.metadata() == {'format': 'np'}\n";
    EXPECT_EQ(std::system((python() + " " + script + " " + path).c_str()), 0);
}

TEST(SafetensorsPython, ReadsWhatSaveFileWrites) {
    ASSERT_TRUE(python_has("import safetensors.numpy"));
    const std::string path = temp_path(".safetensors");
    const std::string script = temp_path(".py");
    std::ofstream(script) << "import sys, numpy as np\n"
                             "from safetensors.numpy import save_file\n"
                             "a = np.arange(6).reshape(2, 3)\n"
                             "save_file({'f32': a.astype(np.float32), 'f64': a.astype(np.float64) / 2,\n"
                             "           'f16': a.astype(np.float16), 'i64': a - 3, 'u8': a.astype(np.uint8)},\n"
                             "          sys.argv[1], metadata={'k': 'v'})\n";
    ASSERT_EQ(std::system((python() + " " + script + " " + path).c_str()), 0);
    std::map<std::string, std::string> metadata;
    std::map<std::string, Tensor> by_name;
    for (auto& [name, t] : read_safetensors(path, &metadata)) by_name.emplace(name, t);
    ASSERT_EQ(by_name.size(), 5u);
    for (const auto& [name, t] : by_name) {
        EXPECT_EQ(t.shape(), (Shape{2, 3})) << name;
        for (int64_t i = 0; i < 6; ++i) {
            const float v = static_cast<float>(i);
            const float expected = name == "f64" ? v / 2 : name == "i64" ? v - 3 : v;
            EXPECT_EQ(t[i], expected) << name << "[" << i << "]";
        }
    }
    EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"k", "v"}}));
}

}  // namespace
}  // namespace onefit
