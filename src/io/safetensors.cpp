// safetensors (huggingface/safetensors, "Format" in its README): an 8-byte little-endian
// header length N, N bytes of UTF-8 JSON, then the data region. The JSON maps each tensor name
// to {"dtype", "shape", "data_offsets": [begin, end]} (byte offsets into the data region) and
// the optional "__metadata__" to a string-to-string map. The reader checks what the reference
// implementation checks (lengths, dtypes, shapes, offsets that tile the data exactly) plus
// duplicate keys, which a JSON library would otherwise resolve silently.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/binary.hpp"
#include "io/parse.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

using nlohmann::json;

struct Dtype {
    const char* name;
    ElementType type;
};

constexpr Dtype kDtypes[] = {
    {"F32", {ElementType::Kind::floating, 4}},      {"F64", {ElementType::Kind::floating, 8}},
    {"F16", {ElementType::Kind::floating, 2}},      {"BF16", {ElementType::Kind::bfloat, 2}},
    {"I8", {ElementType::Kind::signed_int, 1}},     {"I16", {ElementType::Kind::signed_int, 2}},
    {"I32", {ElementType::Kind::signed_int, 4}},    {"I64", {ElementType::Kind::signed_int, 8}},
    {"U8", {ElementType::Kind::unsigned_int, 1}},   {"U16", {ElementType::Kind::unsigned_int, 2}},
    {"U32", {ElementType::Kind::unsigned_int, 4}},  {"U64", {ElementType::Kind::unsigned_int, 8}},
    {"BOOL", {ElementType::Kind::boolean, 1}},
};

// The reference implementation refuses larger headers; so does onefit, before parsing.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct Entry {
    std::string name;
    std::string dtype;
    ElementType type;
    Shape shape;
    uint64_t begin = 0, end = 0;
};

// A JSON value for an error message: as JSON (strings quoted, control bytes escaped), cut
// after about 60 bytes at a character boundary.
std::string shown(const json& value) {
    // Invalid UTF-8 (only possible in names given to the writer) is shown as U+FFFD.
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() <= 60) return text;
    size_t cut = 60;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    return text.substr(0, cut) + "...";
}

std::string shown(const std::string& name) { return shown(json(name)); }

// "[begin, end]". (Built by appending: GCC 12 warns falsely on "[" + std::to_string(...).)
std::string offsets_text(uint64_t begin, uint64_t end) {
    std::string text = "[";
    text += std::to_string(begin);
    text += ", ";
    text += std::to_string(end);
    return text + "]";
}

// Parses the header, refusing a key repeated within one object (the last would win silently).
json parse_header(std::string_view text, const std::string& name) {
    std::vector<std::set<std::string>> open_objects;
    std::string duplicate;
    bool duplicate_is_tensor = false;
    auto check_keys = [&](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::object_start) {
            open_objects.emplace_back();
        } else if (event == json::parse_event_t::object_end && !open_objects.empty()) {
            open_objects.pop_back();
        } else if (event == json::parse_event_t::key && !open_objects.empty() && duplicate.empty()) {
            const std::string& key = parsed.get_ref<const std::string&>();
            if (!open_objects.back().insert(key).second) {
                duplicate = key;
                duplicate_is_tensor = open_objects.size() == 1;
            }
        }
        return true;
    };
    json header;
    try {
        header = json::parse(text.begin(), text.end(), check_keys);
    } catch (const json::exception& e) {
        throw file_error(name, 0, 0, "the safetensors header is not valid JSON: " + printable(e.what(), 200));
    }
    if (!duplicate.empty())
        throw file_error(name, 0, 0,
                         std::string(duplicate_is_tensor ? "the tensor name " : "the key ") + shown(duplicate) +
                             " appears twice in " +
                             (duplicate_is_tensor ? "the header; names must be unique" : "one header entry"));
    if (!header.is_object())
        throw file_error(name, 0, 0,
                         std::string("the safetensors header must be a JSON object {...}, it is ") + header.type_name());
    return header;
}

// A non-negative JSON integer, or an Error saying which field of which tensor is wrong.
uint64_t unsigned_field(const json& value, const std::string& what, const std::string& tensor,
                        const std::string& name) {
    if (!value.is_number_unsigned())
        throw file_error(name, 0, 0,
                         "tensor " + shown(tensor) + ": " + what + " must be a non-negative integer, got " +
                             shown(value));
    return value.get<uint64_t>();
}

