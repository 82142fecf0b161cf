// The parts of read_csv shared by its two parsers: the record tokenizer (src/data/csv.cpp),
// which handles everything RFC 4180 allows and reports every error, and the chunked parser
// (src/data/csv_chunks.cpp), which parses plain numeric lines on all cores straight into the
// output and hands any chunk it cannot parse back to the tokenizer.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace onefit {

class MappedFile;

enum class NumberStatus { Ok, Empty, NotANumber, OutOfRange };

// Parses a whole field (surrounding blanks allowed) as a float. Accepts what
// std::from_chars accepts (including nan and inf) plus a leading '+'.
NumberStatus parse_float(std::string_view s, float& value);

// What the header (or first row) and the first data row settled about the file.
struct CsvLayout {
    std::string path;
    char delimiter = ',';
    bool allow_nan = false;
    size_t columns = 0;  // label included
    size_t label = 0;    // index of the label column
    std::vector<std::string> names;
    std::string first_row;          // "the header" or "the first row", for messages
    bool labels_numeric = true;     // decided by the first data row
    long first_label_line = 0;
};

// Class names met in one part of the file, each given a local id in order of first appearance;
// read_csv maps the ids to indices in sorted name order once every part is read.
class ClassIds {
public:
    float id(std::string_view name);
    const std::vector<std::string>& names() const { return names_; }

private:
    std::map<std::string, int, std::less<>> ids_;
    std::vector<std::string> names_;
    std::string_view last_name_;  // a key of ids_ (stable), most labels repeat the last one
    int last_id_ = -1;
};

// One stretch of whole lines, planned before any value is parsed so that its rows land in
// their place in x and y.
struct CsvChunk {
    const char* begin = nullptr;
    const char* end = nullptr;
    long first_line = 0;     // line number of its first line
    int64_t first_row = 0;   // index of its first row in x and y
    int64_t rows = 0;        // non-blank lines
    bool parsed = false;     // false: the tokenizer parses it again (and reports what is wrong)
    ClassIds classes;
};

// Splits `text` (starting at line `first_line`) into chunks of about `chunk_bytes` at line
// starts and counts their rows, in parallel. False when the text needs the tokenizer: it holds
// a quote (quoted fields may span lines) or a lone '\r' line end.
bool plan_csv_chunks(std::string_view text, long first_line, char delimiter, size_t chunk_bytes, const MappedFile* file,
                     std::vector<CsvChunk>& chunks);

// Parses every chunk into x (rows x (columns - 1)) and y (rows), in parallel. Chunks with
// anything unusual (an error, a value out of float's range) are left with parsed = false.
void parse_csv_chunks(const CsvLayout& layout, std::vector<CsvChunk>& chunks, float* x, float* y,
                      const MappedFile* file);

// Whether the chunked parser can split fields with this delimiter: not a character a number
// can contain, so from_chars always stops at it.
bool csv_delimiter_splits_numbers(char delimiter);

}  // namespace onefit
