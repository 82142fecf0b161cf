// read_csv: a header row, numeric feature columns and one label column.
// The whole file is read into memory, then tokenized record by record (RFC 4180 quoting,
// \n, \r\n or \r line ends). Every problem is reported as FILE:LINE:COLUMN with a fix;
// columns are 1-based byte offsets into the line, as compilers report them.
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
    CsvTokenizer(std::string_view text, char delimiter, const std::string& path)
        : text_(text), delimiter_(delimiter), path_(path) {}

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
    long line_ = 1;
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

enum class NumberStatus { Ok, Empty, NotANumber, OutOfRange };

// Parses a whole field (surrounding blanks allowed) as a float. Accepts what
// std::from_chars accepts (including nan and inf) plus a leading '+'.
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

}  // namespace

LabeledData read_csv(const std::string& path, const CsvOptions& options) {
    const std::string delimiter = show(std::string_view(&options.delimiter, 1));
    if (options.delimiter == '"' || is_line_end(options.delimiter))
        throw file_error(path, 0, 0, "the delimiter " + delimiter + " cannot be used; choose e.g. ',', ';' or tab");
    const std::string text = read_whole_file(path);
    std::string_view body = text;
    constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
    if (body.substr(0, kUtf8Bom.size()) == kUtf8Bom) body.remove_prefix(kUtf8Bom.size());

    CsvTokenizer tokenizer(body, options.delimiter, path);
    CsvRecord first;
    if (!tokenizer.next(first))
        throw file_error(path, 1, 0, "the file is empty; a CSV needs a header row and at least one data row");
    const size_t columns = first.fields.size();
    const std::string first_row = options.has_header ? "the header" : "the first row";
    if (columns < 2)
        throw file_error(path, first.line, 0,
                         first_row + " has 1 column; a CSV needs feature columns and a label column "
                                     "(is the delimiter " + delimiter + " right?)");
    std::vector<std::string> names;
    for (size_t i = 0; i < columns; ++i)
        names.push_back(options.has_header ? std::string(trim(first.fields[i].text)) : "column " + std::to_string(i));
    const size_t label = find_label_column(names, options.label_column, options.has_header, path, first.line);

    LabeledData data;
    for (size_t i = 0; i < columns; ++i)
        if (i != label) data.feature_names.push_back(names[i]);
    std::vector<float> x;
    std::vector<float> numeric_labels;
    std::vector<std::string> text_labels;
    bool labels_numeric = false;
    long first_label_line = 0;
    int64_t rows = 0;

    auto add_row = [&](const CsvRecord& record) {
        if (record.fields.size() != columns) {
            const long column = record.fields.size() > columns ? record.fields[columns].column : record.end_column;
            const size_t count = record.fields.size();
            throw file_error(path, record.line, column,
                             "line " + std::to_string(record.line) + " has " + std::to_string(count) +
                                 (count == 1 ? " field, " : " fields, ") + first_row + " has " +
                                 std::to_string(columns) + "; every row needs one value per column (quote values "
                                 "that contain " + delimiter + ")");
        }
        for (size_t i = 0; i < columns; ++i) {
            const CsvField& field = record.fields[i];
            const std::string_view shown = trim(field.text);
            float value = 0.0f;
            const NumberStatus status = parse_float(field.text, value);
            if (status == NumberStatus::Empty)
                throw file_error(path, field.line, field.column,
                                 "empty value in column " + show(names[i]) + "; fill it in or remove the row");
            if (i == label) {
                // Labels are all numbers (regression targets or class indices) or all class
                // names; a mix is almost always a typo, so it is refused rather than guessed.
                const bool numeric = status != NumberStatus::NotANumber;
                if (rows == 0) {
                    labels_numeric = numeric;
                    first_label_line = field.line;
                } else if (numeric != labels_numeric) {
                    throw file_error(path, field.line, field.column,
                                     "label " + show(shown) + " is " + (numeric ? "" : "not ") +
                                         "a number, but the first label (line " + std::to_string(first_label_line) +
                                         ") is" + (numeric ? " not" : "") +
                                         "; labels must be all numbers or all class names");
                }
                if (!numeric) {
                    text_labels.emplace_back(shown);
                    continue;
                }
            } else if (status == NumberStatus::NotANumber) {
                throw file_error(path, field.line, field.column,
                                 "value " + show(shown) + " in column " + show(names[i]) +
                                     " is not a number; features must be numeric (encode categories as numbers "
                                     "first, or make this column the label)");
            }
            if (status == NumberStatus::OutOfRange)
                throw file_error(path, field.line, field.column,
                                 "value " + show(shown) + " in column " + show(names[i]) +
                                     " does not fit in a 32-bit float (largest is about 3.4e38); rescale the column");
            if (!options.allow_nan && !std::isfinite(value))
                throw file_error(path, field.line, field.column,
                                 "value " + show(shown) + " in column " + show(names[i]) + " is " +
                                     (std::isnan(value) ? "NaN" : "infinite") +
                                     "; remove or fill in the row, or set allow_nan to keep it");
            (i == label ? numeric_labels : x).push_back(value);
        }
        ++rows;
    };

    if (!options.has_header) add_row(first);
    CsvRecord record;
    while (tokenizer.next(record)) add_row(record);
    if (rows == 0)
        throw file_error(path, first.line, 0,
                         "the file has a header but no data rows; add at least one row of values below it");

    data.x = Tensor({rows, static_cast<int64_t>(columns - 1)}, std::move(x));
    if (labels_numeric) {
        data.y = Tensor({rows}, std::move(numeric_labels));
        return data;
    }
    // Class indices in sorted name order, as sklearn's LabelEncoder assigns them.
    data.class_names = text_labels;
    std::sort(data.class_names.begin(), data.class_names.end());
    data.class_names.erase(std::unique(data.class_names.begin(), data.class_names.end()), data.class_names.end());
    data.y = Tensor({rows});
    for (int64_t r = 0; r < rows; ++r) {
        const std::string& name = text_labels[static_cast<size_t>(r)];
        const auto it = std::lower_bound(data.class_names.begin(), data.class_names.end(), name);
        data.y[r] = static_cast<float>(it - data.class_names.begin());
    }
    return data;
}

}  // namespace onefit
