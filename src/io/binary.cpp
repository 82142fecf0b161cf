#include "io/binary.hpp"

#include <bit>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "onefit/error.hpp"

namespace onefit {

std::string read_binary_file(const std::string& path, std::string_view what) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file)
        throw file_error(path, 0, 0,
                         "cannot open " + std::string(what) + " (" + std::strerror(errno) +
                             "); check the path and the permissions");
    std::string bytes;
    char chunk[1 << 16];
    size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) bytes.append(chunk, got);
    if (std::ferror(file.get()))
        throw file_error(path, 0, 0,
                         "cannot read " + std::string(what) + " (" + std::strerror(errno) + "); is it a regular file?");
    return bytes;
}

float half_to_float(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu;
    uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
    if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
}

namespace {

// Unsigned integer type of N bytes.
template <int N> struct UnsignedOf;
template <> struct UnsignedOf<1> { using type = uint8_t; };
template <> struct UnsignedOf<2> { using type = uint16_t; };
template <> struct UnsignedOf<4> { using type = uint32_t; };
template <> struct UnsignedOf<8> { using type = uint64_t; };

// Applies to_float to each element's bits (an N-byte unsigned integer in the stated order).
template <int N, bool BigEndian, class ToFloat>
void convert_each(const unsigned char* src, int64_t count, float* out, ToFloat to_float) {
    using U = typename UnsignedOf<N>::type;
    for (int64_t i = 0; i < count; ++i) {
        const unsigned char* p = src + i * N;
        out[i] = to_float(BigEndian ? load_be<U>(p) : load_le<U>(p));
    }
}

template <int N, bool BigEndian>
void convert_signed(const unsigned char* src, int64_t count, float* out) {
    using U = typename UnsignedOf<N>::type;
    using S = std::make_signed_t<U>;
    convert_each<N, BigEndian>(src, count, out, [](U u) { return static_cast<float>(static_cast<S>(u)); });
}

template <int N, bool BigEndian>
void convert_unsigned(const unsigned char* src, int64_t count, float* out) {
    using U = typename UnsignedOf<N>::type;
    convert_each<N, BigEndian>(src, count, out, [](U u) { return static_cast<float>(u); });
}

template <bool BigEndian>
int64_t convert_in_order(const unsigned char* src, int64_t count, ElementType type, float* out) {
    using Kind = ElementType::Kind;
    switch (type.kind) {
    case Kind::boolean:
        convert_each<1, BigEndian>(src, count, out, [](uint8_t u) { return u ? 1.0f : 0.0f; });
        return -1;
    case Kind::bfloat:  // the high half of a float32
        convert_each<2, BigEndian>(src, count, out,
                                   [](uint16_t u) { return std::bit_cast<float>(static_cast<uint32_t>(u) << 16); });
        return -1;
    case Kind::floating:
        if (type.size == 2) convert_each<2, BigEndian>(src, count, out, half_to_float);
        if (type.size == 4) convert_each<4, BigEndian>(src, count, out, [](uint32_t u) { return std::bit_cast<float>(u); });
        if (type.size == 8) {
            using U = uint64_t;
            for (int64_t i = 0; i < count; ++i) {
                const unsigned char* p = src + i * 8;
                const double d = std::bit_cast<double>(BigEndian ? load_be<U>(p) : load_le<U>(p));
                // A finite double beyond float's range would silently become inf.
                if (std::isfinite(d) && std::fabs(d) > FLT_MAX) return i;
                out[i] = static_cast<float>(d);
            }
        }
        return -1;
    case Kind::signed_int:
        if (type.size == 1) convert_signed<1, BigEndian>(src, count, out);
        if (type.size == 2) convert_signed<2, BigEndian>(src, count, out);
        if (type.size == 4) convert_signed<4, BigEndian>(src, count, out);
        if (type.size == 8) convert_signed<8, BigEndian>(src, count, out);
        return -1;
    case Kind::unsigned_int:
        if (type.size == 1) convert_unsigned<1, BigEndian>(src, count, out);
        if (type.size == 2) convert_unsigned<2, BigEndian>(src, count, out);
        if (type.size == 4) convert_unsigned<4, BigEndian>(src, count, out);
        if (type.size == 8) convert_unsigned<8, BigEndian>(src, count, out);
        return -1;
    }
    return -1;
}

}  // namespace

int64_t convert_to_float(const unsigned char* src, int64_t count, ElementType type, float* out) {
    return type.big_endian ? convert_in_order<true>(src, count, type, out)
                           : convert_in_order<false>(src, count, type, out);
}

bool checked_sizes(const Shape& shape, int item_size, uint64_t& elements, uint64_t& bytes) {
    // The product of the non-zero dimensions must fit even when a zero makes the array empty:
    // Tensor multiplies dimensions left to right in int64 (fuzz_idx found such a shape).
    int64_t product = 1;
    bool has_zero = false;
    for (int64_t d : shape) {
        if (d < 0) return false;
        if (d == 0) has_zero = true;
        else if (__builtin_mul_overflow(product, d, &product)) return false;
    }
    int64_t byte_count = 0;
    if (__builtin_mul_overflow(has_zero ? int64_t{0} : product, int64_t{item_size}, &byte_count)) return false;
    elements = has_zero ? 0 : static_cast<uint64_t>(product);
    bytes = static_cast<uint64_t>(byte_count);
    return true;
}

std::string printable(std::string_view s, size_t max_shown) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size() && i < max_shown; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > max_shown) out += "...";
    return out + "\"";
}

}  // namespace onefit
