// The pieces of Keras 3's serialisation (keras.saving.serialize_keras_object) that the model's and
// the compile config's writers share.
#pragma once
#include <cctype>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

namespace onefit::io {

// {"module", "class_name", "config", "registered_name"}: how Keras writes one object.
inline nlohmann::ordered_json keras_object(const char* module, const std::string& class_name, nlohmann::ordered_json config) {
    return {{"module", module}, {"class_name", class_name}, {"config", std::move(config)}, {"registered_name", nullptr}};
}

// "GlobalAveragePooling2D" -> "global_average_pooling2d", "ReLU" -> "re_lu": Keras's to_snake_case,
// its three substitutions as it writes them (keras/src/utils/naming.py).
inline std::string snake_case(const std::string& name) {
    std::string out = std::regex_replace(name, std::regex(R"(\W+)"), "");
    out = std::regex_replace(out, std::regex("(.)([A-Z][a-z]+)"), "$1_$2");
    out = std::regex_replace(out, std::regex("([a-z])([A-Z])"), "$1_$2");
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace onefit::io
