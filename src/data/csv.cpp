// read_csv: a header row, numeric feature columns and one label column.
// The file is mapped, its header (and first data row) tokenized record by record (RFC 4180
// quoting, \n, \r\n or \r line ends); the rest is parsed in chunks of lines on all cores
// (src/data/csv_chunks.cpp) straight into x and y, unless it holds quotes or lone '\r' line
// ends, which the tokenizer reads alone. Any chunk the fast parser balks at is tokenized again,
// so every problem is reported as the tokenizer sees it: FILE:LINE:COLUMN with a fix; columns
// are 1-based byte offsets into the line, as compilers report them.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "data/csv_chunks.hpp"
#include "io/mapped_file.hpp"
#include "io/parse.hpp"
#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

struct CsvField {
    std::string text;  // quotes removed and "" unescaped; surrounding blanks kept
    long line = 0;
    long column = 0;   // where the value starts (after leading blanks)
};

struct CsvRecord {
    long line = 0;        // line where the record starts
    long end_column = 0;  // column just past its last character
    std::vector<CsvField> fields;
};

bool is_line_end(char c) { return c == '\n' || c == '\r'; }

// Splits text into records. Blank lines (only spaces/tabs) are skipped: trailing newlines
// and spacer lines are common in hand-edited files and carry no data.
class CsvTokenizer {
public:
    CsvTokenizer(std::string_view text, char delimiter, const std::string& path, long first_line = 1)
        : text_(text), delimiter_(delimiter), path_(path), line_(first_line) {}

    size_t position() const { return pos_; }  // where the next record starts
    long line() const { return line_; }

    // Reads the next record; false at the end of the input.
    bool next(CsvRecord& record) {
        for (;;) {
            size_t p = pos_;
            while (p < text_.size() && is_blank(text_[p])) ++p;
            if (p >= text_.size()) {
                pos_ = text_.size();
                return false;
            }
            if (!is_line_end(text_[p])) break;
            pos_ = p;
            consume_line_end();
        }
        record.line = line_;
        record.fields.clear();
        for (;;) {
            read_field(record.fields.emplace_back());
            if (pos_ < text_.size() && text_[pos_] == delimiter_) {
                ++pos_;
                continue;
            }
            record.end_column = column_at(pos_);
            if (pos_ < text_.size()) consume_line_end();
            return true;
        }
    }

private:
    bool is_blank(char c) const { return (c == ' ' || c == '\t') && c != delimiter_; }
    long column_at(size_t p) const { return static_cast<long>(p - line_start_) + 1; }

    // At \n, \r\n or \r: moves past it to the next line.
    void consume_line_end() {
        if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
        ++pos_;
        ++line_;
        line_start_ = pos_;
    }

    // Reads one field and leaves pos_ at the delimiter, a line end or the end of the input.
    void read_field(CsvField& field) {
        field.text.clear();
        size_t p = pos_;
        while (p < text_.size() && is_blank(text_[p])) ++p;
        field.line = line_;
        field.column = column_at(p);
        if (p >= text_.size() || text_[p] != '"') {
            while (p < text_.size() && text_[p] != delimiter_ && !is_line_end(text_[p])) ++p;
            field.text.assign(text_.substr(pos_, p - pos_));
            pos_ = p;
            return;
        }
        pos_ = p + 1;
        for (;;) {
            if (pos_ >= text_.size())
                throw file_error(path_, field.line, field.column,
                                 "this quoted field is never closed; add the closing \" "
                                 "(write \"\" for a quote inside a field)");
            const char c = text_[pos_];
            if (c == '"') {
                if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
                    field.text += '"';
                    pos_ += 2;
                    continue;
                }
                ++pos_;
                break;
            }
            field.text += c;
            ++pos_;
            // A line end inside quotes is part of the value, but still counts as a line.
            const bool crlf_first_half = c == '\r' && pos_ < text_.size() && text_[pos_] == '\n';
            if (is_line_end(c) && !crlf_first_half) {
                ++line_;
                line_start_ = pos_;
            }
        }
        while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
        if (pos_ < text_.size() && text_[pos_] != delimiter_ && !is_line_end(text_[pos_]))
            throw file_error(path_, line_, column_at(pos_),
                             "unexpected text after a closing quote; quote the whole field "
                             "and write \"\" for a quote inside it");
    }

    std::string_view text_;
    char delimiter_;
    const std::string& path_;
    size_t pos_ = 0;
    size_t line_start_ = 0;
    long line_;
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// A value for an error message: quoted, control bytes escaped, long values cut, so the
// message stays one printable line whatever the file contains.
std::string show(std::string_view s) {
    constexpr size_t kMaxShown = 40;
    std::string out = "\"";
    for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > kMaxShown) out += "...";
    return out + "\"";
}

