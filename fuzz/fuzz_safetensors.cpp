// libFuzzer: parse_safetensors over arbitrary bytes; what it accepts must survive a round trip
// through serialize_safetensors bit for bit. Only onefit::Error may come out.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "io/parse.hpp"
#include "onefit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using Named = std::vector<std::pair<std::string, onefit::Tensor>>;
    std::map<std::string, std::string> metadata;
    Named tensors;
    try {
        tensors = onefit::parse_safetensors(std::string_view(reinterpret_cast<const char*>(data), size),
                                            "fuzz.safetensors", &metadata);
    } catch (const onefit::Error&) {
        return 0;
    }
    for (const auto& [name, t] : tensors)
        if (name.empty()) return 0;  // the reader takes "" as a name, the writer refuses it
    std::map<std::string, std::string> metadata_again;
    const std::string bytes = onefit::serialize_safetensors(tensors, metadata, "fuzz.safetensors");
    const Named again = onefit::parse_safetensors(bytes, "fuzz.safetensors", &metadata_again);
    if (again.size() != tensors.size() || metadata_again != metadata) __builtin_trap();
    for (size_t i = 0; i < again.size(); ++i) {
        const onefit::Tensor& a = tensors[i].second;
        const onefit::Tensor& b = again[i].second;
        if (again[i].first != tensors[i].first || a.shape() != b.shape() || a.size() != b.size()) __builtin_trap();
        if (a.size() && std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<size_t>(a.size())) != 0)
            __builtin_trap();
    }
    return 0;
}
