// sweep_html: a sweep's members as one self-contained HTML page: the best configurations' curves
// of the ranking log per epoch, and the last value of that log against each axis the sweep
// varied (learning rate on a log scale), so "which rate, which width?" reads off a chart.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "explain/svg.hpp"
#include "onefit/explain.hpp"
#include "onefit/sweep.hpp"

namespace onefit {
namespace {

// One axis: a member's numeric value, or a category name ("" for numbers).
struct Axis {
    const char* name;
    double (*number)(const SweepMember&);
    std::string (*category)(const SweepMember&);
};

const Axis kAxes[] = {
    {"learning_rate", [](const SweepMember& m) { return static_cast<double>(m.learning_rate); }, nullptr},
    {"seed", [](const SweepMember& m) { return static_cast<double>(m.seed); }, nullptr},
    {"optimizer", nullptr, [](const SweepMember& m) { return m.optimizer; }},
    {"loss", nullptr, [](const SweepMember& m) { return m.loss; }},
    {"units", [](const SweepMember& m) { return static_cast<double>(m.hidden_units); }, nullptr},
    {"dropout", [](const SweepMember& m) { return static_cast<double>(m.dropout_rate); }, nullptr},
    {"batch_size", [](const SweepMember& m) { return static_cast<double>(m.batch_size); }, nullptr},
    {"epochs", [](const SweepMember& m) { return static_cast<double>(m.epochs); }, nullptr},
    {"fold", [](const SweepMember& m) { return static_cast<double>(m.fold); }, nullptr},
};

double last(const SweepMember& m, const std::string& key) {
    const auto it = m.history.history.find(key);
    return it == m.history.history.end() || it->second.empty() ? NAN : it->second.back();
}

}  // namespace

std::string sweep_html(const std::vector<SweepMember>& members, const std::string& title, const std::string& key,
                       size_t curves) {
    using svg::escape;
    std::string html =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>onefit sweep</title><style>"
        "body{font-family:sans-serif;margin:24px;color:#222;max-width:1140px}.t{font:bold 14px sans-serif}"
        ".a{font:12px sans-serif;fill:#333}svg{display:block;margin:10px 0}</style></head><body>\n";
    html += "<h1>onefit sweep</h1><p>" + escape(title) + "</p><p>" + std::to_string(members.size()) +
            " members, ranked by the last " + escape(key) + "</p>\n";
    // The first `curves` members' curves (the caller passes them best first).
    std::vector<std::pair<std::string, const std::vector<double>*>> series;
    for (const SweepMember& m : members) {
        if (series.size() == curves) break;
        const auto it = m.history.history.find(key);
        if (it == m.history.history.end()) continue;
        // (Appended piece by piece: GCC 12 warns falsely on "literal" + std::string.)
        std::string name = "#";
        name += std::to_string(series.size() + 1);
        name += " lr ";
        name += svg::value(m.learning_rate);
        name += " seed ";
        name += std::to_string(m.seed);
        if (m.fold >= 0) {
            name += " fold ";
            name += std::to_string(m.fold);
        }
        series.push_back({name, &it->second});
    }
    html += "<h2>The best " + std::to_string(series.size()) + "</h2>" + svg::line_chart(key + " per epoch", series, "epoch");
    // The score against every axis with more than one value.
    html += "<h2>" + escape(key) + " against each axis</h2><div style=\"display:flex;flex-wrap:wrap;gap:12px\">";
    std::vector<double> ys;
    for (const SweepMember& m : members) ys.push_back(last(m, key));
    for (const Axis& axis : kAxes) {
        std::vector<double> xs;
        std::vector<std::string> labels;
        if (axis.category) {
            std::map<std::string, size_t> index;
            for (const SweepMember& m : members) index.emplace(axis.category(m), 0);
            for (auto& [name, i] : index) i = labels.size(), labels.push_back(name);
            for (const SweepMember& m : members) xs.push_back(static_cast<double>(index[axis.category(m)]));
            if (labels.size() < 2) continue;
        } else {
            std::set<double> distinct;
            for (const SweepMember& m : members) xs.push_back(axis.number(m)), distinct.insert(xs.back());
            if (distinct.size() < 2) continue;
        }
        const bool log_x = axis.number && std::string(axis.name) == "learning_rate" && *std::min_element(xs.begin(), xs.end()) > 0;
        html += svg::scatter_chart(key + " by " + axis.name + (log_x ? " (log scale)" : ""), axis.name, xs, ys, log_x, labels);
    }
    return html + "</div>\n</body></html>\n";
}

}  // namespace onefit