std::string read_whole_file(const std::string& path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file)
        throw file_error(path, 0, 0,
                         std::string("cannot open the CSV file (") + std::strerror(errno) +
                             "); check the path and the permissions");
    std::string text;
    char chunk[1 << 16];
    size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) text.append(chunk, got);
    if (std::ferror(file.get()))
        throw file_error(path, 0, 0,
                         std::string("cannot read the CSV file (") + std::strerror(errno) +
                             "); is it a regular file?");
    return text;
}

// Resolves CsvOptions::label_column: a header name first, then a 0-based index.
size_t find_label_column(const std::vector<std::string>& names, std::string_view wanted, bool has_header,
                         const std::string& path, long header_line) {
    wanted = trim(wanted);
    if (wanted.empty()) return names.size() - 1;
    std::vector<size_t> matches;
    if (has_header)
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == wanted) matches.push_back(i);
    if (matches.size() == 1) return matches[0];
    if (matches.size() > 1)
        throw file_error(path, header_line, 0,
                         "the label column " + show(wanted) + " appears " + std::to_string(matches.size()) +
                             " times in the header; give its 0-based index instead (e.g. " +
                             std::to_string(matches[0]) + ")");
    const bool all_digits = std::all_of(wanted.begin(), wanted.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (all_digits) {
        size_t index = 0;
        auto [ptr, ec] = std::from_chars(wanted.data(), wanted.data() + wanted.size(), index);
        if (ec == std::errc() && index < names.size()) return index;
        throw file_error(path, header_line, 0,
                         "label column index " + std::string(wanted) + " is out of range: the file has " +
                             std::to_string(names.size()) + " columns, indices 0 to " +
                             std::to_string(names.size() - 1));
    }
    if (!has_header)
        throw file_error(path, header_line, 0,
                         "the file has no header, so the label column " + show(wanted) +
                             " cannot be found by name; give its 0-based index");
    std::string available;
    constexpr size_t kMaxListed = 20;
    for (size_t i = 0; i < names.size() && i < kMaxListed; ++i) available += (i ? ", " : "") + show(names[i]);
    if (names.size() > kMaxListed) available += ", ...";
    throw file_error(path, header_line, 0,
                     "no column named " + show(wanted) + " in the header; available: " + available +
                         " (or give a 0-based index)");
}

