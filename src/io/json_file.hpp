// One JSON file's fields, each read with its type checked and errors naming the file and key.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/binary.hpp"
#include "onefit/error.hpp"

namespace onefit::io {

using nlohmann::json;

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw file_error(path, 0, 0, std::string("cannot open the file (") + std::strerror(errno) + ")");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class JsonFile {
public:
    explicit JsonFile(std::string path) : path_(std::move(path)) { parse(read_text(path_)); }
    // JSON that is not a file of its own (an archive's entry): `path` is what errors name.
    JsonFile(std::string path, const std::string& text) : path_(std::move(path)) { parse(text); }
    const json& root() const { return root_; }
    const std::string& path() const { return path_; }
    Error error(const std::string& key, const std::string& what) const {
        return file_error(path_, 0, 0, "'" + key + "' " + what);
    }
    const json& get(const json& object, const std::string& name, const std::string& key) const {
        if (!object.is_object() || !object.contains(name)) throw error(key, "is missing");
        return object[name];
    }
    int64_t integer(const json& object, const std::string& name, const std::string& key, int64_t min) const {
        const json& v = get(object, name, key);
        if (!v.is_number_integer() || v.get<int64_t>() < min)
            throw error(key, "must be an integer >= " + std::to_string(min) + ", got " + printable(v.dump()));
        return v.get<int64_t>();
    }
    uint64_t unsigned_integer(const json& object, const std::string& name, const std::string& key) const {
        const json& v = get(object, name, key);
        if (!v.is_number_unsigned()) throw error(key, "must be a non-negative integer, got " + printable(v.dump()));
        return v.get<uint64_t>();
    }
    float number(const json& object, const std::string& name, const std::string& key) const {
        const json& v = get(object, name, key);
        if (!v.is_number()) throw error(key, "must be a number, got " + printable(v.dump()));
        return static_cast<float>(v.get<double>());
    }
    bool boolean(const json& object, const std::string& name, const std::string& key) const {
        const json& v = get(object, name, key);
        if (!v.is_boolean()) throw error(key, "must be true or false, got " + printable(v.dump()));
        return v.get<bool>();
    }
    std::string string(const json& object, const std::string& name, const std::string& key) const {
        const json& v = get(object, name, key);
        if (!v.is_string()) throw error(key, "must be a string, got " + printable(v.dump()));
        return v.get<std::string>();
    }
    // An array of `count` integers >= min (any count when 0).
    std::vector<int64_t> integers(const json& object, const std::string& name, const std::string& key, size_t count,
                                  int64_t min) const {
        const json& v = get(object, name, key);
        bool ok = v.is_array() && (count == 0 ? !v.empty() : v.size() == count);
        for (size_t i = 0; ok && i < v.size(); ++i) ok = v[i].is_number_integer() && v[i].get<int64_t>() >= min;
        if (!ok)
            throw error(key, "must be an array of " + (count ? std::to_string(count) + " " : std::string()) +
                                 "integers >= " + std::to_string(min) + ", got " + printable(v.dump()));
        return v.get<std::vector<int64_t>>();
    }
    // A name looked up in one of the library's tables; its Error gains the file and key.
    template <class F>
    auto named(const std::string& key, F lookup) const {
        try {
            return lookup();
        } catch (const Error& e) {
            throw error(key, e.what());
        }
    }

private:
    void parse(const std::string& text) {
        try {
            root_ = json::parse(text);
        } catch (const json::parse_error& e) {
            std::string detail = e.what();
            const size_t bracket = detail.find("] ");
            if (bracket != std::string::npos) detail.erase(0, bracket + 2);
            throw file_error(path_, 0, 0, "malformed JSON: " + printable(detail, 200));
        }
        if (!root_.is_object()) throw file_error(path_, 0, 0, "must hold a JSON object {...}");
    }
    std::string path_;
    json root_;
};


}  // namespace onefit::io
