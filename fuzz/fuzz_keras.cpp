// libFuzzer: Keras 3's files over arbitrary bytes: a .keras archive (libzip) and the HDF5 weights
// in it or alone (libhdf5, read whole in a child first, so a crash there is a refusal here).
// Every group is listed and every dataset read, as loading does. Only onefit::Error may come out.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/h5_file.hpp"
#include "io/zip_archive.hpp"
#include "onefit/error.hpp"

namespace {

void walk(const onefit::io::H5Reader& h5, const std::string& group, int depth) {
    if (depth > 8) return;
    for (const std::string& name : h5.members(group)) {
        const std::string path = group == "/" ? name : group + "/" + name;
        if (h5.has_group(path)) {
            walk(h5, path, depth + 1);
            continue;
        }
        try {
            (void)h5.array(path);
        } catch (const onefit::Error&) {
        }
    }
}

void read_weights(const std::string& bytes) {
    const onefit::io::H5Reader h5(bytes, "fuzz.weights.h5");
    walk(h5, "/", 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        if (bytes.compare(0, 2, "PK") == 0) {
            for (const auto& [name, content] : onefit::io::read_zip_bytes(bytes, "fuzz.keras", size_t{1} << 24))
                if (name.ends_with(".h5")) {
                    try {
                        read_weights(content);
                    } catch (const onefit::Error&) {
                    }
                }
        } else {
            read_weights(bytes);
        }
    } catch (const onefit::Error&) {
    }
    return 0;
}
