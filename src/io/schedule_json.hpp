// A learning-rate schedule as Keras serialises one ({"class_name": "ExponentialDecay", "config":
// {...}}), in onefit's config.json and in a .keras file's optimizer alike.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "io/json_file.hpp"
#include "onefit/schedules.hpp"

namespace onefit::io {

nlohmann::ordered_json schedule_json(const LearningRateSchedule& schedule);
// The schedule at `schedule` (key `at` in errors); Keras's extra "module", "registered_name" and
// the config's "name" are allowed.
LearningRateSchedule read_schedule(const JsonFile& f, const json& schedule, const std::string& at);

}  // namespace onefit::io
