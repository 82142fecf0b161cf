// A file mapped read-only into memory, for the readers that parse or use it in place, and the
// chunked conversion of mapped elements to float32 that keeps a reader's resident size at its
// output: the source pages of each chunk are let go once converted.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "io/binary.hpp"

namespace onefit {

class MappedFile {
public:
    // Maps `path` (mmap, private and read-only). Throws Error naming the file, as
    // read_binary_file does, when it cannot be opened; returns nullptr when it opens but cannot be
    // mapped (empty, a directory, a pipe, a /proc file): the caller then reads it instead, and
    // read_binary_file reports what is wrong with it. `what` names the format ("the .npy file").
    // The file must not shrink while mapped (reading a page past its new end would kill the
    // process with SIGBUS, as it would with np.load(mmap_mode='r')).
    static std::shared_ptr<const MappedFile> open(const std::string& path, std::string_view what);

    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    std::string_view bytes() const { return {static_cast<const char*>(address_), size_}; }

    // Takes the whole pages inside [begin, end) out of this process's memory: they stay in the
    // page cache and are mapped again if touched. A parse that releases what it has read holds a
    // few MB of the file at a time instead of all of it.
    void release(const void* begin, const void* end) const;

private:
    MappedFile(void* address, size_t size) : address_(address), size_(size) {}
    void* address_;
    size_t size_;
};

// convert_to_float over `count` elements in chunks, spread over the thread pool; when `file`
// holds `src`, each chunk's source pages are released once it is converted. Returns the first
// index of a value too large for float32, or -1.
int64_t convert_to_float_in_chunks(const unsigned char* src, int64_t count, ElementType type, float* out,
                                   const MappedFile* file);

}  // namespace onefit
