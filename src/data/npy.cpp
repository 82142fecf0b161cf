// read_npy: NumPy's .npy format (numpy/lib/format.py). "\x93NUMPY", a major and a minor
// version byte, the header length (u16 LE in 1.0, u32 LE in 2.0 and 3.0), the header: a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (150, 4), } padded with spaces
// and a '\n', then the raw array. The dict is parsed by hand and strictly: exactly those three
// keys, Python literals only, nothing after the closing brace but whitespace.
#include <bit>
#include <charconv>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/binary.hpp"
#include "io/mapped_file.hpp"
#include "io/parse.hpp"
#include "onefit/error.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct NpyHeader {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
};

// Parses the header dict. Errors show the header and the byte where parsing stopped.
class NpyHeaderParser {
public:
    NpyHeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

    NpyHeader parse() {
        NpyHeader header;
        bool has_descr = false, has_fortran_order = false, has_shape = false;
        skip_space();
        if (peek() != '{') fail("must be a Python dict starting with '{'");
        ++pos_;
        for (;;) {
            skip_space();
            if (peek() == '}') break;
            const std::string key = string_literal("a key in quotes");
            skip_space();
            if (peek() != ':') fail("needs ':' after the key '" + key + "'");
            ++pos_;
            skip_space();
            if (key == "descr") {
                if (has_descr) fail("has the key 'descr' twice");
                if (peek() == '[')
                    fail("describes a structured dtype (a list of fields), which onefit does not read; "
                         "save one plain numeric array per file");
                header.descr = string_literal("the dtype as a string, e.g. '<f4'");
                has_descr = true;
            } else if (key == "fortran_order") {
                if (has_fortran_order) fail("has the key 'fortran_order' twice");
                header.fortran_order = python_bool();
                has_fortran_order = true;
            } else if (key == "shape") {
                if (has_shape) fail("has the key 'shape' twice");
                header.shape = shape_tuple();
                has_shape = true;
            } else {
                fail("has an unexpected key " + printable(key) +
                     "; an .npy header has exactly 'descr', 'fortran_order' and 'shape'");
            }
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            if (peek() == '}') break;
            fail("needs ',' or '}' after the '" + key + "' entry");
        }
        ++pos_;  // the '}'
        skip_space();
        if (pos_ != text_.size()) fail("has text after the closing '}'");
        for (auto [present, key] : {std::pair{has_descr, "descr"}, std::pair{has_fortran_order, "fortran_order"},
                                    std::pair{has_shape, "shape"}})
            if (!present) fail(std::string("has no '") + key + "' entry; it needs 'descr', 'fortran_order' and 'shape'");
        return header;
    }

private:
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                       text_[pos_] == '\r'))
            ++pos_;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw file_error(name_, 0, 0,
                         "the .npy header " + what + " (at byte " + std::to_string(pos_) + " of the header " +
                             printable(text_, 120) + ")");
    }

    // 'text' or "text"; numpy never writes escapes here, so a backslash is refused.
    std::string string_literal(const std::string& expected) {
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail("needs " + expected);
        const size_t begin = ++pos_;
        while (pos_ < text_.size() && text_[pos_] != quote) {
            if (text_[pos_] == '\\' || text_[pos_] == '\n') fail("has a string with an escape or a line break");
            ++pos_;
        }
        if (pos_ >= text_.size()) fail("has a string that is never closed");
        return std::string(text_.substr(begin, pos_++ - begin));
    }

    bool python_bool() {
        for (auto [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
            if (text_.substr(pos_, word.size()) == word) {
                pos_ += word.size();
                return value;
            }
        fail("needs True or False for 'fortran_order'");
    }

    // (), (3,), (150, 4) or (2, 3, 4,); Python 2's long suffix (150L) is accepted.
    Shape shape_tuple() {
        if (peek() != '(') fail("needs a tuple such as (150, 4) for 'shape'");
        ++pos_;
        skip_space();
        Shape shape;
        if (peek() == ')') {
            ++pos_;
            return shape;
        }
        for (;;) {
            shape.push_back(dimension());
            skip_space();
            if (peek() == ',') {
                ++pos_;
                skip_space();
                if (peek() == ')') break;
                continue;
            }
            if (peek() == ')') {
                if (shape.size() == 1)
                    fail("has the shape (" + std::to_string(shape[0]) + "), which is not a tuple; write (" +
                         std::to_string(shape[0]) + ",)");
                break;
            }
            fail("needs ',' or ')' in the shape");
        }
        ++pos_;  // the ')'
        return shape;
    }

    int64_t dimension() {
        const char* begin = text_.data() + pos_;
        const char* end = text_.data() + text_.size();
        uint64_t value = 0;
        auto [ptr, ec] = std::from_chars(begin, end, value);
        if (ptr == begin) fail("needs a non-negative integer in the shape");
        if (ec == std::errc::result_out_of_range || value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            fail("has a dimension too large for 64 bits");
        pos_ += static_cast<size_t>(ptr - begin);
        if (peek() == 'L') ++pos_;
        return static_cast<int64_t>(value);
    }

    std::string_view text_;
    const std::string& name_;
    size_t pos_ = 0;
};

// '<f4', '|u1', '<i8', '|b1', ...: byte order, kind, item size.
ElementType element_type(const std::string& descr, const std::string& name) {
    std::string shown = printable(descr, 20);
    shown.front() = shown.back() = '\'';  // as Python writes it: '<f4'
    const std::string supported =
        "; onefit reads float (f2, f4, f8), integer (i1..i8, u1..u8) and bool (b1) arrays: "
        "convert with arr.astype('float32') before np.save";
    if (descr.size() >= 2 && descr[1] == 'O')
        throw file_error(name, 0, 0, "dtype " + shown + " holds pickled Python objects" + supported);
    const bool valid_order = !descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos;
    const bool valid_size = descr.size() == 3 && descr[2] >= '1' && descr[2] <= '8';
    if (!valid_order || !valid_size) throw file_error(name, 0, 0, "dtype " + shown + " is not supported" + supported);
    ElementType type;
    type.size = descr[2] - '0';
    switch (descr[1]) {
    case 'f': type.kind = ElementType::Kind::floating; break;
    case 'i': type.kind = ElementType::Kind::signed_int; break;
    case 'u': type.kind = ElementType::Kind::unsigned_int; break;
    case 'b': type.kind = ElementType::Kind::boolean; break;
    default: throw file_error(name, 0, 0, "dtype " + shown + " is not supported" + supported);
    }
    const bool float_size = type.size == 2 || type.size == 4 || type.size == 8;
    const bool int_size = float_size || type.size == 1;
    const bool size_ok = type.kind == ElementType::Kind::floating ? float_size
                         : type.kind == ElementType::Kind::boolean ? type.size == 1
                                                                   : int_size;
    if (!size_ok) throw file_error(name, 0, 0, "dtype " + shown + " is not supported" + supported);
    if (type.size > 1 && descr[0] == '>')
        throw file_error(name, 0, 0,
                         "dtype " + shown + " is big-endian, which onefit does not read; save a little-endian copy "
                         "with np.save(path, arr.astype('<" + descr.substr(1) + "'))");
    if (type.size > 1 && descr[0] == '|')
        throw file_error(name, 0, 0, "dtype " + shown + " has no byte order ('|' is only for 1-byte types)");
    type.big_endian = descr[0] == '=' && std::endian::native == std::endian::big;
    return type;
}

// Column-major (Fortran) values to row-major: output index walks the shape's last axis
// fastest, while `from` follows it through the column-major strides.
std::vector<float> to_row_major(const std::vector<float>& column_major, const Shape& shape) {
    std::vector<float> out(column_major.size());
    if (out.empty()) return out;
    const size_t rank = shape.size();
    std::vector<int64_t> stride(rank, 1), index(rank, 0);
    for (size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * shape[k - 1];
    int64_t from = 0;
    for (float& value : out) {
        value = column_major[static_cast<size_t>(from)];
        for (size_t k = rank; k-- > 0;) {
            from += stride[k];
            if (++index[k] < shape[k]) break;
            from -= stride[k] * shape[k];
            index[k] = 0;
        }
    }
    return out;
}

struct NpyLayout {
    Shape shape;
    ElementType type;
    bool fortran_order = false;
    size_t data_start = 0;  // bytes from the start of the file
    uint64_t elements = 0;
};

// Checks everything about the file but its values, and says where they are.
NpyLayout npy_layout(std::string_view bytes, const std::string& name) {
    const unsigned char* b = bytes_of(bytes);
    if (bytes.substr(0, 4) == "PK\x03\x04")
        throw file_error(name, 0, 0,
                         "this is an .npz archive (a zip of .npy files), which onefit does not read; save each array "
                         "on its own, e.g. np.save('x.npy', np.load(path)['x'])");
    if (bytes.substr(0, 2) == "\x1f\x8b")
        throw file_error(name, 0, 0, "the file is gzip-compressed; decompress it first (gunzip)");
    if (bytes.substr(0, kMagic.size()) != kMagic)
        throw file_error(name, 0, 0,
                         "not an .npy file: it does not start with \"\\x93NUMPY\" (it starts with " +
                             printable(bytes.substr(0, 8)) + "); write it with np.save");
    if (bytes.size() < 10)
        throw file_error(name, 0, 0,
                         "the file is " + std::to_string(bytes.size()) +
                             " bytes, too short for an .npy preamble (at least 10); is it truncated?");
    const int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        throw file_error(name, 0, 0,
                         "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                             "; onefit reads 1.0, 2.0 and 3.0");
    const size_t preamble = major == 1 ? 10 : 12;
    if (bytes.size() < preamble)
        throw file_error(name, 0, 0,
                         "the file is " + std::to_string(bytes.size()) + " bytes, too short for a version " +
                             std::to_string(major) + ".0 preamble (" + std::to_string(preamble) + ")");
    const uint64_t header_length = major == 1 ? load_le<uint16_t>(b + 8) : load_le<uint32_t>(b + 8);
    if (header_length > bytes.size() - preamble)
        throw file_error(name, 0, 0,
                         "the header length field says " + std::to_string(header_length) + " bytes, but only " +
                             std::to_string(bytes.size() - preamble) + " follow the " + std::to_string(preamble) +
                             "-byte preamble; the file is truncated or not an .npy file");
    const std::string_view header_text = bytes.substr(preamble, header_length);
    const NpyHeader header = NpyHeaderParser(header_text, name).parse();
    const ElementType type = element_type(header.descr, name);

    uint64_t elements = 0, data_bytes = 0;
    const std::string shape = shape_to_string(header.shape);
    if (!checked_sizes(header.shape, type.size, elements, data_bytes))
        throw file_error(name, 0, 0, "the header's shape " + shape + " is too large: its size overflows 64-bit integers");
    const size_t data_start = preamble + header_length;
    const uint64_t available = bytes.size() - data_start;
    if (data_bytes != available)
        throw file_error(name, 0, 0,
                         "header says shape " + shape + " of " + header.descr + " = " + std::to_string(data_bytes) +
                             " bytes, file has " + std::to_string(available) + " after the header" +
                             (available < data_bytes ? "; the file is truncated"
                                                     : "; the extra bytes are not part of the array"));

    return {header.shape, type, header.fortran_order, data_start, elements};
}

// The values as float32 in C order: converted in chunks (the mapping's pages let go behind them).
Tensor npy_values(std::string_view bytes, const NpyLayout& layout, const std::string& name, const MappedFile* file) {
    const unsigned char* b = bytes_of(bytes);
    std::vector<float> values(static_cast<size_t>(layout.elements));
    const int64_t too_large = convert_to_float_in_chunks(b + layout.data_start, static_cast<int64_t>(layout.elements),
                                                         layout.type, values.data(), file);
    if (too_large >= 0) {
        const double value = std::bit_cast<double>(load_le<uint64_t>(b + layout.data_start + 8 * too_large));
        char shown[32];
        std::snprintf(shown, sizeof shown, "%g", value);
        throw file_error(name, 0, 0,
                         "element " + std::to_string(too_large) + " is " + shown +
                             ", beyond float32's range (about 3.4e38); rescale the array before saving");
    }
    if (layout.fortran_order && layout.shape.size() > 1) values = to_row_major(values, layout.shape);
    return Tensor(layout.shape, std::move(values));
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& name) {
    return npy_values(bytes, npy_layout(bytes, name), name, nullptr);
}

// float32, little-endian, C order (np.save's default for float32): the tensor is the mapped file
// itself, paged in as the fit reads it (np.load(mmap_mode='r')). Anything else is converted once.
Tensor read_npy(const std::string& path) {
    const std::shared_ptr<const MappedFile> file = MappedFile::open(path, "the .npy file");
    if (!file) return parse_npy(read_binary_file(path, "the .npy file"), path);
    const NpyLayout layout = npy_layout(file->bytes(), path);
    const bool float32 = layout.type.kind == ElementType::Kind::floating && layout.type.size == 4 &&
                         !layout.type.big_endian && std::endian::native == std::endian::little;
    const bool c_order = !layout.fortran_order || layout.shape.size() <= 1;
    const char* values = file->bytes().data() + layout.data_start;
    if (float32 && c_order && layout.elements > 0 && reinterpret_cast<uintptr_t>(values) % alignof(float) == 0)
        return Tensor(layout.shape, std::shared_ptr<const float>(file, reinterpret_cast<const float*>(values)));
    return npy_values(file->bytes(), layout, path, file.get());
}

LabeledData read_npy_pair(const std::string& x_path, const std::string& y_path) {
    return labeled_pair(read_npy(x_path), read_npy(y_path), x_path, y_path);
}

}  // namespace onefit
