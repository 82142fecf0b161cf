#include "io/zip_archive.hpp"

#include <zip.h>

#include "io/binary.hpp"
#include "onefit/error.hpp"

namespace onefit::io {
namespace {

std::string zip_message(zip_error_t* error) {
    const std::string text = zip_error_strerror(error);
    zip_error_fini(error);
    return text;
}

}  // namespace

std::string zip_bytes(const std::vector<std::pair<std::string, std::string>>& entries) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* target = zip_source_buffer_create(nullptr, 0, 0, &error);
    if (!target) throw Error("zip: cannot start an archive in memory: " + zip_message(&error));
    zip_source_keep(target);  // it outlives the archive: the archive's bytes are read from it
    zip_t* archive = zip_open_from_source(target, ZIP_TRUNCATE, &error);
    if (!archive) {
        zip_source_free(target);
        throw Error("zip: cannot start an archive in memory: " + zip_message(&error));
    }
    zip_error_fini(&error);
    const auto fail = [&](const std::string& what) {
        const std::string reason = zip_strerror(archive);
        zip_discard(archive);
        zip_source_free(target);
        return Error("zip: cannot " + what + ": " + reason);
    };
    for (const auto& [name, bytes] : entries) {
        zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
        if (!source) throw fail("add " + name);
        const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
        if (index < 0) {
            zip_source_free(source);
            throw fail("add " + name);
        }
        if (zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
            throw fail("store " + name);
    }
    if (zip_close(archive) != 0) throw fail("write the archive");
    zip_stat_t st;
    std::string out;
    if (zip_source_stat(target, &st) != 0 || zip_source_open(target) != 0) {
        zip_source_free(target);
        throw Error("zip: cannot read back the archive written in memory");
    }
    out.resize(static_cast<size_t>(st.size));
    const zip_int64_t got = zip_source_read(target, out.data(), out.size());
    zip_source_close(target);
    zip_source_free(target);
    if (got != static_cast<zip_int64_t>(out.size())) throw Error("zip: cannot read back the archive written in memory");
    return out;
}

std::map<std::string, std::string> read_zip(const std::string& path, size_t max_entry_bytes) {
    return read_zip_bytes(read_binary_file(path, "the archive"), path, max_entry_bytes);
}

std::map<std::string, std::string> read_zip_bytes(const std::string& bytes, const std::string& path, size_t max_entry_bytes) {
    if (bytes.size() < 22 || bytes.compare(0, 2, "PK") != 0)
        throw file_error(path, 0, 0, "is not a zip archive (a .keras file is one; was it cut short?)");
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
    if (!source) throw file_error(path, 0, 0, "zip: " + zip_message(&error));
    zip_t* archive = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (!archive) {
        zip_source_free(source);
        throw file_error(path, 0, 0, "is not a readable zip archive: " + zip_message(&error));
    }
    zip_error_fini(&error);
    std::map<std::string, std::string> files;
    const auto fail = [&](const std::string& what) {
        const std::string reason = zip_strerror(archive);
        zip_discard(archive);  // also frees the source
        return file_error(path, 0, 0, what + (reason.empty() ? "" : ": " + reason));
    };
    const zip_int64_t n = zip_get_num_entries(archive, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
        zip_stat_t st;
        if (zip_stat_index(archive, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
            !(st.valid & ZIP_STAT_SIZE))
            throw fail("cannot read the zip entry " + std::to_string(i));
        const std::string name = st.name;
        if (st.size > max_entry_bytes)
            throw fail("entry '" + printable(name) + "' would unpack to " + std::to_string(st.size) + " bytes, more than " +
                       std::to_string(max_entry_bytes));
        zip_file_t* file = zip_fopen_index(archive, static_cast<zip_uint64_t>(i), 0);
        if (!file) throw fail("cannot open the zip entry '" + printable(name) + "'");
        std::string content(static_cast<size_t>(st.size), '\0');
        const zip_int64_t got = content.empty() ? 0 : zip_fread(file, content.data(), content.size());
        zip_fclose(file);
        if (got != static_cast<zip_int64_t>(content.size()))
            throw fail("entry '" + printable(name) + "' is damaged (cannot be read whole)");
        files[name] = std::move(content);
    }
    zip_discard(archive);
    return files;
}

}  // namespace onefit::io