// Checks one record against the layout and stores its values: features in x_row, the label
// (a number, or a class's local id in `classes`) in *y.
void store_record(const CsvLayout& layout, const CsvRecord& record, float* x_row, float* y, ClassIds& classes) {
    const std::string& path = layout.path;
    const size_t columns = layout.columns;
    if (record.fields.size() != columns) {
        const long column = record.fields.size() > columns ? record.fields[columns].column : record.end_column;
        const size_t count = record.fields.size();
        throw file_error(path, record.line, column,
                         "line " + std::to_string(record.line) + " has " + std::to_string(count) +
                             (count == 1 ? " field, " : " fields, ") + layout.first_row + " has " +
                             std::to_string(columns) + "; every row needs one value per column (quote values "
                             "that contain " + show(std::string_view(&layout.delimiter, 1)) + ")");
    }
    for (size_t i = 0; i < columns; ++i) {
        const CsvField& field = record.fields[i];
        const std::string& name = layout.names[i];
        const std::string_view shown = trim(field.text);
        float value = 0.0f;
        const NumberStatus status = parse_float(field.text, value);
        if (status == NumberStatus::Empty)
            throw file_error(path, field.line, field.column,
                             "empty value in column " + show(name) + "; fill it in or remove the row");
        if (i == layout.label) {
            // Labels are all numbers (regression targets or class indices) or all class
            // names; a mix is almost always a typo, so it is refused rather than guessed.
            const bool numeric = status != NumberStatus::NotANumber;
            if (numeric != layout.labels_numeric)
                throw file_error(path, field.line, field.column,
                                 "label " + show(shown) + " is " + (numeric ? "" : "not ") +
                                     "a number, but the first label (line " + std::to_string(layout.first_label_line) +
                                     ") is" + (numeric ? " not" : "") +
                                     "; labels must be all numbers or all class names");
            if (!numeric) {
                *y = classes.id(shown);
                continue;
            }
        } else if (status == NumberStatus::NotANumber) {
            throw file_error(path, field.line, field.column,
                             "value " + show(shown) + " in column " + show(name) +
                                 " is not a number; features must be numeric (encode categories as numbers "
                                 "first, or make this column the label)");
        }
        if (status == NumberStatus::OutOfRange)
            throw file_error(path, field.line, field.column,
                             "value " + show(shown) + " in column " + show(name) +
                                 " does not fit in a 32-bit float (largest is about 3.4e38); rescale the column");
        if (!layout.allow_nan && !std::isfinite(value))
            throw file_error(path, field.line, field.column,
                             "value " + show(shown) + " in column " + show(name) + " is " +
                                 (std::isnan(value) ? "NaN" : "infinite") +
                                 "; remove or fill in the row, or set allow_nan to keep it");
        if (i == layout.label)
            *y = value;
        else
            *x_row++ = value;
    }
}

[[noreturn]] void throw_changed(const std::string& path, long line) {
    throw file_error(path, line, 0, "the file changed while it was being read; read it again once nothing writes to it");
}

// Tokenizes a chunk the chunked parser gave up on: throws its first error or, when it has none
// (a value that underflows to 0, say), stores its rows where the chunk's rows go.
void tokenize_chunk(const CsvLayout& layout, CsvChunk& chunk, float* x, float* y) {
    const size_t width = layout.columns - 1;
    CsvTokenizer tokenizer(std::string_view(chunk.begin, static_cast<size_t>(chunk.end - chunk.begin)),
                           layout.delimiter, layout.path, chunk.first_line);
    CsvRecord record;
    int64_t row = chunk.first_row;
    while (tokenizer.next(record)) {
        if (row == chunk.first_row + chunk.rows) throw_changed(layout.path, record.line);
        store_record(layout, record, x + row * static_cast<int64_t>(width), y + row, chunk.classes);
        ++row;
    }
    if (row != chunk.first_row + chunk.rows) throw_changed(layout.path, chunk.first_line);
}

// Rows [first_row, first_row + rows) hold local class ids of `classes`.
struct ClassPart {
    const ClassIds* classes;
    int64_t first_row, rows;
};

// Class indices in sorted name order, as sklearn's LabelEncoder assigns them.
std::vector<std::string> number_classes(const std::vector<ClassPart>& parts, float* y) {
    std::vector<std::string> names;
    for (const ClassPart& part : parts) names.insert(names.end(), part.classes->names().begin(), part.classes->names().end());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (const ClassPart& part : parts) {
        std::vector<float> index;
        for (const std::string& name : part.classes->names())
            index.push_back(static_cast<float>(std::lower_bound(names.begin(), names.end(), name) - names.begin()));
        for (int64_t r = part.first_row; r < part.first_row + part.rows; ++r)
            y[r] = index[static_cast<size_t>(y[r])];
    }
    return names;
}

