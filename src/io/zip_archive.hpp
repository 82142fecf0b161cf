// Zip archives in memory, as Keras 3's .keras files are (entries stored uncompressed), over
// Debian's libzip.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace onefit::io {

// An archive holding these entries, in this order, stored (no compression) as Keras writes them.
std::string zip_bytes(const std::vector<std::pair<std::string, std::string>>& entries);

// Every entry of the archive at `path` (its bytes, read whole), by name; stored or deflated.
// Throws Error naming the path: not a zip archive, a damaged entry, an entry larger than
// `max_entry_bytes` (a guard against archives that inflate without bound).
std::map<std::string, std::string> read_zip(const std::string& path, size_t max_entry_bytes);
// The same over an archive's bytes; errors name `file`.
std::map<std::string, std::string> read_zip_bytes(const std::string& bytes, const std::string& file, size_t max_entry_bytes);

}  // namespace onefit::io
