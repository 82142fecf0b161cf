// Layers from their kind's declaration (nn/layer_kinds.hpp's LayerAttribute table): make_layer
// takes Keras's argument names and values, layer_arguments gives them back. The config reader,
// the CLI's --layers and the Python binding all build layers here, so a kind declared in its op
// file reaches every surface without code of its own.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <set>

#include "core/overloaded.hpp"
#include "nn/layer_kinds.hpp"
#include "onefit/error.hpp"
#include "onefit/layers.hpp"

namespace onefit {
namespace {

// No layer argument needs more (a million units is already 4 MB per sample and layer).
constexpr int64_t kLargest = int64_t{1} << 30;

std::string value_kind(const LayerValue& v) {
    constexpr const char* names[] = {"None", "a boolean", "an integer", "a number", "a string", "a list"};
    return names[v.index()];
}

std::string quoted(const LayerValue& v) {
    if (const auto* s = std::get_if<std::string>(&v)) return " '" + *s + "'";
    if (const auto* i = std::get_if<int64_t>(&v)) return " " + std::to_string(*i);
    return "";
}

// `at`: the argument's name, with the index of an entry of a list ("kernel_size[1]").
int64_t integer(const LayerValue& v, const nn::LayerAttribute& a, const std::string& at) {
    const auto* i = std::get_if<int64_t>(&v);
    if (!i) throw Error(at + " must be an integer, not " + value_kind(v) + quoted(v));
    if (*i < a.min) throw Error(at + " must be at least " + std::to_string(a.min) + ", got " + std::to_string(*i));
    if (*i > kLargest) throw Error(at + " must be at most " + std::to_string(kLargest) + ", got " + std::to_string(*i));
    return *i;
}

int64_t integer(const LayerValue& v, const nn::LayerAttribute& a) { return integer(v, a, a.name); }

std::vector<int64_t> integers(const LayerValue& v, const nn::LayerAttribute& a, size_t count) {
    const auto* list = std::get_if<std::vector<int64_t>>(&v);
    if (!list) {
        if (count == 2 && std::holds_alternative<int64_t>(v)) return {integer(v, a), integer(v, a)};  // a square
        throw Error(std::string(a.name) + " must be " + (count == 2 ? "an integer or a pair of them" : "a list of integers") +
                    ", not " + value_kind(v) + quoted(v));
    }
    if (count && list->size() != count)
        throw Error(std::string(a.name) + " must be a pair of integers, got " + std::to_string(list->size()) + " of them");
    for (size_t i = 0; i < list->size(); ++i) integer((*list)[i], a, std::string(a.name) + "[" + std::to_string(i) + "]");
    return *list;
}

std::string text(const LayerValue& v, const nn::LayerAttribute& a) {
    const auto* s = std::get_if<std::string>(&v);
    if (!s) throw Error(std::string(a.name) + " must be a string, not " + value_kind(v) + quoted(v));
    return *s;
}

// Where a library function names the value but not the argument ("unknown activation 'x'").
template <class F>
auto naming(const nn::LayerAttribute& a, F f) {
    try {
        return f();
    } catch (const Error& e) {
        throw Error(std::string(a.name) + ": " + e.what());
    }
}

void set(Layer& layer, const nn::LayerAttribute& a, const LayerValue& v) {
    std::visit(Overloaded{[&](int64_t Layer::*f) {
                              // Keras's config keeps a 1-D layer's sizes as 1-tuples: kernel_size [3].
                              const auto* list = std::get_if<std::vector<int64_t>>(&v);
                              layer.*f = list && list->size() == 1 ? integer((*list)[0], a) : integer(v, a);
                          },
                          [&](float Layer::*f) {
                              if (const auto* d = std::get_if<double>(&v)) layer.*f = static_cast<float>(*d);
                              else if (const auto* i = std::get_if<int64_t>(&v)) layer.*f = static_cast<float>(*i);
                              else throw Error(std::string(a.name) + " must be a number, not " + value_kind(v) + quoted(v));
                          },
                          [&](bool Layer::*f) {
                              const auto* b = std::get_if<bool>(&v);
                              if (!b) throw Error(std::string(a.name) + " must be true or false, not " + value_kind(v) + quoted(v));
                              layer.*f = *b;
                          },
                          [&](std::string Layer::*f) { layer.*f = text(v, a); },
                          [&](std::array<int64_t, 2> Layer::*f) {
                              const std::vector<int64_t> pair = integers(v, a, 2);
                              layer.*f = {pair[0], pair[1]};
                          },
                          [&](std::vector<int64_t> Layer::*f) { layer.*f = integers(v, a, 0); },
                          [&](Padding Layer::*f) { layer.*f = naming(a, [&] { return padding_from_name(text(v, a)); }); },
                          [&](Activation Layer::*f) { layer.*f = naming(a, [&] { return activation_from_name(text(v, a)); }); },
                          [&](Regularizer Layer::*f) { layer.*f = naming(a, [&] { return regularizer_from_text(text(v, a)); }); }},
               a.field);
}

LayerValue get(const Layer& layer, const nn::LayerAttribute& a) {
    return std::visit(Overloaded{[&](float Layer::*f) -> LayerValue {  // infinite: None (ReLU's max_value)
                                     if (!std::isfinite(layer.*f)) return std::monostate{};
                                     return static_cast<double>(layer.*f);
                                 },
                                 [&](Padding Layer::*f) -> LayerValue { return padding_name(layer.*f); },
                                 [&](Activation Layer::*f) -> LayerValue { return activation_name(layer.*f); },
                                 [&](Regularizer Layer::*f) -> LayerValue {  // none: None
                                     if (!(layer.*f).active()) return std::monostate{};
                                     return regularizer_text(layer.*f);
                                 },
                                 [&](std::array<int64_t, 2> Layer::*f) -> LayerValue {
                                     return std::vector<int64_t>{(layer.*f)[0], (layer.*f)[1]};
                                 },
                                 [&](auto f) -> LayerValue { return layer.*f; }},
                      a.field);
}

const nn::LayerAttribute* find(const std::vector<nn::LayerAttribute>& attributes, const std::string& name) {
    for (const nn::LayerAttribute& a : attributes)
        if (name == a.name) return &a;
    return nullptr;
}

std::string argument_list(const nn::LayerKindInfo& info, const std::vector<nn::LayerAttribute>& attributes) {
    if (attributes.empty()) return std::string(info.keras_class) + " takes no arguments but name";
    std::string list;
    for (const nn::LayerAttribute& a : attributes) list += (list.empty() ? "" : ", ") + std::string(a.name);
    return std::string(info.keras_class) + " takes " + list;
}

// Which given argument a message is about: every message about one starts with its name (an
// entry of a list with its index), or says it is unknown.
std::string argument_about(const std::string& message, const LayerArguments& arguments) {
    for (const auto& [key, value] : arguments) {
        if (message.rfind(key + " ", 0) == 0 || message.rfind(key + ":", 0) == 0 ||
            message.rfind("unknown argument '" + key + "'", 0) == 0)
            return key;
        if (message.rfind(key + "[", 0) == 0) return message.substr(0, message.find(']') + 1);
    }
    return "";
}

}  // namespace

std::vector<LayerKindDescription> layer_kinds() {
    std::vector<LayerKindDescription> kinds;
    for (Layer::Kind kind : nn::all_layer_kinds()) {
        const nn::LayerKindInfo& info = nn::layer_kind(kind);
        LayerKindDescription d{info.type, info.keras_class, {}, {}};
        for (const nn::LayerAttribute& a : info.attributes()) {
            d.arguments.push_back(a.name);
            if (a.required) d.required.push_back(a.name);
        }
        kinds.push_back(std::move(d));
    }
    return kinds;
}

Layer make_layer(const std::string& type, const LayerArguments& arguments, const std::string& name) {
    Layer::Kind kind;
    if (!nn::layer_kind_from_type(type, kind))
        throw LayerArgumentError("unknown layer type '" + type + "' (known: " + nn::known_layer_types() + ")", "type");
    Layer layer = nn::default_layer(kind);
    layer.name = name;
    const nn::LayerKindInfo& info = nn::layer_kind(layer.kind);
    const std::vector<nn::LayerAttribute> attributes = info.attributes();
    std::set<std::string> given;
    try {
        for (const auto& [key, value] : arguments) {
            const nn::LayerAttribute* a = find(attributes, key);
            if (!a) throw Error("unknown argument '" + key + "' (" + argument_list(info, attributes) + ")");
            if (!given.insert(key).second) throw Error(key + " is given twice");
            const bool none = std::holds_alternative<std::monostate>(value);
            if (none && a->required) throw Error(key + " is required; None is not a value for it");
            if (!none) set(layer, *a, value);
            else given.erase(key);  // None: the default (Keras's activation=None is linear, the default)
        }
        for (const nn::LayerAttribute& a : attributes) {
            if (given.count(a.name)) continue;
            if (a.required) throw Error(std::string(a.name) + " is required");
            if (const nn::LayerAttribute* from = a.defaults_to ? find(attributes, a.defaults_to) : nullptr)
                set(layer, a, get(layer, *from));
        }
        info.check(layer);
    } catch (const Error& e) {
        throw LayerArgumentError(std::string(info.keras_class) + ": " + e.what(), argument_about(e.what(), arguments));
    }
    return layer;
}

LayerArguments layer_arguments(const Layer& layer) {
    LayerArguments arguments;
    for (const nn::LayerAttribute& a : nn::layer_kind(layer.kind).attributes()) arguments.emplace_back(a.name, get(layer, a));
    return arguments;
}

std::string layer_type(Layer::Kind kind) { return nn::layer_kind(kind).type; }

Regularizer regularizer_from_text(const std::string& text) {
    const auto fail = [&] {
        return Error("'" + text + "' is not a regularizer; give l1(F), l2(F), l1_l2(l1=F, l2=F), l1, l2 or l1_l2 " +
                     "(Keras's defaults, 0.01), or None");
    };
    const auto number = [&](const std::string& s) {
        size_t used = 0;
        double v = 0;
        try {
            v = std::stod(s, &used);
        } catch (const std::exception&) {
            throw fail();
        }
        if (s.find_first_not_of(' ', used) != std::string::npos || !(v >= 0) || !std::isfinite(v)) throw fail();
        return static_cast<float>(v);
    };
    std::string t;
    for (char c : text)
        if (c != ' ') t += c;
    if (t.empty() || t == "None") return {};
    if (t == "l1") return {0.01f, 0.0f};
    if (t == "l2") return {0.0f, 0.01f};
    if (t == "l1_l2") return {0.01f, 0.01f};
    const size_t open = t.find('(');
    if (open == std::string::npos || t.back() != ')') throw fail();
    const std::string head = t.substr(0, open), inside = t.substr(open + 1, t.size() - open - 2);
    if (head == "l1") return {number(inside.rfind("l1=", 0) == 0 ? inside.substr(3) : inside), 0.0f};
    if (head == "l2") return {0.0f, number(inside.rfind("l2=", 0) == 0 ? inside.substr(3) : inside)};
    if (head != "l1_l2") throw fail();
    Regularizer r;
    size_t start = 0;
    while (start < inside.size()) {
        const size_t comma = inside.find(',', start), end = comma == std::string::npos ? inside.size() : comma;
        const std::string item = inside.substr(start, end - start);
        if (item.rfind("l1=", 0) == 0) r.l1 = number(item.substr(3));
        else if (item.rfind("l2=", 0) == 0) r.l2 = number(item.substr(3));
        else throw fail();
        start = end + 1;
    }
    return r;
}

std::string regularizer_text(const Regularizer& r) {
    const auto shortest = [](float v) {  // the shortest decimal that reads back as the same float
        char text[32];
        return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
    };
    if (!r.active()) return "";
    if (r.l2 == 0.0f) return "l1(" + shortest(r.l1) + ")";
    if (r.l1 == 0.0f) return "l2(" + shortest(r.l2) + ")";
    return "l1_l2(l1=" + shortest(r.l1) + ", l2=" + shortest(r.l2) + ")";
}

}  // namespace onefit
