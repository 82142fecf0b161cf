// The explain report as one self-contained HTML page: inline CSS and SVG, no scripts, no
// external fetches, so it can be mailed or attached to an issue as is.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "explain/format.hpp"
#include "explain/svg.hpp"
#include "onefit/explain.hpp"

namespace onefit {
namespace {

using explain_format::seconds;
using explain_format::si;

using svg::escape;
using svg::kColors;
using svg::num;

// One line chart: the train series and, when logged, its val_ twin, per epoch.
std::string curve_chart(const std::string& key, const History& h) {
    std::vector<std::pair<std::string, const std::vector<double>*>> series = {{key, &h.history.at(key)}};
    const auto val = h.history.find("val_" + key);
    if (val != h.history.end()) series.push_back({val->first, &val->second});
    return svg::line_chart(key + " per epoch", series, "epoch");
}

// A stacked bar of the phases, with a legend.
std::string phase_chart(const std::vector<Phase>& phases) {
    const double w = 1100, bar = 40, left = 10;
    double sum = 0;
    for (const Phase& p : phases) sum += std::max(0.0, p.seconds);
    sum = std::max(sum, 1e-12);
    const size_t rows = (phases.size() + 2) / 3;
    const double ht = 60 + bar + 22.0 * static_cast<double>(rows);
    std::string svg = "<svg width=\"" + num(w) + "\" height=\"" + num(ht) +
                      "\" role=\"img\" aria-label=\"time per phase\">";
    svg += "<text x=\"" + num(left) + "\" y=\"18\" class=\"t\">time per phase (total " + escape(seconds(sum)) + ")</text>";
    double x = left;
    const double span = w - 2 * left;
    for (size_t i = 0; i < phases.size(); ++i) {
        const double width = span * std::max(0.0, phases[i].seconds) / sum;
        svg += "<rect x=\"" + num(x) + "\" y=\"30\" width=\"" + num(width) + "\" height=\"" + num(bar) + "\" fill=\"" +
               kColors[i % 11] + "\"><title>" + escape(phases[i].name + ": " + seconds(phases[i].seconds)) + "</title></rect>";
        x += width;
    }
    for (size_t i = 0; i < phases.size(); ++i) {
        const double lx = left + 360.0 * static_cast<double>(i % 3), ly = 30 + bar + 20 + 22.0 * static_cast<double>(i / 3);
        svg += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly - 10) + "\" width=\"12\" height=\"12\" fill=\"" + kColors[i % 11] +
               "\"/><text x=\"" + num(lx + 18) + "\" y=\"" + num(ly) + "\" class=\"a\">" +
               escape(phases[i].name + " " + seconds(phases[i].seconds) + (phases[i].basis == PhaseBasis::measured ? "" : " (est.)")) + "</text>";
    }
    return svg + "</svg>";
}

// Projected fit time per device, bars on a log scale (0.1 ms and 200 ms on one chart).
std::string projection_chart(const std::vector<Projection>& projections) {
    const double w = 1100, left = 330, right = 120, row = 34, top = 30;
    const double ht = top + row * static_cast<double>(projections.size()) + 30;
    double lo = INFINITY, hi = 0;
    for (const Projection& p : projections) lo = std::min(lo, p.total_seconds), hi = std::max(hi, p.total_seconds);
    const double l0 = std::floor(std::log10(std::max(lo, 1e-9))) - 0.5, l1 = std::ceil(std::log10(std::max(hi, 1e-9)));
    const auto px = [&](double s) { return left + (w - left - right) * (std::log10(std::max(s, 1e-9)) - l0) / (l1 - l0); };
    std::string svg = "<svg width=\"" + num(w) + "\" height=\"" + num(ht) +
                      "\" role=\"img\" aria-label=\"projected fit time per device\">";
    svg += "<text x=\"10\" y=\"18\" class=\"t\">projected fit time per device (log scale)</text>";
    for (size_t i = 0; i < projections.size(); ++i) {
        const Projection& p = projections[i];
        const double y = top + row * static_cast<double>(i);
        svg += "<text x=\"" + num(left - 8) + "\" y=\"" + num(y + 20) + "\" class=\"a\" text-anchor=\"end\">" +
               escape(p.device_name + (p.estimate ? " (estimate)" : "") + (p.present ? "" : ", absent")) + "</text>";
        svg += "<rect x=\"" + num(left) + "\" y=\"" + num(y + 6) + "\" width=\"" + num(std::max(2.0, px(p.total_seconds) - left)) +
               "\" height=\"22\" fill=\"" + (p.estimate ? "#bab0ac" : "#4e79a7") + "\"/>";
        svg += "<text x=\"" + num(px(p.total_seconds) + 6) + "\" y=\"" + num(y + 22) + "\" class=\"a\">" +
               escape(seconds(p.total_seconds)) + "</text>";
    }
    return svg + "</svg>";
}

}  // namespace

std::string explain_html(const ExplainReport& r) {
    std::string html =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>onefit explain</title><style>"
        "body{font-family:sans-serif;margin:24px;color:#222;max-width:1140px}"
        "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
        "td.n{text-align:right}.t{font:bold 14px sans-serif}.a{font:12px sans-serif;fill:#333}"
        ".warning{color:#b00}.performance{color:#a60}svg{display:block;margin:10px 0}"
        "</style></head><body>\n";
    html += "<h1>onefit explain</h1><p>" + escape(r.run) + "</p><p>ran on " + escape(r.ran_on.name) + "</p>\n";
    html += "<h2>Training curves</h2><div style=\"display:flex;flex-wrap:wrap;gap:12px\">";
    for (const auto& [key, values] : r.history.history)
        if (key.rfind("val_", 0) != 0) html += curve_chart(key, r.history);
    html += "</div>\n<h2>Where the time went</h2>" + phase_chart(r.phases);
    html += "<table><tr><th>phase</th><th>time</th><th>how</th></tr>";
    for (const Phase& p : r.phases)
        html += "<tr><td>" + escape(p.name) + "</td><td class=\"n\">" + escape(seconds(p.seconds)) + "</td><td>" +
                phase_basis_name(p.basis) + ": " + escape(p.note) + "</td></tr>";
    html += "</table>\n<h2>Work</h2><p>" + escape(si(r.work.flops, "FLOP")) + " in " + std::to_string(r.work.steps) +
            " steps (" + escape(si(r.work.step.flops, "FLOP")) + " and " + escape(si(r.work.step.bytes, "B")) +
            " per step; forward = 2 &times; MACs &times; batch, backward = 2 &times; forward, optimizer = 10 &times; params)</p>\n";
    html += "<h2>Per-device projection</h2>" + projection_chart(r.projections);
    html += "<p>Pick: <b>" + escape(r.picked_device) + "</b>. " + escape(r.reason) + "</p>\n<h2>Lints</h2>";
    if (r.lints.empty()) html += "<p>none</p>";
    html += "<ul>";
    for (const Lint& l : r.lints)
        html += "<li class=\"" + escape(l.severity) + "\"><b>" + escape(l.id) + "</b>: " + escape(l.message) +
                "<br>fix: " + escape(l.fix) + "</li>";
    return html + "</ul>\n</body></html>\n";
}

}  // namespace onefit