// The rows after the header, tokenized record by record: for files with quotes or lone '\r'.
LabeledData tokenize_rows(const CsvLayout& layout, std::string_view text, long first_line, const MappedFile* file) {
    const size_t width = layout.columns - 1;
    // Room for every row there can be, so x never reallocates to twice its size: one per line,
    // and no more than the text has room for (a row holds at least `width` delimiters).
    const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    const size_t most_rows = std::min(lines, text.size() / width + 1);
    std::vector<float> x, y;
    x.reserve(most_rows * width);
    y.reserve(most_rows);
    ClassIds classes;
    CsvTokenizer tokenizer(text, layout.delimiter, layout.path, first_line);
    CsvRecord record;
    size_t released = 0;
    while (tokenizer.next(record)) {
        x.resize(x.size() + width);
        y.push_back(0.0f);
        store_record(layout, record, x.data() + x.size() - width, &y.back(), classes);
        constexpr size_t kReleaseBytes = 8 << 20;
        if (file && tokenizer.position() - released > kReleaseBytes) {
            file->release(text.data() + released, text.data() + tokenizer.position());
            released = tokenizer.position();
        }
    }
    const int64_t rows = static_cast<int64_t>(y.size());
    LabeledData data;
    if (rows > 0 && !layout.labels_numeric) data.class_names = number_classes({{&classes, 0, rows}}, y.data());
    data.x = Tensor({rows, static_cast<int64_t>(width)}, std::move(x));
    data.y = Tensor({rows}, std::move(y));
    return data;
}

// The same rows parsed in chunks on all cores, straight into x (shared storage, never zeroed
// first) and y; false when the text needs the tokenizer.
bool parse_rows_in_chunks(const CsvLayout& layout, std::string_view text, long first_line, size_t chunk_bytes,
                          const MappedFile* file, LabeledData& data) {
    std::vector<CsvChunk> chunks;
    if (chunk_bytes == 0 || !csv_delimiter_splits_numbers(layout.delimiter) ||
        !plan_csv_chunks(text, first_line, layout.delimiter, chunk_bytes, file, chunks))
        return false;
    const int64_t rows = chunks.empty() ? 0 : chunks.back().first_row + chunks.back().rows;
    const int64_t width = static_cast<int64_t>(layout.columns - 1);
    std::shared_ptr<float[]> x(new float[static_cast<size_t>(std::max<int64_t>(rows * width, 1))]);
    std::vector<float> y(static_cast<size_t>(rows));
    parse_csv_chunks(layout, chunks, x.get(), y.data(), file);
    for (CsvChunk& chunk : chunks)
        if (!chunk.parsed) tokenize_chunk(layout, chunk, x.get(), y.data());
    if (rows > 0 && !layout.labels_numeric) {
        std::vector<ClassPart> parts;
        for (const CsvChunk& chunk : chunks) parts.push_back({&chunk.classes, chunk.first_row, chunk.rows});
        data.class_names = number_classes(parts, y.data());
    }
    data.x = Tensor({rows, width}, std::shared_ptr<const float>(x, x.get()));
    data.y = Tensor({rows}, std::move(y));
    return true;
}

constexpr size_t kChunkBytes = 2 << 20;  // ~10,000 rows of 20 features: small enough to balance two cores

