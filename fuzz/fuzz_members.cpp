// libFuzzer: decode_members over arbitrary bytes (what a rank receives from another in an MPI
// sweep). Only onefit::Error may come out; bytes that decode must encode back to themselves.
#include <cstddef>
#include <cstdint>
#include <string>

#include "onefit/distributed.hpp"
#include "onefit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        if (onefit::encode_members(onefit::decode_members(bytes)) != bytes) __builtin_trap();
    } catch (const onefit::Error&) {
    }
    return 0;
}
