// write_file_atomically: replaces content whole, leaves no temporary file, keeps the old file
// when writing fails midway, and names the path and the system's reason in every error.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_files.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

using namespace test_files;

// A fresh, empty folder for the running test.
std::string fresh_folder() {
    const std::string folder = temp_path("_dir");
    std::filesystem::remove_all(folder);
    std::filesystem::create_directory(folder);
    return folder;
}

std::vector<std::string> folder_entries(const std::string& folder) {
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(folder.c_str())) {
        while (const dirent* entry = ::readdir(dir))
            if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") names.push_back(entry->d_name);
        ::closedir(dir);
    }
    return names;
}

TEST(AtomicWrite, CreatesANewFile) {
    const std::string folder = fresh_folder();
    write_file_atomically(folder + "/model.safetensors", std::string("a\0b", 3));
    EXPECT_EQ(read_bytes(folder + "/model.safetensors"), std::string("a\0b", 3));
    EXPECT_EQ(folder_entries(folder), std::vector<std::string>{"model.safetensors"});
}

TEST(AtomicWrite, ReplacesTheContentWholeAndLeavesNoTemporaryFile) {
    const std::string folder = fresh_folder();
    const std::string path = folder + "/weights.bin";
    write_file_atomically(path, std::string(10000, 'x'));
    write_file_atomically(path, "short");
    EXPECT_EQ(read_bytes(path), "short");
    write_file_atomically(path, "");
    EXPECT_EQ(read_bytes(path), "");
    EXPECT_EQ(folder_entries(folder), std::vector<std::string>{"weights.bin"});
}

TEST(AtomicWrite, KeepsThePermissionsOfTheFileItReplaces) {
    const std::string folder = fresh_folder();
    const std::string path = folder + "/config.json";
    write_file_atomically(path, "{}");
    ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
    write_file_atomically(path, "{\"a\": 1}");
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0640u);
}

TEST(AtomicWrite, WritesAPathWithoutAFolderIntoTheWorkingFolder) {
    const std::string folder = fresh_folder();
    char previous[4096];
    ASSERT_NE(::getcwd(previous, sizeof previous), nullptr);
    ASSERT_EQ(::chdir(folder.c_str()), 0);
    write_file_atomically("plain.txt", "here");
    ASSERT_EQ(::chdir(previous), 0);
    EXPECT_EQ(read_bytes(folder + "/plain.txt"), "here");
    EXPECT_EQ(folder_entries(folder), std::vector<std::string>{"plain.txt"});
}

TEST(AtomicWrite, NamesThePathAndReasonWhenTheFolderIsMissing) {
    const std::string path = fresh_folder() + "/no/such/folder/file.bin";
    const std::string message = error_of([&] { write_file_atomically(path, "x"); });
    EXPECT_EQ(message.rfind(path + ": cannot save: creating the temporary file ", 0), 0u) << message;
    EXPECT_NE(message.find("failed (No such file or directory)"), std::string::npos) << message;
}

TEST(AtomicWrite, RefusesAFolderAsTheTarget) {
    const std::string folder = fresh_folder();
    EXPECT_EQ(error_of([&] { write_file_atomically(folder, "x"); }), folder + ": cannot save: it is a folder");
    EXPECT_EQ(error_of([&] { write_file_atomically(folder + "/", "x"); }),
              folder + "/: cannot save: the path names a folder, not a file");
}

// A write that fails midway (here: the file-size limit, as a full disk would) keeps the old
// file whole and removes the temporary file.
TEST(AtomicWrite, AFailedWriteLeavesTheOldFileWhole) {
    const std::string folder = fresh_folder();
    const std::string path = folder + "/data.bin";
    write_file_atomically(path, "old content");
    rlimit previous {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
    rlimit small = previous;
    small.rlim_cur = 4096;
    const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const std::string message = error_of([&] { write_file_atomically(path, std::string(100000, 'n')); });
    ::setrlimit(RLIMIT_FSIZE, &previous);
    std::signal(SIGXFSZ, previous_handler);
    EXPECT_EQ(message.rfind(path + ": cannot save: writing ", 0), 0u) << message;
    EXPECT_NE(message.find("File too large"), std::string::npos) << message;
    EXPECT_NE(message.find("the existing file, if any, is unchanged"), std::string::npos) << message;
    EXPECT_EQ(read_bytes(path), "old content");
    EXPECT_EQ(folder_entries(folder), std::vector<std::string>{"data.bin"});
}

}  // namespace
}  // namespace onefit