Entry parse_entry(const std::string& tensor, const json& info, const std::string& name) {
    const std::string where = "tensor " + shown(tensor);
    if (!info.is_object())
        throw file_error(name, 0, 0,
                         where + " must be an object {\"dtype\", \"shape\", \"data_offsets\"}, it is " +
                             info.type_name());
    for (const auto& [key, value] : info.items())
        if (key != "dtype" && key != "shape" && key != "data_offsets")
            throw file_error(name, 0, 0,
                             where + " has an unexpected key " + shown(key) +
                                 "; entries have exactly \"dtype\", \"shape\" and \"data_offsets\"");
    for (const char* key : {"dtype", "shape", "data_offsets"})
        if (!info.contains(key)) throw file_error(name, 0, 0, where + " has no \"" + key + "\"");

    Entry entry;
    entry.name = tensor;
    const json& dtype = info["dtype"];
    if (!dtype.is_string()) throw file_error(name, 0, 0, where + ": \"dtype\" must be a string such as \"F32\"");
    entry.dtype = dtype.get<std::string>();
    const Dtype* known = nullptr;
    for (const Dtype& d : kDtypes)
        if (entry.dtype == d.name) known = &d;
    if (!known)
        throw file_error(name, 0, 0,
                         where + " has dtype " + shown(entry.dtype) +
                             ", which onefit does not read; it reads F32 and converts F64, F16, BF16, I8..I64, "
                             "U8..U64 and BOOL to float32");
    entry.type = known->type;

    const json& shape = info["shape"];
    if (!shape.is_array()) throw file_error(name, 0, 0, where + ": \"shape\" must be an array such as [2, 3]");
    for (const json& d : shape) {
        const uint64_t dim = unsigned_field(d, "every dimension in \"shape\"", tensor, name);
        if (dim > static_cast<uint64_t>(INT64_MAX))
            throw file_error(name, 0, 0, where + ": a dimension is too large for 64 bits");
        entry.shape.push_back(static_cast<int64_t>(dim));
    }

    const json& offsets = info["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2)
        throw file_error(name, 0, 0, where + ": \"data_offsets\" must be [begin, end], got " + shown(offsets));
    entry.begin = unsigned_field(offsets[0], "\"data_offsets\" begin", tensor, name);
    entry.end = unsigned_field(offsets[1], "\"data_offsets\" end", tensor, name);
    const std::string range = offsets_text(entry.begin, entry.end);
    if (entry.end < entry.begin)
        throw file_error(name, 0, 0, where + ": \"data_offsets\" " + range + " ends before it begins");

    uint64_t elements = 0, bytes = 0;
    if (!checked_sizes(entry.shape, entry.type.size, elements, bytes))
        throw file_error(name, 0, 0,
                         where + ": shape " + shape_to_string(entry.shape) + " is too large: its size overflows 64-bit integers");
    if (bytes != entry.end - entry.begin)
        throw file_error(name, 0, 0,
                         where + ": shape " + shape_to_string(entry.shape) + " of " + entry.dtype + " needs " +
                             std::to_string(bytes) + " bytes, but \"data_offsets\" " + range + " hold " +
                             std::to_string(entry.end - entry.begin));
    return entry;
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> parse_safetensors(std::string_view bytes, const std::string& name,
                                                              std::map<std::string, std::string>* metadata) {
    if (bytes.size() < 8)
        throw file_error(name, 0, 0,
                         "the file is " + std::to_string(bytes.size()) +
                             " bytes; a safetensors file starts with an 8-byte header length");
    const uint64_t header_length = load_le<uint64_t>(bytes_of(bytes));
    const uint64_t after_length = bytes.size() - 8;
    if (header_length > after_length)
        throw file_error(name, 0, 0,
                         "the header length says " + std::to_string(header_length) + " bytes, but the file has only " +
                             std::to_string(after_length) +
                             " after the 8-byte length; it is truncated or not a safetensors file");
    if (header_length > kMaxHeaderBytes)
        throw file_error(name, 0, 0,
                         "the header length " + std::to_string(header_length) +
                             " bytes is over the 100 MB limit of safetensors readers");
    const json header = parse_header(bytes.substr(8, header_length), name);
    const std::string_view data = bytes.substr(8 + header_length);

    std::vector<Entry> entries;
    for (const auto& [key, value] : header.items()) {
        if (key != "__metadata__") {
            entries.push_back(parse_entry(key, value, name));
            continue;
        }
        if (!value.is_object())
            throw file_error(name, 0, 0, std::string("\"__metadata__\" must be an object of strings, it is ") + value.type_name());
        for (const auto& [meta_key, meta_value] : value.items()) {
            if (!meta_value.is_string())
                throw file_error(name, 0, 0,
                                 "\"__metadata__\" value for " + shown(meta_key) + " must be a string, got " +
                                     shown(meta_value));
            if (metadata) (*metadata)[meta_key] = meta_value.get<std::string>();
        }
    }

    // In data order, the tensors must cover [0, data size) exactly: no overlap, gap or tail.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end != b.end ? a.end < b.end : a.name < b.name;
    });
    uint64_t covered = 0;
    const Entry* previous = nullptr;
    for (const Entry& e : entries) {
        const std::string range = offsets_text(e.begin, e.end);
        if (e.end > data.size())
            throw file_error(name, 0, 0,
                             "tensor " + shown(e.name) + " has data_offsets " + range + ", past the end of the " +
                                 std::to_string(data.size()) + "-byte data region; the file is truncated");
        if (e.begin < covered)
            throw file_error(name, 0, 0,
                             "tensor " + shown(e.name) + " (data_offsets " + range + ") overlaps tensor " +
                                 shown(previous->name) + ", which ends at " + std::to_string(covered));
        if (e.begin > covered)
            throw file_error(name, 0, 0,
                             "bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                                 ") of the data region belong to no tensor (before tensor " + shown(e.name) +
                                 "); data_offsets must tile the data without gaps");
        covered = e.end;
        previous = &e;
    }
    if (covered != data.size())
        throw file_error(name, 0, 0,
                         "the tensors end at byte " + std::to_string(covered) + " of the data region, but it has " +
                             std::to_string(data.size()) + " bytes; the rest belongs to no tensor");

    std::vector<std::pair<std::string, Tensor>> tensors;
    tensors.reserve(entries.size());
    for (const Entry& e : entries) {
        const int64_t count = static_cast<int64_t>((e.end - e.begin) / static_cast<uint64_t>(e.type.size));
        std::vector<float> values(static_cast<size_t>(count));
        const unsigned char* src = bytes_of(data) + e.begin;
        const int64_t too_large = convert_to_float(src, count, e.type, values.data());
        if (too_large >= 0) {
            char value[32];
            std::snprintf(value, sizeof value, "%g", std::bit_cast<double>(load_le<uint64_t>(src + 8 * too_large)));
            throw file_error(name, 0, 0,
                             "tensor " + shown(e.name) + ": element " + std::to_string(too_large) + " is " + value +
                                 ", beyond float32's range (about 3.4e38)");
        }
        tensors.emplace_back(e.name, Tensor(e.shape, std::move(values)));
    }
    return tensors;
}

