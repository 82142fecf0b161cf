// detect_data_format: a data file's format by its first bytes, else its name.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "onefit/io.hpp"

namespace onefit {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

DataFormat detect_data_format(const std::string& path) {
    unsigned char head[6] = {};
    size_t got = 0;
    if (std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose); file)
        got = std::fread(head, 1, sizeof head, file.get());
    if (got == 6 && std::string_view(reinterpret_cast<const char*>(head), 6) == "\x93NUMPY") return DataFormat::npy;
    // IDX: 00 00, a known type byte, 1..4 dimensions. A CSV never starts with a zero byte.
    const std::string_view idx_types = "\x08\x09\x0B\x0C\x0D\x0E";
    if (got >= 4 && head[0] == 0 && head[1] == 0 && idx_types.find(static_cast<char>(head[2])) != std::string_view::npos &&
        head[3] >= 1 && head[3] <= 4)
        return DataFormat::idx;
    std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (ends_with(name, ".npy")) return DataFormat::npy;
    if (ends_with(name, ".idx") || ends_with(name, "-ubyte")) return DataFormat::idx;
    return DataFormat::csv;
}

const char* data_format_name(DataFormat format) {
    switch (format) {
    case DataFormat::csv: return "csv";
    case DataFormat::npy: return "npy";
    case DataFormat::idx: return "idx";
    }
    return "csv";
}

}  // namespace onefit
