// libFuzzer: read_csv over arbitrary bytes, with options taken from the first byte. read_csv
// reads a path, so the bytes go to an in-memory file (memfd) opened as /proc/self/fd/N: no disk.
// Only onefit::Error may come out.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const int fd = memfd_create("fuzz.csv", 0);
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (fd < 0) std::abort();
    onefit::CsvOptions options;
    if (size > 0) {
        const uint8_t flags = data[0];
        options.has_header = !(flags & 1);
        options.allow_nan = flags & 2;
        options.delimiter = "\t;,|"[(flags >> 2) & 3];
        if (flags & 16) options.label_column = std::to_string((flags >> 5) & 3);
        ++data;
        --size;
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
    try {
        const onefit::LabeledData d = onefit::read_csv(path, options);
        if (d.x.rows() != d.y.rows()) __builtin_trap();
    } catch (const onefit::Error&) {
    }
    return 0;
}