std::string serialize_safetensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                  const std::map<std::string, std::string>& metadata, const std::string& name) {
    // ordered_json keeps the given order, so the header lists tensors as the data holds them.
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::set<std::string> seen;
    uint64_t offset = 0;
    for (const auto& [tensor, value] : tensors) {
        if (tensor.empty() || tensor == "__metadata__")
            throw file_error(name, 0, 0, "cannot save a tensor named " + shown(tensor) + "; choose another name");
        if (!seen.insert(tensor).second)
            throw file_error(name, 0, 0, "two tensors are named " + shown(tensor) + "; names must be unique");
        uint64_t elements = 0, bytes = 0;
        if (!checked_sizes(value.shape(), 4, elements, bytes) || elements != static_cast<uint64_t>(value.size()))
            throw file_error(name, 0, 0,
                             "tensor " + shown(tensor) + " has shape " + shape_to_string(value.shape()) + " but " +
                                 std::to_string(value.size()) + " values");
        header[tensor] = {{"dtype", "F32"}, {"shape", value.shape()}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text;
    try {
        text = header.dump();
    } catch (const nlohmann::json::exception& e) {
        throw file_error(name, 0, 0, "a tensor name or metadata string is not valid UTF-8: " + printable(e.what(), 200));
    }
    text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned

    std::string out(8 + text.size() + offset, '\0');
    unsigned char* p = reinterpret_cast<unsigned char*>(out.data());
    store_le<uint64_t>(p, text.size());
    text.copy(out.data() + 8, text.size());
    p += 8 + text.size();
    for (const auto& [tensor, value] : tensors)
        for (float v : value.values()) {
            store_le<uint32_t>(p, std::bit_cast<uint32_t>(v));
            p += 4;
        }
    return out;
}

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    write_file_atomically(path, serialize_safetensors(tensors, metadata, path));
}

std::vector<std::pair<std::string, Tensor>> read_safetensors(const std::string& path,
                                                             std::map<std::string, std::string>* metadata) {
    return parse_safetensors(read_binary_file(path, "the safetensors file"), path, metadata);
}

}  // namespace onefit
