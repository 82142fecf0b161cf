// Unsigned integers loaded from and stored to unaligned bytes in a stated order: the binary
// readers (io/binary.hpp) and the bytes sweep members travel as between processes.
#pragma once
#include <cstddef>
#include <string_view>

namespace onefit {

// Unsigned integers from unaligned bytes in a stated order; compilers make each one load (+ bswap).
template <class U>
U load_le(const unsigned char* p) {
    U v = 0;
    for (size_t i = 0; i < sizeof(U); ++i) v = static_cast<U>(v | static_cast<U>(static_cast<U>(p[i]) << (8 * i)));
    return v;
}

template <class U>
U load_be(const unsigned char* p) {
    U v = 0;
    for (size_t i = 0; i < sizeof(U); ++i) v = static_cast<U>((v << 8) | p[i]);
    return v;
}

template <class U>
void store_le(unsigned char* p, U v) {
    for (size_t i = 0; i < sizeof(U); ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

inline const unsigned char* bytes_of(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace onefit
