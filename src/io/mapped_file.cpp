#include "io/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/thread_pool.hpp"
#include "onefit/error.hpp"

namespace onefit {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::string_view what) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw file_error(path, 0, 0,
                         "cannot open " + std::string(what) + " (" + std::strerror(errno) +
                             "); check the path and the permissions");
    struct stat info {};
    void* address = MAP_FAILED;
    size_t size = 0;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
        size = static_cast<size_t>(info.st_size);
        address = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    ::close(fd);  // the mapping keeps the file
    if (address == MAP_FAILED) return nullptr;
    return std::shared_ptr<const MappedFile>(new MappedFile(address, size));
}

MappedFile::~MappedFile() { munmap(address_, size_); }

void MappedFile::release(const void* begin, const void* end) const {
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t lo = std::max(reinterpret_cast<uintptr_t>(begin), reinterpret_cast<uintptr_t>(address_));
    const uintptr_t hi = std::min(reinterpret_cast<uintptr_t>(end), reinterpret_cast<uintptr_t>(address_) + size_);
    const uintptr_t first = (lo + page - 1) / page * page, last = hi / page * page;
    // MADV_DONTNEED on a private mapping nobody wrote: the pages are read again from the file.
    if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

int64_t convert_to_float_in_chunks(const unsigned char* src, int64_t count, ElementType type, float* out,
                                   const MappedFile* file) {
    constexpr int64_t kChunk = 1 << 20;  // elements: 1-8 MB of source, a few ms of work
    const int64_t chunks = (count + kChunk - 1) / kChunk;
    std::atomic<int64_t> first_too_large{-1};
    ThreadPool::instance().parallel_for(chunks, [&](int64_t chunk) {
        const int64_t begin = chunk * kChunk, n = std::min(kChunk, count - begin);
        const unsigned char* from = src + begin * type.size;
        const int64_t bad = convert_to_float(from, n, type, out + begin);
        if (file) file->release(from, from + n * type.size);
        if (bad < 0) return;
        int64_t seen = first_too_large.load();
        while ((seen < 0 || begin + bad < seen) && !first_too_large.compare_exchange_weak(seen, begin + bad)) {
        }
    });
    return first_too_large.load();
}

}  // namespace onefit