LabeledData read_csv_text(std::string_view text, const std::string& path, const CsvOptions& options,
                          size_t chunk_bytes, const MappedFile* file) {
    const std::string delimiter = show(std::string_view(&options.delimiter, 1));
    constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
    if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());

    CsvTokenizer tokenizer(text, options.delimiter, path);
    CsvRecord first;
    if (!tokenizer.next(first))
        throw file_error(path, 1, 0, "the file is empty; a CSV needs a header row and at least one data row");
    CsvLayout layout;
    layout.path = path;
    layout.delimiter = options.delimiter;
    layout.allow_nan = options.allow_nan;
    layout.columns = first.fields.size();
    layout.first_row = options.has_header ? "the header" : "the first row";
    if (layout.columns < 2)
        throw file_error(path, first.line, 0,
                         layout.first_row + " has 1 column; a CSV needs feature columns and a label column "
                                            "(is the delimiter " + delimiter + " right?)");
    for (size_t i = 0; i < layout.columns; ++i)
        layout.names.push_back(options.has_header ? std::string(trim(first.fields[i].text)) : "column " + std::to_string(i));
    layout.label = find_label_column(layout.names, options.label_column, options.has_header, path, first.line);

    // The rows: everything after the header, or the whole text. The first of them decides
    // whether labels are numbers or class names.
    const size_t rows_start = options.has_header ? tokenizer.position() : 0;
    const long rows_line = options.has_header ? tokenizer.line() : 1;
    CsvRecord first_row;
    if (options.has_header && !tokenizer.next(first_row))
        throw file_error(path, first.line, 0,
                         "the file has a header but no data rows; add at least one row of values below it");
    const CsvRecord& first_data = options.has_header ? first_row : first;
    if (layout.label < first_data.fields.size()) {
        float value = 0.0f;
        layout.labels_numeric = parse_float(first_data.fields[layout.label].text, value) != NumberStatus::NotANumber;
        layout.first_label_line = first_data.fields[layout.label].line;
    }

    const std::string_view rows = text.substr(rows_start);
    LabeledData data;
    if (!parse_rows_in_chunks(layout, rows, rows_line, chunk_bytes, file, data))
        data = tokenize_rows(layout, rows, rows_line, file);
    for (size_t i = 0; i < layout.columns; ++i)
        if (i != layout.label) data.feature_names.push_back(layout.names[i]);
    return data;
}

}  // namespace

NumberStatus parse_float(std::string_view s, float& value) {
    s = trim(s);
    if (s.empty()) return NumberStatus::Empty;
    if (s.front() == '+' && s.size() > 1 && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data(), end, value);
    if (ec == std::errc::invalid_argument || ptr != end) return NumberStatus::NotANumber;
    if (ec == std::errc::result_out_of_range) {
        // Overflow is an error; underflow (e.g. 1e-50) rounds to zero or a subnormal, as
        // NumPy does. Parsing as double tells the two apart.
        double wide = 0.0;
        auto [wide_ptr, wide_ec] = std::from_chars(s.data(), end, wide);
        if (wide_ec != std::errc() || wide_ptr != end || !(std::fabs(wide) < 1.0)) return NumberStatus::OutOfRange;
        value = static_cast<float>(wide);
    }
    return NumberStatus::Ok;
}

float ClassIds::id(std::string_view name) {
    if (last_id_ >= 0 && name == last_name_) return static_cast<float>(last_id_);
    auto it = ids_.find(name);
    if (it == ids_.end()) {
        it = ids_.emplace(std::string(name), static_cast<int>(names_.size())).first;
        names_.emplace_back(name);
    }
    last_name_ = it->first;
    last_id_ = it->second;
    return static_cast<float>(last_id_);
}

LabeledData parse_csv(std::string_view text, const std::string& name, const CsvOptions& options, size_t chunk_bytes) {
    if (options.delimiter == '"' || is_line_end(options.delimiter))
        throw file_error(name, 0, 0,
                         "the delimiter " + show(std::string_view(&options.delimiter, 1)) +
                             " cannot be used; choose e.g. ',', ';' or tab");
    return read_csv_text(text, name, options, chunk_bytes, nullptr);
}

LabeledData read_csv(const std::string& path, const CsvOptions& options) {
    if (options.delimiter == '"' || is_line_end(options.delimiter))
        throw file_error(path, 0, 0,
                         "the delimiter " + show(std::string_view(&options.delimiter, 1)) +
                             " cannot be used; choose e.g. ',', ';' or tab");
    const std::shared_ptr<const MappedFile> file = MappedFile::open(path, "the CSV file");
    if (file) return read_csv_text(file->bytes(), path, options, kChunkBytes, file.get());
    const std::string text = read_whole_file(path);  // not mappable: empty, a pipe, a directory
    return read_csv_text(text, path, options, kChunkBytes, nullptr);
}

}  // namespace onefit
