// read_csv's chunked parser: the rows after the header, cut at line starts into chunks of a
// couple of MB, counted in a first parallel pass (so every chunk knows its first line and row),
// then parsed in a second, each value by std::from_chars (libstdc++ 12 implements it with the
// fast_float algorithm: ~380 MB/s of digits per core here) straight into x and y. It accepts
// exactly what the tokenizer in src/data/csv.cpp accepts, with the same values; at anything
// else it gives up on the chunk, and the tokenizer parses that chunk again and reports it.
// fuzz/fuzz_csv.cpp checks that both agree on every input.
#include "data/csv_chunks.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>

#include "core/thread_pool.hpp"
#include "io/mapped_file.hpp"

namespace onefit {
namespace {

// Blanks around values: spaces and tabs, unless one of them is the delimiter (as the tokenizer).
bool is_blank(char c, char delimiter) { return (c == ' ' || c == '\t') && c != delimiter; }

const char* skip_blanks(const char* p, const char* end, char delimiter) {
    while (p < end && is_blank(*p, delimiter)) ++p;
    return p;
}

const char* find(const char* p, const char* end, char c) {
    return p < end ? static_cast<const char*>(std::memchr(p, c, static_cast<size_t>(end - p))) : nullptr;
}

// Clinger's fast path, the one fast_float itself takes first: a decimal [-]digits[.digits]
// without exponent whose digits m fit in float's 24-bit significand and with at most 10 of them
// after the point is m / 10^k, two exact floats, so one IEEE division rounds it correctly: the
// very float from_chars returns. Most CSV numbers ("%.6f" of a feature) take it, at a third of
// from_chars' time (which re-scans the digits and checks more cases). False (s unmoved): let
// from_chars read it.
bool short_decimal_at(const char*& s, const char* end, float& value) {
    static constexpr float kPowers[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
    const char* q = s;
    const bool negative = q < end && *q == '-';
    q += negative;
    uint64_t digits = 0;
    int count = 0, after_point = 0;
    const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    for (; q < end && is_digit(*q); ++q, ++count) digits = digits * 10 + static_cast<unsigned>(*q - '0');
    if (q < end && *q == '.')
        for (++q; q < end && is_digit(*q); ++q, ++count, ++after_point) digits = digits * 10 + static_cast<unsigned>(*q - '0');
    if (count == 0 || count > 19 || digits > (uint64_t{1} << 24) || after_point > 10) return false;
    if (q < end && (*q == 'e' || *q == 'E')) return false;  // an exponent
    const float magnitude = static_cast<float>(digits) / kPowers[after_point];
    value = negative ? -magnitude : magnitude;
    s = q;
    return true;
}

// A number at p, as parse_float reads a field (a leading '+' allowed); moves p past it. False
// when there is none or it is out of float's range (the tokenizer tells underflow from
// overflow), or not finite when that is refused.
bool number_at(const char*& p, const char* end, float& value, bool allow_nan) {
    const char* s = p;
    if (s + 1 < end && *s == '+' && s[1] != '-' && s[1] != '+') ++s;
    if (short_decimal_at(s, end, value)) {
        p = s;
        return true;
    }
    const auto [next, error] = std::from_chars(s, end, value);
    if (error != std::errc() || (!allow_nan && !std::isfinite(value))) return false;
    p = next;
    return true;
}

// One chunk into its rows of x and y; false at anything the tokenizer must look at.
bool parse_chunk(const CsvLayout& layout, CsvChunk& chunk, float* x, float* y) {
    const char delimiter = layout.delimiter;
    const char* const end = chunk.end;
    const int64_t width = static_cast<int64_t>(layout.columns - 1);
    const int64_t last_row = chunk.first_row + chunk.rows;
    int64_t row = chunk.first_row;
    for (const char* p = chunk.begin; p < end;) {
        const char* q = skip_blanks(p, end, delimiter);
        if (q == end) break;
        if (*q == '\n' || *q == '\r') {  // a blank line ("\r" is always "\r\n" here)
            const char* line_end = find(q, end, '\n');
            if (!line_end) break;
            p = line_end + 1;
            continue;
        }
        if (row == last_row) return false;
        float* x_row = x + row * width;
        for (size_t column = 0; column < layout.columns; ++column) {
            if (column > 0) {
                if (q == end || *q != delimiter) return false;
                q = skip_blanks(q + 1, end, delimiter);
            }
            if (column != layout.label) {
                if (!number_at(q, end, *x_row++, layout.allow_nan)) return false;
            } else if (layout.labels_numeric) {
                if (!number_at(q, end, y[row], layout.allow_nan)) return false;
            } else {
                const char* field_end = q;
                while (field_end < end && *field_end != delimiter && *field_end != '\n' && *field_end != '\r') ++field_end;
                const char* name_end = field_end;
                while (name_end > q && (name_end[-1] == ' ' || name_end[-1] == '\t')) --name_end;
                const std::string_view name(q, static_cast<size_t>(name_end - q));
                float number = 0.0f;
                if (name.empty() || parse_float(name, number) != NumberStatus::NotANumber) return false;
                y[row] = chunk.classes.id(name);
                q = field_end;
            }
            q = skip_blanks(q, end, delimiter);
        }
        if (q < end) {  // the line must end here: \n or \r\n
            if (*q == '\r') ++q;
            if (q == end || *q != '\n') return false;
            ++q;
        }
        p = q;
        ++row;
    }
    return row == last_row;
}

}  // namespace

bool csv_delimiter_splits_numbers(char delimiter) {
    const bool alphanumeric = (delimiter >= '0' && delimiter <= '9') || (delimiter >= 'a' && delimiter <= 'z') ||
                              (delimiter >= 'A' && delimiter <= 'Z');
    return !alphanumeric && std::strchr(".+-_()", delimiter) == nullptr;
}

bool plan_csv_chunks(std::string_view text, long first_line, char delimiter, size_t chunk_bytes, const MappedFile* file,
                     std::vector<CsvChunk>& chunks) {
    chunks.clear();
    const char* const begin = text.data();
    const char* const end = begin + text.size();
    if (text.empty()) return true;
    std::vector<const char*> starts{begin};
    for (size_t at = chunk_bytes; at < text.size(); at += chunk_bytes) {
        if (begin + at < starts.back()) continue;  // a line longer than a chunk
        const char* line_end = find(begin + at, end, '\n');
        if (!line_end || line_end + 1 == end) break;
        starts.push_back(line_end + 1);
    }
    chunks = std::vector<CsvChunk>(starts.size());
    std::vector<long> line_ends(starts.size());
    std::atomic<bool> plain{true};
    ThreadPool::instance().parallel_for(static_cast<int64_t>(starts.size()), [&](int64_t k) {
        CsvChunk& chunk = chunks[static_cast<size_t>(k)];
        chunk.begin = starts[static_cast<size_t>(k)];
        chunk.end = static_cast<size_t>(k) + 1 < starts.size() ? starts[static_cast<size_t>(k) + 1] : end;
        // Quoted fields may hold delimiters and line ends; a lone '\r' ends a line too.
        if (find(chunk.begin, chunk.end, '"')) plain = false;
        for (const char* r = find(chunk.begin, chunk.end, '\r'); r && plain; r = find(r + 1, chunk.end, '\r'))
            if (r + 1 == chunk.end || r[1] != '\n') plain = false;
        if (!plain) return;
        int64_t rows = 0;
        long lines = 0;
        for (const char* p = chunk.begin; p < chunk.end;) {
            const char* q = skip_blanks(p, chunk.end, delimiter);
            rows += q < chunk.end && *q != '\n' && *q != '\r';
            const char* line_end = find(q, chunk.end, '\n');
            if (!line_end) break;  // the last line, without a line end
            ++lines;
            p = line_end + 1;
        }
        chunk.rows = rows;
        line_ends[static_cast<size_t>(k)] = lines;
        if (file) file->release(chunk.begin, chunk.end);
    });
    if (!plain) return false;
    int64_t row = 0;
    long line = first_line;
    for (size_t k = 0; k < chunks.size(); ++k) {
        chunks[k].first_row = row;
        chunks[k].first_line = line;
        row += chunks[k].rows;
        line += line_ends[k];
    }
    return true;
}

void parse_csv_chunks(const CsvLayout& layout, std::vector<CsvChunk>& chunks, float* x, float* y,
                      const MappedFile* file) {
    ThreadPool::instance().parallel_for(static_cast<int64_t>(chunks.size()), [&](int64_t k) {
        CsvChunk& chunk = chunks[static_cast<size_t>(k)];
        try {
            chunk.parsed = parse_chunk(layout, chunk, x, y);
        } catch (...) {  // a class name that does not fit in memory: the tokenizer will say so
            chunk.parsed = false;
        }
        if (file) file->release(chunk.begin, chunk.end);
    });
}

}  // namespace onefit
