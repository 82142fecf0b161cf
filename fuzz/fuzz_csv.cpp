// libFuzzer: read_csv over arbitrary bytes, with options taken from the first byte. read_csv
// reads a path, so the bytes go to an in-memory file (memfd) opened as /proc/self/fd/N: no disk.
// Only onefit::Error may come out. The same bytes are then parsed in memory by the record
// tokenizer alone and in chunks of a few bytes (every line cut somewhere): all three must give
// the same values, bit for bit, or the same error message.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "io/parse.hpp"
#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace {

// A result as text: the error message, or the shapes, names and value bits.
std::string outcome(const auto& read) {
    try {
        const onefit::LabeledData d = read();
        if (d.x.rows() != d.y.rows()) __builtin_trap();
        std::string out = onefit::shape_to_string(d.x.shape());
        for (const std::string& name : d.feature_names) out += "|" + name;
        for (const std::string& name : d.class_names) out += "#" + name;
        out.append(reinterpret_cast<const char*>(d.x.data()), sizeof(float) * static_cast<size_t>(d.x.size()));
        out.append(reinterpret_cast<const char*>(d.y.data()), sizeof(float) * static_cast<size_t>(d.y.size()));
        return out;
    } catch (const onefit::Error& e) {
        return std::string("error: ") + e.what();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const int fd = memfd_create("fuzz.csv", 0);
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (fd < 0) std::abort();
    onefit::CsvOptions options;
    size_t chunk_bytes = 7;
    if (size > 0) {
        const uint8_t flags = data[0];
        options.has_header = !(flags & 1);
        options.allow_nan = flags & 2;
        options.delimiter = "\t;,|"[(flags >> 2) & 3];
        if (flags & 16) options.label_column = std::to_string((flags >> 5) & 3);
        chunk_bytes = 1 + (flags >> 7) * 15;  // 1 or 16
        ++data;
        --size;
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string from_file = outcome([&] { return onefit::read_csv(path, options); });
    const std::string tokenized = outcome([&] { return onefit::parse_csv(text, path, options, 0); });
    const std::string chunked = outcome([&] { return onefit::parse_csv(text, path, options, chunk_bytes); });
    if (from_file != tokenized || chunked != tokenized) __builtin_trap();
    return 0;
}
