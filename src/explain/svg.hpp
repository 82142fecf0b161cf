// Inline SVG charts for the self-contained HTML reports (explain's and the sweep's): escaping,
// numbers, a line chart and a scatter chart. No scripts, no external fetches.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace onefit::svg {

inline const char* const kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                      "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#2f4b7c"};

inline std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

inline std::string num(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", v);
    return text;
}

inline std::string value(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return text;
}

// Axes, a title and four y gridlines over [lo, hi]; py maps a value to its pixel row.
struct Frame {
    double w = 540, ht = 240, left = 60, right = 20, top = 30, bottom = 40;
    double lo = 0, hi = 1;
    double py(double y) const { return top + (ht - top - bottom) * (1 - (y - lo) / (hi - lo)); }
    std::string open(const std::string& title) const {
        std::string s = "<svg width=\"" + num(w) + "\" height=\"" + num(ht) + "\" role=\"img\" aria-label=\"" +
                        escape(title) + "\"><text x=\"" + num(left) + "\" y=\"18\" class=\"t\">" + escape(title) + "</text>";
        s += "<line x1=\"" + num(left) + "\" y1=\"" + num(ht - bottom) + "\" x2=\"" + num(w - right) + "\" y2=\"" +
             num(ht - bottom) + "\" stroke=\"#444\"/><line x1=\"" + num(left) + "\" y1=\"" + num(top) + "\" x2=\"" +
             num(left) + "\" y2=\"" + num(ht - bottom) + "\" stroke=\"#444\"/>";
        for (int k = 0; k <= 4; ++k) {
            const double y = lo + (hi - lo) * k / 4.0;
            s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(py(y) + 4) + "\" class=\"a\" text-anchor=\"end\">" +
                 value(y) + "</text><line x1=\"" + num(left) + "\" y1=\"" + num(py(y)) + "\" x2=\"" + num(w - right) +
                 "\" y2=\"" + num(py(y)) + "\" stroke=\"#ddd\"/>";
        }
        return s;
    }
    std::string x_tick(double x, const std::string& label, const char* anchor = "middle") const {
        return "<text x=\"" + num(x) + "\" y=\"" + num(ht - bottom + 16) + "\" class=\"a\" text-anchor=\"" + anchor +
               "\">" + escape(label) + "</text>";
    }
    std::string x_label(const std::string& label) const {
        return "<text x=\"" + num((left + w - right) / 2) + "\" y=\"" + num(ht - 6) +
               "\" class=\"a\" text-anchor=\"middle\">" + escape(label) + "</text>";
    }
};

// The finite range of some values (0..1 when none; widened when flat).
inline std::pair<double, double> finite_range(const std::vector<const std::vector<double>*>& all) {
    double lo = INFINITY, hi = -INFINITY;
    for (const std::vector<double>* v : all)
        for (double x : *v)
            if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
    if (!std::isfinite(lo)) lo = 0, hi = 1;
    if (hi - lo < 1e-12) hi = lo + 1;
    return {lo, hi};
}

// Lines over x = 1..n (epochs), a legend entry per series (up to 11 colors).
inline std::string line_chart(const std::string& title,
                              const std::vector<std::pair<std::string, const std::vector<double>*>>& series,
                              const std::string& x_label) {
    Frame f;
    std::vector<const std::vector<double>*> all;
    size_t n = 0;
    for (const auto& [name, v] : series) all.push_back(v), n = std::max(n, v->size());
    std::tie(f.lo, f.hi) = finite_range(all);
    const auto px = [&](size_t i) {
        return f.left + (n > 1 ? (f.w - f.left - f.right) * static_cast<double>(i) / static_cast<double>(n - 1) : 0);
    };
    std::string s = f.open(title) + f.x_tick(f.left, "1", "start") + f.x_tick(f.w - f.right, std::to_string(n), "end") +
                    f.x_label(x_label);
    for (size_t k = 0; k < series.size(); ++k) {
        std::string points;
        for (size_t i = 0; i < series[k].second->size(); ++i) {
            const double y = (*series[k].second)[i];
            if (std::isfinite(y)) points += num(px(i)) + "," + num(f.py(y)) + " ";
        }
        const char* color = kColors[k % 11];
        s += "<polyline fill=\"none\" stroke-width=\"2.5\" stroke=\"" + std::string(color) + "\" points=\"" + points + "\"/>";
        s += "<rect x=\"" + num(f.w - f.right - 150) + "\" y=\"" + num(6 + 16 * static_cast<double>(k)) +
             "\" width=\"12\" height=\"10\" fill=\"" + color + "\"/><text x=\"" + num(f.w - f.right - 134) + "\" y=\"" +
             num(15 + 16 * static_cast<double>(k)) + "\" class=\"a\">" + escape(series[k].first) + "</text>";
    }
    return s + "</svg>";
}

// Points (x, y): x numeric (log10 scale when log_x), or categorical when labels name each x
// index 0..labels.size()-1.
inline std::string scatter_chart(const std::string& title, const std::string& x_label, const std::vector<double>& xs,
                                 const std::vector<double>& ys, bool log_x, const std::vector<std::string>& labels = {}) {
    Frame f;
    std::tie(f.lo, f.hi) = finite_range({&ys});
    std::vector<double> x(xs);
    if (log_x)
        for (double& v : x) v = std::log10(v);
    double x0 = labels.empty() ? *std::min_element(x.begin(), x.end()) : -0.5;
    double x1 = labels.empty() ? *std::max_element(x.begin(), x.end()) : static_cast<double>(labels.size()) - 0.5;
    if (x1 - x0 < 1e-12) x0 -= 0.5, x1 += 0.5;
    const auto px = [&](double v) { return f.left + 8 + (f.w - f.left - f.right - 16) * (v - x0) / (x1 - x0); };
    std::string s = f.open(title) + f.x_label(x_label);
    if (labels.empty()) {
        s += f.x_tick(px(x0), value(log_x ? std::pow(10.0, x0) : x0), "start");
        s += f.x_tick(px(x1), value(log_x ? std::pow(10.0, x1) : x1), "end");
    } else {
        for (size_t i = 0; i < labels.size(); ++i) s += f.x_tick(px(static_cast<double>(i)), labels[i]);
    }
    for (size_t i = 0; i < x.size() && i < ys.size(); ++i)
        if (std::isfinite(ys[i]) && std::isfinite(x[i]))
            s += "<circle cx=\"" + num(px(x[i])) + "\" cy=\"" + num(f.py(ys[i])) + "\" r=\"3.5\" fill=\"" + kColors[0] +
                 "\" fill-opacity=\"0.6\"/>";
    return s + "</svg>";
}

}  // namespace onefit::svg
