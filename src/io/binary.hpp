// Shared by the binary readers (.npy, IDX, safetensors): whole-file reads, byte-order loads,
// element types converted to float32, overflow-checked sizes, and values made printable.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/byte_order.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

// The whole file as bytes. `what` names the format in errors ("the .npy file").
std::string read_binary_file(const std::string& path, std::string_view what);

// How one stored element is laid out. Every reader converts to float32 through this.
struct ElementType {
    enum class Kind { floating, bfloat, signed_int, unsigned_int, boolean };
    Kind kind = Kind::floating;
    int size = 4;  // bytes: 1, 2, 4 or 8 (floating: 2, 4, 8; bfloat: 2; boolean: 1)
    bool big_endian = false;
};

// Converts `count` elements at `src` to float32. Returns the index of the first finite
// value too large for float32 (only 8-byte floats can be), or -1 when all fit.
// 64-bit integers above 2^24 are rounded, as numpy's astype('float32') does.
int64_t convert_to_float(const unsigned char* src, int64_t count, ElementType type, float* out);

// IEEE half (binary16) bits to float.
float half_to_float(uint16_t bits);

// Elements and bytes of `shape` at `item_size` bytes each; false when a dimension is negative
// or the product of the non-zero dimensions, or the byte count, overflows int64.
bool checked_sizes(const Shape& shape, int item_size, uint64_t& elements, uint64_t& bytes);

// A value for an error message: quoted, control and non-ASCII bytes as \xNN, long values
// cut, so the message stays one printable line whatever the file holds.
std::string printable(std::string_view s, size_t max_shown = 60);

}  // namespace onefit
