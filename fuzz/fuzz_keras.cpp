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

// At most this many members visited per file: a group may link back to itself or an ancestor
// (HDF5 allows cycles), which would make the walk exponential in its depth (10 links per
// group, 8 deep: 10^8 visits, a fuzzer timeout that is the walk's and not the reader's).
constexpr int kMaxVisits = 4096;

void walk(const onefit::io::H5Reader& h5, const std::string& group, int depth, int& visits) {
    if (depth > 8) return;
    for (const std::string& name : h5.members(group)) {
        if (++visits > kMaxVisits) return;
        const std::string path = group == "/" ? name : group + "/" + name;
        if (h5.has_group(path)) {
            walk(h5, path, depth + 1, visits);
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
    int visits = 0;
    walk(h5, "/", 0, visits);
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
