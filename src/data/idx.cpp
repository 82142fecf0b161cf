// read_idx: the IDX format of the MNIST files (yann.lecun.com/exdb/mnist): bytes 00 00, a type
// byte, the number of dimensions, one big-endian u32 per dimension, then the values, big-endian,
// row-major. train-images-idx3-ubyte is 00 00 08 03, (60000, 28, 28), one u8 per pixel.
#include <bit>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/binary.hpp"
#include "io/mapped_file.hpp"
#include "io/parse.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

struct IdxType {
    unsigned char code;
    const char* name;
    ElementType element;
};

constexpr IdxType kIdxTypes[] = {
    {0x08, "unsigned byte", {ElementType::Kind::unsigned_int, 1, true}},
    {0x09, "signed byte", {ElementType::Kind::signed_int, 1, true}},
    {0x0B, "short", {ElementType::Kind::signed_int, 2, true}},
    {0x0C, "int", {ElementType::Kind::signed_int, 4, true}},
    {0x0D, "float", {ElementType::Kind::floating, 4, true}},
    {0x0E, "double", {ElementType::Kind::floating, 8, true}},
};

std::string hex_byte(unsigned char c) {
    char text[8];
    std::snprintf(text, sizeof text, "0x%02X", c);
    return text;
}

// The values are big-endian, so they are always converted: in chunks, the mapping's pages let
// go behind them when `file` holds `bytes`.
Tensor idx_tensor(std::string_view bytes, const std::string& name, const MappedFile* file) {
    const unsigned char* b = bytes_of(bytes);
    if (bytes.substr(0, 2) == "\x1f\x8b")
        throw file_error(name, 0, 0, "the file is gzip-compressed (as MNIST is downloaded); decompress it first (gunzip)");
    if (bytes.size() < 4)
        throw file_error(name, 0, 0,
                         "the file is " + std::to_string(bytes.size()) +
                             " bytes, too short for an IDX magic number (4 bytes: 00 00 TYPE NDIMS)");
    if (b[0] != 0 || b[1] != 0)
        throw file_error(name, 0, 0,
                         "not an IDX file: it must start with two zero bytes, it starts with " +
                             printable(bytes.substr(0, 4)));
    const IdxType* type = nullptr;
    for (const IdxType& t : kIdxTypes)
        if (t.code == b[2]) type = &t;
    if (!type)
        throw file_error(name, 0, 0,
                         "unknown IDX element type " + hex_byte(b[2]) +
                             "; IDX types are 0x08 (u8), 0x09 (i8), 0x0B (i16), 0x0C (i32), 0x0D (f32), 0x0E (f64)");
    const size_t rank = b[3];
    if (rank == 0) throw file_error(name, 0, 0, "the IDX header says 0 dimensions; an IDX array needs at least one");
    const size_t header_bytes = 4 + 4 * rank;
    if (bytes.size() < header_bytes)
        throw file_error(name, 0, 0,
                         "the IDX header says " + std::to_string(rank) + " dimensions, which take " +
                             std::to_string(header_bytes) + " bytes, but the file has " +
                             std::to_string(bytes.size()) + "; it is truncated");
    Shape shape(rank);
    for (size_t i = 0; i < rank; ++i) shape[i] = load_be<uint32_t>(b + 4 + 4 * i);

    uint64_t elements = 0, data_bytes = 0;
    const std::string shown = shape_to_string(shape);
    if (!checked_sizes(shape, type->element.size, elements, data_bytes))
        throw file_error(name, 0, 0, "the IDX shape " + shown + " is too large: its size overflows 64-bit integers");
    const uint64_t available = bytes.size() - header_bytes;
    if (data_bytes != available)
        throw file_error(name, 0, 0,
                         "header says shape " + shown + " of " + type->name + " (" +
                             std::to_string(type->element.size) + " bytes each) = " + std::to_string(data_bytes) +
                             " bytes, file has " + std::to_string(available) + " after the header" +
                             (available < data_bytes ? "; the file is truncated"
                                                     : "; the extra bytes are not part of the array"));

    std::vector<float> values(static_cast<size_t>(elements));
    const int64_t too_large = convert_to_float_in_chunks(b + header_bytes, static_cast<int64_t>(elements),
                                                         type->element, values.data(), file);
    if (too_large >= 0) {
        char value[32];
        std::snprintf(value, sizeof value, "%g", std::bit_cast<double>(load_be<uint64_t>(b + header_bytes + 8 * too_large)));
        throw file_error(name, 0, 0,
                         "element " + std::to_string(too_large) + " is " + value +
                             ", beyond float32's range (about 3.4e38); rescale the data");
    }
    return Tensor(std::move(shape), std::move(values));
}

}  // namespace

Tensor parse_idx(std::string_view bytes, const std::string& name) { return idx_tensor(bytes, name, nullptr); }

Tensor read_idx(const std::string& path) {
    const std::shared_ptr<const MappedFile> file = MappedFile::open(path, "the IDX file");
    if (!file) return parse_idx(read_binary_file(path, "the IDX file"), path);
    return idx_tensor(file->bytes(), path, file.get());
}

LabeledData read_idx_pair(const std::string& images_path, const std::string& labels_path) {
    return labeled_pair(read_idx(images_path), read_idx(labels_path), images_path, labels_path);
}

}  // namespace onefit
