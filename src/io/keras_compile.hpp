// The compile config of Keras 3's config.json (loss, optimizer and metrics, each a Keras object or
// name), both ways. Fields onefit cannot hold are refused naming the file and the field.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_file.hpp"
#include "onefit/losses.hpp"
#include "onefit/optimizers.hpp"

namespace onefit {
struct TrainingProgram;
}

namespace onefit::io {

struct KerasCompile {
    Loss loss;
    Optimizer optimizer;
    std::vector<std::string> metrics;  // onefit's names ("accuracy", "pr=pr_auc", "f1_score(macro)")
};

// "compile_config" for a compiled program: Keras's defaults where onefit's values are them.
nlohmann::ordered_json keras_compile_json(const TrainingProgram& program);

// The compile config `c` (the file's "compile_config").
KerasCompile read_keras_compile(const JsonFile& f, const nlohmann::json& c);

// The slot indices of onefit's optimizer (nn::optimizer_slot_count of them: the program's
// optimizer_slots, slot after slot) grouped as Keras makes its optimizer's variables in
// model.weights.h5: each group's slots interleaved per variable, the groups one after another.
std::vector<std::vector<int>> keras_slot_groups(const Optimizer& o);

}  // namespace onefit::io
