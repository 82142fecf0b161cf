// libFuzzer: parse_npy over arbitrary bytes. Only onefit::Error may come out; any crash,
// sanitizer report, leak or other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/parse.hpp"
#include "onefit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const onefit::Tensor t = onefit::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
        if (t.size() != onefit::shape_elements(t.shape())) __builtin_trap();
    } catch (const onefit::Error&) {
    }
    return 0;
}
