#include "onefit/error.hpp"

namespace onefit {

Error file_error(const std::string& file, long line, long column, const std::string& message) {
    std::string where = file;
    for (long part : {line, column}) {
        if (part <= 0) break;
        where.push_back(':');
        where.append(std::to_string(part));
    }
    where.append(": ");
    where.append(message);
    return Error(where);
}

}  // namespace onefit
