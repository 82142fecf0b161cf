#include "io/layer_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <variant>

#include "core/overloaded.hpp"
#include "nn/layer_kinds.hpp"

namespace onefit::io {

using nlohmann::ordered_json;

double shortest(float v) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;
    return std::strtod(std::string(text, end).c_str(), nullptr);
}

ordered_json layer_json(const Layer& layer, const std::vector<std::string>& names, size_t i) {
    if (layer.shares >= 0) {  // a shared layer called again: which layer, on which inputs
        ordered_json j = {{"shares", names[static_cast<size_t>(layer.shares)]}};
        if (!layer.inputs.empty()) j["inputs"] = layer_input_names(layer, names);
        return j;
    }
    ordered_json j = {{"type", nn::layer_kind(layer.kind).type}, {"name", names[i]}};
    if (!layer.inputs.empty()) j["inputs"] = layer_input_names(layer, names);
    for (const nn::LayerAttribute& a : nn::layer_kind(layer.kind).attributes()) {
        ordered_json& v = j[a.name];
        std::visit(Overloaded{[&](float Layer::*f) {
                                  if (std::isfinite(layer.*f)) v = shortest(layer.*f);
                                  else v = nullptr;  // None (ReLU's max_value)
                              },
                              [&](Padding Layer::*f) { v = padding_name(layer.*f); },
                              [&](Activation Layer::*f) { v = activation_name(layer.*f); },
                              [&](Regularizer Layer::*f) {
                                  if ((layer.*f).active()) v = regularizer_text(layer.*f);
                                  else v = nullptr;
                              },
                              [&](std::array<int64_t, 2> Layer::*f) { v = {(layer.*f)[0], (layer.*f)[1]}; },
                              [&](auto f) { v = layer.*f; }},
                   a.field);
    }
    return j;
}

Layer read_layer(const JsonFile& f, const json& spec, const std::string& key, const std::vector<Layer>& earlier) {
    if (spec.is_object() && spec.contains("shares")) {
        const std::string name = f.string(spec, "shares", key + ".shares");
        const std::vector<std::string> names = default_layer_names(earlier);
        for (size_t j = 0; j < earlier.size(); ++j)
            if (names[j] == name && earlier[j].shares < 0) return shared_call(earlier, j);
        throw f.error(key + ".shares", "is '" + printable(name) + "', which names no earlier layer");
    }
    const std::string type = f.string(spec, "type", key + ".type");
    Layer::Kind kind;
    if (!nn::layer_kind_from_type(type, kind))
        throw f.error(key + ".type", "is '" + printable(type) + "'; known: " + nn::known_layer_types());
    Layer layer = nn::default_layer(kind);
    layer.name = f.string(spec, "name", key + ".name");
    // Fields are read (and type-checked) first; the kind then checks their values.
    for (const nn::LayerAttribute& a : nn::layer_kind(layer.kind).attributes()) {
        const std::string at = key + "." + a.name;
        std::visit(Overloaded{[&](int64_t Layer::*v) { layer.*v = f.integer(spec, a.name, at, a.min); },
                              [&](float Layer::*v) {
                                  // null is None where that is the default (infinite: ReLU's max_value)
                                  if (!f.get(spec, a.name, at).is_null() || std::isfinite(layer.*v))
                                      layer.*v = f.number(spec, a.name, at);
                              },
                              [&](bool Layer::*v) { layer.*v = f.boolean(spec, a.name, at); },
                              [&](std::string Layer::*v) { layer.*v = f.string(spec, a.name, at); },
                              [&](std::array<int64_t, 2> Layer::*v) {
                                  const std::vector<int64_t> pair = f.integers(spec, a.name, at, 2, a.min);
                                  layer.*v = {pair[0], pair[1]};
                              },
                              [&](std::vector<int64_t> Layer::*v) { layer.*v = f.integers(spec, a.name, at, 0, a.min); },
                              [&](Padding Layer::*v) {
                                  const std::string text = f.string(spec, a.name, at);
                                  layer.*v = f.named(at, [&] { return padding_from_name(text); });
                              },
                              [&](Activation Layer::*v) {
                                  const std::string text = f.string(spec, a.name, at);
                                  layer.*v = f.named(at, [&] { return activation_from_name(text); });
                              },
                              [&](Regularizer Layer::*v) {  // came later: absent or null is none
                                  if (!spec.contains(a.name) || spec[a.name].is_null()) return;
                                  const std::string text = f.string(spec, a.name, at);
                                  layer.*v = f.named(at, [&] { return regularizer_from_text(text); });
                              }},
                   a.field);
    }
    try {
        nn::layer_kind(layer.kind).check(layer);
    } catch (const Error& e) {  // a check's message starts with the field it is about: name its key
        const std::string what = e.what();
        for (const nn::LayerAttribute& a : nn::layer_kind(layer.kind).attributes())
            if (what.rfind(std::string(a.name) + " ", 0) == 0) throw f.error(key + "." + a.name, what);
        throw f.error(key, what);
    }
    return layer;
}

void read_layer_inputs(const JsonFile& f, const json& spec, const std::string& key, const std::vector<std::string>& names,
                       size_t i, Layer& layer) {
    if (!spec.contains("inputs")) return;  // (a chain's link)
    const json& inputs = spec["inputs"];
    std::vector<std::string> given;
    if (!inputs.is_array() || inputs.empty()) throw f.error(key + ".inputs", "must be a non-empty array of layer names");
    for (size_t k = 0; k < inputs.size(); ++k) {
        if (!inputs[k].is_string()) throw f.error(key + ".inputs[" + std::to_string(k) + "]", "must be a layer's name");
        given.push_back(inputs[k].get<std::string>());
    }
    layer.inputs = f.named(key + ".inputs", [&] { return layer_inputs_from_names(given, names, i); });
}

}  // namespace onefit::io
