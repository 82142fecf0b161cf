// Errors with context: what was being done, where (file/line/field), what to do instead.
// Thrown up to one catch at the CLI boundary, which prints what() once and exits 2.
#pragma once
#include <stdexcept>
#include <string>

namespace onefit {

// A problem with the user's input (data file, config, flags, model definition).
// The message is complete and printable as one line.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// "FILE:LINE:COLUMN: message" (line/column omitted when 0).
Error file_error(const std::string& file, long line, long column, const std::string& message);

}  // namespace onefit
