// write_file_atomically: write a temporary file beside the target, fsync it, rename it over the
// target, fsync the folder. rename() within one file system is atomic, so readers and a crash
// see the old file or the new one; the folder fsync makes the rename itself survive a power cut.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

// Several threads of one process may save at once: the counter keeps their names apart.
std::atomic<unsigned> temp_counter{0};

// The temporary file: closed and removed on every way out except a completed rename.
struct TempFile {
    std::string path;
    int fd = -1;
    bool renamed = false;
    ~TempFile() {
        if (fd >= 0) ::close(fd);
        if (!renamed && !path.empty()) ::unlink(path.c_str());
    }
};

}  // namespace

void write_file_atomically(const std::string& path, const std::string& bytes) {
    auto fail = [&](const std::string& step, int error) {
        throw file_error(path, 0, 0,
                         "cannot save: " + step + " failed (" + std::strerror(error) + "); the existing file, if any, "
                         "is unchanged");
    };
    const size_t slash = path.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base.empty() || base == "." || base == "..")
        throw file_error(path, 0, 0, "cannot save: the path names a folder, not a file");
    struct stat existing {};
    const bool replacing = ::stat(path.c_str(), &existing) == 0;
    if (replacing && S_ISDIR(existing.st_mode)) throw file_error(path, 0, 0, "cannot save: it is a folder");

    TempFile temp;
    const std::string prefix = (slash == std::string::npos ? "" : folder + "/") + "." + base + ".tmp." +
                               std::to_string(::getpid()) + ".";
    for (int attempt = 0;; ++attempt) {
        const std::string candidate = prefix + std::to_string(temp_counter++);
        temp.fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (temp.fd >= 0) {
            temp.path = candidate;
            break;
        }
        // A leftover of a crashed process with the same id: try the next name.
        if (errno != EEXIST || attempt == 100) fail("creating the temporary file " + candidate, errno);
    }
    if (replacing && ::fchmod(temp.fd, existing.st_mode & 07777) != 0)
        fail("copying the permissions to " + temp.path, errno);

    for (size_t written = 0; written < bytes.size();) {
        const ssize_t n = ::write(temp.fd, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("writing " + temp.path, errno);
        written += static_cast<size_t>(n);
    }
    if (::fsync(temp.fd) != 0) fail("flushing " + temp.path + " to disk (fsync)", errno);
    const int fd = temp.fd;
    temp.fd = -1;
    if (::close(fd) != 0) fail("closing " + temp.path, errno);  // NFS reports write errors here
    if (::rename(temp.path.c_str(), path.c_str()) != 0) fail("renaming " + temp.path + " over it", errno);
    temp.renamed = true;

    const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    // Some file systems cannot fsync a folder (EINVAL); the rename is done, nothing more to ask.
    const int synced = folder_fd < 0 ? -1 : ::fsync(folder_fd);
    const int error = errno;
    if (folder_fd >= 0) ::close(folder_fd);
    if (synced != 0 && error != EINVAL)
        throw file_error(path, 0, 0,
                         "saved, but flushing the folder " + folder + " to disk failed (" + std::strerror(error) +
                             "); the new file may not survive a power cut");
}

}  // namespace onefit
