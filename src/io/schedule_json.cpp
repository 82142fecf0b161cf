#include "io/schedule_json.hpp"

#include <variant>

#include "core/overloaded.hpp"

namespace onefit::io {

nlohmann::ordered_json schedule_json(const LearningRateSchedule& schedule) {
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    for (const auto& [key, value] : schedule_arguments(schedule))
        std::visit(Overloaded{[&, &key = key](std::monostate) { config[key] = nullptr; },
                              [&, &key = key](const auto& v) { config[key] = v; }},
                   value);
    return {{"class_name", schedule_name(schedule.kind)}, {"config", config}};
}

LearningRateSchedule read_schedule(const JsonFile& f, const json& schedule, const std::string& at) {
    const std::string class_name = f.string(schedule, "class_name", at + ".class_name");
    const json& config = f.get(schedule, "config", at + ".config");
    if (!config.is_object()) throw f.error(at + ".config", "must be an object");
    ScheduleArguments arguments;
    for (const auto& [key, value] : config.items()) {
        ScheduleValue v;
        if (value.is_boolean()) v = value.get<bool>();
        else if (value.is_number_integer()) v = value.get<int64_t>();
        else if (value.is_number()) v = value.get<double>();
        else if (value.is_array()) {
            std::vector<double> list;
            for (const json& e : value) {
                if (!e.is_number()) throw f.error(at + ".config." + key, "must be a list of numbers");
                list.push_back(e.get<double>());
            }
            v = list;
        } else if (!value.is_null()) {
            if (key == "name") continue;
            throw f.error(at + ".config." + key, "must be a number, true/false, null or a list of numbers");
        }
        arguments.emplace_back(key, v);
    }
    return f.named(at, [&] { return make_schedule(class_name, arguments); });
}

}  // namespace onefit::io
