// A layer as config.json holds it: {"type": "conv2d", "name": ..., then the kind's arguments
// under Keras's names}. Every field is written; reading checks each and names file and key.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "io/json_file.hpp"
#include "onefit/layers.hpp"

namespace onefit::io {

// Layer i of a model whose layers have these names (its "inputs", a Functional layer's, by name).
nlohmann::ordered_json layer_json(const Layer& layer, const std::vector<std::string>& names, size_t i);
// {"shares": name, "inputs": ...}: a shared layer called again, the earlier layer of that name.
Layer read_layer(const JsonFile& f, const nlohmann::json& spec, const std::string& key,
                 const std::vector<Layer>& earlier);
// Its "inputs" (absent: the previous layer) into layer.inputs, once every layer's name is known.
void read_layer_inputs(const JsonFile& f, const nlohmann::json& spec, const std::string& key,
                       const std::vector<std::string>& names, size_t i, Layer& layer);

// A float as the shortest decimal that reads back as the same float (0.1f -> 0.1, not
// 0.10000000149011612), so config.json stays readable and loads bit-exact.
double shortest(float v);

}  // namespace onefit::io
